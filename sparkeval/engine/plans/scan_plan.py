"""DataFrames that are nothing but a scan of local Parquet files, read by the workers.

``sparkeval.evaluate(spark, spark.read.parquet(path), ...)`` or a DataFrame of a
Parquet catalog table (``spark.table(name)``) gives Spark nothing to compute but the
scan itself; handing its rows to a Python UDF would still convert every row of the
string columns to Arrow.  When both inputs are such scans (Spark's analysed plan is
the file relation itself, maybe under the table's alias: no projection, filter or
partition columns), the workers read the same files themselves instead, exactly as
the command line's direct read (:mod:`sparkeval.io.direct`), with the same checks and
the same fallback: a value the direct read does not judge sends the evaluation back
to the DataFrames.

A filtered, joined or computed DataFrame, one read from a partitioned directory or a
remote filesystem, and every DataFrame of a Spark Connect session are evaluated as
DataFrames.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from sparkeval.engine.formats import DEFAULT_RUN_ID
from sparkeval.io.columns import REQUIRED
from sparkeval.io.direct import DirectInput, DirectPlan, _column_values, plan_direct_files

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class ParquetScan:
    """What a DataFrame that only scans Parquet files reads.

    Attributes:
        files: the local files.
        columns: ``{DataFrame column: file column}``, in the DataFrame's order.
    """

    files: list[str]
    columns: dict[str, str]


def scanned_parquet(frame: DataFrame) -> ParquetScan | None:
    """The files and columns of ``frame`` when it is a bare scan of local Parquet files,
    maybe under a selection or renaming of columns; else None.

    Reads Spark's analysed plan: a ``LogicalRelation`` over a ``HadoopFsRelation`` in
    Parquet format without partition columns, under nothing but ``SubqueryAlias`` nodes
    (a catalog table's name) and at most one ``Project`` of columns, each a column of
    the files or such a column renamed (``select("q", col("d").alias("doc_id"))``).
    """
    jdf = getattr(frame, "_jdf", None)
    if jdf is None:  # Spark Connect: no plan in this process
        return None
    from py4j.protocol import Py4JError  # type: ignore[import-untyped]

    try:
        plan = _below_aliases(jdf.queryExecution().analyzed())
        columns = None
        if _kind(plan) == "Project":
            columns = _projected_columns(plan.projectList())
            if columns is None:
                return None
            plan = _below_aliases(plan.child())
        if _kind(plan) != "LogicalRelation":
            return None
        relation = plan.relation()
        if _kind(relation) != "HadoopFsRelation":
            return None
        if _kind(relation.fileFormat()) != "ParquetFileFormat":
            return None
        if relation.partitionSchema().length() != 0:
            return None
    except Py4JError:
        return None
    files = _local_paths(frame.inputFiles())
    if files is None:
        return None
    if columns is None:
        columns = {name: name for name in frame.columns}
    return ParquetScan(files, columns)


def _kind(node) -> str:
    return str(node.getClass().getSimpleName())


def _below_aliases(plan):
    while _kind(plan) == "SubqueryAlias":
        plan = plan.child()
    return plan


def _projected_columns(expressions) -> dict[str, str] | None:
    """``{output: source}`` of a projection of plain or renamed columns; None when an
    expression computes anything."""
    columns: dict[str, str] = {}
    for i in range(expressions.size()):
        expression = expressions.apply(i)
        name = str(expression.name())
        if _kind(expression) == "Alias":
            expression = expression.child()
        if _kind(expression) != "AttributeReference" or name in columns:
            return None
        columns[name] = str(expression.name())
    return columns


def _local_paths(uris: Sequence[str]) -> list[str] | None:
    """Local paths of ``file:`` URIs (``file:/a%20b.parquet`` is ``/a b.parquet``)."""
    paths = []
    for uri in uris:
        parsed = urlparse(uri)
        if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
            return None
        paths.append(unquote(parsed.path))
    return sorted(paths) or None


def _scan_input(frame: DataFrame, kind: str) -> DirectInput | None:
    needed = REQUIRED[kind]  # (run_id is optional)
    if not set(needed) <= set(frame.columns):
        return None  # the DataFrame path says what is missing
    scan = scanned_parquet(frame)
    if scan is None:
        return None
    wanted = (*needed, "run_id") if kind == "run" else needed
    mapping = {name: scan.columns[name] for name in wanted if name in scan.columns}
    files = scan.files
    label = files[0] if len(files) == 1 else f"{files[0]} and {len(files) - 1} more files"
    run_id = DEFAULT_RUN_ID if kind == "run" and "run_id" not in mapping else None
    # only the DataFrame's own columns: a "tag" column names runs in files read by
    # name, not in a DataFrame
    return plan_direct_files(files, label, kind, mapping, run_id, mapped_only=True)


def scanned_parquet_plan(
    spark: SparkSession, run: DataFrame, qrels: DataFrame
) -> DirectPlan | None:
    """The direct plan of two DataFrames that are bare scans of local Parquet files, or
    None when either is something else (or holds columns the direct read leaves to
    Spark: other types, a run id column that is not text, ...)."""
    run_input = _scan_input(run, "run")
    if run_input is None:
        return None
    qrels_input = _scan_input(qrels, "qrels")
    if qrels_input is None:
        return None
    if run_input.run_id is not None:
        run_ids = [run_input.run_id]
    else:
        found = _column_values(spark, run_input)
        if found is None:
            return None
        run_ids = found
    return DirectPlan((run_input,), qrels_input, tuple(run_ids))
