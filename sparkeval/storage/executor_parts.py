"""Parts of a remote output that the executors write straight into its staging prefix.

A remote ``--out`` (``s3://b/eval``) is committed from a staging prefix of its own,
``s3://b/.eval.staging-TOKEN/`` (:mod:`sparkeval.storage.object_commit`). The driver's
files (``summary.json``, ``summary.parquet``, ...) are staged in a local directory and
uploaded. The part files of a large table are written by the executors; where every
executor sees the driver's staging directory (a local master, or a shared handoff
directory) they write there too. On any other master (YARN, Kubernetes, a standalone
cluster) the executors' disks are their own, so each task writes its part, with
pyarrow, straight into the staging prefix, under the name of its partition::

    s3://b/.eval.staging-TOKEN/per_query.parquet/part-00007.parquet

and the driver gives the parts their final names (``part-00000.parquet``, ... in
partition order, as on a local disk) in the commit's manifest, which the swap copies
them under. An object appears whole when its upload is closed, so a retried or
speculative task leaves one whole part; a failed job's staging prefix is removed by
the job, or by the next writer's recovery if the driver died.

Example (the driver, inside the output's staging)::

    with executor_staging(local_dir, staged_prefix, current_settings()) as staging:
        write_frame_parts(frame, staging, "per_user.parquet")
        staging.parts  # {"per_user.parquet/part-00000.parquet": ("...part-00003...", size)}
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sparkeval.storage import files
from sparkeval.storage.stores import StoreSettings, use_store
from sparkeval.storage.uris import join

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


@dataclass
class ExecutorStaging:
    """A remote output's staging, where the executors write their parts themselves.

    Attributes:
        local: the driver's staging directory (its files are uploaded at the commit).
        prefix: the remote staging prefix of the output's new generation.
        settings: the store settings the executors open the store with.
        parts: each part's final name (relative to the output) -> its name in the
            staging prefix and its size in bytes.
    """

    local: Path
    prefix: str
    settings: StoreSettings
    parts: dict[str, tuple[str, int]] = field(default_factory=dict)

    def place(self, relative: str, partitions: list[int]) -> None:
        """Name the parts that ``partitions`` wrote into ``relative`` (a table's
        directory): ``part-00000.parquet``, ... in partition order."""
        for index, partition in enumerate(sorted(partitions)):
            staged = f"{relative}/{part_name(partition)}"
            size = files.file_size(join(self.prefix, staged))
            self.parts[f"{relative}/{part_name(index)}"] = (staged, size)


_active: dict[Path, ExecutorStaging] = {}


def part_name(partition: int) -> str:
    """``part-00007.parquet`` for partition 7."""
    return f"part-{partition:05d}.parquet"


@contextmanager
def executor_staging(
    local: Path, prefix: str, settings: StoreSettings
) -> Iterator[ExecutorStaging]:
    """Register ``local`` as a staging directory whose tables the executors write to
    ``prefix`` (see the module text) for as long as the block runs."""
    staging = ExecutorStaging(local, prefix, settings)
    _active[local] = staging
    try:
        yield staging
    finally:
        _active.pop(local, None)


def remote_table(directory: Path) -> tuple[ExecutorStaging, str] | None:
    """``(staging, relative name)`` when the new table directory ``directory`` lies in a
    staging whose executors write to the store, else None (write ``directory`` itself)."""
    for local, staging in _active.items():
        if directory.is_relative_to(local):
            return staging, directory.relative_to(local).as_posix()
    return None


def write_frame_parts(frame: DataFrame, staging: ExecutorStaging, relative: str) -> None:
    """Write ``frame`` as the Parquet table ``relative`` of the staging: each partition's
    rows, in order, as one part written by its task with pyarrow (none for an empty
    partition; a frame without rows gets one empty part, written by the driver)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    target = join(staging.prefix, relative)
    settings = staging.settings

    def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        partition = context.partitionId() if context else 0
        if write_batches(target, part_name(partition), batches, settings):
            yield pa.record_batch({"partition": pa.array([partition], pa.int32())})

    written = [row[0] for row in frame.mapInArrow(write, "partition int").collect()]
    if written:
        staging.place(relative, written)
        return
    import pyarrow.parquet as pq

    directory = staging.local / relative
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(to_arrow_schema(frame.schema).empty_table(), directory / part_name(0))


def write_batches(
    target: str,
    name: str,
    pieces: Iterable[pa.RecordBatch | pa.Table],
    settings: StoreSettings | None,
    schema: pa.Schema | None = None,
    **options: Any,
) -> bool:
    """Write the non-empty ``pieces`` as the Parquet file ``target/name`` (one upload,
    visible when complete), each batch or table as ``pyarrow.parquet.ParquetWriter``
    writes it (``options``: the writer's; ``schema``: else the first piece's); False,
    and nothing written, when there were none."""
    import pyarrow.parquet as pq

    use_store(settings)
    writer: Any = None
    with _lazy_output(join(target, name)) as opened:
        for piece in pieces:
            if not piece.num_rows:
                continue
            if writer is None:
                writer = pq.ParquetWriter(opened(), schema or piece.schema, **options)
            if isinstance(piece, pa.Table):
                writer.write_table(piece)
            else:
                writer.write_batch(piece)
        if writer is None:
            return False
        writer.close()
    return True


@contextmanager
def _lazy_output(path: str) -> Iterator[Any]:
    """A function opening ``path`` for writing on its first call; closed at the end."""
    from contextlib import ExitStack

    with ExitStack() as stack:
        stream: list[Any] = []

        def opened() -> Any:
            if not stream:
                stream.append(stack.enter_context(files.open_output(path)))
            return stream[0]

        yield opened
