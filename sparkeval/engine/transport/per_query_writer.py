"""Write ``per_query.parquet`` from the wide rows, in the Python workers.

The evaluation keeps one wide row per (run, query) with one column per measure; the
output holds one long row per (run, query, measure).  The wide rows are sorted (one
row per query, so ten times fewer rows than the output at ten measures) and each
Python task turns its sorted rows into long rows with numpy and writes one Parquet
file with pyarrow, one row group per :data:`WIDE_ROWS_PER_GROUP` wide rows::

    one file:    cached result blobs -> coalesce(1)
                 -> mapInArrow: decode, sort the evaluated rows' keys with
                    pyarrow, take, explode and write part-00000.parquet
    S shares:    (wide rows in local files) S copies of (cached result blobs
                 -> coalesce(1)), unioned
                 -> mapInArrow: as one file, but task i writes only the i-th
                    of S equal slices of the sorted rows, to part-<i>.parquet
    P > 1 files: wide rows (evaluated) -> repartitionByRange(P, run_id, query_id)
                 -> sortWithinPartitions(run_id, query_id)
                 -> mapInArrow: explode each sorted batch and append it to
                    part-<P>.parquet as it arrives

The blob path (up to :data:`ROWS_PER_FILE` long rows from up to
:data:`WIDE_ROWS_PER_FILE` queries) never turns a wide row into a Spark row: the
blobs (:mod:`sparkeval.engine.transport.result_blobs`) go to the writing task as bytes.
When the wide rows are in local files (a local master,
:mod:`sparkeval.engine.transport.result_files`), from :data:`SHARED_SORT_ROWS` long
rows on, one task per core maps every file and sorts every key (a small part of the
work: 0.08-0.18 s at 1M queries), and each writes its own slice of the sorted rows, so
expanding and writing them (about 0.5 s per 10M long rows) is shared by the cores
instead of done by one.  Inline blobs are not shared: each task would receive every
blob again (at 1M queries two such tasks took 1.45 s each, as long as one task).

Spark's own writer would convert all the long rows to its row format and back to
Parquet; here they never exist outside the worker that writes them.  Files are
renamed to ``part-00000.parquet``, ``part-00001.parquet``, ... in range order, so
reading them in name order gives the rows sorted by run, query and measure order.

Writes are idempotent: a task writes to a name of its own attempt and renames it to
the partition's name, so a retried or speculative task leaves one whole file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from functools import reduce
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sparkeval.engine.formats import measure_column
from sparkeval.engine.transport import result_blobs
from sparkeval.engine.worker.assemble import per_query_indexes

#: the columns of ``per_query.parquet``
PER_QUERY_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("query_id", pa.string()),
        ("measure", pa.string()),
        ("value", pa.float64()),
    ]
)
#: long rows per output file at most, about (a writing task holds its file's rows)
ROWS_PER_FILE = 16_000_000
#: wide rows (queries) per output file at most: the task writing one file sorts them
WIDE_ROWS_PER_FILE = 4_000_000
#: long rows from which the blob path writes one file per core, at most one per this many
SHARED_SORT_ROWS = 2_000_000
#: wide rows expanded and written as one row group (1M long rows at 10 measures)
WIDE_ROWS_PER_GROUP = 100_000
#: the order of the wide rows in the files
WIDE_ORDER = [("run_id", "ascending"), ("query_id", "ascending")]
#: :data:`PER_QUERY_SCHEMA` as :func:`long_rows` builds it; the file holds plain strings
WRITTEN_SCHEMA = pa.schema(
    [
        (f.name, pa.dictionary(pa.int32(), f.type) if f.type == pa.string() else f.type)
        for f in PER_QUERY_SCHEMA
    ]
)
_WRITE_OPTIONS = {"compression": "snappy", "store_schema": False, "write_statistics": True}


def long_rows(wide: pa.Table, columns: Sequence[str], names: Sequence[str]) -> pa.Table:
    """One row per (wide row, measure), the measures in the given order.

    Example: wide rows ``(r, q1, m0=0.5, m1=null)`` and ``(r, q2, m0=1.0, m1=0.25)`` with
    names ``AP, RR`` give ``(r,q1,AP,0.5) (r,q1,RR,null) (r,q2,AP,1.0) (r,q2,RR,0.25)``.

    The id and measure columns are dictionary arrays (:data:`WRITTEN_SCHEMA`): each
    wide row's strings are held once, and the Parquet writer stores them as its
    dictionary pages without hashing the string of every long row.
    """
    n, k = wide.num_rows, len(columns)
    repeat = pa.array(np.repeat(np.arange(n, dtype=np.int32), k))
    values = np.empty((n, k), dtype=np.float64)
    valid = np.empty((n, k), dtype=bool)
    for j, column in enumerate(columns):
        data = wide.column(column)
        valid[:, j] = data.is_valid().to_numpy(zero_copy_only=False)
        values[:, j] = data.fill_null(0.0).to_numpy(zero_copy_only=False)
    measure = pa.DictionaryArray.from_arrays(
        pa.array(np.tile(np.arange(k, dtype=np.int32), n)), pa.array(list(names), pa.string())
    )
    return pa.table(
        {
            "run_id": _repeated(wide.column("run_id"), repeat),
            "query_id": _repeated(wide.column("query_id"), repeat),
            "measure": measure,
            "value": pa.array(values.ravel(), mask=~valid.ravel()),
        },
        schema=WRITTEN_SCHEMA,
    )


def _repeated(strings: pa.ChunkedArray, repeat: pa.Array) -> pa.DictionaryArray:
    """``strings.take(repeat)`` as a dictionary array over the distinct strings
    (in order of first appearance, the dictionary a Parquet writer would build)."""
    encoded = pc.dictionary_encode(strings.combine_chunks())
    return pa.DictionaryArray.from_arrays(encoded.indices.take(repeat), encoded.dictionary)


def write_per_query(
    blobs,
    wide,
    measures,
    names: Sequence[str],
    directory: Path,
    queries: int,
    wide_rows_in_files: bool = False,
) -> None:
    """Write the evaluated wide rows to ``directory`` as sorted long-row Parquet files.

    Args:
        blobs: the cached result blobs of an evaluation
            (:mod:`sparkeval.engine.transport.result_blobs`).
        wide: the same wide rows as a DataFrame (``run_id, query_id, evaluated, m<i>``).
        measures: the evaluated measures; those without per-query values are left out.
        names: the output name of every measure.
        directory: the new output directory (created here); executors must see its path.
        queries: the number of evaluated (run, query) rows (sets the number of files).
        wide_rows_in_files: the blobs name local files of wide rows
            (:mod:`sparkeval.engine.transport.result_files`), which every task can map:
            only then do several tasks share the blob path's writing.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from sparkeval.spark import (
        ARROW_BATCH_BYTES_KEY,
        UNION_PARTITIONING_KEY,
        UNMEASURED_BATCH_BYTES,
        session_settings,
    )
    from sparkeval.spark import parallelism as default_parallelism

    chosen = per_query_indexes(measures)
    columns = [measure_column(i) for i in chosen]
    out_names = [names[i] for i in chosen]
    directory.mkdir(parents=True)
    target = str(directory)
    kept = ["run_id", "query_id", *columns]
    parallelism = default_parallelism(wide.sparkSession)
    files = _file_count(queries * len(chosen), parallelism, wide_rows=queries)
    # tasks that each received every inline blob would only repeat the receiving
    shares = _share_count(queries * len(chosen), parallelism) if wide_rows_in_files else 1

    def write_blobs(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        # every blob of the evaluation: sort the evaluated rows' keys, then write this
        # task's share of the rows in that order, one row group at a time
        tables = list(result_blobs.tables(batches, result_blobs.WIDE))
        if not tables:
            return
        wide = pa.concat_tables(tables)
        order = evaluated_order(wide)
        start, stop = share_bounds(len(order), _partition_id(), shares)
        rows = wide.select(kept)
        chunks = (
            rows.take(order.slice(first, min(WIDE_ROWS_PER_GROUP, stop - first)))
            for first in range(start, stop, WIDE_ROWS_PER_GROUP)
        )
        yield from _write_file(target, chunks, columns, out_names)

    def write_sorted(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        # batch by batch, as Spark sorts and sends them: one row group per batch
        chunks = (pa.Table.from_batches([b]) for b in batches if b.num_rows)
        yield from _write_file(target, chunks, columns, out_names)

    schema = T.StructType([T.StructField("partition", T.IntegerType())])
    if files == 1:  # tasks take every blob: no sampling job, no exchange, no JVM sort
        one = blobs.where(F.col("kind").isin(*result_blobs.WIDE_KINDS)).coalesce(1)
        # partition i is copy i (Spark would otherwise zip copies of one partition)
        every = reduce(lambda a, b: a.union(b), [one] * shares)
        done = every.mapInArrow(write_blobs, schema=schema)
    else:
        evaluated = wide.where("evaluated").select(*kept)
        ranges = evaluated.repartitionByRange(files, "run_id", "query_id")
        done = ranges.sortWithinPartitions("run_id", "query_id").mapInArrow(write_sorted, schema)
    settings = {
        ARROW_BATCH_BYTES_KEY: UNMEASURED_BATCH_BYTES,  # wide rows reach the workers
        UNION_PARTITIONING_KEY: "false",
    }
    with session_settings(wide.sparkSession, settings):
        written = sorted(r[0] for r in done.collect())
    if files == 1 and written and written != list(range(shares)):
        # a task given two copies would write a slice of doubled rows
        raise RuntimeError(
            f"per_query.parquet: {shares} writing tasks expected, partitions {written} "
            f"wrote (does this Spark honour {UNION_PARTITIONING_KEY}=false?)"
        )
    for path in directory.iterdir():
        if path.name.startswith("."):
            path.unlink()  # what a failed attempt left
    for index, partition in enumerate(written):
        source = directory / f"part-{partition:05d}.parquet"
        source.rename(directory / f"part-{index:05d}.parquet")
    if not written:
        pq.write_table(PER_QUERY_SCHEMA.empty_table(), directory / "part-00000.parquet")


def evaluated_order(wide: pa.Table) -> pa.Array:
    """Indices of ``wide``'s evaluated rows, sorted by run id and query id in byte-wise
    string order (as Spark's range partitioning sorts).

    Only the two key columns are sorted, as one array each; the rows are then taken
    one row group at a time.  Sorting and taking whole tables touched about twice the
    wide rows' size in new memory, which costs more than the sort itself where page
    faults are dear (measured at 1M queries: 0.48-0.86 s before, 0.13 s after).

    Example (the second row is not evaluated)::

        >>> wide = pa.table({"run_id": ["r", "r", "r"], "query_id": ["q2", "q10", "q1"],
        ...                  "evaluated": [True, False, True]})
        >>> evaluated_order(wide).to_pylist()
        [2, 0]
    """
    keys = wide.select(["run_id", "query_id"]).combine_chunks()
    order = pc.sort_indices(keys, sort_keys=WIDE_ORDER)
    evaluated = wide.column("evaluated").combine_chunks()
    return order.filter(evaluated.take(order))


def share_bounds(rows: int, share: int, shares: int) -> tuple[int, int]:
    """``(start, stop)`` of slice ``share`` of ``shares`` near-equal slices of ``rows``.

    Example: 10 rows in 3 shares are ``(0, 3)``, ``(3, 6)`` and ``(6, 10)``::

        >>> [share_bounds(10, i, 3) for i in range(3)]
        [(0, 3), (3, 6), (6, 10)]
    """
    return rows * share // shares, rows * (share + 1) // shares


def _partition_id() -> int:
    """The running task's partition (0 outside a task)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    return context.partitionId() if context else 0


def _write_file(
    target: str, chunks: Iterator[pa.Table], columns: Sequence[str], names: Sequence[str]
) -> Iterator[pa.RecordBatch]:
    """Write the task's sorted wide ``chunks`` as long rows, one row group per chunk, to
    the task's partition file; yields the partition number when a file was written.

    The file is written under the attempt's own name and renamed when complete.
    """
    from pyspark import TaskContext

    from sparkeval.faults import in_write_task

    context = TaskContext.get()
    partition = context.partitionId() if context else 0
    attempt = context.taskAttemptId() if context else 0
    final = os.path.join(target, f"part-{partition:05d}.parquet")
    partial = os.path.join(target, f".part-{partition:05d}.{attempt}.partial")
    writer = None
    for chunk in chunks:
        if writer is None:
            writer = pq.ParquetWriter(partial, WRITTEN_SCHEMA, **_WRITE_OPTIONS)
        writer.write_table(long_rows(chunk, columns, names))
    if writer is None:
        return
    writer.close()
    in_write_task()  # fault injection for reliability tests; off unless SPARKEVAL_FAULT
    os.replace(partial, final)
    yield pa.record_batch({"partition": pa.array([partition], pa.int32())})


def _share_count(rows: int, parallelism: int) -> int:
    """Tasks that share the blob path's writing: one per core, each with at least
    :data:`SHARED_SORT_ROWS` long rows; one below that.

    Example: 10M long rows on 2 cores make 2; 3M make 1; 10M on 8 cores make 5.
    """
    return max(1, min(parallelism, rows // SHARED_SORT_ROWS))


def _file_count(rows: int, parallelism: int, wide_rows: int = 0) -> int:
    """Files of at most :data:`ROWS_PER_FILE` rows made from at most
    :data:`WIDE_ROWS_PER_FILE` wide rows, in whole waves of ``parallelism`` tasks.

    Example: 10M rows make 1 file; 70M rows on 4 cores make 8 (5 rounded up to 2 waves).
    """
    files = max(1, -(-rows // ROWS_PER_FILE), -(-wide_rows // WIDE_ROWS_PER_FILE))
    if files > parallelism > 0:
        files = -(-files // parallelism) * parallelism
    return files
