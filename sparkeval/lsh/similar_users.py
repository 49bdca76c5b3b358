"""All user pairs whose lists have Jaccard >= T.

Each user's set is the items of their list (the top k by score when ``--k`` is
given, ties by item id descending). Pairs are found with MinHash LSH and verified
exactly, so every reported pair and value is exact; a true pair is missed only
when it shares no band (probability 1 - P(J), P the S-curve; ``summary.json`` gives
P(T)) or falls only in a bucket skipped by ``--max-bucket`` (counted in the summary).

Each run of the input (a ``run_id`` column) is searched on its own, in one call.
Outputs in ``--out``: ``pairs.parquet`` (``run_id, user_a, user_b, jaccard``, user_a <
user_b, run after run) and ``summary.json`` (each run's counts under ``runs``).

The command is :mod:`sparkeval.commands.similar_users`.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparkeval.io.lists import (
    RunTable,
    check_k,
    check_repeated_items,
    checked_runs,
    read_run_rows,
    top_k,
)
from sparkeval.lsh.driver_sets import DriverSimilarSets, TooManyCandidates
from sparkeval.lsh.driver_users import collect_run, collect_small_runs, similar_users_in_driver
from sparkeval.lsh.options import DEFAULT_LSH, LshOptions
from sparkeval.lsh.search_stats import check_max_bucket
from sparkeval.lsh.similar import SimilarSets, similar_sets
from sparkeval.lsh.users_output import search_parameters, write_driver_pairs, write_outputs
from sparkeval.output import write_parquet
from sparkeval.status import status

if TYPE_CHECKING:
    from sparkeval.lsh.options import SimilarUsersConfig


def user_sets(run: DataFrame, k: int | None = None) -> DataFrame:
    """``query_id, items`` (sorted distinct item array) per user, after the top-k cut."""
    return (
        top_k(run, check_k(k))
        .groupBy("query_id")
        .agg(F.array_sort(F.collect_set("doc_id")).alias("items"))
    )


def find_similar_users(
    run: DataFrame,
    threshold: float | str,
    *,
    k: int | None = None,
    lsh: LshOptions = DEFAULT_LSH,
) -> tuple[SimilarSets, dict[str, Any]]:
    """Similar user pairs of a run DataFrame (``query_id, doc_id, score``).

    A small run (:mod:`sparkeval.lsh.driver_users`) is collected in one job and
    searched in the driver; ``result.pairs`` is then a DataFrame of the pairs found.

    Args:
        run: the run rows (one user's list = rows sharing ``query_id``).
        threshold: Jaccard threshold T in (0, 1]; pairs at exactly T are included.
        k: list cutoff (top k by score, ties by item id descending), ``None`` = whole list.
        lsh: signature length, banding (explicit, or chosen for ``lsh.recall`` at T),
            seed, scheme and the bucket cap.

    Returns:
        ``(result, parameters)``: ``result.pairs`` has ``user_a, user_b, jaccard``.
    """
    table = collect_run(run, check_k(k))
    if table is not None:
        try:
            found = similar_users_in_driver(table, None, threshold, k, lsh)
            pairs = run.sparkSession.createDataFrame(found.pairs)
            result = SimilarSets(pairs=pairs, stats=found.stats, searched_in_driver=True)
            return result, search_parameters(threshold, k, lsh)
        except TooManyCandidates:
            pass
    return _spark_search(run, threshold, k, lsh), search_parameters(threshold, k, lsh)


def _spark_search(
    run: DataFrame, threshold: float | str, k: int | None, lsh: LshOptions
) -> SimilarSets:
    """The Spark stages' search (:func:`sparkeval.lsh.similar.similar_sets`)."""
    params = lsh.banding(threshold)
    cap = check_max_bucket(lsh.max_bucket)
    result = similar_sets(
        user_sets(run, k), threshold, lsh.hasher(), params, "query_id", "items", cap
    )
    result.pairs = result.pairs.select(
        F.col("a").alias("user_a"), F.col("b").alias("user_b"), F.col("jaccard")
    )
    return result


class _SparkSearch:
    """A run's result of the Spark stages."""

    def __init__(self, result: SimilarSets) -> None:
        self.result = result
        self.stats = result.stats

    def pairs(self, spark: SparkSession) -> DataFrame:
        return self.result.pairs

    def release(self) -> None:
        self.result.release()


class _DriverSearch:
    """A run's result of the driver (:mod:`sparkeval.lsh.driver_users`)."""

    def __init__(self, result: DriverSimilarSets) -> None:
        self.result = result
        self.stats = result.stats

    def pairs(self, spark: SparkSession) -> DataFrame:
        return spark.createDataFrame(self.result.pairs)

    def release(self) -> None:
        """Nothing is cached."""


_Search = _SparkSearch | _DriverSearch


def _searches(
    spark: SparkSession, config: SimilarUsersConfig
) -> tuple[RunTable, dict[str, _Search]]:
    """The search of each run of the input (every run, or ``--run-id``'s), in run
    order: in the driver when the input is small (:mod:`sparkeval.lsh.driver_users`),
    else by the Spark stages."""
    rows = read_run_rows(spark, config.run)
    k = check_k(config.k)
    collected = collect_small_runs(rows, config.run, config.run_id, k)
    runs, tables = collected or (checked_runs(rows, config.run, config.run_id), None)
    searches: dict[str, _Search] = {}
    try:
        for run_id in runs.ids:
            table = None if tables is None else tables[run_id]
            searches[run_id] = _search(runs, run_id, table, tables is not None, config, k)
    except BaseException:
        for search in searches.values():
            search.release()
        runs.release()
        raise
    return runs, searches


def _search(
    runs: RunTable,
    run_id: str,
    table: pa.Table | None,
    collected: bool,
    config: SimilarUsersConfig,
    k: int | None,
) -> _Search:
    """The search of one run: its collected rows (``table``) in the driver, else (or
    when they make too many candidates) by the Spark stages."""
    label, named = runs.run_label(run_id), _named(runs, run_id)
    if table is not None:
        try:
            found = similar_users_in_driver(table, config.run, config.threshold, k, config, label)
            status(f"[driver] {named}{table.num_rows} run rows: searched in the driver")
            return _DriverSearch(found)
        except TooManyCandidates as many:
            status(f"[driver] {named}{many}, too many for the driver: searching with Spark")
    run = runs.rows_of(run_id)
    if collected and table is None:  # rows the driver does not take: checked here
        check_repeated_items(run, config.run, label)
    return _SparkSearch(_spark_search(run, config.threshold, k, config))


def _named(runs: RunTable, run_id: str) -> str:
    """``run ID: `` in a status line when the input holds several runs."""
    return f"run {run_id}: " if len(runs.ids) > 1 else ""


def _write_pairs(spark: SparkSession, searches: dict[str, _Search], path: Path) -> dict[str, int]:
    """Every run's pairs as ``run_id, user_a, user_b, jaccard``, run after run: by
    pyarrow when the driver searched every run (a run's pairs sorted by user), else
    by Spark. Returns the pairs written of each run."""
    in_driver = {r: s.result.pairs for r, s in searches.items() if isinstance(s, _DriverSearch)}
    if len(in_driver) == len(searches):
        return write_driver_pairs(in_driver, path)
    frames = [
        search.pairs(spark).select(F.lit(run_id).alias("run_id"), "user_a", "user_b", "jaccard")
        for run_id, search in searches.items()
    ]
    write_parquet(functools.reduce(lambda a, b: a.union(b), frames), path)
    from sparkeval.io.readers import spark_location, spark_reader

    written = spark_reader(spark, str(path)).parquet(spark_location(str(path)))
    counts = {r["run_id"]: r["count"] for r in written.groupBy("run_id").count().collect()}
    return {run_id: counts.get(run_id, 0) for run_id in searches}


def run_similar_users(spark: SparkSession, config: SimilarUsersConfig) -> dict[str, Any]:
    """Read the runs, find each run's similar users, write ``pairs.parquet`` (with a
    ``run_id`` column) + ``summary.json`` (each run's entry under ``runs``; one
    run's also at the top).

    Returns the summary that was written.
    """
    config.preflight()
    start = time.perf_counter()
    status(f"[read] {config.run}")
    search_parameters(config.threshold, config.k, config)  # its checks, before the read
    runs, searches = _searches(spark, config)
    for run_id, search in searches.items():
        status(
            f"[candidates] {_named(runs, run_id)}{search.stats.get('candidate_pairs', 0)} "
            f"candidate pairs of {search.stats.get('sets', 0)} users"
        )
    status("[write] verifying and writing the pairs")
    stats = {run_id: search.stats for run_id, search in searches.items()}
    try:
        return write_outputs(config, stats, lambda path: _write_pairs(spark, searches, path), start)
    finally:
        for search in searches.values():
            search.release()
        runs.release()
