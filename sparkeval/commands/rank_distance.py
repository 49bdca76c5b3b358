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

from dataclasses import dataclass

from sparkeval.compare.options import BaselineComparisonConfig
from sparkeval.errors import ConfigError
from sparkeval.job.command import Command, spark_job
from sparkeval.job.options import input_path


@dataclass(frozen=True, kw_only=True)
class RankDistanceConfig(BaselineComparisonConfig):
    """Runs, a baseline and the depths; see ``sparkeval rank-distance --help``."""

    runs: tuple[str, ...] = input_path(
        "run table(s) run_id, query_id, doc_id, score (Parquet or CSV)"
    )

    def input_paths(self) -> list[str]:
        return list(self.runs)


def compared_runs(present: list[str], baseline: str, wanted: tuple[str, ...]) -> list[str]:
    """The runs to compare with ``baseline`` (default: every other run), checked.

    Example:
        >>> compared_runs(["a", "b", "c"], "a", ())
        ['b', 'c']
    """
    if baseline not in present:
        raise ConfigError(
            f"baseline run {baseline!r} is not in the run table(s); runs: " + ", ".join(present)
        )
    chosen = list(wanted) or [r for r in present if r != baseline]
    unknown = sorted(set(chosen) - set(present))
    if unknown:
        raise ConfigError(
            f"run(s) {', '.join(unknown)} not in the run table(s); runs: " + ", ".join(present)
        )
    runs = [r for r in dict.fromkeys(chosen) if r != baseline]
    if not runs:
        raise ConfigError("nothing to compare: give at least one run besides the baseline")
    return runs


COMMAND = Command(
    name="rank-distance",
    help="rank distances (τ, ρ, footrule, Cayley, Ulam, Hamming, Jaccard@k, RBO) and "
    "exposure divergence between runs and a baseline",
    description="Compare the rankings of runs with a baseline's, query by query. "
    "Rankings: score descending, ties by doc_id descending; cut at --depth.",
    config=RankDistanceConfig,
    run=spark_job("sparkeval.compare.job:run_rank_distance"),
)
