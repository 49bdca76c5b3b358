"""Paths and URIs: which name a remote store, and which store kind.

Example:
    >>> is_remote("s3a://bucket/runs"), is_remote("/data/run.parquet"), is_remote("file:///x")
    (True, False, False)
    >>> store_kind("s3a://bucket/x"), store_kind("gs://b/x"), store_kind("abfss://c@a.dfs.core.windows.net/x")
    ('s3', 'gcs', 'abfs')
    >>> split_uri("s3a://bucket/runs/day=1")
    ('s3a', 'bucket', 'runs/day=1')
    >>> join("s3://b/out", "summary.json"), join("/tmp/out", "summary.json")
    ('s3://b/out/summary.json', '/tmp/out/summary.json')
"""

from __future__ import annotations

import os
import re

_SCHEME = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://")

#: the store kind of each scheme sparkeval knows (Hadoop's spellings included)
STORE_KINDS = {
    "s3": "s3",
    "s3a": "s3",
    "s3n": "s3",
    "gs": "gcs",
    "gcs": "gcs",
    "abfs": "abfs",
    "abfss": "abfs",
    "hdfs": "hdfs",
    "viewfs": "hdfs",
}


def scheme(path: str) -> str | None:
    """The URI scheme of ``path`` in lower case, or None for a plain path.

    ``file://`` counts as a scheme here; :func:`is_remote` is what tells local from remote.
    """
    match = _SCHEME.match(path)
    return match["scheme"].lower() if match else None


def is_remote(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a URI of anything but the local file system."""
    name = os.fspath(path)
    found = scheme(name) if isinstance(name, str) else None
    return found is not None and found != "file"


def local_path(path: str) -> str:
    """``path`` without a ``file://`` scheme (a plain path is returned as it is)."""
    return path[len("file://") :] if path.startswith("file://") else path


def store_kind(path: str) -> str | None:
    """``s3``, ``gcs``, ``abfs``, ``hdfs``, another scheme's name, or None when local."""
    if not is_remote(path):
        return None
    found = scheme(path)
    assert found is not None
    return STORE_KINDS.get(found, found)


def split_uri(path: str) -> tuple[str, str, str]:
    """``(scheme, authority, key)`` of a remote URI: the bucket, container@account or
    name node, and the path below it without leading or trailing slashes."""
    found = scheme(path)
    if found is None:
        raise ValueError(f"{path} is not a URI")
    rest = path[len(found) + 3 :]
    authority, _, key = rest.partition("/")
    return found, authority, key.strip("/")


def join(base: str, *names: str) -> str:
    """``base`` with ``names`` appended as path segments (URI or local path)."""
    if is_remote(base):
        return "/".join([base.rstrip("/"), *(n.strip("/") for n in names)])
    return os.path.join(base, *names)


def parent(path: str) -> str:
    """The directory holding ``path`` (URI or local path)."""
    if is_remote(path):
        found, authority, key = split_uri(path)
        head = key.rsplit("/", 1)[0] if "/" in key else ""
        return f"{found}://{authority}/{head}".rstrip("/")
    return os.path.dirname(os.path.abspath(local_path(path)))


def name(path: str) -> str:
    """The last segment of ``path``."""
    return path.rstrip("/").rsplit("/", 1)[-1]
