"""Atomic output directories: results appear complete, or not at all.

Every job writes into a hidden staging directory next to the target and renames
it into place only after everything succeeded, so a reader never sees a partial
result and a failed run leaves the previous output untouched.

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
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sparkeval.errors import ConfigError

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


@contextmanager
def atomic_output_dir(out: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a staging directory; on success it replaces ``out`` in one rename.

    On any exception the staging directory is removed and ``out`` is left as it was.
    A ``_SUCCESS`` marker is written last, inside the staging directory.
    """
    target = Path(out).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    token = uuid.uuid4().hex[:12]
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
