"""Write ``per_query.parquet`` from the wide rows, in the Python workers.

The evaluation keeps one wide row per (run, query) with one column per measure; the
output holds one long row per (run, query, measure).  The wide rows are sorted (one
row per query, so ten times fewer rows than the output at ten measures) and each
Python task turns its sorted rows into long rows with numpy and writes one Parquet
file with pyarrow, one row group per :data:`WIDE_ROWS_PER_GROUP` wide rows::

    one file:    cached result blobs -> coalesce(1)
                 -> mapInArrow: decode, sort the evaluated rows' keys with
                    pyarrow, take, explode and write part-00000.parquet
    S shares:    (wide rows in local files) a plain Python job of S tasks
                 (S = 1 or more), each mapping every file: as one file, but
                 task i writes only the i-th of S equal slices of the sorted
                 rows, to part-<i>.parquet
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
The files' paths are known in the driver, so that job is an RDD of S indexes: no query
for the JVM to analyse, generate code for and run.  The evaluation's job on local files
is a plain one too (:mod:`sparkeval.engine.plans.bucket_job`), so such a command runs
no query at all, and its JVM never loads nor warms up the query engine: the whole
command (10M run rows of Parquet with integer ids, 2 cores, medians of 5 alternating
runs) took 6.54 s against 7.29 s when this write was its one query.

Spark's own writer would convert all the long rows to its row format and back to
Parquet; here they never exist outside the worker that writes them.  Files are
renamed to ``part-00000.parquet``, ``part-00001.parquet``, ... in range order, so
reading them in name order gives the rows sorted by run, query and measure order.

Writes are idempotent: a task writes to a name of its own attempt and renames it to
the partition's name, so a retried or speculative task leaves one whole file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from sparkeval.engine.long_rows import (
    PER_QUERY_SCHEMA,
    WRITTEN_SCHEMA,
    evaluated_order,
    long_rows,
)
from sparkeval.engine.transport import result_blobs
from sparkeval.engine.transport.local_handoff import read_arrow_file
from sparkeval.engine.worker.assemble import per_query_indexes
from sparkeval.formats import measure_column

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from sparkeval.storage.stores import StoreSettings

#: long rows per output file at most, about (a writing task holds its file's rows)
ROWS_PER_FILE = 16_000_000
#: wide rows (queries) per output file at most: the task writing one file sorts them
WIDE_ROWS_PER_FILE = 4_000_000
#: long rows from which the blob path writes one file per core, at most one per this many
SHARED_SORT_ROWS = 2_000_000
#: wide rows expanded and written as one row group (1M long rows at 10 measures)
WIDE_ROWS_PER_GROUP = 100_000
_WRITE_OPTIONS = {"compression": "snappy", "store_schema": False, "write_statistics": True}


def write_per_query(
    spark: SparkSession,
    frames: Callable[[], tuple[DataFrame, DataFrame]],
    measures,
    names: Sequence[str],
    directory: Path,
    queries: int,
    wide_files: Sequence[str] | None = None,
) -> None:
    """Write the evaluated wide rows to ``directory`` as sorted long-row Parquet files.

    Args:
        spark: the evaluation's session.
        frames: ``(blobs, wide)``, made when needed: the cached result blobs of an
            evaluation (:mod:`sparkeval.engine.transport.result_blobs`) and the same
            wide rows as a DataFrame (``run_id, query_id, evaluated, m<i>``).
        measures: the evaluated measures; those without per-query values are left out.
        names: the output name of every measure.
        directory: the new output directory (created here); executors must see its path.
        queries: the number of evaluated (run, query) rows (sets the number of files).
        wide_files: the local files of wide rows the blobs name
            (:mod:`sparkeval.engine.transport.result_files`), which every task can map:
            only then do several tasks share the blob path's writing, and, for one
            file, a plain Python job writes without a query plan (:func:`_write_shares`).
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from sparkeval.spark import (
        ARROW_BATCH_BYTES_KEY,
        UNMEASURED_BATCH_BYTES,
        session_settings,
    )
    from sparkeval.spark import parallelism as default_parallelism
    from sparkeval.storage.executor_parts import remote_table
    from sparkeval.storage.uris import join

    chosen = per_query_indexes(measures)
    columns = [measure_column(i) for i in chosen]
    out_names = [names[i] for i in chosen]
    directory.mkdir(parents=True)
    remote = remote_table(directory)
    # a remote output on a cluster: the tasks write into its staging prefix
    target = str(directory) if remote is None else join(remote[0].prefix, remote[1])
    store = None if remote is None else remote[0].settings
    kept = ["run_id", "query_id", *columns]
    parallelism = default_parallelism(spark)
    files = _file_count(queries * len(chosen), parallelism, wide_rows=queries)
    # tasks that each received every inline blob would only repeat the receiving
    shares = _share_count(queries * len(chosen), parallelism) if wide_files is not None else 1

    def write_wide(tables: list[pa.Table]) -> Iterator[pa.RecordBatch]:
        # every wide row of the evaluation: sort the evaluated rows' keys, then write
        # this task's share of the rows in that order, one row group at a time
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
        yield from _write_file(target, chunks, columns, out_names, store)

    def write_blobs(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        yield from write_wide(list(result_blobs.tables(batches, result_blobs.WIDE)))

    def write_sorted(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        # batch by batch, as Spark sorts and sends them: one row group per batch
        chunks = (pa.Table.from_batches([b]) for b in batches if b.num_rows)
        yield from _write_file(target, chunks, columns, out_names, store)

    if files == 1 and wide_files is not None:
        written = _write_shares(spark, wide_files, shares, write_wide)
    else:
        blobs, wide = frames()
        schema = T.StructType([T.StructField("partition", T.IntegerType())])
        if files == 1:  # the task takes every blob: no sampling job, no exchange, no JVM sort
            one = blobs.where(F.col("kind").isin(*result_blobs.WIDE_KINDS)).coalesce(1)
            done = one.mapInArrow(write_blobs, schema=schema)
        else:
            evaluated = wide.where("evaluated").select(*kept)
            ranges = evaluated.repartitionByRange(files, "run_id", "query_id")
            done = ranges.sortWithinPartitions("run_id", "query_id").mapInArrow(
                write_sorted, schema
            )
        # wide rows reach the workers
        with session_settings(spark, {ARROW_BATCH_BYTES_KEY: UNMEASURED_BATCH_BYTES}):
            written = sorted(r[0] for r in done.collect())
    if files == 1 and written and written != list(range(shares)):
        # a task given the rows twice would write a slice of doubled rows
        raise RuntimeError(
            f"per_query.parquet: {shares} writing tasks expected, partitions {written} wrote"
        )
    if remote is not None and written:
        remote[0].place(remote[1], written)  # final names in the commit's manifest
        return
    for path in directory.iterdir():
        if path.name.startswith("."):
            path.unlink()  # what a failed attempt left
    for index, partition in enumerate(written):
        source = directory / f"part-{partition:05d}.parquet"
        source.rename(directory / f"part-{index:05d}.parquet")
    if not written:
        pq.write_table(PER_QUERY_SCHEMA.empty_table(), directory / "part-00000.parquet")


def _write_shares(
    spark: SparkSession,
    wide_files: Sequence[str],
    shares: int,
    write_wide: Callable[[list[pa.Table]], Iterator[pa.RecordBatch]],
) -> list[int]:
    """The partitions that wrote a file, when ``shares`` tasks of a plain Python job
    (no query plan) each map every one of ``wide_files`` (in task order, as the blob
    rows name them) and hand them to ``write_wide``, which writes the task's share."""
    if not wide_files:
        return []
    paths = list(wide_files)

    def write_share(partition: int, _: Iterable[int]) -> Iterator[int]:
        for batch in write_wide([read_arrow_file(path) for path in paths]):
            yield from batch.column(0).to_pylist()

    tasks = spark.sparkContext.parallelize(range(shares), shares)
    return sorted(tasks.mapPartitionsWithIndex(write_share).collect())


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
    target: str,
    chunks: Iterator[pa.Table],
    columns: Sequence[str],
    names: Sequence[str],
    store: StoreSettings | None = None,
) -> Iterator[pa.RecordBatch]:
    """Write the task's sorted wide ``chunks`` as long rows, one row group per chunk, to
    the task's partition file; yields the partition number when a file was written.

    A local file is written under the attempt's own name and renamed when complete; a
    remote one (``target`` a staging prefix, opened with ``store``) is one upload.
    """
    from pyspark import TaskContext

    context = TaskContext.get()
    partition = context.partitionId() if context else 0
    attempt = context.taskAttemptId() if context else 0
    if store is not None:
        if _write_remote_part(target, chunks, columns, names, partition, store):
            yield pa.record_batch({"partition": pa.array([partition], pa.int32())})
        return
    if write_part_file(target, chunks, columns, names, partition, attempt):
        yield pa.record_batch({"partition": pa.array([partition], pa.int32())})


def write_part_file(
    target: str,
    chunks: Iterable[pa.Table],
    columns: Sequence[str],
    names: Sequence[str],
    partition: int = 0,
    attempt: int = 0,
) -> bool:
    """Write sorted wide ``chunks`` as long rows, one row group per chunk, to
    ``target/part-<partition>.parquet`` (through a name of the attempt's own, renamed
    when complete); False when there was no chunk, and nothing was written."""
    from sparkeval.faults import in_write_task

    final = os.path.join(target, f"part-{partition:05d}.parquet")
    partial = os.path.join(target, f".part-{partition:05d}.{attempt}.partial")
    writer = None
    for chunk in chunks:
        if writer is None:
            writer = pq.ParquetWriter(partial, WRITTEN_SCHEMA, **_WRITE_OPTIONS)
        writer.write_table(long_rows(chunk, columns, names))
    if writer is None:
        return False
    writer.close()
    in_write_task()  # fault injection for reliability tests; off unless SPARKEVAL_FAULT
    os.replace(partial, final)
    return True


def _write_remote_part(
    target: str,
    chunks: Iterable[pa.Table],
    columns: Sequence[str],
    names: Sequence[str],
    partition: int,
    store: StoreSettings,
) -> bool:
    """:func:`write_part_file`'s file, uploaded to ``target`` (a remote staging prefix)
    as one object, visible when complete: the same bytes."""
    from sparkeval.faults import in_write_task
    from sparkeval.storage.executor_parts import part_name, write_batches

    tables = (long_rows(chunk, columns, names) for chunk in chunks)
    written = write_batches(
        target, part_name(partition), tables, store, WRITTEN_SCHEMA, **_WRITE_OPTIONS
    )
    in_write_task()  # fault injection for reliability tests; off unless SPARKEVAL_FAULT
    return written


def write_held_per_query(
    wide: pa.Table, measures: Sequence, names: Sequence[str], directory: Path
) -> None:
    """Write the wide rows this process holds (an evaluation without Spark) to the new
    directory ``directory``.

    Up to :data:`ROWS_PER_FILE` long rows (and :data:`WIDE_ROWS_PER_FILE` wide rows) make
    one file, byte for byte the one a writing task of :func:`write_per_query` makes
    (``part-00000.parquet``, one row group per :data:`WIDE_ROWS_PER_GROUP` wide rows).
    Beyond that the sorted rows are cut into as many equal slices as files are needed
    (Spark cuts them by sampled ranges instead: the same rows, other file boundaries).
    An evaluation without rows gets the empty file.
    """
    chosen = per_query_indexes(measures)
    columns = [measure_column(i) for i in chosen]
    out_names = [names[i] for i in chosen]
    directory.mkdir(parents=True)
    order = evaluated_order(wide)
    rows = wide.select(["run_id", "query_id", *columns])
    files = _file_count(len(order) * len(chosen), 1, wide_rows=len(order))
    written = False
    for part in range(files):
        start, stop = share_bounds(len(order), part, files)
        chunks = (
            rows.take(order.slice(first, min(WIDE_ROWS_PER_GROUP, stop - first)))
            for first in range(start, stop, WIDE_ROWS_PER_GROUP)
        )
        written |= write_part_file(str(directory), chunks, columns, out_names, part)
    if not written:
        pq.write_table(PER_QUERY_SCHEMA.empty_table(), directory / "part-00000.parquet")


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
