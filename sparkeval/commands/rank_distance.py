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
from typing import TYPE_CHECKING, Any

from sparkeval.compare.options import BaselineComparisonConfig
from sparkeval.errors import ConfigError
from sparkeval.job.command import Command
from sparkeval.job.options import option

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True, kw_only=True)
class RankDistanceConfig(BaselineComparisonConfig):
    """Runs, a baseline and the depths; see ``sparkeval rank-distance --help``."""

    runs: tuple[str, ...] = option(
        metavar="PATH",
        path=True,
        help="run table(s) run_id, query_id, doc_id, score (Parquet or CSV)",
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


def run(spark: SparkSession | None, config: RankDistanceConfig) -> dict[str, Any]:
    """Rank distances and exposure against the baseline; returns the summary written."""
    from sparkeval.compare.pipeline import (
        CompareOptions,
        exposure_divergence,
        rank_distance_summary,
        rank_distance_table,
        read_runs,
    )
    from sparkeval.compare.progress import stage
    from sparkeval.output import atomic_output_dir, write_json, write_parquet

    assert spark is not None
    config.preflight()
    options = CompareOptions(
        baseline=config.baseline, k=config.k, rbo_p=config.rbo_p, depth=config.depth
    )
    runs_df = read_runs(spark, list(config.runs))
    present = sorted(r[0] for r in runs_df.select("run_id").distinct().collect())
    runs = compared_runs(present, config.baseline, config.compared)
    stage("read", f"{len(present)} run(s) in {', '.join(config.runs)}")
    table = rank_distance_table(spark, runs_df, options, runs).cache()
    summary = {"rank_distance": rank_distance_summary(table, options)}
    stage("rank-distance", f"{len(runs)} run(s) against {config.baseline}")
    summary["exposure"] = exposure_divergence(spark, runs_df, options, runs)
    stage("exposure", f"top-{config.k} exposure entropy, JS and KL")
    try:
        with atomic_output_dir(config.out) as staging:
            write_parquet(table.orderBy("run_id", "query_id"), staging / "rank_distance.parquet")
            write_json(staging / "summary.json", summary)
    finally:
        table.unpersist()
    stage("write", f"{config.out}/rank_distance.parquet and summary.json")
    return summary


COMMAND = Command(
    name="rank-distance",
    help="rank distances (τ, ρ, footrule, Cayley, Ulam, Hamming, Jaccard@k, RBO) and "
    "exposure divergence between runs and a baseline",
    description="Compare the rankings of runs with a baseline's, query by query. "
    "Rankings: score descending, ties by doc_id descending; cut at --depth.",
    config=RankDistanceConfig,
    run=run,
)
