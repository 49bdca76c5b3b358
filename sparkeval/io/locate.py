"""Find the line number of a malformed line on the error path (local files only)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import IO

_MALFORMED = re.compile(r"^(?P<file>.+?): malformed line \[(?P<raw>.*)\]: (?P<reason>.*)$", re.S)


def _candidates(path: str) -> list[Path]:
    local = Path(path[len("file://") :] if path.startswith("file://") else path)
    if local.is_dir():
        return sorted(
            p for p in local.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))
        )
    return [local] if local.is_file() else []


def _open_text(path: Path) -> IO[str]:
    """A text file, or the text inside a compressed one (by its suffix), invalid UTF-8
    replaced as Spark's messages replace it."""
    import bz2
    import gzip
    import lzma

    openers = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
    opener = openers.get(path.suffix.lower())
    if opener is not None:
        return opener(path, "rt", encoding="utf-8", errors="replace")  # type: ignore[operator]
    return open(path, encoding="utf-8", errors="replace")


def with_line_number(message: str) -> str:
    """Rewrite ``FILE: malformed line [RAW]: WHY`` as ``FILE:LINE: malformed line 'RAW': WHY``.

    The scan stops at the first matching line; remote paths keep the message as is.
    """
    match = _MALFORMED.match(message)
    if not match:
        return message
    raw, reason = match["raw"], match["reason"]
    first = raw.split("\n", 1)[0].rstrip("\r")  # a record may span lines (quoted CSV)
    for candidate in _candidates(match["file"]):
        try:
            with _open_text(candidate) as handle:
                for number, line in enumerate(handle, start=1):
                    if line.rstrip("\r\n") == first:
                        return f"{candidate}:{number}: malformed line {raw!r}: {reason}"
        except (OSError, EOFError, ValueError):
            continue
    return f"{match['file']}: malformed line {raw!r}: {reason}"


__all__ = ["with_line_number"]
