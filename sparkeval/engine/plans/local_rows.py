"""Small inputs whose rows the driver already holds: collected without a Spark job.

A DataFrame built from local data (``spark.createDataFrame`` of a pandas DataFrame or
an Arrow table: what unit tests and notebooks build; a list of rows becomes an RDD
instead) is a *local relation*: its rows sit in the driver's JVM, and Spark's
optimiser folds a projection or a filter over it into another local relation.
``toArrow()`` of such a frame still runs a job, whose tasks carry the rows out and
back.

Here the driver's JVM writes those rows as Arrow itself, with Spark's own Arrow writer
(the one a job's task uses, and the one Spark Connect's server uses for local data),
and hands the batches to Python over pyspark's local socket (:func:`arrow_in_driver`).
There is no job, and text keeps its bytes, so the rows are checked as the job's are.
In a warm local session, a frame of 1,000 queries x 100 docs takes about 16 ms this
way against 65-80 ms for its job, and one of 5 x 10 about 5 ms against about 30. The
writer and the socket are Spark internals: on a Spark that does not offer them as
called here, or on any failure, each frame is collected by a job of its own instead
(the two jobs run together).

The columns are then cast in Arrow as the plain driver plan's Spark casts would cast
them (:func:`sparkeval.engine.plans.driver_plan.plain_projections`), so the rows, and
the values, are the same to the bit:

* an integer id becomes its decimal text (``-7`` gives ``"-7"``, as Java's
  ``Long.toString``); a string id stays as it is;
* a score or grade becomes a double: an integer is rounded to the nearest double, ties
  to even, as Java's ``(double)`` conversion rounds it; a ``float`` is widened exactly.

A projection of those casts in Spark would cost more than the whole collection: Spark's
optimiser evaluates a projection of a local relation row by row, in the driver (at
1,000 x 100, about 0.47 s a call).

On Spark Connect the process that calls sparkeval is the client, and a frame made there
from pandas, Arrow or a list of rows holds its rows as an Arrow table, which the client
sends with every request about the frame (:func:`client_table`). When the server would
read that table as it is (the schema sent with it, if any, names the same types), those
are the frame's rows: the client evaluates them without asking the server anything.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.formats import IS_QRELS, SHIPPED_VALUE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

T = TypeVar("T")

#: rows per Arrow batch the driver's JVM writes (the driver path holds a few MiB at most)
_BATCH_ROWS = 1 << 20
#: no bound on a batch's bytes (``Long.MaxValue``)
_NO_BYTE_BOUND = (1 << 63) - 1


def held_in_driver(*frames: DataFrame) -> bool:
    """Whether each frame's optimised plan is a local relation, whose rows the driver's
    JVM holds, or a Spark Connect frame of local data (:func:`client_table`); False for
    a cached frame or a file scan."""
    return all(client_table(frame) is not None or _in_driver_jvm(frame) for frame in frames)


def _in_driver_jvm(frame: DataFrame) -> bool:
    """Whether ``frame``'s optimised plan is a local relation of the driver's JVM."""
    try:
        return _local_relation(frame) is not None
    except Exception:  # a Connect DataFrame has no JVM handle
        return False


def client_table(frame: DataFrame) -> pa.Table | None:
    """The rows of a Spark Connect frame made of local data, as the client holds them
    (the Arrow table it sends to the server); None for any other frame, and where the
    server would not read the table as it is (the schema sent with it casts a column).

    Such a frame's plan is the local data itself, maybe renamed (what
    ``spark.createDataFrame`` builds on Connect): the table then takes the schema's
    names, then the renamed ones.
    """
    if not type(frame).__module__.startswith("pyspark.sql.connect"):
        return None
    try:
        plan: Any = frame._plan
        names = None
        if type(plan).__name__ == "ToDF":
            names, plan = list(plan._cols), plan._child
        if type(plan).__name__ != "LocalRelation" or not isinstance(plan._table, pa.Table):
            return None
        table = plan._table
        if plan._schema:
            from pyspark.sql.pandas.types import to_arrow_schema
            from pyspark.sql.types import StructType

            sent = to_arrow_schema(StructType.fromJson(json.loads(plan._schema)))
            if sent.types != table.schema.types:
                return None  # the server casts to the schema sent
            table = table.rename_columns(sent.names)
        if names is not None:
            if len(names) != table.num_columns:
                return None
            table = table.rename_columns(names)
        return table
    except Exception:  # another client version builds its plans otherwise
        return None


def frame_types(frame: DataFrame) -> list[tuple[str, str]]:
    """``frame.dtypes``; for a Connect frame of local data, read from the table the
    client holds (Spark's names of its Arrow types), without asking the server."""
    table = client_table(frame)
    if table is None:
        return frame.dtypes
    from pyspark.sql.pandas.types import from_arrow_schema

    return [(f.name, f.dataType.simpleString()) for f in from_arrow_schema(table.schema)]


def _local_relation(frame: DataFrame) -> Any:
    """The optimised plan of ``frame`` (a JVM object) when it is a local relation, else None."""
    plan = frame._jdf.queryExecution().optimizedPlan()
    return plan if plan.getClass().getSimpleName() == "LocalRelation" else None


def socket_server(jvm: Any) -> Any:
    """pyspark's socket server in the driver's JVM (``PythonRDD``, whose
    ``serveIterator`` serves a JVM iterator's elements to this process, and
    ``collectAndServe`` an RDD's, collected by a job)."""
    return _jvm_handles(jvm)[1]


@contextlib.contextmanager
def served_stream(served: Any) -> Iterator[Any]:
    """The stream of what :func:`socket_server` serves (``served``: the port and secret
    it answered), connected and authenticated, closed after use."""
    from pyspark.util import local_connect_and_auth

    stream, sock = local_connect_and_auth(served[0], served[1])
    try:
        yield stream
    finally:
        stream.close()
        sock.close()


@functools.lru_cache(maxsize=4)
def _jvm_handles(jvm: Any) -> tuple[Any, Any]:
    """Spark's Arrow writer (the ``ArrowConverters`` object) and pyspark's socket server
    (``PythonRDD``) in ``jvm``, looked up once (each lookup is a reflection call)."""
    writer = getattr(jvm.org.apache.spark.sql.execution.arrow, "ArrowConverters$")
    return writer.__getattr__("MODULE$"), jvm.org.apache.spark.api.python.PythonRDD


def arrow_in_driver(frame: DataFrame) -> pa.Table | None:
    """The rows of a local relation as Arrow, written by the driver's JVM with Spark's
    Arrow writer and read from pyspark's local socket (or, on Spark Connect, the
    :func:`client_table`): no job. None when ``frame`` is not a local relation, when
    this Spark does not offer the writer or the socket as called here, or when anything
    fails; the caller then collects it by a job.

    The rows read are counted against the relation's own count, so a conversion that
    stopped half-way cannot pass for the whole.
    """
    held = client_table(frame)
    if held is not None:
        return held
    try:
        from pyspark.serializers import NoOpSerializer

        plan = _local_relation(frame)
        if plan is None:
            return None
        writer, server = _jvm_handles(frame.sparkSession._jvm)
        batches = writer.toBatchWithSchemaIterator(
            plan.data().iterator(),
            plan.schema(),
            _BATCH_ROWS,
            _NO_BYTE_BOUND,
            # a timestamp is an instant either way (the zone only labels its Arrow type),
            # and the plain rows hold none
            "UTC",
            False,  # duplicate column names: the caller looks for its columns by name
            False,  # 32-bit string offsets, as toArrow() writes them
        )
        with served_stream(server.serveIterator(batches, "sparkeval-local-arrow")) as stream:
            streams = list(NoOpSerializer().load_stream(stream))
        tables = [pa.ipc.open_stream(data).read_all() for data in streams]
        rows = plan.data().size()
    except Exception:
        return None
    if not tables:
        return None
    table = pa.concat_tables(tables)
    return table if table.num_rows == rows else None


def _arrow_by_a_job(frame: DataFrame) -> pa.Table | None:
    """``frame`` collected as Arrow as it is (one job, no new plan); None when the job
    fails (the caller's other path runs it again and reports the failure its way)."""
    try:
        return frame.toArrow()
    except Exception:
        return None


#: the id columns of both inputs, in the plain rows' order
_IDS = ("query_id", "doc_id")


def _each_once(columns: Sequence[str], names: Sequence[str]) -> bool:
    """Whether each of ``names`` is exactly one of ``columns``."""
    return all(columns.count(name) == 1 for name in names)


def _names(has_run_id: bool) -> tuple[list[str], list[str]]:
    """The columns the plain rows take from the run and from the qrels."""
    return ["run_id"] * has_run_id + [*_IDS, "score"], [*_IDS, "relevance"]


def _arrow_texts(ids: pa.Array) -> pa.Array:
    """Ids as Spark's ``CAST(id AS STRING)`` gives them: text as it is (its bytes
    checked later), an integer as its decimal text (Arrow's cast writes the digits
    as Java's ``Long.toString``).

    Example:
        >>> _arrow_texts(pa.array([-(2**63), 7], pa.int64())).to_pylist()
        ['-9223372036854775808', '7']
    """
    return pc.cast(ids, pa.string())


def _arrow_doubles(values: pa.Array) -> pa.Array:
    """Scores or grades as Spark's ``CAST(value AS DOUBLE)`` gives them: an integer
    rounded to the nearest double, ties to even (unchecked: the cast of a 64-bit
    integer beyond 2**53 rounds, as Java's does), a ``float`` widened exactly.

    Example:
        >>> _arrow_doubles(pa.array([2**53 + 1], pa.int64())).to_pylist()
        [9007199254740992.0]
    """
    return pc.cast(values, pa.float64(), safe=False)


def _converted(table: pa.Table, names: Sequence[str]) -> list[pa.Array]:
    """An input's named columns (ids first, the value last) as text and doubles."""
    columns = [table.column(name).combine_chunks() for name in names]
    return [*(_arrow_texts(ids) for ids in columns[:-1]), _arrow_doubles(columns[-1])]


def _plain_table(run: list[pa.Array], qrels: list[pa.Array], has_run_id: bool) -> pa.Table:
    """The plain rows of converted columns (run: ``[run_id], query_id, doc_id, score``;
    qrels: ``query_id, doc_id, relevance``): run rows, then qrels rows."""
    n_run, n_qrels = len(run[-1]), len(qrels[-1])
    if has_run_id:
        run_id = pa.concat_arrays([run[0], pa.nulls(n_qrels, pa.string())])
    else:
        run_id = pa.nulls(n_run + n_qrels, pa.string())
    columns: dict[str, pa.Array] = {"run_id": run_id}
    for i, name in enumerate(_IDS):
        columns[name] = pa.concat_arrays([run[i + has_run_id], qrels[i]])
    columns[SHIPPED_VALUE] = pa.concat_arrays([run[-1], qrels[-1]])
    marks = [pa.repeat(pa.scalar(False), n_run), pa.repeat(pa.scalar(True), n_qrels)]
    columns[IS_QRELS] = pa.concat_arrays(marks)
    return pa.table(columns)


def side_by_side(first: Callable[[], T], second: Callable[[], T]) -> tuple[T, T]:
    """``(first(), second())``, ``first`` run in a thread that inherits this thread's
    Spark job properties (job group, description, scheduler pool), so that the jobs of
    both run together and are still the caller's."""
    from pyspark import InheritableThread

    results: dict[str, Any] = {}

    def run_first() -> None:
        try:
            results["value"] = first()
        except BaseException as exc:  # raised in the caller's thread below
            results["error"] = exc

    thread = InheritableThread(target=run_first)
    thread.start()
    try:
        second_value = second()
    finally:
        thread.join()
    if "error" in results:
        raise results["error"]
    return results["value"], second_value


def plain_names(
    run_types: Sequence[tuple[str, str]], qrels_types: Sequence[tuple[str, str]]
) -> tuple[list[str], list[str]] | None:
    """The columns the plain rows take from the run (``[run_id], query_id, doc_id,
    score``) and from the qrels (``query_id, doc_id, relevance``); None when one is
    missing or not unique."""
    run_columns = [name for name, _ in run_types]
    qrels_columns = [name for name, _ in qrels_types]
    run_names, qrels_names = _names("run_id" in run_columns)
    if not (_each_once(run_columns, run_names) and _each_once(qrels_columns, qrels_names)):
        return None
    return run_names, qrels_names


def plain_table(run: pa.Table, qrels: pa.Table, names: tuple[list[str], list[str]]) -> pa.Table:
    """The plain driver plan's rows (``run_id, query_id, doc_id, _value, _is_qrels``;
    a null run id where the run has none) of the run's and the qrels' ``names``
    columns (:func:`plain_names`), cast as its Spark casts would cast them."""
    run_names, qrels_names = names
    has_run_id = run_names[0] == "run_id"
    return _plain_table(_converted(run, run_names), _converted(qrels, qrels_names), has_run_id)


def plain_local_arrow(
    run_df: DataFrame,
    qrels_df: DataFrame,
    run_types: Sequence[tuple[str, str]],
    qrels_types: Sequence[tuple[str, str]],
) -> pa.Table | None:
    """The plain driver plan's rows (:func:`plain_table`) of two local relations: each
    written as Arrow by the driver (:func:`arrow_in_driver`), or else collected by a
    job of its own, the two jobs together; then cast in Arrow. None when a column is
    missing or not unique, or a job fails.

    ``run_types`` and ``qrels_types`` are the frames' :func:`frame_types`, whose Spark
    types the caller has checked (plain ids and numeric values); it checks the rows
    afterwards, as it does the rows of the plain plan's job.
    """
    names = plain_names(run_types, qrels_types)
    if names is None:
        return None
    run, qrels = arrow_in_driver(run_df), arrow_in_driver(qrels_df)
    if run is None or qrels is None:
        run, qrels = side_by_side(
            lambda: run if run is not None else _arrow_by_a_job(run_df),
            lambda: qrels if qrels is not None else _arrow_by_a_job(qrels_df),
        )
    if run is None or qrels is None:
        return None
    return plain_table(run, qrels, names)
