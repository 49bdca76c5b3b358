"""An evaluation's results as a few Arrow IPC blobs per partition, for Spark to cache.

The evaluation's Python workers produce one wide row per (run, query) and a few rows
of partial sums per partition.  Handing those to Spark as rows would make the JVM
convert every wide row from Arrow to its row format, build its columnar cache from
them, and convert them back to Arrow for every later Python task (the per-query
writer): at a million queries that was several seconds of JVM work.  Instead each
partition yields rows ``kind, blob``: its wide rows as Arrow IPC streams of at most
:data:`WIDE_ROWS_PER_BLOB` rows (kind :data:`WIDE`), then its partial sums (kind
:data:`PARTIAL`).  Spark caches and moves the blobs as opaque bytes; Python tasks
decode them with :func:`tables`.  On a local master a partition's wide rows go to a
local file instead, and its blob row names that file (kind :data:`WIDE_FILE`,
:mod:`sparkeval.engine.transport.result_files`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pyarrow as pa

from sparkeval.engine.transport.local_handoff import read_arrow_file, write_arrow_file

#: ``kind`` of a blob holding wide rows / partial sums / the path of a wide-row file
WIDE = 0
PARTIAL = 1
WIDE_FILE = 2
#: the kinds whose blobs give wide rows
WIDE_KINDS = (WIDE, WIDE_FILE)
#: wide rows per blob at most (a blob stays far below Arrow's 2 GiB value limit)
WIDE_ROWS_PER_BLOB = 100_000


def blob_schema():
    """Spark schema of the blob rows: ``kind int, blob binary``."""
    from pyspark.sql import types as T

    return T.StructType(
        [T.StructField("kind", T.IntegerType()), T.StructField("blob", T.BinaryType())]
    )


def blob_batch(kind: int, table: pa.Table) -> pa.RecordBatch:
    """One blob row holding ``table`` as an Arrow IPC stream."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    data = sink.getvalue()
    offsets = pa.array([0, data.size], pa.int32()).buffers()[1]
    blob = pa.Array.from_buffers(pa.binary(), 1, [None, offsets, data])  # no copy
    return pa.record_batch({"kind": pa.array([kind], pa.int32()), "blob": blob})


def wide_blobs(wide: pa.Table) -> Iterator[pa.RecordBatch]:
    """``wide`` as blob rows of :data:`WIDE_ROWS_PER_BLOB` rows at most (none if empty)."""
    for start in range(0, wide.num_rows, WIDE_ROWS_PER_BLOB):
        yield blob_batch(WIDE, wide.slice(start, WIDE_ROWS_PER_BLOB))


def wide_file_blobs(wide: pa.Table, path: str) -> Iterator[pa.RecordBatch]:
    """Write ``wide`` to the Arrow IPC file ``path`` (as the local handoff writes its
    files: a retried task leaves one whole file) and yield one blob row naming it
    (nothing if ``wide`` is empty)."""
    if not wide.num_rows:
        return
    write_arrow_file(wide, path)
    yield pa.record_batch(
        {"kind": pa.array([WIDE_FILE], pa.int32()), "blob": pa.array([path.encode()])}
    )


def decode(blob: bytes | bytearray | pa.Buffer) -> pa.Table:
    """The table held by one blob."""
    return pa.ipc.open_stream(blob).read_all()


def read_wide_file(blob: bytes | pa.Buffer) -> pa.Table:
    """The wide rows of the file a :data:`WIDE_FILE` blob names, memory-mapped."""
    path = (blob.to_pybytes() if isinstance(blob, pa.Buffer) else blob).decode()
    return read_arrow_file(path)


def tables(batches: Iterable[pa.RecordBatch], kind: int) -> Iterator[pa.Table]:
    """The tables held by the blob rows of ``kind`` in ``batches``; for :data:`WIDE`,
    also the wide rows of the files that :data:`WIDE_FILE` rows name."""
    for batch in batches:
        kinds = batch.column(0).to_pylist()
        for row, blob in enumerate(batch.column(1)):
            if kinds[row] == kind:
                yield decode(blob.as_buffer())
            elif kind == WIDE and kinds[row] == WIDE_FILE:
                yield read_wide_file(blob.as_buffer())
