"""Frames of Python rows: their rows read back from the driver, without a Spark job.

``spark.createDataFrame(rows, schema)`` of a Python list (what unit tests write) pickles
the rows in batches and hands the pickles to the driver's JVM, which holds them as a
parallelized collection. The frame's plan reads them through a Python worker that
re-pickles each batch, then unpickles them in the JVM: collecting such a frame is a job
that starts a Python worker, about 60-80 ms in a warm local session, even for 50 rows.

Here the pickles are read back from the driver's JVM over pyspark's local socket and
unpickled in this process (:func:`parallelized_rows`), after checking that the frame is
exactly that: a ``LogicalRDD`` over the chain ``createDataFrame`` builds, whose Python
step is pyspark's own re-serialisation (the code of its function compared with
pyspark's). The rows are then what the Python worker would have read.

Spark converts each value to the column's type; a value it would turn into null or wrap
around is not read here (the frame is then collected by a job, as before):

* text columns hold ``str`` values already (``createDataFrame`` turns any other value
  into one before pickling, a ``bool`` into ``"true"`` or ``"false"``), which Arrow
  takes as they are (text that is not valid Unicode is not read here);
* integer columns take ``int`` values within the column type's range (Spark would wrap
  a larger one around, or read a ``bool`` as null);
* ``float`` and ``double`` columns take ``float`` values (an ``int`` would be null); a
  ``float`` column rounds them to single precision as Java's ``(float)`` does;
* ``None`` is null everywhere; other column types are not read here.

Example: in a warm local session, the run and qrels of 5 queries x 10 docs made from
lists of tuples are read in about 10 ms (their two collecting jobs took about 0.15 s),
those of 1,000 x 100 in about 0.1 s.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: the RDD classes from the frame's rows down to the parallelized pickles, as
#: ``createDataFrame`` of a list chains them: rows made of Java objects, Java objects as
#: arrays, pickles unpickled, the Python re-serialisation, the parallelized pickles
_CHAIN = (
    "org.apache.spark.rdd.MapPartitionsRDD",
    "org.apache.spark.rdd.MapPartitionsRDD",
    "org.apache.spark.rdd.MapPartitionsRDD",
    "org.apache.spark.api.python.PythonRDD",
    "org.apache.spark.rdd.ParallelCollectionRDD",
)

#: the Python types a numeric column of each Spark type takes here (``None`` is null
#: anywhere); a text column takes the ``str`` values ``createDataFrame`` made
_NUMBER_TYPES: dict[str, type] = {
    "tinyint": int,
    "smallint": int,
    "int": int,
    "bigint": int,
    "float": float,
    "double": float,
}


class TooManyRows(Exception):
    """The frame holds more rows than the caller reads in the driver."""


def parallelized_rows(
    frame: DataFrame, columns: Sequence[str], row_limit: int | None = None
) -> pa.Table | None:
    """The named columns of a frame of Python rows, read back from the driver's JVM,
    as Arrow columns of the frame's types; None when ``frame`` is not such a frame, a
    value is one Spark would convert otherwise (module docstring), or anything fails
    (the caller then collects it by a job).

    Raises:
        TooManyRows: the frame holds more than ``row_limit`` rows.
    """
    try:
        source = _parallelized_source(frame)
        if source is None:
            return None
        slices, batch_rows, deserializer = source
        if row_limit is not None and _fewest_rows(slices, batch_rows) > row_limit:
            raise TooManyRows
        schema = frame.schema
        with _collector_paused():
            values = _served_columns(frame, slices, deserializer, len(schema.fields))
            if values is None:
                return None
            if row_limit is not None and len(values[0]) > row_limit:
                raise TooManyRows
            return _arrow_columns(values, schema, columns)
    except TooManyRows:
        raise
    except Exception:
        return None


def made_of_lists(*frames: DataFrame) -> bool:
    """Whether each frame is one ``createDataFrame`` made of a Python list, whose rows
    :func:`parallelized_rows` reads back (its RDD chain and Python step checked; no
    row is read, no job run)."""
    try:
        return all(_parallelized_source(frame) is not None for frame in frames)
    except Exception:  # a Connect DataFrame has no JVM handle
        return False


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while rows are unpickled and
    transposed: they make a few objects per value, none of them cyclic, and in a
    process holding Spark's and pandas' objects the collections this triggers cost more
    than the unpickling (100,000 rows: about 0.1 s against 0.03 s)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _parallelized_source(frame: DataFrame) -> tuple[list[Any], int, Any] | None:
    """(the pickled batches of each of the parallelized collection's partitions (JVM
    sequences), rows per pickled batch, the
    deserializer of the pickles) of a frame ``createDataFrame`` made of a list; None
    for any other frame."""
    plan = frame._jdf.queryExecution().optimizedPlan()
    if plan.getClass().getSimpleName() != "LogicalRDD":
        return None
    chain = [plan.rdd()]
    while len(chain) <= len(_CHAIN):
        dependencies = chain[-1].dependencies()
        if dependencies.isEmpty():
            break
        if dependencies.size() != 1:
            return None
        chain.append(dependencies.head().rdd())
    if tuple(rdd.getClass().getName() for rdd in chain) != _CHAIN:
        return None
    python_step, parallelized = chain[-2], chain[-1]
    deserializer = _reserialization_input(python_step)
    if deserializer is None:
        return None
    slices = [partition.values() for partition in parallelized.partitions()]
    return slices, deserializer.batchSize, deserializer


def _reserialization_input(python_step: Any) -> Any:
    """The deserializer of the pickles a ``PythonRDD`` reads, when its function is
    pyspark's re-serialisation (``map(lambda x: x)``, what ``createDataFrame`` adds);
    else None."""
    from pyspark.serializers import BatchedSerializer, CloudPickleSerializer

    field = python_step.getClass().getDeclaredField("func")
    field.setAccessible(True)
    function = field.get(python_step)
    if not function.broadcastVars().isEmpty():
        return None  # a large command is broadcast: not pyspark's small identity
    command = bytes(function.command().unsafeArray())
    func, _profiler, deserializer, _serializer = CloudPickleSerializer().loads(command)
    if type(deserializer) is not BatchedSerializer or not _is_reserialization(func):
        return None
    return deserializer


@functools.lru_cache(maxsize=1)
def _reserialization_code() -> tuple[Any, Any]:
    """The code of pyspark's ``RDD.map`` wrapper and of its re-serialisation's
    identity (``RDD._reserialize``'s ``lambda x: x``)."""
    from pyspark.core.rdd import RDD

    def inner(method: Any, name: str) -> Any:
        (code,) = [c for c in method.__code__.co_consts if getattr(c, "co_name", None) == name]
        return code

    return inner(RDD.map, "func"), inner(RDD._reserialize, "<lambda>")


def _is_reserialization(func: Any) -> bool:
    """Whether ``func`` is ``RDD.map``'s wrapper of ``lambda x: x``, as
    ``RDD._reserialize`` makes it (code objects compared field by field)."""
    wrapper, identity = _reserialization_code()
    closure: tuple[Any, ...] = getattr(func, "__closure__", None) or ()
    if getattr(func, "__code__", None) != wrapper or len(closure) != 1:
        return False
    mapped = closure[0].cell_contents
    return (
        getattr(mapped, "__code__", None) == identity
        and mapped.__closure__ is None
        and mapped.__defaults__ is None
    )


def _fewest_rows(slices: list[Any], batch_rows: int) -> int:
    """The fewest rows the pickled batches can hold: each holds ``batch_rows`` rows but
    the last of each partition, which holds at least one (one each where the batches
    have no fixed size)."""
    batch_rows = max(batch_rows, 1)
    sizes = [batches.size() for batches in slices]
    return sum((size - 1) * batch_rows + 1 for size in sizes if size)


def _served_columns(
    frame: DataFrame, slices: list[Any], deserializer: Any, width: int
) -> list[list[Any]] | None:
    """The values of the partitions' pickled batches of rows (``slices``), column by
    column, in partition order: served by the driver's JVM over pyspark's local socket,
    unpickled as a Python worker would, and transposed batch by batch. None when a row
    has not ``width`` values, or fewer batches arrive than the partitions hold (a
    stream cut short)."""
    from sparkeval.engine.plans.local_rows import served_stream, socket_server

    columns: list[list[Any]] = [[] for _ in range(width)]
    if not slices:
        return columns
    values = slices[0]
    for batches in slices[1:]:
        values = values.concat(batches)
    expected = values.size()
    served = socket_server(frame.sparkSession._jvm).serveIterator(
        values.iterator(), "sparkeval-python-rows"
    )
    read = 0
    with served_stream(served) as stream:
        # each pickle is a batch (a list) of rows, as BatchedSerializer.load_stream reads it
        for batch in deserializer.serializer.load_stream(stream):
            read += 1
            transposed = list(zip(*batch, strict=True))  # strict: rows of equal length
            if batch and len(transposed) != width:
                return None
            for column, batch_values in zip(columns, transposed, strict=False):
                column.extend(batch_values)
    return columns if read == expected else None


def _arrow_columns(values: list[list[Any]], schema: Any, columns: Sequence[str]) -> pa.Table | None:
    """The named columns of the values (one list per field of the schema) as Arrow
    arrays of the fields' types; None when a value is one Spark would convert
    otherwise.

    Example:
        >>> from pyspark.sql.types import StructType, StructField, StringType, IntegerType
        >>> schema = StructType([StructField("q", StringType()), StructField("r", IntegerType())])
        >>> _arrow_columns([["a", "b"], [1, None]], schema, ["r"]).column("r").to_pylist()
        [1, None]
        >>> _arrow_columns([["a"], [2**31]], schema, ["r"]) is None  # Spark wraps it around
        True
        >>> _arrow_columns([["a"], [True]], schema, ["r"]) is None  # Spark reads null
        True
    """
    from pyspark.sql.pandas.types import to_arrow_type

    names = [field.name for field in schema.fields]
    arrays = []
    for name in columns:
        field = schema.fields[names.index(name)]
        spark_type = field.dataType.simpleString()
        column = values[names.index(name)]
        if spark_type != "string":
            python_type = _NUMBER_TYPES.get(spark_type)
            if python_type is None or not set(map(type, column)) <= {python_type, type(None)}:
                return None
        try:
            arrays.append(pa.array(column, to_arrow_type(field.dataType)))
        except (pa.ArrowException, OverflowError, UnicodeError):
            return None  # an integer beyond the type's range, text Spark would not keep
    return pa.table(dict(zip(columns, arrays, strict=True)))


def plain_parallelized(
    run_df: DataFrame,
    qrels_df: DataFrame,
    run_types: Sequence[tuple[str, str]],
    qrels_types: Sequence[tuple[str, str]],
    row_limit: int | None = None,
) -> pa.Table | None:
    """The plain driver plan's rows
    (:func:`~sparkeval.engine.plans.local_rows.plain_table`) of two frames of Python
    rows, read back from the driver; None when a column is missing or not unique, or
    either frame is not read here (:func:`parallelized_rows`).

    Raises:
        TooManyRows: a frame holds more than ``row_limit`` rows.
    """
    from sparkeval.engine.plans.local_rows import plain_names, plain_table

    names = plain_names(run_types, qrels_types)
    if names is None:
        return None
    run = parallelized_rows(run_df, names[0], row_limit)
    if run is None:
        return None
    qrels = parallelized_rows(qrels_df, names[1], row_limit)
    if qrels is None:
        return None
    return plain_table(run, qrels, names)
