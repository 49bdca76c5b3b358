"""Inputs that Spark cannot open by name: pipes, ``/dev/stdin``, ``/dev/fd/N``.

Spark's readers open a path again in the JVM (and on executors), so a process
substitution ``--run <(zcat run.gz)`` would make the JVM open *its own* descriptor
63, and a FIFO or ``/dev/stdin`` can be read only once.  Such an input is read once
by the driver's Python into a regular file in a private temporary directory, which
replaces the path; the directory is removed when the process exits.  The copy is
named after the source (``/dev/fd/63`` becomes ``fd-63``) with a suffix from its
first bytes where the format says so (``.gz``, ``.bz2``, ``.zst``, ``.xz``,
``.parquet``), so format detection works as for a file.

Example:
    >>> readable_by_name("run.txt")
    'run.txt'
"""

from __future__ import annotations

import lzma
import os
import shutil
import stat
import zlib
from functools import cache
from pathlib import Path
from typing import IO, Any

from isal import isal_zlib

from sparkeval.scratch import copies_directory

#: paths that name a descriptor of *this* process, which another process cannot reopen
_DESCRIPTOR_PREFIXES = ("/dev/fd/", "/proc/self/fd/", "/dev/stdin")

#: leading bytes of formats recognised by content
MAGIC_SUFFIXES = (
    (b"\x1f\x8b", ".gz"),
    (b"\x28\xb5\x2f\xfd", ".zst"),
    (b"\xfd7zXZ\x00", ".xz"),
    (b"PAR1", ".parquet"),
)
#: bzip2: ``BZh``, a block size digit, then the block magic (the digits of pi)
_BZIP2_BLOCK = b"1AY&SY"


def is_stream(path: str) -> bool:
    """Whether ``path`` is a pipe, device or descriptor of this process, not a file."""
    if "://" in path:
        return False
    if path.startswith(_DESCRIPTOR_PREFIXES):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def suffix_from_content(head: bytes) -> str:
    """The suffix a file starting with ``head`` gets (``""`` for plain text)."""
    for magic, suffix in MAGIC_SUFFIXES:
        if head.startswith(magic):
            return suffix
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] == _BZIP2_BLOCK:
        return ".bz2"
    return ""


@cache
def readable_by_name(path: str) -> str:
    """``path``, or a regular-file copy of it when it is a pipe, device or descriptor.

    Each stream is read once per process (the result is cached), whatever number of
    options name it.
    """
    if not is_stream(path):
        return path
    name = path.rstrip("/").replace("/proc/self/fd/", "fd-").replace("/dev/fd/", "fd-")
    name = Path(name).name or "stream"
    target = copies_directory() / name
    with open(path, "rb") as source, open(target, "wb") as copy:
        head = source.read(1 << 16)
        copy.write(head)
        shutil.copyfileobj(source, copy, 1 << 20)
    suffix = suffix_from_content(head)
    if suffix and not name.endswith(suffix):
        target = target.rename(target.with_name(name + suffix))
    from sparkeval.status import status

    status(f"read {path} (not a regular file) into {target}")
    return str(target)


def readable_paths(value: str | tuple[str, ...]) -> str | tuple[str, ...]:
    """:func:`readable_by_name` for one path or each of several (an option converter)."""
    if isinstance(value, tuple):
        return tuple(readable_by_name(v) for v in value)
    return readable_by_name(value)


#: ISA-L's inflate error (the isal package's type stub declares an instance, not a class)
_ISAL_ERROR: type[BaseException] = isal_zlib.error  # type: ignore[assignment]
#: what reading a damaged compressed file raises (bad header, bad data, cut short)
DECOMPRESS_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    EOFError,
    zlib.error,
    _ISAL_ERROR,
    lzma.LZMAError,
)


def open_decompressed(path: Path, text: bool = False, errors: str = "strict") -> IO[Any]:
    """``path`` opened for reading through the decompressor its suffix names (``.gz``,
    ``.bz2``, ``.xz``), as bytes or as UTF-8 text with ``errors``."""
    import bz2
    import gzip

    openers: dict[str, Any] = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
    opener = openers.get(path.suffix.lower(), open)
    if text:
        return opener(path, "rt", encoding="utf-8", errors=errors)
    return opener(path, "rb")
