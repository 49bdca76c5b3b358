"""A wheel of the sparkeval package this process runs, for the packed environment.

The wheel holds the files of the imported ``sparkeval`` package directory (without
compiled caches) and the installed distribution's metadata (``METADATA``, the console
script). It is the same whether sparkeval was installed from a wheel or in editable
mode: an editable install's redirection to a source tree (a ``.pth`` file or an import
hook naming a path on this machine) never reaches the archive, since pip installs the
wheel's files themselves.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from importlib import metadata
from pathlib import Path

from sparkeval.errors import EnvironmentProblem

#: the fixed time of every wheel entry, so that the same files give the same bytes
_ENTRY_TIME = (1980, 1, 1, 0, 0, 0)
_SKIPPED_DIRECTORIES = frozenset({"__pycache__"})
_SKIPPED_SUFFIXES = (".pyc", ".pyo")


def package_files(package: Path) -> list[Path]:
    """The files of the package directory, sorted, without compiled caches."""
    return sorted(
        path
        for path in package.rglob("*")
        if path.is_file()
        and not _SKIPPED_DIRECTORIES.intersection(path.relative_to(package).parts)
        and not path.name.endswith(_SKIPPED_SUFFIXES)
    )


def _record_hash(data: bytes) -> str:
    """A RECORD file's hash field: ``sha256=`` and the digest in URL-safe base64."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def _installed_metadata() -> tuple[str, str, str | None]:
    """(version, METADATA text, entry_points.txt text) of the installed distribution."""
    try:
        dist = metadata.distribution("sparkeval")
    except metadata.PackageNotFoundError:
        raise EnvironmentProblem(
            "sparkeval has no installed distribution metadata here (run from a source tree "
            "without installing it?); install it with pip first"
        ) from None
    # an egg-info directory (a source tree installed in editable mode) names it PKG-INFO
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO")
    if not text:
        raise EnvironmentProblem("the installed sparkeval distribution has no METADATA file")
    return dist.version, text, dist.read_text("entry_points.txt")


def build_wheel(directory: Path) -> Path:
    """Write ``sparkeval-VERSION-py3-none-any.whl`` into ``directory``; returns its path."""
    package = Path(__file__).resolve().parent.parent  # sparkeval/, this file's grandparent
    version, metadata_text, entry_points = _installed_metadata()
    version = version.replace("-", "_")  # a wheel file name's fields hold no dash
    dist_info = f"sparkeval-{version}.dist-info"
    entries: list[tuple[str, bytes]] = [
        (f"sparkeval/{path.relative_to(package).as_posix()}", path.read_bytes())
        for path in package_files(package)
    ]
    wheel_text = "Wheel-Version: 1.0\nGenerator: sparkeval pack\nRoot-Is-Purelib: true\n"
    entries.append((f"{dist_info}/METADATA", metadata_text.encode()))
    entries.append((f"{dist_info}/WHEEL", (wheel_text + "Tag: py3-none-any\n").encode()))
    if entry_points:
        entries.append((f"{dist_info}/entry_points.txt", entry_points.encode()))
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in entries)
    entries.append((f"{dist_info}/RECORD", (record + f"{dist_info}/RECORD,,\n").encode()))
    target = directory / f"sparkeval-{version}-py3-none-any.whl"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=_ENTRY_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
    return target
