"""The ``compare`` and ``rank-distance`` job bodies: read, compare, judge the gate, write.

The commands are :mod:`sparkeval.commands.compare` and
:mod:`sparkeval.commands.rank_distance`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparkeval.compare.options import compared_runs
from sparkeval.compare.outputs import (
    load_extra_summary,
    match_conditions,
    parse_conditions,
    write_outputs,
)
from sparkeval.compare.pipeline import (
    RD_ARROW_SCHEMA,
    CompareOptions,
    compare,
    exposure_divergence,
    rank_distance_summary,
    rank_distance_table,
    read_per_query,
    read_runs,
)
from sparkeval.compare.progress import stage
from sparkeval.output import (
    atomic_output_dir,
    shown_path,
    write_arrow_parquet,
    write_spark_table,
    write_summary,
)

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


def run_compare_locally(config: CompareConfig) -> CompareOutcome:
    """``run_compare`` in this process, without Spark
    (:mod:`sparkeval.compare.local_compare`): the same files, lines and errors.

    Raises:
        NotDirect: an input for Spark's readers; nothing was written.
    """
    from sparkeval.compare.local_compare import compare_locally, read_per_query_locally
    from sparkeval.compare.local_rank_distance import read_runs_locally
    from sparkeval.compare.outputs import ArrowTables
    from sparkeval.io.readers import check_exists

    config.preflight()
    options = config.compare_options()
    conditions = parse_conditions(list(config.fail_if))
    extras = dict(load_extra_summary(p) for p in config.extra_summary)
    rows, where = read_per_query_locally(config.per_query)
    stage("read", f"per-query table {config.per_query}")
    run_rows, run_ids = None, None
    if config.runs:
        for path in config.runs:
            check_exists(path)
        run_rows, run_ids = read_runs_locally(list(config.runs))
    result = compare_locally(
        rows,
        options,
        where,
        run_rows=run_rows,
        run_ids=run_ids,
        with_plots=not config.no_plots,
        say=stage,
    )
    matched = match_conditions(conditions, result.measures)
    summary, failures = write_outputs(
        result, matched, extras, config.out, config.input_paths(), ArrowTables()
    )
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
    rows = sum(sum(run["queries"].values()) for run in summary["rank_distance"]["runs"].values())
    ordered = table.orderBy("run_id", "query_id")

    def write_table(directory: Path) -> object:
        # the row count is the summary's: no pass to count
        return write_spark_table(ordered, directory, RD_ARROW_SCHEMA, rows)

    try:
        _write_rank_distance(config, summary, write_table)
    finally:
        table.unpersist()
    return summary


def run_rank_distance_locally(config: RankDistanceConfig) -> dict[str, Any]:
    """``run_rank_distance`` in this process, without Spark
    (:mod:`sparkeval.compare.local_rank_distance`): the same files and lines.

    Raises:
        NotDirect: an input for Spark's readers; nothing was written.
    """
    from sparkeval.compare.local_rank_distance import rank_distance_locally
    from sparkeval.io.readers import check_exists

    config.preflight()
    for path in config.input_paths():
        check_exists(path)
    options = CompareOptions(
        baseline=config.baseline, k=config.k, rbo_p=config.rbo_p, depth=config.depth
    )
    result = rank_distance_locally(config.runs, options, config.compared)
    stage("read", f"{len(result.present)} run(s) in {', '.join(config.runs)}")
    stage("rank-distance", f"{len(result.runs)} run(s) against {config.baseline}")
    stage("exposure", f"top-{config.k} exposure entropy, JS and KL")

    def write_table(directory: Path) -> object:
        return write_arrow_parquet(result.table, directory)

    _write_rank_distance(config, result.summary, write_table)
    return result.summary


def _write_rank_distance(
    config: RankDistanceConfig, summary: dict[str, Any], write_table: Callable[[Path], object]
) -> None:
    """``rank_distance.parquet`` (written by ``write_table``) and ``summary.json`` into
    ``--out``, all or nothing."""
    with atomic_output_dir(config.out) as staging:
        write_table(staging / "rank_distance.parquet")
        write_summary(staging, summary, "rank-distance", config.input_paths())
    stage("write", f"{shown_path(config.out)}/rank_distance.parquet and summary.json")
