"""Find the line number of a malformed line on the error path (local files only)."""

from __future__ import annotations

import re
from pathlib import Path

from sparkeval.io.streams import DECOMPRESS_ERRORS, open_decompressed

#: a file that cannot be searched for the line
_UNREADABLE: tuple[type[BaseException], ...] = (*DECOMPRESS_ERRORS, ValueError)

_MALFORMED = re.compile(r"^(?P<file>.+?): malformed line \[(?P<raw>.*)\]: (?P<reason>.*)$", re.S)


def _candidates(path: str) -> list[Path]:
    local = Path(path[len("file://") :] if path.startswith("file://") else path)
    if local.is_dir():
        return sorted(
            p for p in local.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))
        )
    return [local] if local.is_file() else []


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
            with open_decompressed(candidate, text=True, errors="replace") as handle:
                for number, line in enumerate(handle, start=1):
                    if line.rstrip("\r\n") == first:
                        return f"{candidate}:{number}: malformed line {raw!r}: {reason}"
        except _UNREADABLE:
            continue
    return f"{match['file']}: malformed line {raw!r}: {reason}"


__all__ = ["with_line_number"]
