"""DataFrames that are nothing but a (filtered) scan of local Parquet files, read by
the workers.

``sparkeval.evaluate(spark, spark.read.parquet(path), ...)`` or a DataFrame of a
Parquet catalog table (``spark.table(name)``) gives Spark nothing to compute but the
scan itself; handing its rows to a Python UDF would still convert every row of the
string columns to Arrow.  When both inputs are such scans (Spark's analysed plan is
the file relation, maybe under the table's alias, selections and renamings of
columns, and filters the workers can apply: :mod:`sparkeval.io.scan_filter`),
the workers read the same files themselves instead, exactly as the command line's
direct read (:mod:`sparkeval.io.direct`), keep the rows the filters keep, compute a
run's score where the DataFrame computes it with arithmetic they give bit for bit
(:mod:`sparkeval.io.scan_values`), and apply the same checks with the same
fallback: a value the direct read does not judge sends the evaluation back to the
DataFrames.

A joined or otherwise computed DataFrame (a computed id, a function, a division, a
function in a filter), one
read from a partitioned directory or a remote filesystem, and every DataFrame of a
Spark Connect session are evaluated as DataFrames. Scanned qrels beside a computed run
are still read from their files on a local master (:func:`scanned_input`; see
``_read_scanned_qrels`` in :mod:`sparkeval.engine.plans.spark_engine`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from sparkeval.formats import DEFAULT_RUN_ID
from sparkeval.io.columns import REQUIRED
from sparkeval.io.direct import parquet_run_ids, plan_direct_files
from sparkeval.io.direct_input import DirectInput, DirectPlan
from sparkeval.io.readers import distinct_values
from sparkeval.io.scan_filter import Spec, both, condition_spec, node_kind
from sparkeval.io.scan_values import text_constant, value_spec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class ParquetScan:
    """What a DataFrame that only scans Parquet files reads.

    Attributes:
        files: the local files.
        columns: ``{DataFrame column: file column}``, in the DataFrame's order.
        where: the rows kept, over file columns
            (:func:`~sparkeval.io.scan_filter.condition_spec`); None keeps all.
        computed: ``{DataFrame column: value}`` of the ``double`` columns the DataFrame
            computes from file columns
            (:func:`~sparkeval.io.scan_values.value_spec`) and of its constant
            strings (:func:`~sparkeval.io.scan_values.text_constant`);
            ``columns`` holds the others.
    """

    files: list[str]
    columns: dict[str, str]
    where: Spec | None = None
    computed: dict[str, Spec] = field(default_factory=dict)


#: plan nodes a scan may sit under
_ABOVE_SCAN = ("SubqueryAlias", "Project", "Filter")


def scanned_parquet(frame: DataFrame) -> ParquetScan | None:
    """The files, columns and row filter of ``frame`` when it is a scan of local
    Parquet files under selections, renamings and filters the workers can apply;
    else None.

    Reads Spark's analysed plan: a ``LogicalRelation`` over a ``HadoopFsRelation`` in
    Parquet format without partition columns, under nothing but ``SubqueryAlias``
    nodes (a catalog table's name), ``Project`` nodes of columns, each a column below
    or such a column renamed (``select("q", col("d").alias("doc_id"))``), and
    ``Filter`` nodes whose conditions :mod:`sparkeval.io.scan_filter` takes.
    A ``Project`` may also compute ``double`` columns the workers can compute
    (:mod:`sparkeval.io.scan_values`); a filter may not read them.
    """
    jdf = getattr(frame, "_jdf", None)
    if jdf is None:  # Spark Connect: no plan in this process
        return None
    from py4j.protocol import Py4JError  # type: ignore[import-untyped]

    try:
        plan = jdf.queryExecution().analyzed()
        above = []
        while node_kind(plan) in _ABOVE_SCAN:
            above.append(plan)
            plan = plan.child()
        if node_kind(plan) != "LogicalRelation":
            return None
        relation = plan.relation()
        if node_kind(relation) != "HadoopFsRelation":
            return None
        if node_kind(relation.fileFormat()) != "ParquetFileFormat":
            return None
        if relation.partitionSchema().length() != 0:
            return None
        output = plan.output()
        names = [str(output.apply(i).name()) for i in range(output.size())]
        columns: dict[str, str | Spec] = {name: name for name in names}
        where = None
        for node in reversed(above):  # from the scan up
            moved, where = _through(node, columns, where)
            if moved is None:
                return None
            columns = moved
    except Py4JError:
        return None
    files = _local_paths(frame.inputFiles())
    if files is None or list(columns) != list(frame.columns):
        return None
    plain = {name: source for name, source in columns.items() if isinstance(source, str)}
    computed = {name: spec for name, spec in columns.items() if not isinstance(spec, str)}
    return ParquetScan(files, plain, where, computed)


def _through(
    node, columns: dict[str, str | Spec], where: Spec | None
) -> tuple[dict[str, str | Spec] | None, Spec | None]:
    """``(columns, where)`` above ``node`` given those below it; columns None when the
    node computes something the workers do not."""
    kind = node_kind(node)
    if kind == "Project":
        return _projected_columns(node.projectList(), columns), where
    if kind == "Filter":
        plain = {name: source for name, source in columns.items() if isinstance(source, str)}
        condition = condition_spec(node.condition(), plain)
        if condition is None:
            return None, where
        return columns, both(where, condition)
    return columns, where  # an alias


def _projected_columns(expressions, below: dict[str, str | Spec]) -> dict[str, str | Spec] | None:
    """``{output: file column or computed value}`` of a projection of plain, renamed
    or computed columns (the values as ``below``); None when an expression computes
    anything else."""
    columns: dict[str, str | Spec] = {}
    for i in range(expressions.size()):
        expression = expressions.apply(i)
        name = str(expression.name())
        if name in columns:
            return None
        inner = expression.child() if node_kind(expression) == "Alias" else expression
        if node_kind(inner) == "AttributeReference":
            source = str(inner.name())
            if source not in below:
                return None
            columns[name] = below[source]
            continue
        computed = value_spec(expression, below) or text_constant(expression)
        if computed is None:
            return None
        columns[name] = computed
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


def scanned_input(frame: DataFrame, kind: str) -> DirectInput | None:
    """The direct input of ``frame`` (``kind`` ``run`` or ``qrels``) when it is a
    (filtered) scan of local Parquet files the workers can read, else None."""
    needed = REQUIRED[kind]  # (run_id is optional)
    if not set(needed) <= set(frame.columns):
        return None  # the DataFrame path says what is missing
    scan = scanned_parquet(frame)
    if scan is None:
        return None
    wanted = (*needed, "run_id") if kind == "run" else needed
    computed = dict(scan.computed)
    score = computed.pop("score", None) if kind == "run" else None
    name = computed.pop("run_id", None) if kind == "run" else None
    if any(column in computed for column in wanted):
        return None  # computed ids or grades stay with Spark
    if (score is not None and score[0] == "text") or (name is not None and name[0] != "text"):
        return None
    mapping = {column: scan.columns[column] for column in wanted if column in scan.columns}
    files = scan.files
    label = files[0] if len(files) == 1 else f"{files[0]} and {len(files) - 1} more files"
    run_id = None
    if kind == "run" and "run_id" not in mapping:  # a constant name, or the default one
        run_id = DEFAULT_RUN_ID if name is None else name[1]
    # only the DataFrame's own columns: a "tag" column names runs in files read by
    # name, not in a DataFrame
    return plan_direct_files(
        files, label, kind, mapping, run_id, mapped_only=True, where=scan.where, score=score
    )


def scanned_parquet_plan(run: DataFrame, qrels: DataFrame) -> DirectPlan | None:
    """The direct plan of two DataFrames that are (filtered) scans of local Parquet
    files, or None when either is something else (or holds columns the direct read
    leaves to Spark: other types, a run id column that is not text, ...).

    The run ids are those of the run DataFrame's rows: read from its files here
    (:func:`~sparkeval.io.direct.parquet_run_ids`), or, for a filtered scan, by one
    Spark job over its run id column, the filters applied; unless it has no run id
    column.
    """
    run_input = scanned_input(run, "run")
    if run_input is None:
        return None
    qrels_input = scanned_input(qrels, "qrels")
    if qrels_input is None:
        return None
    run_id = run_input.run_id
    run_ids = [run_id] if run_id is not None else parquet_run_ids(run_input)
    if run_ids is None:
        run_ids = distinct_values(run, "run_id")
    return DirectPlan((run_input,), qrels_input, tuple(run_ids))


def parquet_filter(spark: SparkSession, where: str, path: str) -> Spec | None:
    """The SQL condition ``where`` over the columns of the Parquet input ``path`` (the
    command line's ``--where``) as the workers apply it, or None when they cannot.

    Raises:
        InputError: the condition is not valid SQL over the input's columns (the
            message the Spark readers give).
    """
    from sparkeval.io.readers import read_table

    scan = scanned_parquet(read_table(spark, path, "parquet", where=where))
    return None if scan is None else scan.where
