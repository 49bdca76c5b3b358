"""Small inputs on Spark: one job brings the rows to the driver, which evaluates them.

A unit test or a notebook cell evaluating a few thousand rows pays for Spark's
machinery, not for the measures: an exchange of two stages, a Python worker, a cached
result and a job to find the run ids. When Spark's size estimate of both inputs
(:func:`~sparkeval.engine.plans.spark_engine.plan_bytes`, no job) is at most
:data:`DRIVER_BYTES`, the run and qrels rows are instead collected as Arrow in one job
(the same projection and the same row checks as the distributed plan: a bad row fails
that job with its message) and evaluated in the driver by the same kernels, so the
values are the same to the bit. The results are handed back as the same blob frame
the distributed plan caches (a local relation: no job until it is used).

Example: 5 queries x 10 docs evaluated in a warm session is one Spark job of one
stage.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.engine.transport import result_blobs
from sparkeval.engine.worker.assemble import EvalOptions, evaluate_tables, undefined_as_null
from sparkeval.engine.worker.exact_summary import combine, partition_sums
from sparkeval.measures import Measure

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

#: largest estimated input (run and qrels together) evaluated in the driver
DRIVER_BYTES = 16 << 20
#: largest estimated input collected by a single task
SINGLE_TASK_BYTES = 1 << 20

_IS_QRELS = "_is_qrels"


def fits_in_driver(estimated_bytes: int | None) -> bool:
    """Whether inputs of this estimated size are evaluated in the driver."""
    return estimated_bytes is not None and estimated_bytes <= DRIVER_BYTES


def collects_in_one_task(estimated_bytes: int | None) -> bool:
    """Whether inputs of this estimated size are collected by one task."""
    return estimated_bytes is not None and estimated_bytes <= SINGLE_TASK_BYTES


def _driver_rows(run_df: DataFrame, qrels_df: DataFrame, checked_value) -> DataFrame:
    """Run rows and qrels rows as one frame: ``run_id`` (null on qrels rows),
    ``query_id, doc_id, _value`` and ``_is_qrels``; ``checked_value(name)`` fails the
    job on a row carrying a ``_bad`` message."""
    from pyspark.sql import functions as F

    def rows(df: DataFrame, run_id: Column, value: str, is_qrels: bool) -> DataFrame:
        return df.select(
            run_id.cast("string").alias("run_id"),
            "query_id",
            "doc_id",
            checked_value(value).cast("double").alias("_value"),
            F.lit(is_qrels).alias(_IS_QRELS),
        )

    return rows(run_df, F.col("run_id"), "score", False).unionByName(
        rows(qrels_df, F.lit(None), "relevance", True)
    )


def _split(rows: pa.Table) -> tuple[pa.Table, pa.Table]:
    """(run table, qrels table) of the collected rows."""
    is_qrels = rows.column(_IS_QRELS)
    run = rows.filter(pc.invert(is_qrels))
    qrels = rows.filter(is_qrels)
    run_table = pa.table(
        {
            "run_id": run.column("run_id"),
            "query_id": run.column("query_id"),
            "doc_id": run.column("doc_id"),
            "score": run.column("_value"),
        }
    )
    qrels_table = pa.table(
        {
            "query_id": qrels.column("query_id"),
            "doc_id": qrels.column("doc_id"),
            "relevance": qrels.column("_value").cast(pa.int64()),
        }
    )
    return run_table, qrels_table


def evaluate_in_driver(
    spark: SparkSession,
    run_df: DataFrame,
    qrels_df: DataFrame,
    task: tuple[Sequence[Measure], EvalOptions, Sequence[str] | None],
    checks: tuple[Callable[[str], Column], Callable[[BaseException], BaseException]],
    estimated_bytes: int | None,
) -> tuple[DeferredBlobs, dict[str, Any], list[str]]:
    """(deferred blob frame, summary statistics, run ids) of normalised small inputs.

    Args:
        task: the measures, the options and the run ids (None: those in the run).
        checks: ``checked_value(name)``, the value column that fails the job on a row
            carrying a ``_bad`` message, and ``recover(exc)``, the input error a failed
            job carries.
        estimated_bytes: Spark's size estimate; up to :data:`SINGLE_TASK_BYTES` the
            rows are collected by one task (fewer tasks to start), else by one task
            per input partition.
    """
    measure_list, options, run_ids = task
    checked_value, recover = checks
    try:
        rows = _driver_rows(run_df, qrels_df, checked_value)
        if collects_in_one_task(estimated_bytes):
            rows = rows.coalesce(1)
        collected = rows.toArrow()
    except Exception as exc:
        raise recover(exc) from exc
    run_table, qrels_table = _split(collected)
    if run_ids is None:
        run_ids = sorted(pc.unique(run_table.column("run_id")).drop_null().to_pylist())
    run_ids = list(run_ids)
    wide = evaluate_tables(run_table, qrels_table, measure_list, options, run_ids=run_ids)
    wide = undefined_as_null(wide, len(measure_list))
    partials = partition_sums(wide, measure_list)
    stats = combine(partials.to_pylist(), measure_list)
    batches = [
        *result_blobs.wide_blobs(wide),
        result_blobs.blob_batch(result_blobs.PARTIAL, pa.Table.from_batches([partials])),
    ]
    return DeferredBlobs(spark, pa.Table.from_batches(batches)), stats, run_ids


class DeferredBlobs:
    """The result blobs of a driver evaluation, made a Spark DataFrame (a local
    relation) only when the per-query rows or the summary frame are asked for: a call
    that needs only the report creates no DataFrame at all. It answers ``sparkSession``
    and ``unpersist()`` as the cached blob frame of the distributed plan does."""

    def __init__(self, spark: SparkSession, table: pa.Table) -> None:
        self.sparkSession = spark
        self.table = table

    @cached_property
    def frame(self) -> DataFrame:
        return self.sparkSession.createDataFrame(self.table, result_blobs.blob_schema())

    def unpersist(self) -> None:
        """Nothing is cached: the blobs are held in this process."""
