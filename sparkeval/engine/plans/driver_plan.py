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
stage, or none when the frames hold local data
(:mod:`sparkeval.engine.plans.local_rows`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.engine.plans.arrow_job import plain_rows_by_one_job
from sparkeval.engine.plans.local_rows import (
    frame_types,
    held_in_driver,
    plain_local_arrow,
    side_by_side,
)
from sparkeval.engine.plans.python_rows import TooManyRows, plain_parallelized
from sparkeval.engine.transport import result_blobs
from sparkeval.engine.worker.assemble import EvalOptions, evaluated_wide
from sparkeval.engine.worker.exact_summary import combine, partition_sums
from sparkeval.formats import (
    BAD,
    DEFAULT_RUN_ID,
    IS_QRELS,
    SHIPPED_VALUE,
    TIE_KEY,
    found_run_ids,
)
from sparkeval.io.readers import GRADE_BOUND, ID_TYPES, NUMERIC_TYPES
from sparkeval.io.utf8_check import first_invalid_utf8
from sparkeval.measures import Measure
from sparkeval.spark import spark_type

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

#: largest estimated input (run and qrels together) evaluated in the driver
DRIVER_BYTES = 16 << 20
#: largest estimated input collected by a single task
SINGLE_TASK_BYTES = 1 << 20
#: Spark's estimate of an input whose size it does not know (``Long.MaxValue``)
UNKNOWN_BYTES = (1 << 63) - 1
#: inputs of unknown size are evaluated in the driver when each has at most this many
#: rows (a job collecting at most one more finds out) ...
PROBE_ROWS = 100_000
#: ... and at most this many partitions (one task reads them, up to
#: ``PROBE_ROWS + 1`` rows)
PROBE_PARTITIONS = 8
#: what the rows of such inputs take at most in the driver (two inputs of
#: ``PROBE_ROWS`` rows, about 80 bytes each): they are probed only while this fits
#: in :data:`DRIVER_BYTES`
PROBE_BYTES = 16 << 20


def fits_in_driver(estimated_bytes: int | None) -> bool:
    """Whether inputs of this estimated size are evaluated in the driver."""
    return estimated_bytes is not None and estimated_bytes <= DRIVER_BYTES


def collects_in_one_task(estimated_bytes: int | None) -> bool:
    """Whether inputs of this estimated size are collected by one task."""
    return estimated_bytes is not None and estimated_bytes <= SINGLE_TASK_BYTES


def _driver_rows(run_df: DataFrame, qrels_df: DataFrame, checked_value) -> DataFrame:
    """Run rows and qrels rows as one frame: ``run_id`` (null on qrels rows),
    ``query_id, doc_id, _value`` and ``_is_qrels`` (and ``_tie``, null on qrels rows,
    when the run rows have tie keys); ``checked_value(name)`` fails the
    job on a row carrying a ``_bad`` message."""
    from pyspark.sql import functions as F

    ties = TIE_KEY in run_df.columns

    def rows(df: DataFrame, run_id: Column, value: str, is_qrels: bool) -> DataFrame:
        tie = F.lit(None).cast(spark_type("double")) if is_qrels else F.col(TIE_KEY)
        return df.select(
            run_id.cast(spark_type("string")).alias("run_id"),
            "query_id",
            "doc_id",
            checked_value(value).cast(spark_type("double")).alias(SHIPPED_VALUE),
            F.lit(is_qrels).alias(IS_QRELS),
            *([tie.alias(TIE_KEY)] if ties else []),
        )

    return rows(run_df, F.col("run_id"), "score", False).unionByName(
        rows(qrels_df, F.lit(None), "relevance", True)
    )


def _split(rows: pa.Table) -> tuple[pa.Table, pa.Table]:
    """(run table, qrels table) of the collected rows."""
    is_qrels = rows.column(IS_QRELS)
    run = rows.filter(pc.invert(is_qrels))
    qrels = rows.filter(is_qrels)
    run_table = pa.table(
        {
            "run_id": run.column("run_id"),
            "query_id": run.column("query_id"),
            "doc_id": run.column("doc_id"),
            "score": run.column(SHIPPED_VALUE),
            **({TIE_KEY: run.column(TIE_KEY)} if TIE_KEY in run.column_names else {}),
        }
    )
    qrels_table = pa.table(
        {
            "query_id": qrels.column("query_id"),
            "doc_id": qrels.column("doc_id"),
            "relevance": qrels.column(SHIPPED_VALUE).cast(pa.int64()),
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
    checked_value, recover = checks
    try:
        rows = _driver_rows(run_df, qrels_df, checked_value)
        if collects_in_one_task(estimated_bytes):
            rows = rows.coalesce(1)
        collected = rows.toArrow()
    except Exception as exc:
        raise recover(exc) from exc
    return _evaluate_collected(spark, collected, task)


def evaluate_plain_in_driver(
    spark: SparkSession,
    run_df: DataFrame,
    qrels_df: DataFrame,
    task: tuple[Sequence[Measure], EvalOptions, Sequence[str] | None],
    estimated_bytes: int | None,
    row_limit: int | None = None,
) -> tuple[DeferredBlobs, dict[str, Any], list[str]] | None:
    """What :func:`evaluate_in_driver` gives, for plain DataFrames at a fraction of the
    plan-building cost; None when the inputs are not plain (the caller then takes the
    checked path, which gives the error a bad row deserves), or when an input has more
    than ``row_limit`` rows (inputs of unknown size: the caller distributes them).

    Plain inputs have canonical column names, ids of Spark type string or integer and
    numeric values (:func:`plain_projections`); they are collected with nothing but
    casts, and checked here in Arrow: no null id, run id or value, and every grade a
    whole number within ±1e9 (:func:`plain_rows_are_valid`). The casts are those of the
    checked path, so the rows, and the values, are the same to the bit.

    Local relations (frames made from local data, not cached) are written as Arrow by
    the driver's JVM, without a job (:mod:`sparkeval.engine.plans.local_rows`); frames
    of Python rows (inputs of unknown size, ``row_limit`` given) are read back from the
    driver, without a job (:mod:`sparkeval.engine.plans.python_rows`); other inputs
    are collected as they are by one RDD job (:mod:`sparkeval.engine.plans.arrow_job`),
    or else through the SQL projection of casts (one job; inputs of unknown size, one
    job each).

    Example: 5 queries x 10 docs in a warm local session, made with
    ``spark.createDataFrame`` of pandas or of a list, is no Spark job; cached, it is
    one job, with no new query plan.
    """
    run_types, qrels_types = frame_types(run_df), frame_types(qrels_df)
    projections = plain_projections(run_types, qrels_types)
    if projections is None:
        return None
    has_run_id = "run_id" in dict(run_types)
    collected = None
    # a local relation's size is known, so only inputs of unknown size have a row limit
    if row_limit is None and held_in_driver(run_df, qrels_df):
        collected = plain_local_arrow(run_df, qrels_df, run_types, qrels_types)
    elif row_limit is not None:
        try:
            collected = plain_parallelized(run_df, qrels_df, run_types, qrels_types, row_limit)
        except TooManyRows:
            return None
    if collected is None and row_limit is None:
        one_task_each = collects_in_one_task(estimated_bytes)
        collected = plain_rows_by_one_job(run_df, qrels_df, run_types, qrels_types, one_task_each)
    if collected is None:
        collected = plain_rows_by_a_job(run_df, qrels_df, projections, estimated_bytes, row_limit)
    if collected is None:
        return None
    measure_list, options, run_ids = task
    if not has_run_id:
        collected = with_default_run_id(collected)
        if run_ids is None:
            run_ids = [DEFAULT_RUN_ID]
    if not plain_rows_are_valid(collected):
        return None
    return _evaluate_collected(spark, collected, (measure_list, options, run_ids))


def plain_rows_by_a_job(
    run_df: DataFrame,
    qrels_df: DataFrame,
    projections: tuple[list[str], list[str]],
    estimated_bytes: int | None,
    row_limit: int | None = None,
) -> pa.Table | None:
    """The plain rows collected as Arrow by one Spark job; None when it fails (the
    checked path runs it again and reports the failure its way), or when an input has
    more than ``row_limit`` rows.

    With ``row_limit``, each input is collected by a job of its own, the two jobs
    running together: its partitions read by one task, up to ``row_limit + 1`` rows.
    """
    run_columns, qrels_columns = projections
    run_rows = run_df.selectExpr(*run_columns)
    qrels_rows = qrels_df.selectExpr(*qrels_columns)
    if row_limit is not None:
        return _limited_rows(run_rows, qrels_rows, row_limit)
    rows = run_rows.unionByName(qrels_rows)
    if collects_in_one_task(estimated_bytes):
        rows = rows.coalesce(1)
    try:
        return rows.toArrow()
    except Exception:
        return None


def _limited_rows(run_rows: DataFrame, qrels_rows: DataFrame, row_limit: int) -> pa.Table | None:
    """The rows of both projected inputs, or None when one has more than ``row_limit``
    rows or a job fails."""
    limited = [rows.coalesce(1).limit(row_limit + 1) for rows in (run_rows, qrels_rows)]
    try:
        tables = side_by_side(limited[0].toArrow, limited[1].toArrow)
    except Exception:
        return None
    if max(table.num_rows for table in tables) > row_limit:
        return None
    schema = pa.schema([field.with_nullable(True) for field in tables[0].schema])
    return pa.concat_tables([table.cast(schema) for table in tables])


def probed(estimated_bytes: int | None) -> bool:
    """Whether inputs of this estimated size are probed: Spark does not know their size
    (an RDD made a DataFrame, such as ``spark.createDataFrame`` of a list of rows),
    and :data:`PROBE_BYTES` fits in the driver."""
    unknown = estimated_bytes is not None and estimated_bytes >= UNKNOWN_BYTES
    return unknown and fits_in_driver(PROBE_BYTES)


def few_partitions(*frames: DataFrame) -> bool:
    """Whether each frame has at most :data:`PROBE_PARTITIONS` partitions (no job)."""
    try:
        return all(f._jdf.rdd().getNumPartitions() <= PROBE_PARTITIONS for f in frames)
    except Exception:  # a Connect DataFrame has no JVM handle
        return False


#: Spark types of the ids and run ids the plain path collects (as their text)
_PLAIN_ID_TYPES = frozenset(ID_TYPES) - {"binary", "void"}
#: Spark types of the scores and grades the plain path collects (as doubles)
_PLAIN_VALUE_TYPES = frozenset(NUMERIC_TYPES)


def _quoted(column: str) -> str:
    """``column`` as a SQL identifier."""
    return "`" + column.replace("`", "``") + "`"


def plain_projections(
    run_types: Sequence[tuple[str, str]], qrels_types: Sequence[tuple[str, str]]
) -> tuple[list[str], list[str]] | None:
    """The SQL projections (run, qrels) of :func:`_driver_rows`' columns without the
    row checks, or None when a column is missing or of a type that needs them.

    Example:
        >>> run = [("query_id", "string"), ("doc_id", "bigint"), ("score", "float")]
        >>> qrels = [("query_id", "string"), ("doc_id", "bigint"), ("relevance", "int")]
        >>> plain_projections(run, qrels)[0]  # doctest: +NORMALIZE_WHITESPACE
        ['CAST(NULL AS STRING) AS run_id', 'CAST(`query_id` AS STRING) AS query_id',
         'CAST(`doc_id` AS STRING) AS doc_id', 'CAST(`score` AS DOUBLE) AS _value',
         'false AS _is_qrels']
        >>> plain_projections(run, [("query_id", "string")]) is None
        True
    """

    def projection(types: Sequence[tuple[str, str]], value: str, is_qrels: bool):
        kinds = dict(types)
        has_run_id = not is_qrels and "run_id" in kinds
        ids = ["run_id"] * has_run_id + ["query_id", "doc_id"]
        if any(kinds.get(c) not in _PLAIN_ID_TYPES for c in ids):
            return None
        if kinds.get(value) not in _PLAIN_VALUE_TYPES or BAD in kinds:
            return None
        return [
            # a run without run ids gets DEFAULT_RUN_ID in the driver: a null costs
            # Spark's Arrow writer a bit, the same text on every row costs it bytes
            *([] if has_run_id else ["CAST(NULL AS STRING) AS run_id"]),
            *(f"CAST({_quoted(c)} AS STRING) AS {c}" for c in ids),
            f"CAST({_quoted(value)} AS DOUBLE) AS {SHIPPED_VALUE}",
            f"{str(is_qrels).lower()} AS {IS_QRELS}",
        ]

    run = projection(run_types, "score", False)
    qrels = projection(qrels_types, "relevance", True)
    return None if run is None or qrels is None else (run, qrels)


def with_default_run_id(rows: pa.Table) -> pa.Table:
    """Collected plain rows of a run without run ids, with ``DEFAULT_RUN_ID`` on its
    rows (the qrels rows keep a null run id).

    Example:
        >>> rows = pa.table({"run_id": pa.array([None, None], pa.string()),
        ...     "_is_qrels": [False, True]})
        >>> with_default_run_id(rows).column("run_id").to_pylist()
        ['run', None]
    """
    run_id = pc.if_else(
        rows.column(IS_QRELS), pa.scalar(None, pa.string()), pa.scalar(DEFAULT_RUN_ID)
    )
    return rows.set_column(rows.schema.get_field_index("run_id"), "run_id", run_id)


def plain_rows_are_valid(rows: pa.Table) -> bool:
    """Whether collected plain rows pass the checked path's row checks: no null id,
    run id or value, every id valid UTF-8 (a Spark string keeps its bytes), and every
    grade a whole number within ±1e9.

    Example:
        >>> rows = pa.table({"run_id": ["r", None], "query_id": ["q", "q"],
        ...     "doc_id": ["a", "a"], "_value": [0.5, 2.0], "_is_qrels": [False, True]})
        >>> plain_rows_are_valid(rows)
        True
        >>> plain_rows_are_valid(rows.set_column(3, "_value", pa.array([0.5, 2.5])))
        False
    """
    is_qrels = rows.column(IS_QRELS)
    run_ids = rows.column("run_id").filter(pc.invert(is_qrels))
    if run_ids.null_count or any(rows.column(c).null_count for c in _PLAIN_CHECKED):
        return False
    if any(first_invalid_utf8(rows.column(c)) is not None for c in _PLAIN_TEXT):
        return False
    grades = rows.column(SHIPPED_VALUE).filter(is_qrels)
    if len(grades) == 0:
        return True
    if not pc.all(pc.equal(grades, pc.round(grades))).as_py():  # false for NaN too
        return False
    return pc.max(pc.abs(grades)).as_py() <= GRADE_BOUND


#: the text columns of the plain rows
_PLAIN_TEXT = ("run_id", "query_id", "doc_id")
#: columns that may hold no null in the plain rows (the run id is checked on run rows)
_PLAIN_CHECKED = ("query_id", "doc_id", SHIPPED_VALUE)


def _evaluate_collected(
    spark: SparkSession,
    collected: pa.Table,
    task: tuple[Sequence[Measure], EvalOptions, Sequence[str] | None],
) -> tuple[DeferredBlobs, dict[str, Any], list[str]]:
    """(deferred blob frame, summary statistics, run ids) of the collected rows."""
    measure_list, options, run_ids = task
    run_table, qrels_table = _split(collected)
    if run_ids is None:
        run_ids = found_run_ids(pc.unique(run_table.column("run_id")).to_pylist())
    run_ids = list(run_ids)
    wide = evaluated_wide(run_table, qrels_table, measure_list, options, run_ids)
    partials = partition_sums(wide, measure_list)
    stats = combine(partials.to_pylist(), measure_list)
    return DeferredBlobs(spark, wide, partials), stats, run_ids


class DeferredBlobs:
    """The results of a driver evaluation: its wide rows (``wide``), from which the
    per-query frames are made as local data, and its partial sums. They are encoded as
    result blobs, and the blobs made a Spark DataFrame (a local relation), only when
    asked for: a call that needs only the report encodes nothing and creates no
    DataFrame. It answers ``sparkSession`` and ``unpersist()`` as the cached blob frame
    of the distributed plan does."""

    def __init__(self, spark: SparkSession, wide: pa.Table, partials: pa.RecordBatch) -> None:
        self.sparkSession = spark
        self.wide = wide
        self.partials = partials

    @cached_property
    def table(self) -> pa.Table:
        """The result blobs: the wide rows, then the partial sums."""
        partials = pa.Table.from_batches([self.partials])
        batches = [
            *result_blobs.wide_blobs(self.wide),
            result_blobs.blob_batch(result_blobs.PARTIAL, partials),
        ]
        return pa.Table.from_batches(batches)

    @cached_property
    def frame(self) -> DataFrame:
        return self.sparkSession.createDataFrame(self.table, result_blobs.blob_schema())

    def unpersist(self) -> None:
        """Nothing is cached: the blobs are held in this process."""
