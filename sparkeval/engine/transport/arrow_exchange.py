"""Ship directly-read inputs to the evaluation as Arrow IPC payloads.

Plan (two Python stages, one Spark exchange of a few large rows)::

    one task per Parquet row group (sparkeval.io.direct.read_unit)
      -> rows split by bucket = crc32(query_id) mod B
      -> one row per (task, bucket): (label of the bucket, kind, Arrow IPC payload)
    repartition(B, label)        # label b lands in partition b, exactly
      -> the evaluation UDF unpacks the payloads of its partition (unpack_partition)

Spark moves a few hundred binary rows instead of converting millions of rows
between its row format and Arrow.  Local masters skip the exchange and hand the same
buckets over as files (:mod:`sparkeval.engine.transport.local_handoff`).  Every query lands
in exactly one partition with all its run and qrels rows, as on the Spark read path,
and per-query values do not depend on which path read the data.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.engine.worker.worker_memory import keep_freed_memory
from sparkeval.formats import TIE_KEY
from sparkeval.io.direct import read_unit
from sparkeval.io.direct_input import QRELS_SCHEMA, RUN_SCHEMA, DirectPlan

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: what a read task makes of a unit's rows: (unit index, ``run`` or ``qrels``, rows) -> batch
Emit = Callable[[int, str, pa.Table], pa.RecordBatch]
#: the ``kind`` of a payload holding run rows / qrels rows
RUN_PAYLOAD, QRELS_PAYLOAD = 0, 1
#: payload compression: the exchange writes every byte to disk and reads it back
_COMPRESSION = "lz4"
#: input bytes per bucket at most: one Python worker evaluates a bucket's rows at once,
#: so this bounds its memory whatever the input's size (100M rows: ~50 buckets, not 8),
#: and keeps a partition's payloads, one Arrow batch, far from the 2 GiB binary limit
BUCKET_BYTES = 64 << 20


_MASK32 = 0xFFFFFFFF


def _rotl32(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK32


def spark_int_hash(value: int, seed: int = 42) -> int:
    """Spark's ``hash()`` of an ``int`` value: MurmurHash3 x86 32-bit of its 4 bytes.

    This is the hash behind ``repartition(n, col)`` (``pmod(hash(col), n)``, seed 42).

    Example:
        >>> spark_int_hash(0), spark_int_hash(1)
        (933211791, -559580957)
    """
    k = (value & _MASK32) * 0xCC9E2D51 & _MASK32
    k = _rotl32(k, 15) * 0x1B873593 & _MASK32
    h = _rotl32(seed ^ k, 13)
    h = (h * 5 + 0xE6546B64) & _MASK32
    h ^= 4  # the length in bytes
    h ^= h >> 16
    h = h * 0x85EBCA6B & _MASK32
    h ^= h >> 13
    h = h * 0xC2B2AE35 & _MASK32
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


def partition_labels(buckets: int) -> list[int]:
    """``labels[b]``: the smallest int that ``repartition(buckets, col)`` sends to partition ``b``.

    Spark's hash partitioning is ``pmod(hash(value), buckets)``; labelling buckets this
    way maps them one to one onto partitions (partitioning the bucket numbers
    themselves would put some buckets together and leave other partitions empty).
    """
    found: dict[int, int] = {}
    value = 0
    while len(found) < buckets:
        found.setdefault(spark_int_hash(value) % buckets, value)
        value += 1
    return [found[b] for b in range(buckets)]


def bucket_of_rows(query_ids: pa.ChunkedArray | pa.Array, buckets: int) -> np.ndarray:
    """Bucket of every row: ``crc32(utf-8 bytes of query_id) mod buckets``.

    Deterministic across processes and machines (unlike Python's ``hash``); computed
    once per distinct query id of the batch. A null query id (a bad row, which its
    bucket's evaluation reports) is in bucket 0.
    """
    encoded = pc.dictionary_encode(query_ids)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    keys = encoded.dictionary.cast(pa.binary()).to_pylist()
    per_key = np.fromiter((zlib.crc32(k) % buckets for k in keys), dtype=np.int32, count=len(keys))
    indices = encoded.indices
    if indices.null_count:
        return np.append(per_key, np.int32(0))[pc.fill_null(indices, len(keys)).to_numpy()]
    return per_key[indices.to_numpy(zero_copy_only=False)]


def _payload(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression=_COMPRESSION)
    with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


#: at most this many buckets are cut out of a table by one filter each; more, by one sort
FILTERED_BUCKETS = 16


def bucket_slices(table: pa.Table, buckets: int) -> Iterator[tuple[int, pa.Table]]:
    """``(bucket, rows)`` for every non-empty bucket of ``table``, in bucket order; the
    rows keep their order within a bucket, and dictionary-encoded columns (the query
    ids :func:`~sparkeval.io.direct.read_unit` reads so) come decoded.

    A few buckets are filtered out of the table one by one, each pass reading the rows
    in order; more are cut from the table sorted by bucket once (a gather of every
    row).  At 8 buckets the filters take 0.86x the time of the sort (1M rows of
    100-doc queries, string ids).
    """
    bucket = bucket_of_rows(table.column("query_id"), buckets)
    if buckets <= 1 << 16:  # numpy's stable sort of 16-bit keys is a radix sort: 5x faster
        bucket = bucket.astype(np.uint16)
    if buckets <= FILTERED_BUCKETS:
        for b in range(buckets):
            kept = bucket == b
            if kept.any():
                yield b, decoded_columns(table.filter(pa.array(kept)))
        return
    order = np.argsort(bucket, kind="stable")
    bounds = np.searchsorted(bucket[order], np.arange(buckets + 1))
    grouped = decoded_columns(table.take(pa.array(order)))
    for b in range(buckets):
        start, stop = int(bounds[b]), int(bounds[b + 1])
        if stop > start:
            yield b, grouped.slice(start, stop - start)


def decoded_columns(table: pa.Table) -> pa.Table:
    """``table`` with its dictionary-encoded columns (a Parquet row group's query ids,
    read as stored) decoded to their values' type, so that tables of every file
    concatenate."""
    for index, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            column = table.column(index).cast(field.type.value_type)
            table = table.set_column(index, field.with_type(column.type), column)
    return table


def split_by_bucket(
    table: pa.Table, kind: int, unit: int, buckets: int, labels: Sequence[int]
) -> pa.RecordBatch:
    """One ``(label, kind, unit, payload)`` row per non-empty bucket of ``table``."""
    out_labels, payloads = [], []
    for b, rows in bucket_slices(table, buckets):
        out_labels.append(labels[b])
        payloads.append(_payload(rows))
    return pa.record_batch(
        {
            "label": pa.array(out_labels, pa.int32()),
            "kind": pa.array([kind] * len(payloads), pa.int32()),
            "unit": pa.array([unit] * len(payloads), pa.int32()),
            "payload": pa.array(payloads, pa.binary()),
        }
    )


def map_units(spark: SparkSession, plan: DirectPlan, run_ids: Sequence[str], emit: Emit, schema):
    """One Spark task per Parquet row group (a *unit*) of ``plan``; each task reads its
    rows (:func:`read_unit`) and yields ``emit(unit index, input kind, rows)``, a batch
    of ``schema``."""
    units = plan.row_groups
    run_ids = list(run_ids)

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        keep_freed_memory()
        for batch in batches:
            for index in batch.column(0).to_pylist():
                source, unit = units[index]
                yield emit(index, source.kind, read_unit(source, unit, run_ids))

    tasks = spark.range(0, len(units), 1, numPartitions=max(1, len(units)))
    return tasks.mapInArrow(read, schema=schema)


def direct_payloads(spark: SparkSession, plan: DirectPlan, run_ids: Sequence[str], buckets: int):
    """The payload frame of ``plan``, hash-partitioned by query into ``buckets`` partitions.

    One Spark task reads one Parquet row group (a *unit*).  Rows: ``label, kind, unit,
    payload``.
    """
    from pyspark.sql import types as T

    labels = partition_labels(buckets)

    def split(index: int, kind: str, table: pa.Table) -> pa.RecordBatch:
        code = RUN_PAYLOAD if kind == "run" else QRELS_PAYLOAD
        return split_by_bucket(table, code, index, buckets, labels)

    schema = T.StructType(
        [
            T.StructField("label", T.IntegerType()),
            T.StructField("kind", T.IntegerType()),
            T.StructField("unit", T.IntegerType()),
            T.StructField("payload", T.BinaryType()),
        ]
    )
    return map_units(spark, plan, run_ids, split, schema).repartition(buckets, "label")


def unpack_partition(rows: pa.Table) -> tuple[pa.Table, pa.Table]:
    """(run rows, qrels rows) of one partition's payloads, in :func:`read_unit`'s form.

    Payloads are concatenated in unit order, whatever order the exchange delivered
    them in, so that a partition's rows (and everything computed from them) are the
    same from run to run.
    """
    rows = rows.sort_by("unit")
    kinds = rows.column("kind").to_pylist()
    return run_and_qrels(
        (kind == RUN_PAYLOAD, pa.ipc.open_stream(payload).read_all())
        for kind, payload in zip(kinds, _buffers(rows), strict=True)
    )


def run_and_qrels(
    pieces: Iterable[tuple[bool, pa.Table]], ties: str = "doc-id"
) -> tuple[pa.Table, pa.Table]:
    """(run rows, qrels rows): the ``(is run, rows)`` pieces of a bucket concatenated in
    the order given, each kind in :func:`read_unit`'s form (empty when it has none);
    under ``ties`` other than ``doc-id`` the run rows have their ``_tie`` column."""
    run_schema = RUN_SCHEMA
    if ties != "doc-id":
        run_schema = RUN_SCHEMA.append(pa.field(TIE_KEY, pa.float64()))
    parts: dict[bool, list[pa.Table]] = {
        True: [run_schema.empty_table()],
        False: [QRELS_SCHEMA.empty_table()],
    }
    for is_run, table in pieces:
        parts[is_run].append(table)
    return pa.concat_tables(parts[True]), pa.concat_tables(parts[False])


def _buffers(rows: pa.Table) -> Iterator[pa.Buffer]:
    for chunk in rows.column("payload").chunks:
        for value in chunk:
            yield value.as_buffer()


def buckets_for(plan: DirectPlan, buckets: int) -> int:
    """At least ``buckets``, and at least one per :data:`BUCKET_BYTES` of input."""
    return max(buckets, -(-plan.size // BUCKET_BYTES))
