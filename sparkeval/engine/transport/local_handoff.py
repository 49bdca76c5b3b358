"""Hand directly-read inputs to the evaluation through local files (local masters).

With a local master every Python worker runs on the driver's machine.  The read
tasks can then leave each bucket's rows in a file for the task that evaluates the
bucket, instead of sending them through Spark's exchange, where the JVM copies,
compresses, checksums, writes, reads back and copies every payload again::

    job 1: one task per Parquet row group (sparkeval.io.direct.read_unit)
             -> rows split by bucket = crc32(query_id) mod B (arrow_exchange.bucket_slices)
             -> one Arrow IPC file per (row group, bucket), uncompressed
             -> returns (unit, bucket) of every file it wrote
    job 2: one task per non-empty bucket (a plain Python job:
           sparkeval.engine.plans.bucket_job)
             -> maps its files, concatenated in unit order -> the evaluation

A bucket holds the rows, in the order, that the exchange would deliver to its
partition (:func:`~sparkeval.engine.transport.arrow_exchange.unpack_partition` also concatenates
in unit order), so per-query values are identical either way.  A task writes each
file under its attempt's name and renames it when complete, so a retried task leaves
whole files.  The files live in a new directory under ``spark.local.dir`` that the
caller removes once the evaluation's results are cached.

Measured on 2 cores, whole job, handoff against exchange in alternation (medians of
3–4): 100k queries × 100 docs 11.4 s → 9.2 s (CPU 19.2 s → 15.0 s); 1M queries × 10
docs 14.1 s → 12.2 s.

Rows that Spark computes (DataFrames, Spark's readers) are handed over the same way
(:func:`write_frame_pieces`): in job 1 each partition of the shipped frame reaches a
Python task as Arrow, as it would reach the evaluation, and is written out by bucket,
so Spark's exchange (its rows serialised, written, read back and converted to Arrow
after the shuffle) is skipped.

``spark.sparkeval.localHandoff=false`` sends the payloads through Spark's exchange
on local masters too.  Other masters use the exchange, unless
``spark.sparkeval.handoffDirectory`` names a directory that the driver and every
executor see at the same path (a shared file system, or a cluster on one machine):
the files and the evaluated rows then go there, as on a local master.  On a standalone
cluster of two one-core workers on loopback (10M rows, medians of 3 alternating runs,
``bench/cluster_bench.py``) that took the prepared run from 10.8 s to 8.8 s, with the
same output files.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pyarrow as pa

from sparkeval.engine.transport.arrow_exchange import bucket_slices, map_units, run_and_qrels
from sparkeval.engine.worker.worker_memory import keep_freed_memory
from sparkeval.io.direct_input import DirectPlan
from sparkeval.scratch import HANDOFF_PREFIX, SHARED_DIRECTORY_KEY, new_scratch_directory

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: the Spark setting that turns the handoff off (``false``) on a local master
HANDOFF_KEY = "spark.sparkeval.localHandoff"
#: Spark's setting of its local scratch directories (the files' place by default)
LOCAL_DIRS = "spark.local.dir"


def handoff_enabled(spark: SparkSession) -> bool:
    """Whether this session's tasks hand files over (:func:`hands_files_over`).

    A Spark Connect session never hands over files: its workers run beside the server.
    """
    from sparkeval.spark import is_connect

    if is_connect(spark):
        return False
    return hands_files_over(
        spark.sparkContext.master or "",
        spark.conf.get(HANDOFF_KEY, ""),
        spark.conf.get(SHARED_DIRECTORY_KEY, ""),
    )


def hands_files_over(master: str, switch: str | None, shared_directory: str | None) -> bool:
    """Whether tasks on ``master`` share a file system with the driver: a ``local``
    master, or any master given a :data:`SHARED_DIRECTORY_KEY`; and :data:`HANDOFF_KEY`
    (its value ``switch``) does not turn the handoff off.

    Example: ``hands_files_over("spark://h:7077", None, "/shared/scratch")`` is True;
    without the directory it is False.
    """
    if not switched_on(switch):
        return False
    return master.startswith("local") or bool((shared_directory or "").strip())


def switched_on(setting: str | None) -> bool:
    """Whether an on/off Spark setting of sparkeval's is on (unset: on; ``false``: off)."""
    return (setting or "true").strip().lower() != "false"


def new_directory(spark: SparkSession, prefix: str | None = None) -> Path:
    """A new directory for the files, named ``prefix`` (:data:`DIRECTORY_PREFIX`) and a
    random part, under :func:`scratch_parent`."""
    return new_scratch_directory(prefix or DIRECTORY_PREFIX, scratch_parent(spark))


def scratch_parent(spark: SparkSession) -> str | None:
    """Where this session's files go: the :data:`SHARED_DIRECTORY_KEY` directory when
    set, else the first of ``spark.local.dir`` (None: the system's temporary directory).

    Raises:
        ConfigError: the shared directory is not an existing directory here.
    """
    settings = {key: spark.conf.get(key, "") or "" for key in (SHARED_DIRECTORY_KEY, LOCAL_DIRS)}
    parent = settings_parent(settings)
    if "://" in str(parent) and not str(parent).startswith("file://"):
        from sparkeval.errors import ConfigError

        raise ConfigError(
            f"{SHARED_DIRECTORY_KEY}: {parent} is a URI; the handoff needs a directory the "
            "driver and every executor see at the same path (a shared file system). "
            "Without one, leave the setting out: Spark's exchange moves the rows"
        )
    if settings[SHARED_DIRECTORY_KEY].strip() and not os.path.isdir(str(parent)):
        from sparkeval.errors import ConfigError

        raise ConfigError(
            f"{SHARED_DIRECTORY_KEY}: {parent} is not a directory; it must be one that "
            "the driver and every executor see at the same path"
        )
    return parent


#: what a bucket's task reads: its units, or its units in each of two directories
_Units = TypeVar("_Units")

#: the name of every directory of files starts so
DIRECTORY_PREFIX = HANDOFF_PREFIX


def settings_parent(settings: Mapping[str, str]) -> str | None:
    """Where the files of a session with these Spark ``settings`` go: the
    :data:`SHARED_DIRECTORY_KEY` directory when set, else :func:`directory_parent`."""
    shared = (settings.get(SHARED_DIRECTORY_KEY) or "").strip()
    return shared or directory_parent(settings.get(LOCAL_DIRS))


def directory_parent(local_dir_setting: str | None) -> str | None:
    """Where the files go: the first directory of ``spark.local.dir`` (its value given),
    else of ``SPARK_LOCAL_DIRS``; None for the system's temporary directory."""
    local_dirs = local_dir_setting or os.environ.get("SPARK_LOCAL_DIRS", "")
    return local_dirs.split(",")[0].strip() or None


def piece_path(directory: str | Path, unit: int, bucket: int) -> str:
    """The file holding the rows of row group ``unit`` that fall in ``bucket``."""
    return os.path.join(directory, f"unit-{unit:06d}-bucket-{bucket:05d}.arrow")


def write_arrow_file(table: pa.Table, path: str, attempt: int | None = None) -> None:
    """Write ``table`` to the Arrow IPC file ``path``, under the writer's own name first
    (the Spark task attempt's, or ``attempt`` outside Spark) and renamed when complete,
    so a retried task leaves one whole file."""
    if attempt is None:
        from pyspark import TaskContext

        context = TaskContext.get()
        attempt = context.taskAttemptId() if context else 0
    partial = f"{path}.{attempt}.partial"
    with pa.OSFile(partial, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    os.replace(partial, path)


def read_arrow_file(path: str) -> pa.Table:
    """The rows of one Arrow IPC file, memory-mapped (not copied)."""
    return pa.ipc.open_file(pa.memory_map(path)).read_all()


def write_buckets(
    table: pa.Table, unit: int, buckets: int, target: str, attempt: int | None = None
) -> list[int]:
    """Write every non-empty bucket of ``table`` to unit ``unit``'s file of the bucket
    (``attempt``: see :func:`write_arrow_file`); returns the buckets written, in order."""
    written = []
    for bucket, rows in bucket_slices(table, buckets):
        write_arrow_file(rows, piece_path(target, unit, bucket), attempt)
        written.append(bucket)
    return written


def _write_buckets(table: pa.Table, unit: int, buckets: int, target: str) -> pa.RecordBatch:
    """:func:`write_buckets` in a task: one ``(unit, bucket)`` row per file written."""
    written = write_buckets(table, unit, buckets, target)
    return pa.record_batch(
        {
            "unit": pa.array([unit] * len(written), pa.int64()),
            "bucket": pa.array(written, pa.int32()),
        }
    )


def _written_schema():
    """The Spark schema of :func:`_write_buckets`' rows."""
    from pyspark.sql import types as T

    return T.StructType(
        [T.StructField("unit", T.LongType()), T.StructField("bucket", T.IntegerType())]
    )


def _units_by_bucket(written: DataFrame) -> dict[int, list[int]]:
    """The units that wrote a file for each non-empty bucket, in unit order (job 1 runs
    here)."""
    found: dict[int, list[int]] = defaultdict(list)
    for row in written.collect():
        found[row.bucket].append(row.unit)
    return {bucket: sorted(found[bucket]) for bucket in sorted(found)}


def _bucket_order(pieces: dict[int, _Units]) -> list[tuple[int, _Units]]:
    """The ``(bucket, units)`` job 2's task ``i`` evaluates, at index ``i``: one task
    per non-empty bucket."""
    return list(pieces.items())


def write_pieces(
    spark: SparkSession, plan: DirectPlan, run_ids: Sequence[str], buckets: int, directory: Path
) -> dict[int, list[int]]:
    """Job 1: read every row group and write its buckets' rows to ``directory``.

    Returns the units that wrote a file for each non-empty bucket, in unit order.
    """
    target = str(directory)

    def write(index: int, kind: str, table: pa.Table) -> pa.RecordBatch:
        return _write_buckets(table, index, buckets, target)

    return _units_by_bucket(map_units(spark, plan, run_ids, write, _written_schema()))


#: rows a task of :func:`write_frame_pieces` gathers before it writes them by bucket
FRAME_FLUSH_ROWS = 1 << 20
#: units per partition in :func:`write_frame_pieces`: partition p's k-th write is unit
#: ``p * UNITS_PER_PARTITION + k``, so units sort in partition order
UNITS_PER_PARTITION = 1 << 16
#: units per part of :func:`write_frame_pieces` (a partition index is below 2**31):
#: part k's units start at ``k * UNITS_PER_PART``, so two parts never share a unit,
#: whether Spark's union of their frames numbers its partitions one after the other or,
#: for children partitioned alike, reads their i-th partitions in one task
UNITS_PER_PART = (1 << 31) * UNITS_PER_PARTITION


def frame_unit(part: int, partition: int, write: int = 0) -> int:
    """The unit of a part's partition's ``write``-th write in :func:`write_frame_pieces`.

    Example: ``frame_unit(0, 3, 1)`` is ``3 * 65536 + 1``; ``frame_unit(1, 3, 1)`` is
    ``2**47 + 3 * 65536 + 1``.
    """
    return part * UNITS_PER_PART + partition * UNITS_PER_PARTITION + write


@dataclass(frozen=True)
class FramePart:
    """Rows Spark computes for :func:`write_frame_pieces`, and a column it left out.

    ``constant`` is ``(name, value)`` of an int32 column every row of the part holds
    with that value (None: null); the writing task puts it back as the first column,
    so that the files hold the same columns as if Spark had converted it (Spark's
    conversion to Arrow costs as much for a constant column as for any other).
    """

    frame: DataFrame
    constant: tuple[str, int | None] | None = None


def with_constant(table: pa.Table, constant: tuple[str, int | None] | None) -> pa.Table:
    """``table`` with the int32 column ``constant`` = (name, value) first (none added
    when ``constant`` is None), every field nullable.

    Every field is made nullable because a bucket's files, concatenated, must have one
    schema, and Spark marks a column not null where it can prove it of one part's rows
    (a run's code folded to a constant) but not of another's.

    Example: ``with_constant(rows, ("_run", 0))`` gives the rows a ``_run`` column of
    zeros.
    """
    if constant is not None:
        name, value = constant
        column = pa.repeat(pa.scalar(value, pa.int32()), table.num_rows)
        table = table.add_column(0, pa.field(name, pa.int32()), column)
    nullable = pa.schema([field.with_nullable(True) for field in table.schema])
    return (
        table if nullable == table.schema else pa.Table.from_arrays(table.columns, schema=nullable)
    )


def write_frame_pieces(
    parts: Sequence[FramePart], buckets: int, directory: Path
) -> dict[int, list[int]]:
    """Job 1 for rows Spark computes: each partition of the parts' frames (rows with a
    ``query_id`` column; the parts unioned, in order) writes its buckets' rows to
    ``directory``, in writes of about :data:`FRAME_FLUSH_ROWS` rows (each a unit:
    :data:`UNITS_PER_PARTITION`), with the part's constant column put back.

    Returns the units that wrote a file for each non-empty bucket, in unit order.
    """
    if not parts:
        raise ValueError("write_frame_pieces needs at least one frame")
    target = str(directory)
    written = [
        part.frame.mapInArrow(
            _frame_writer(index, part.constant, buckets, target), _written_schema()
        )
        for index, part in enumerate(parts)
    ]
    union = written[0]
    for frame in written[1:]:
        union = union.union(frame)
    return _units_by_bucket(union)


def _frame_writer(
    part: int, constant: tuple[str, int | None] | None, buckets: int, target: str
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The task function of part ``part`` of :func:`write_frame_pieces`."""
    from pyspark import TaskContext

    flush_rows = FRAME_FLUSH_ROWS  # the driver's value travels with the function

    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        keep_freed_memory()
        context = TaskContext.get()
        unit = frame_unit(part, context.partitionId() if context else 0)
        pending: list[pa.RecordBatch] = []
        rows = 0
        for batch in batches:
            pending.append(batch)
            rows += batch.num_rows
            if rows >= flush_rows:
                yield flush(pending, unit)
                unit, pending, rows = unit + 1, [], 0
        if rows:
            yield flush(pending, unit)

    def flush(pending: list[pa.RecordBatch], unit: int) -> pa.RecordBatch:
        table = with_constant(pa.Table.from_batches(pending), constant)
        return _write_buckets(table, unit, buckets, target)

    return write


def frame_bucket_tasks(
    pieces: dict[int, list[int]], directory: Path
) -> tuple[int, Callable[[int], pa.Table]]:
    """Job 2's tasks for :func:`write_frame_pieces`' files: their number (one per
    non-empty bucket), and the function that turns a task's index into the bucket's rows
    (its files concatenated in unit order)."""
    order = _bucket_order(pieces)
    target = str(directory)

    def rows_of(task: int) -> pa.Table:
        bucket, units = order[task]
        return bucket_rows(target, bucket, units)

    return len(order), rows_of


def bucket_rows(directory: str, bucket: int, units: list[int]) -> pa.Table:
    """The rows of ``bucket`` that ``units`` wrote to ``directory``, in unit order."""
    return pa.concat_tables(read_arrow_file(piece_path(directory, u, bucket)) for u in units)


def frame_and_read_bucket_tasks(
    computed: tuple[dict[int, list[int]], Path],
    read: tuple[dict[int, list[int]], Path],
) -> tuple[int, Callable[[int], tuple[pa.Table | None, pa.Table | None]]]:
    """Job 2's tasks when the rows of one input came from :func:`write_frame_pieces`
    (``computed``) and those of the other from a read in the driver (``read``): each is
    ``(units of each bucket, directory)``. Their number (one per bucket either holds),
    and the function that turns a task's index into the bucket's (computed rows,
    read rows), each its files concatenated in unit order, or None where it has none."""
    (computed_pieces, computed_directory), (read_pieces, read_directory) = computed, read
    pieces = {
        bucket: (computed_pieces.get(bucket, []), read_pieces.get(bucket, []))
        for bucket in sorted(set(computed_pieces) | set(read_pieces))
    }
    order = _bucket_order(pieces)
    computed_target, read_target = str(computed_directory), str(read_directory)

    def rows_of(task: int) -> tuple[pa.Table | None, pa.Table | None]:
        bucket, (computed_units, read_units) = order[task]
        return (
            bucket_rows(computed_target, bucket, computed_units) if computed_units else None,
            bucket_rows(read_target, bucket, read_units) if read_units else None,
        )

    return len(order), rows_of


def bucket_tasks(
    plan: DirectPlan, pieces: dict[int, list[int]], directory: Path
) -> tuple[int, Callable[[int], tuple[pa.Table, pa.Table]]]:
    """Job 2's tasks: their number (one per non-empty bucket), and the function that
    turns a task's index into the bucket's (run rows, qrels rows)."""
    is_run = [source.kind == "run" for source, _ in plan.row_groups]
    order = _bucket_order(pieces)
    target = str(directory)

    def unpack(task: int) -> tuple[pa.Table, pa.Table]:
        bucket, units = order[task]
        return run_and_qrels(
            (is_run[unit], read_arrow_file(piece_path(target, unit, bucket))) for unit in units
        )

    return len(order), unpack
