"""An evaluation's wide rows kept in local files on local masters, beside the cached blobs.

With a local master the evaluating tasks and every later Python task run on the
driver's machine.  Each evaluating task then writes its wide rows (one per query) to
an uncompressed Arrow IPC file of its own and hands Spark only a blob row naming it
(kind :data:`~sparkeval.engine.transport.result_blobs.WIDE_FILE`); its partial sums
stay inline blobs.  Spark caches a few short rows instead of the wide rows' bytes, and
the per-query writer (and the per-query DataFrames) map the files instead of
receiving every byte back through the JVM's cache::

    evaluating task (one per bucket) -> wide-<partition>.arrow in the results directory
                                     -> blob rows: (WIDE_FILE, path), (PARTIAL, sums)
    per-query writer, wide_frame     -> result_blobs.tables: each file memory-mapped

Measured at 1M queries × 10 docs on 2 cores: the 123 MB of wide rows took 0.82 s to
come back from Spark's cache to the task writing ``per_query.parquet``, more than
that task's sorting, expanding and writing together.

The directory lives under ``spark.local.dir`` (as the local handoff's) until the
evaluation's ``unpersist()``, or the end of the process.  ``spark.sparkeval.localHandoff
= false`` keeps the wide rows in Spark's cache too; other masters always do.
"""

from __future__ import annotations

import atexit
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from sparkeval.scratch import RESULTS_PREFIX

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: the name of every results directory starts so
DIRECTORY_PREFIX = RESULTS_PREFIX


def new_results_directory(spark: SparkSession) -> Path:
    """A new directory for an evaluation's wide-row files, under the first of
    ``spark.local.dir`` (or the system's temporary directory); removed at the end of
    the process if nothing removed it before."""
    from sparkeval.engine.transport.local_handoff import new_directory

    directory = new_directory(spark, prefix=DIRECTORY_PREFIX)
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    return directory


def wide_file_path(directory: str, partition: int) -> str:
    """The file of the wide rows evaluated by partition ``partition``."""
    return str(Path(directory) / f"wide-{partition:05d}.arrow")


class ResultFiles:
    """The cached blob frame of an evaluation whose wide rows are in ``directory``.

    It answers ``frame``, ``sparkSession`` and ``unpersist()`` as the other holders of
    an evaluation's blobs do; ``unpersist()`` also removes the files.
    """

    def __init__(self, frame: DataFrame, directory: Path) -> None:
        self.frame = frame
        self.sparkSession: SparkSession = frame.sparkSession
        self.directory = directory

    def unpersist(self) -> None:
        """Release the cached blobs and remove the files."""
        try:
            self.frame.unpersist()
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)
