"""Shingle kinds, and the shingles of ASCII text in Python exactly as Spark SQL cuts
them (:mod:`sparkeval.lsh.shingles`), for the local engine of ``near-duplicates``.

Spark lower-cases with Java's ``toLowerCase``, splits words on ``[^\\p{L}\\p{N}]+``
(Java's letter and number classes) and replaces ``\\s+`` (Java's ASCII
whitespace, ``[ \\t\\n\\x0B\\f\\r]``) by one space before trimming spaces (U+0020 only).
On ASCII text each of these is a plain byte rule that Python follows exactly: letters
are ``A-Z``/``a-z``, digits ``0-9``, and lower-casing maps ``A-Z`` alone. Outside
ASCII, Java's and Python's case maps and character classes differ on some characters
(``İ``, superscript digits), so such text is left to Spark (:func:`all_ascii`).

Example:
    >>> text_shingles("The cat sat.", "word", 2)
    ['the cat', 'cat sat']
    >>> text_shingles("ab  c", "char", 3)
    ['ab ', 'b c']
"""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.errors import ConfigError

SHINGLE_KINDS: tuple[str, ...] = ("word", "char")

#: what Java's ``[^\p{L}\p{N}]+`` matches in ASCII text: runs of anything but letters
#: and digits
_NOT_WORD = re.compile(r"[^A-Za-z0-9]+")
#: Java's ``\s`` (no UNICODE_CHARACTER_CLASS flag): ASCII space, tab, newline, vertical
#: tab, form feed, carriage return; Python's ``\s`` also takes ``\x1c``-``\x1f``
_JAVA_SPACE = re.compile(r"[ \t\n\x0b\f\r]+")


def check_shingles(kind: str, k: int) -> None:
    """Validate a shingle kind and size."""
    if kind not in SHINGLE_KINDS:
        raise ConfigError(f"shingle kind must be one of {', '.join(SHINGLE_KINDS)}; got {kind!r}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"shingle size k must be a positive integer, got {k!r}")


def all_ascii(texts: pa.Array | pa.ChunkedArray) -> bool:
    """Whether every non-null text is ASCII (nulls are empty texts)."""
    if len(texts) == texts.null_count:
        return True
    return bool(pc.all(pc.string_is_ascii(texts)).as_py())


def text_units(text: str | None, kind: str) -> list[str] | str:
    """The words (``word``) or the normalised string (``char``) of an ASCII text, as
    Spark SQL splits it; a null text is empty."""
    lowered = (text or "").lower()
    if kind == "word":
        return [word for word in _NOT_WORD.split(lowered) if word]
    return _JAVA_SPACE.sub(" ", lowered).strip(" ")


def text_shingles(text: str | None, kind: str, k: int) -> list[str]:
    """The shingles of an ASCII text in text order, repeats kept: every run of ``k``
    units (words joined by one space, or characters); a text with fewer than ``k``
    units but at least one is one shingle, an empty text none."""
    units = text_units(text, kind)
    if not units:
        return []
    starts = range(max(len(units) - k, 0) + 1)
    if isinstance(units, str):
        return [units[i : i + k] for i in starts]
    return [" ".join(units[i : i + k]) for i in starts]
