"""An evaluation's wide rows kept in local files on local masters, not in Spark's cache.

With a local master the evaluating tasks and every later Python task run on the
driver's machine.  Each evaluating task then writes its wide rows (one per query) to
an uncompressed Arrow IPC file of its own and returns only a blob row naming it
(kind :data:`~sparkeval.engine.transport.result_blobs.WIDE_FILE`) and its partial sums
(:mod:`sparkeval.engine.plans.bucket_job`).  The driver holds those few short rows
instead of Spark caching the wide rows' bytes, and the per-query writer (and the
per-query DataFrames) map the files instead of receiving every byte back through the
JVM::

    evaluating task (one per bucket) -> wide-<partition>.arrow in the results directory
                                     -> blob rows: (WIDE_FILE, path), (PARTIAL, sums)
    per-query writer, wide_frame     -> result_blobs.tables: each file memory-mapped

Measured at 1M queries × 10 docs on 2 cores: the 123 MB of wide rows took 0.82 s to
come back from Spark's cache to the task writing ``per_query.parquet``, more than
that task's sorting, expanding and writing together.

The directory lives where the local handoff's does (under ``spark.local.dir``, or in
``spark.sparkeval.handoffDirectory``, which other masters than ``local`` need for
this) until the evaluation's ``unpersist()``, or the end of the process.
``spark.sparkeval.localHandoff = false`` keeps the wide rows in Spark's cache too, as
other masters without a shared directory do.
"""

from __future__ import annotations

import atexit
import shutil
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from sparkeval.scratch import RESULTS_PREFIX

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: the name of every results directory starts so
DIRECTORY_PREFIX = RESULTS_PREFIX


def new_results_directory(spark: SparkSession) -> Path:
    """A new directory for an evaluation's wide-row files, where the handoff's go
    (:func:`~sparkeval.engine.transport.local_handoff.scratch_parent`); removed at the
    end of the process if nothing removed it before."""
    from sparkeval.engine.transport.local_handoff import new_directory

    directory = new_directory(spark, prefix=DIRECTORY_PREFIX)
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    return directory


def wide_file_path(directory: str, partition: int) -> str:
    """The file of the wide rows evaluated by partition ``partition``."""
    return str(Path(directory) / f"wide-{partition:05d}.arrow")


class ResultFiles:
    """The result blobs of an evaluation whose wide rows are in ``directory``.

    The blob rows are few and held here, in the driver: per evaluating task, one naming
    its wide-row file and one with its partial sums
    (:mod:`sparkeval.engine.plans.bucket_job`).  ``frame`` is them as a DataFrame of
    local data, made when first asked for (the per-query writer and DataFrames map the
    files through it); it answers ``frame``, ``sparkSession`` and ``unpersist()`` as the
    other holders of an evaluation's blobs do, and ``unpersist()`` removes the files.
    """

    def __init__(self, spark: SparkSession, rows: list[tuple[int, bytes]], directory: Path) -> None:
        self.sparkSession = spark
        self.rows = rows
        self.directory = directory

    @cached_property
    def frame(self) -> DataFrame:
        """The blob rows, ``kind int, blob binary``, as local data."""
        from sparkeval.engine.transport.result_blobs import blob_schema

        kinds = [kind for kind, _ in self.rows]
        blobs = [blob for _, blob in self.rows]
        table = pa.table(
            {"kind": pa.array(kinds, pa.int32()), "blob": pa.array(blobs, pa.binary())}
        )
        return self.sparkSession.createDataFrame(table, blob_schema())

    @property
    def wide_files(self) -> list[str]:
        """The paths of the wide-row files, in task order."""
        from sparkeval.engine.transport.result_blobs import WIDE_FILE

        return [blob.decode() for kind, blob in self.rows if kind == WIDE_FILE]

    def unpersist(self) -> None:
        """Remove the files (the blob rows are local data: nothing is cached)."""
        shutil.rmtree(self.directory, ignore_errors=True)
