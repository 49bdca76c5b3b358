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


def local_staging_root() -> str | None:
    """Where a remote output is staged before its upload: the system's temporary
    directory when every executor runs on this host (a local master, or no session),
    else the shared handoff directory (``spark.sparkeval.handoffDirectory``), which
    every executor sees.

    Raises:
        ConfigError: a master whose executors would not see a local staging directory,
            and no shared handoff directory.
    """
    from pyspark.sql import SparkSession

    from sparkeval.scratch import SHARED_DIRECTORY_KEY

    session = SparkSession.getActiveSession()
    if session is None:
        return None
    master = session.conf.get("spark.master", "local") or "local"
    if master.startswith("local"):
        return None
    shared = session.conf.get(SHARED_DIRECTORY_KEY, None)
    if shared:
        return shared
    raise ConfigError(
        f"a remote --out on the master {master}: the executors write the output's files "
        f"into a staging directory before the driver uploads them; set {SHARED_DIRECTORY_KEY} "
        "to a directory every executor and the driver share"
    )
