"""``sparkeval rank-distance``: how differently two or more runs rank the same queries.

Example::

    sparkeval rank-distance --runs runs.parquet --baseline bm25 --run dense \\
        --k 10 --rbo-p 0.9 --depth 100 --out out/rd

Writes ``rank_distance.parquet`` (one row per run × query: Kendall τ-b, Spearman ρ,
footrule, Cayley, Ulam, Hamming over the shared docs, with the overlap size;
Jaccard@k; RBO_ext) and ``summary.json`` (per-run means, query counts, top-k
exposure entropy and JS/KL against the baseline) atomically into ``--out``.
"""

from __future__ import annotations

from sparkeval.compare.options import RankDistanceConfig
from sparkeval.job.command import Command, spark_job

COMMAND = Command(
    name="rank-distance",
    help="rank distances (τ, ρ, footrule, Cayley, Ulam, Hamming, Jaccard@k, RBO) and "
    "exposure divergence between runs and a baseline",
    description="Compare the rankings of runs with a baseline's, query by query. "
    "Rankings: score descending, ties by doc_id descending; cut at --depth.",
    config=RankDistanceConfig,
    run=spark_job("sparkeval.compare.job:run_rank_distance"),
)
