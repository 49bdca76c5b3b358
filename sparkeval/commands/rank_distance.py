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

from typing import Any

from sparkeval.compare.options import RankDistanceConfig
from sparkeval.job.command import Command, LocalEngine, spark_job
from sparkeval.job.engine_choice import run_here_or_on_spark, runs_locally


def needs_spark(config: RankDistanceConfig) -> str | None:
    """Why ``config`` needs Spark whatever the size of its inputs, or None: what the
    local engine (:mod:`sparkeval.compare.local_rank_distance`) does not do."""
    from sparkeval.io.direct import DIRECT_FORMATS
    from sparkeval.io.readers import detect_format, is_catalog_table

    if any(is_catalog_table(path) for path in config.runs):
        return "catalog tables are read through Spark"
    if any(detect_format(path, None) not in DIRECT_FORMATS for path in config.runs):
        return "only Parquet, TREC, CSV and TSV inputs are read without Spark"
    return None


def run_locally(config: RankDistanceConfig) -> dict[str, Any] | None:
    """The job in this process (:func:`sparkeval.compare.job.run_rank_distance_locally`);
    None sends an ``auto`` run to Spark when an input needs Spark's readers."""
    from sparkeval.compare.job import run_rank_distance_locally

    return run_here_or_on_spark(config, run_rank_distance_locally)


COMMAND = Command(
    name="rank-distance",
    help="rank distances (τ, ρ, footrule, Cayley, Ulam, Hamming, Jaccard@k, RBO) and "
    "exposure divergence between runs and a baseline",
    description="Compare the rankings of runs with a baseline's, query by query. "
    "Rankings: score descending, ties by doc_id descending; cut at --depth.",
    config=RankDistanceConfig,
    run=spark_job("sparkeval.compare.job:run_rank_distance"),
    local=LocalEngine(lambda config: runs_locally(config, needs_spark), run_locally),
)
