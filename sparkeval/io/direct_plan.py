"""The direct plan of the command line's inputs (:func:`plan_direct_inputs`): whether
the Python workers can read every run and the qrels themselves (Parquet through
:mod:`sparkeval.io.direct`, under ``--where`` when they can apply it:
:mod:`sparkeval.io.scan_plan`; TREC text; CSV and TSV), and the run ids they hold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from sparkeval.io.columns import parse_mapping
from sparkeval.io.direct import (
    all_direct_formats,
    parquet_run_ids,
    plan_direct,
    plan_direct_text,
)
from sparkeval.io.direct_input import DirectInput, DirectPlan
from sparkeval.io.readers import (
    default_run_id,
    detect_format,
    distinct_values,
    spark_location,
    spark_reader,
)
from sparkeval.io.sql_text import spark_condition

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def plan_direct_inputs(
    spark: SparkSession | None,
    runs: Sequence[str],
    qrels: str,
    run_format: str | None,
    qrels_format: str | None,
    run_columns: str | Mapping[str, str] | None,
    qrels_columns: str | Mapping[str, str] | None,
    run_where: str | None = None,
    qrels_where: str | None = None,
    why_not: list[str] | None = None,
) -> DirectPlan | None:
    """The direct plan of every input, or None when any of them is for Spark to read
    (then ``why_not``, when given, gets a line saying which input and why).

    The run ids of a file without a run id column come from its name (as the Spark
    readers name them); a run id column is read here
    (:func:`~sparkeval.io.direct.parquet_run_ids`), or,
    under ``run_where``, by one Spark job over that column (over the rows it keeps).
    Two inputs holding the same run id are left to the Spark readers to report.
    ``run_where`` and ``qrels_where`` (``--where``, ``--qrels-where``) are taken for
    Parquet inputs whose condition the workers can apply
    (:mod:`sparkeval.io.scan_filter`).  Without a session (``spark`` None)
    an input whose plan needs one (a condition, a run id column whose values cannot
    be read here) gives None.
    """
    reasons = [] if why_not is None else why_not

    def refuse(reason: str) -> DirectPlan | None:
        reasons.append(reason)
        return None

    if not all_direct_formats(runs, qrels, run_format, qrels_format):
        return refuse("an input in a format the direct readers do not read (JSON Lines)")
    if spark is None and (run_where is not None or qrels_where is not None):
        return refuse("a condition on the rows (--where, --qrels-where)")
    run_plans = _run_plans(spark, runs, run_format, run_columns, run_where, reasons)
    if run_plans is None:
        return None
    qrels_mapping = parse_mapping(qrels_columns, "qrels")
    qrels_fmt = detect_format(qrels, qrels_format)
    qrels_plan = _plan_one(qrels, "qrels", qrels_fmt, qrels_mapping, spark, qrels_where)
    if qrels_plan is None:
        return refuse(f"{qrels}: columns the direct readers do not find or do not read")
    run_ids = _run_ids(spark, run_plans, run_where, reasons)
    if run_ids is None:
        return None
    return DirectPlan(run_plans, qrels_plan, run_ids)


def plan_direct_runs(
    spark: SparkSession | None,
    runs: Sequence[str],
    run_format: str | None,
    run_columns: str | Mapping[str, str] | None,
    why_not: list[str] | None = None,
) -> tuple[tuple[DirectInput, ...], tuple[str, ...]] | None:
    """The direct plans of run inputs alone and their run ids, or None (the reason in
    ``why_not``) when one of them is for Spark's readers: :func:`plan_direct_inputs`
    without qrels."""
    reasons = [] if why_not is None else why_not
    if not all_direct_formats(runs, runs[0], run_format, run_format):
        reasons.append("an input in a format the direct readers do not read (JSON Lines)")
        return None
    run_plans = _run_plans(spark, runs, run_format, run_columns, None, reasons)
    if run_plans is None:
        return None
    run_ids = _run_ids(spark, run_plans, None, reasons)
    return None if run_ids is None else (run_plans, run_ids)


def _run_plans(
    spark: SparkSession | None,
    runs: Sequence[str],
    run_format: str | None,
    run_columns: str | Mapping[str, str] | None,
    run_where: str | None,
    reasons: list[str],
) -> tuple[DirectInput, ...] | None:
    """The direct plan of each run input, or None (a reason added)."""
    run_plans = []
    mapping = parse_mapping(run_columns, "run")
    for path in runs:
        fmt = detect_format(path, run_format)
        found = _plan_one(path, "run", fmt, mapping, spark, run_where)
        if found is None:
            reasons.append(f"{path}: columns the direct readers do not find or do not read")
            return None
        run_plans.append(found)
    return tuple(run_plans)


def _run_ids(
    spark: SparkSession | None,
    run_plans: Sequence[DirectInput],
    run_where: str | None,
    reasons: list[str],
) -> tuple[str, ...] | None:
    """The run ids of the planned run inputs, in input order, or None (a reason added):
    ids a plan cannot read, or one held by two inputs."""
    run_ids: list[str] = []
    for source in run_plans:
        if source.run_id is not None:
            ids: list[str] | None = [source.run_id]
        else:
            ids = _column_values(spark, source, run_where)
        if ids is None:
            reasons.append(f"{source.path}: run ids the direct readers do not read")
            return None
        shared = sorted(set(ids) & set(run_ids))
        if shared:
            reasons.append(f"{source.path}: run id {shared[0]!r} also in another run input")
            return None
        run_ids += ids
    return tuple(run_ids)


def _plan_one(
    path: str,
    kind: str,
    fmt: str,
    mapping: Mapping[str, str],
    spark: SparkSession | None,
    condition: str | None,
) -> DirectInput | None:
    """The direct plan of one input of a direct format, or None; ``condition`` is the
    input's SQL filter (None: every row)."""
    run_id = default_run_id(path) if kind == "run" else None
    if condition is not None:
        if fmt != "parquet" or spark is None:
            return None  # the Spark readers apply conditions to text
        from sparkeval.io.scan_plan import parquet_filter

        where = parquet_filter(spark, condition, path)
        if where is None:
            return None
        return plan_direct(path, kind, mapping, run_id, where=where)
    if fmt == "trec":
        return plan_direct_text(path, kind)
    if fmt in ("csv", "tsv"):
        from sparkeval.io.direct_csv import plan_direct_csv

        return plan_direct_csv(path, kind, fmt, mapping, run_id)
    return plan_direct(path, kind, mapping, run_id)


def _column_values(
    spark: SparkSession | None, source: DirectInput, where: str | None = None
) -> list[str] | None:
    """The distinct run ids of a run input with a run id column (nulls left out), of
    the rows the SQL condition ``where`` keeps: read here
    (:func:`~sparkeval.io.direct.parquet_run_ids`,
    CSV's :func:`~sparkeval.io.direct_csv.run_ids_in`), else by a Spark job over the
    column; None when a CSV file turns out not to be plain, or a Parquet file's values
    need a Spark job and there is no session."""
    if source.fmt in ("csv", "tsv"):
        from sparkeval.io.direct_csv import run_ids_in

        return run_ids_in(source)
    found = parquet_run_ids(source) if where is None else None
    if found is not None or spark is None:
        return found
    from pyspark.sql import functions as F

    column = dict(source.columns)["run_id"]
    table = spark_reader(spark, *source.files).parquet(*map(spark_location, source.files))
    if where is not None:
        table = table.where(spark_condition(where, "--where"))
    return distinct_values(table, F.col(f"`{column}`"))
