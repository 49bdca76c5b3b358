"""Spark settings for a command whose inputs are small local files.

A command that caches a DataFrame built by a shuffle (a window, a join, an
aggregation) keeps the shuffle's ``spark.sql.shuffle.partitions`` partitions in the
cache: Spark runs the query that fills a cache without adaptive execution unless
``spark.sql.optimizer.canChangeCachedPlanOutputPartitioning`` is true (Spark's default
is false).  Every later query over that cache then has a task per partition, whatever
the data's size.  In a session with Spark's default of 200 partitions
(``spark-submit`` with no settings, a pipeline's session), ``diversity`` on 5 rows ran
5,464 tasks and took 58 s; with the setting on, adaptive execution merges the cached
query's small partitions as it merges any other query's, and it took 24 s, as it did
with 2 shuffle partitions.

The setting is switched on for the command only (:func:`sparkeval.spark.session_settings`)
and only when its inputs are local files or directories of at most
:data:`SMALL_INPUT_BYTES` in all, and the session does not set it itself (a value
given with ``--conf`` or a config file's ``spark:`` section is kept).  For larger or
unknown inputs (a catalog table, a remote file system) the session is left as it is:
their partitions are large already, and a cache whose partitioning may change can
cost a later query an extra shuffle.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: the Spark setting that lets adaptive execution merge a cached query's partitions
CACHED_PLAN_PARTITIONING_KEY = "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning"
#: inputs up to this many bytes in all are small (16 of Spark's advisory 64 MiB partitions)
SMALL_INPUT_BYTES = 1 << 30


def local_input_bytes(paths: Iterable[str]) -> int | None:
    """The bytes of every file under ``paths`` (files, or directories walked); None
    when a path is not a local file or directory (a URI such as ``s3a://``, a path
    that does not exist).

    Example: a 100-byte ``run.csv`` and a directory holding two 10-byte files give 120.
    """
    from sparkeval.io.readers import is_local_path, local_path

    total = 0
    for path in paths:
        if not is_local_path(path):
            return None
        local = local_path(path)
        if os.path.isfile(local):
            total += os.path.getsize(local)
        elif os.path.isdir(local):
            for root, _, files in os.walk(local):
                total += sum(os.path.getsize(os.path.join(root, name)) for name in files)
        else:
            return None
    return total


def small_input_settings(config: Any) -> dict[str, str]:
    """The settings a command runs with (:data:`CACHED_PLAN_PARTITIONING_KEY` on) when
    ``config`` names its inputs (``input_paths()``), reads no catalog table
    (``input_tables()``) and its inputs are small local files; else none."""
    paths = config.input_paths() if hasattr(config, "input_paths") else []
    tables = config.input_tables() if hasattr(config, "input_tables") else []
    if not paths or tables:
        return {}
    size = local_input_bytes(paths)
    if size is None or size > SMALL_INPUT_BYTES:
        return {}
    return {CACHED_PLAN_PARTITIONING_KEY: "true"}


def command_settings(spark: SparkSession, config: Any) -> dict[str, str]:
    """:func:`small_input_settings` of ``config`` but those the session sets itself."""
    return {
        key: value
        for key, value in small_input_settings(config).items()
        if spark.conf.get(key, None) is None
    }
