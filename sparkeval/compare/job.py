"""The ``compare`` and ``rank-distance`` job bodies: read, compare, judge the gate, write.

The commands are :mod:`sparkeval.commands.compare` and
:mod:`sparkeval.commands.rank_distance`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sparkeval.compare.options import compared_runs
from sparkeval.compare.outputs import (
    load_extra_summary,
    match_conditions,
    parse_conditions,
    write_outputs,
)
from sparkeval.compare.pipeline import (
    CompareOptions,
    compare,
    exposure_divergence,
    rank_distance_summary,
    rank_distance_table,
    read_per_query,
    read_runs,
)
from sparkeval.compare.progress import stage
from sparkeval.output import atomic_output_dir, shown_path, write_parquet, write_summary

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sparkeval.compare.options import CompareConfig, RankDistanceConfig


@dataclass
class CompareOutcome:
    """What a comparison wrote: its summary and the gate's failures (empty: passed)."""

    summary: dict[str, Any]
    failures: list[dict[str, Any]]
    out: str


def run_compare(spark: SparkSession, config: CompareConfig) -> CompareOutcome:
    """Compare, judge the gate and write every output atomically."""
    config.preflight()
    options = config.compare_options()
    conditions = parse_conditions(list(config.fail_if))
    extras = dict(load_extra_summary(p) for p in config.extra_summary)
    per_query = read_per_query(spark, config.per_query)
    stage("read", f"per-query table {config.per_query}")
    runs_df, run_ids = read_runs(spark, list(config.runs)) if config.runs else (None, None)
    result = compare(
        spark,
        per_query,
        options,
        runs_df=runs_df,
        with_plots=not config.no_plots,
        say=stage,
        run_ids=run_ids,
    )
    matched = match_conditions(conditions, result.measures)
    summary, failures = write_outputs(result, matched, extras, config.out, config.input_paths())
    return CompareOutcome(summary, failures, config.out)


def run_rank_distance(spark: SparkSession, config: RankDistanceConfig) -> dict[str, Any]:
    """Rank distances and exposure against the baseline; returns the summary written."""
    config.preflight()
    options = CompareOptions(
        baseline=config.baseline, k=config.k, rbo_p=config.rbo_p, depth=config.depth
    )
    runs_df, present = read_runs(spark, list(config.runs))
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
            write_summary(staging, summary, "rank-distance", config.input_paths())
    finally:
        table.unpersist()
    stage("write", f"{shown_path(config.out)}/rank_distance.parquet and summary.json")
    return summary
