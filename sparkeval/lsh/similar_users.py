"""All user pairs whose lists have Jaccard >= T.

Each user's set is the items of their list (the top k by score when ``--k`` is
given, ties by item id descending). Pairs are found with MinHash LSH and verified
exactly, so every reported pair and value is exact; a true pair is missed only
when it shares no band (probability 1 - P(J), P the S-curve; ``summary.json`` gives
P(T)) or falls only in a bucket skipped by ``--max-bucket`` (counted in the summary).

Outputs in ``--out``: ``pairs.parquet`` (``user_a, user_b, jaccard``, user_a <
user_b) and ``summary.json``.

The command is :mod:`sparkeval.commands.similar_users`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparkeval.io.lists import check_k, checked_run, read_run_rows, top_k
from sparkeval.lsh.candidates import bucket_report, check_max_bucket
from sparkeval.lsh.driver_sets import DriverSimilarSets, TooManyCandidates
from sparkeval.lsh.driver_users import collect_run, collect_small_run, similar_users_in_driver
from sparkeval.lsh.options import DEFAULT_LSH, LshOptions
from sparkeval.lsh.similar import SimilarSets, similar_sets
from sparkeval.output import atomic_output_dir, write_parquet, write_summary
from sparkeval.status import status

if TYPE_CHECKING:
    from sparkeval.commands.similar_users import SimilarUsersConfig


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


def search_parameters(threshold: float | str, k: int | None, lsh: LshOptions) -> dict[str, Any]:
    """The ``parameters`` entry of the summary: threshold, cutoff, signature, banding."""
    params = lsh.banding(threshold)
    return {
        "threshold": params.threshold,
        "k": k,
        **lsh.signature(),
        "recall_target": lsh.recall if params.chosen == "auto" else None,
        "max_bucket": check_max_bucket(lsh.max_bucket),
        **{f"banding_{key}": value for key, value in params.as_dict().items()},
    }


class _SparkSearch:
    """The Spark stages' result, written by Spark."""

    def __init__(self, result: SimilarSets) -> None:
        self.result = result
        self.stats = result.stats

    def write(self, path: Path) -> int:
        write_parquet(self.result.pairs, path)
        from sparkeval.io.readers import spark_location, spark_reader

        spark = self.result.pairs.sparkSession
        return spark_reader(spark, str(path)).parquet(spark_location(str(path))).count()

    def release(self) -> None:
        self.result.release()


class _DriverSearch:
    """The driver's result (:mod:`sparkeval.lsh.driver_users`), written by pyarrow."""

    def __init__(self, result: DriverSimilarSets) -> None:
        self.result = result
        self.stats = result.stats

    def write(self, path: Path) -> int:
        path.mkdir(parents=True)
        pq.write_table(self.result.pairs, path / "part-00000.parquet")
        return self.result.pairs.num_rows

    def release(self) -> None:
        """Nothing is cached."""


def _search(spark: SparkSession, config: SimilarUsersConfig) -> _SparkSearch | _DriverSearch:
    """The search of the configured run: in the driver when the run is small
    (:mod:`sparkeval.lsh.driver_users`), else by the Spark stages."""
    rows = read_run_rows(spark, config.run)
    k = check_k(config.k)
    table = collect_small_run(rows, config.run, config.run_id, k)
    if table is not None:
        try:
            found = similar_users_in_driver(table, config.run, config.threshold, k, config)
            status(f"[driver] {table.num_rows} run rows: searched in the driver")
            return _DriverSearch(found)
        except TooManyCandidates as many:
            status(f"[driver] {many}, too many for the driver: searching with Spark")
    run = checked_run(rows, config.run, config.run_id)
    return _SparkSearch(_spark_search(run, config.threshold, k, config))


def run_similar_users(spark: SparkSession, config: SimilarUsersConfig) -> dict[str, Any]:
    """Read a run, find similar users, write ``pairs.parquet`` + ``summary.json``.

    Returns the summary that was written.
    """
    config.preflight()
    start = time.perf_counter()
    status(f"[read] {config.run}")
    parameters = search_parameters(config.threshold, config.k, config)
    search = _search(spark, config)
    status(
        f"[candidates] {search.stats.get('candidate_pairs', 0)} candidate pairs of "
        f"{search.stats.get('sets', 0)} users; verifying and writing"
    )
    try:
        with atomic_output_dir(config.out) as staging:
            pairs_path = staging / "pairs.parquet"
            write_start = time.perf_counter()
            written = search.write(pairs_path)
            stats = dict(search.stats)
            stats["timings_s"]["expand_and_write"] = round(time.perf_counter() - write_start, 3)
            stats["timings_s"]["total"] = round(time.perf_counter() - start, 3)
            summary = {
                "command": "similar-users",
                "run": config.run,
                "run_id": config.run_id,
                "parameters": parameters,
                "counts": {
                    "users": stats.pop("sets"),
                    "users_with_empty_list": stats.pop("empty_sets"),
                    "pairs": written,
                    **{k: v for k, v in stats.items() if k != "timings_s"},
                },
                "estimated_recall_at_threshold": parameters[
                    "banding_estimated_recall_at_threshold"
                ],
                **bucket_report(stats),
                "timings_s": stats["timings_s"],
            }
            counts = summary["counts"]
            listed = max(1, counts["users"] - counts["users_with_empty_list"])
            # the candidate stage's load: candidate pairs per user with a list
            summary["candidates_per_user"] = round(counts.get("candidate_pairs", 0) / listed, 3)
            write_summary(staging, summary, "similar-users", config.input_paths())
    finally:
        search.release()
    return summary
