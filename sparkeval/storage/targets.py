"""Remote output targets: checked before any work, and where their files are staged.

Example:
    >>> same_location("s3a://b/eval/", "s3://b/eval"), same_location("s3://b/e", "s3://b/eval")
    (True, False)
    >>> inside("s3://b/eval/runs", "s3a://b/eval")
    True
"""

from __future__ import annotations

from sparkeval.errors import ConfigError
from sparkeval.storage.stores import check_store
from sparkeval.storage.uris import STORE_KINDS, is_remote, scheme, split_uri


def canonical(path: str) -> tuple[str, ...]:
    """A remote URI as (store kind, authority, segments...), so that ``s3a://`` and
    ``s3://`` spellings of one object compare equal."""
    found, authority, key = split_uri(path)
    return (STORE_KINDS.get(found, found), authority, *[s for s in key.split("/") if s])


def same_location(a: str, b: str) -> bool:
    """Whether two remote URIs name the same object or prefix."""
    return canonical(a) == canonical(b)


def inside(path: str, directory: str) -> bool:
    """Whether remote ``path`` is ``directory`` or lies below it."""
    inner, outer = canonical(path), canonical(directory)
    return inner[: len(outer)] == outer


def check_remote_output(out: str, inputs: list[str], overwrite: bool) -> str:
    """A remote ``--out`` before any work: a store sparkeval can write (scheme,
    client, credentials), not overlapping an input, and empty unless ``overwrite``.

    Raises:
        ConfigError: naming the target and what is wrong.
    """
    check_store(out)
    _found, _authority, key = split_uri(out)
    if not key:
        raise ConfigError(f"output directory {out}: name a directory below the bucket")
    for raw in inputs:
        if is_remote(raw) and scheme(raw) is not None and (inside(raw, out) or inside(out, raw)):
            raise ConfigError(
                f"output directory {out} overlaps the input {raw}; choose another --out"
            )
    from sparkeval.storage.object_commit import visible_entries

    try:
        existing = visible_entries(out)
    except OSError as exc:
        from sparkeval.storage.stores import redact

        raise ConfigError(
            f"output directory {out}: cannot list it: {redact(str(exc).splitlines()[0])}"
        ) from None
    if existing and not overwrite:
        raise ConfigError(
            f"output directory {out} already exists and is not empty; "
            "pass --overwrite to replace it"
        )
    return out


def local_staging_root() -> tuple[str | None, bool]:
    """Where a remote output is staged before its upload, and whether the executors
    write their parts there: the system's temporary directory when every executor
    runs on this host (a local master, or no session), the shared handoff directory
    (``spark.sparkeval.handoffDirectory``) on a cluster that has one; otherwise the
    driver's temporary directory, and the executors write their parts into the
    output's remote staging prefix (:mod:`sparkeval.storage.executor_parts`).
    """
    from pyspark.sql import SparkSession

    from sparkeval.scratch import SHARED_DIRECTORY_KEY

    session = SparkSession.getActiveSession()
    if session is None:
        return None, True
    master = session.conf.get("spark.master", "local") or "local"
    if master.startswith("local"):
        return None, True
    shared = session.conf.get(SHARED_DIRECTORY_KEY, None)
    if shared:
        return shared, True
    return None, False
