"""Both small inputs collected as Arrow by one plain RDD job, without a new query plan.

The driver plan's inputs that Spark does not hold in the driver (cached frames, small
files Spark reads, filtered or computed frames) take one job to collect. Collected
through a SQL projection of both inputs (casts, a union, one partition), the plan costs
more than the job: in a warm local session, at 5 queries x 10 docs, building and
optimising it took about 28 ms and its job about 27 ms.

Here each frame is converted to Arrow batches as it is (``Dataset.toArrowBatchRdd``,
Spark's own Arrow writer in the tasks, the frame's plan as Spark already planned it),
and the two RDDs are chained, an empty marker after each, into one RDD that one job
collects (``PythonRDD.collectAndServe``, what ``RDD.collect()`` uses). The batches
before the first marker are the run's, those between the markers the qrels'; a stream
that ends before the second marker is not taken for the rows. The caller casts the
columns in Arrow as the SQL projection would have
(:func:`~sparkeval.engine.plans.local_rows.plain_table`).

Inputs Spark estimates at 1 MiB or less take one task per frame (its batches
coalesced), as the projection's single partition did: at 5 x 10, four tasks instead of
six.

These are Spark internals: on a Spark that does not offer them as called here, or on
any failure, the caller collects the rows through the SQL projection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: rows per Arrow batch a task writes (the driver plan holds a few MiB at most)
_BATCH_ROWS = 1 << 20
#: what separates the run's batches from the qrels' and ends the stream: no Arrow
#: batch is empty bytes
_MARKER = b""


def _only(frame: DataFrame, names: Sequence[str]) -> DataFrame:
    """``frame`` itself when its columns are ``names`` (in any order), else the
    projection of ``names``."""
    if sorted(frame.columns) == sorted(names):
        return frame
    return frame.select(*names)


def _arrow_batches(frame: DataFrame, one_task: bool) -> Any:
    """The JVM RDD of ``frame``'s rows as serialised Arrow record batches (no
    schema), 32-bit text offsets, as ``toArrow()`` writes them; ``one_task``: all of
    them written by one task (its partitions coalesced, in an order of Spark's
    choosing)."""
    batches = frame._jdf.toArrowBatchRdd(_BATCH_ROWS, "UTC", False, False).toJavaRDD()
    return batches.coalesce(1) if one_task else batches


def _marker(frame: DataFrame) -> Any:
    """A JVM RDD of one element, :data:`_MARKER`, made in the JVM (no Python worker;
    pyspark's gateway converts the Python list to a Java one)."""
    return frame.sparkSession.sparkContext._jsc.parallelize([bytearray(_MARKER)], 1)


def _served(frame: DataFrame, rdd: Any) -> list[bytes]:
    """The elements of ``rdd`` (byte strings), collected by one job and read from
    pyspark's local socket."""
    from pyspark.serializers import NoOpSerializer

    from sparkeval.engine.plans.local_rows import served_stream, socket_server

    served = socket_server(frame.sparkSession._jvm).collectAndServe(rdd.rdd())
    with served_stream(served) as stream:
        return list(NoOpSerializer().load_stream(stream))


def _table(batches: list[bytes], frame: DataFrame) -> pa.Table:
    """The serialised record batches of ``frame`` as a table of its columns."""
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(frame.schema, timezone="UTC", prefers_large_types=False)
    read = [pa.ipc.read_record_batch(pa.py_buffer(batch), schema) for batch in batches]
    return pa.Table.from_batches(read, schema)


def frames_by_one_job(
    run_df: DataFrame,
    qrels_df: DataFrame,
    names: tuple[Sequence[str], Sequence[str]],
    one_task_each: bool = False,
) -> tuple[pa.Table, pa.Table] | None:
    """The run's and the qrels' ``names`` columns, as Spark types them, collected by
    one Spark job (module docstring); None when this Spark does not offer the calls
    made here, when the job fails (the caller's other path runs it again and reports
    the failure its way) or when the stream is cut short.

    ``one_task_each``: each frame's batches are written by one task (fewer tasks to
    start for tiny inputs: at 5 x 10, cached, four tasks instead of six, about 6 ms
    less); their rows may then come in another order, which the evaluation ignores.
    """
    try:
        run, qrels = _only(run_df, names[0]), _only(qrels_df, names[1])
        marker = _marker(run)
        run_batches = _arrow_batches(run, one_task_each)
        qrels_batches = _arrow_batches(qrels, one_task_each)
        chained = run_batches.union(marker).union(qrels_batches).union(marker)
        elements = _served(run, chained)
        markers = [i for i, element in enumerate(elements) if element == _MARKER]
        if len(markers) != 2 or markers[1] != len(elements) - 1:
            return None
        run_elements, qrels_elements = elements[: markers[0]], elements[markers[0] + 1 : -1]
        return _table(run_elements, run), _table(qrels_elements, qrels)
    except Exception:
        return None


def plain_rows_by_one_job(
    run_df: DataFrame,
    qrels_df: DataFrame,
    run_types: Sequence[tuple[str, str]],
    qrels_types: Sequence[tuple[str, str]],
    one_task_each: bool = False,
) -> pa.Table | None:
    """The plain driver plan's rows
    (:func:`~sparkeval.engine.plans.local_rows.plain_table`) of two frames, collected
    by one job (:func:`frames_by_one_job`, ``one_task_each`` as there); None when a
    column is missing or not unique, or the job does not give them."""
    from sparkeval.engine.plans.local_rows import plain_names, plain_table

    names = plain_names(run_types, qrels_types)
    if names is None:
        return None
    tables = frames_by_one_job(run_df, qrels_df, names, one_task_each)
    return None if tables is None else plain_table(*tables, names)
