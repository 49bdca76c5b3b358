"""Atomic output directories: results appear complete, or not at all.

Every job writes into a hidden staging directory next to the target and renames
it into place only after everything succeeded, so a reader never sees a partial
result and a failed run leaves the previous output untouched.  The staging name
records the host and process id of its writer (``.NAME.staging-HOST-PID-RANDOM``):
a process killed before it could clean up leaves its staging directory behind, and
the next run towards the same target on the same host removes it once that process
is gone.

Example:
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_output_dir(root / "out") as staging:
    ...     _ = (staging / "summary.json").write_text("{}")
    >>> sorted(p.name for p in (root / "out").iterdir())
    ['_SUCCESS', 'summary.json']
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparkeval.errors import ConfigError
from sparkeval.stable_parquet import sort_footer_encodings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

SUCCESS_MARKER = "_SUCCESS"


def check_output_path(out: str | os.PathLike[str], inputs: list[str], overwrite: bool) -> Path:
    """Validate an output directory before any work starts.

    Refuses a target that holds or lies inside an input, and an existing
    non-empty target unless ``overwrite`` is set.
    """
    target = Path(out).resolve()
    for raw in inputs:
        src = Path(raw).resolve()
        if src == target or target in src.parents or src in target.parents:
            raise ConfigError(
                f"output directory {out} overlaps the input {raw}; choose another --out"
            )
    if target.exists():
        if not target.is_dir():
            raise ConfigError(f"output path {out} exists and is not a directory")
        if any(target.iterdir()) and not overwrite:
            raise ConfigError(
                f"output directory {out} already exists and is not empty; "
                "pass --overwrite to replace it"
            )
    return target


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", socket.gethostname()) or "host"


def process_alive(pid: int) -> bool:
    """Whether a process with this id exists on this host."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, owned by another user
        return True
    return True


def remove_stale_staging(out: str | os.PathLike[str]) -> list[Path]:
    """Remove staging and retired directories of ``out`` left by dead writers.

    Only directories named by :func:`atomic_output_dir` for this target, written on
    this host by a process that no longer exists, are removed; those of live
    processes and of other hosts are left alone.  Returns the removed paths.
    """
    target = Path(out).resolve()
    if not target.parent.is_dir():
        return []
    pattern = re.compile(
        r"^\." + re.escape(target.name) + r"\.(?:staging|old)-(?P<host>.+)-(?P<pid>\d+)-[0-9a-f]+$"
    )
    host = _host()
    removed = []
    for entry in target.parent.iterdir():
        match = pattern.match(entry.name)
        if not match or match["host"] != host or not entry.is_dir() or entry.is_symlink():
            continue
        if process_alive(int(match["pid"])):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def tidy_spark_output(directory: Path) -> list[Path]:
    """Give the part files of a Spark write stable names; drop Spark's bookkeeping.

    Spark names part files ``part-00000-<random uuid>-c000.snappy.parquet`` and adds
    ``.crc`` checksums and a ``_SUCCESS`` file.  Part files are renamed in Spark's own
    order to ``part-00000.parquet``, ``part-00001.parquet``, ...; hidden and
    ``_``-prefixed files are removed (Parquet readers skip them anyway), and the
    footer's encodings lists are put in a fixed order (see :mod:`sparkeval.stable_parquet`),
    so the same rows written the same way give the same file names and bytes.
    Returns the parts.
    """
    files = sorted(p for p in directory.iterdir() if p.is_file())
    for path in files:
        if path.name.startswith((".", "_")):
            path.unlink()
    parts = [p for p in files if p.name.startswith("part-")]
    renamed = []
    for index, path in enumerate(parts):
        final = directory / f"part-{index:05d}{path.suffix}"
        path.rename(final)
        if final.suffix == ".parquet":
            sort_footer_encodings(final)
        renamed.append(final)
    return renamed


@contextmanager
def atomic_output_dir(out: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a staging directory; on success it replaces ``out`` in one rename.

    On any exception the staging directory is removed and ``out`` is left as it was.
    A ``_SUCCESS`` marker is written last, inside the staging directory.  Stale
    staging directories of the same target (see :func:`remove_stale_staging`) are
    removed first.
    """
    target = Path(out).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(target)
    token = f"{_host()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    staging = target.parent / f".{target.name}.staging-{token}"
    staging.mkdir()
    try:
        yield staging
        (staging / SUCCESS_MARKER).write_text("")
        if target.exists():
            retired = target.parent / f".{target.name}.old-{token}"
            target.rename(retired)
            staging.rename(target)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def write_json(path: Path, payload: dict[str, Any]) -> None:
    """Write JSON with sorted keys and NaN/inf as null (strict JSON, stable bytes)."""
    path.write_text(json.dumps(_json_safe(payload), indent=2, sort_keys=True) + "\n")


def write_parquet(frame: DataFrame, directory: Path) -> list[Path]:
    """Write a DataFrame as a Parquet directory with stable part names and bytes.

    The same rows in the same partitions give the same files (``part-00000.parquet``,
    ...; no ``.crc`` or ``_SUCCESS`` inside: see :func:`tidy_spark_output`). Returns the
    part files.
    """
    frame.write.parquet(str(directory))
    return tidy_spark_output(directory)
