"""Remote inputs for a JVM that has no filesystem for their scheme.

Spark's readers open a path with the session's Hadoop filesystems. Where the session
has one for the scheme (``hadoop-aws`` for ``s3a://``, the GCS connector for ``gs://``,
HDFS on every Hadoop cluster), a remote input is handed to them as it is (``s3://`` as
``s3a://``, the scheme of Hadoop's S3 connector). Where it has none, on a local master
the driver copies the input once into a local scratch directory through the storage
layer and Spark reads the copy; its error messages name the URI again
(:func:`original_names`). On other masters the executors would not see that copy, so
such an input needs the connector: :func:`jvm_path` says which to install.

Formats the Python workers read themselves (Parquet, TREC text, plain CSV/TSV) are
read from the store directly and never copied (:mod:`sparkeval.io.direct`).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparkeval.errors import ConfigError, InputError
from sparkeval.scratch import copies_directory
from sparkeval.storage import files
from sparkeval.storage.uris import is_remote, name, scheme, store_kind

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: the Hadoop scheme of each store kind's connector
HADOOP_SCHEMES = {"s3": "s3a", "gcs": "gs", "abfs": "abfss", "hdfs": "hdfs"}
#: what a session needs for each store kind, in messages
CONNECTORS = {
    "s3": "the hadoop-aws jar matching Spark's Hadoop (spark.jars.packages "
    "org.apache.hadoop:hadoop-aws:VERSION)",
    "gcs": "Google's gcs-connector jar",
    "abfs": "the hadoop-azure jar",
    "hdfs": "a Hadoop client",
}

_copies: dict[str, str] = {}
_lock = threading.Lock()


def hadoop_uri(path: str) -> str:
    """``path`` with the scheme Hadoop's connector for its store uses (``s3://`` ->
    ``s3a://``); other URIs unchanged."""
    kind = store_kind(path)
    found = scheme(path)
    if kind is None or found is None or kind not in HADOOP_SCHEMES:
        return path
    wanted = HADOOP_SCHEMES[kind]
    return path if found in (wanted, "viewfs", "abfs") else wanted + path[len(found) :]


def jvm_has_filesystem(spark: SparkSession, path: str) -> bool:
    """Whether the session's JVM can open ``path`` itself (a Spark Connect session: its
    server is assumed to)."""
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return True
    return _jvm_scheme(spark, scheme(hadoop_uri(path)) or "")


def _jvm_scheme(spark: SparkSession, found: str) -> bool:
    key = (id(spark), found)
    if key in _known:
        return _known[key]
    jvm: Any = spark._jvm
    context: Any = spark._jsc
    try:
        jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(found, context.hadoopConfiguration())
        answer = True
    except Exception:  # UnsupportedFileSystemException, ClassNotFoundException
        answer = False
    _known[key] = answer
    return answer


_known: dict[tuple[int, str], bool] = {}


def jvm_path(spark: SparkSession, path: str) -> str:
    """The path Spark's readers open for ``path``: itself when local, its Hadoop URI when
    the JVM has the store's filesystem, else (local master) a local copy.

    Raises:
        ConfigError: no filesystem in the JVM and a master whose executors would not
            see a local copy.
        InputError: the remote input does not exist.
    """
    if not is_remote(path):
        return path
    if jvm_has_filesystem(spark, path):
        return hadoop_uri(path)
    master = spark.conf.get("spark.master", "local") or "local"
    if not master.startswith("local"):
        kind = store_kind(path) or ""
        raise ConfigError(
            f"{path}: Spark's readers need a filesystem for {scheme(path)}:// on the master "
            f"{master}; add {CONNECTORS.get(kind, 'its Hadoop connector')} to the session, or "
            "give the input as Parquet, TREC text or plain CSV, which sparkeval's workers "
            "read from the store themselves"
        )
    return local_copy(path)


def local_copy(path: str) -> str:
    """A local copy of a remote file or directory, made once per process."""
    with _lock:
        if path in _copies:
            return _copies[path]
        found = files.kind(path)
        if found is None:
            raise InputError(f"{path}: no such file or directory")
        target = copies_directory() / name(path)
        if target.exists():  # two inputs of the same name
            target = Path(str(copies_directory() / f"{len(_copies)}-") + name(path))
        if found == "file":
            files.copy_file(path, str(target))
        else:
            base = path.rstrip("/") + "/"
            for remote in files.list_files(path, recursive=True):
                local = target / remote[len(base) :]
                local.parent.mkdir(parents=True, exist_ok=True)
                files.copy_file(remote, str(local))
            target.mkdir(exist_ok=True)
        _copies[path] = str(target)
        from sparkeval.status import status

        status(
            f"copied {path} for Spark's readers (the session has no {scheme(path)}:// filesystem)"
        )
        return str(target)


def original_names(text: str) -> str:
    """``text`` with the local copies' paths replaced by the URIs they copy."""
    for remote, local in sorted(_copies.items(), key=lambda item: -len(item[1])):
        text = text.replace("file://" + local, remote).replace(local, remote)
    return text
