"""Shingle kinds, and the shingles of text in Python exactly as Spark SQL cuts them
(:mod:`sparkeval.lsh.shingles`), for the local engine of ``near-duplicates``.

Spark lower-cases with Java's ``toLowerCase``, splits words on ``[^\\p{L}\\p{N}]+``
(Java's letter and number classes) and replaces ``\\s+`` (Java's ASCII
whitespace, ``[ \\t\\n\\x0B\\f\\r]``) by one space before trimming spaces (U+0020 only).
Python follows these rules exactly on the characters of :data:`LOCAL_RANGES`: ASCII
(letters ``A-Z``/``a-z``, digits ``0-9``, lower-casing maps ``A-Z`` alone) and scripts
whose letters, digits and lower case are the same in Java's and Python's Unicode
tables (Latin, Greek but for ``Σ``, Cyrillic, Hebrew, Arabic, CJK, kana, Hangul, ...):
there a word character is one Python's ``str.isalnum`` takes, and Java's and Python's
``lower`` agree character by character. Elsewhere they differ on some characters
(letters added in later Unicode versions such as Georgian Mtavruli, the context of a final
``Σ``, a Turkish, Azeri or Lithuanian default locale of the JVM), so such text is left
to Spark (:func:`local_text_problem`).

Example:
    >>> text_shingles("The cat sat.", "word", 2)
    ['the cat', 'cat sat']
    >>> text_shingles("ab  c", "char", 3)
    ['ab ', 'b c']
    >>> text_shingles("Ünïcode Çafé, ДОМ", "word", 2)
    ['ünïcode çafé', 'çafé дом']
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.errors import ConfigError

SHINGLE_KINDS: tuple[str, ...] = ("word", "char")

#: what Java's ``[^\p{L}\p{N}]+`` matches in the text of :data:`LOCAL_RANGES`: runs of
#: anything but letters and numbers (Python's ``\w`` is ``str.isalnum`` and ``_``)
_NOT_WORD = re.compile(r"[\W_]+")

#: the code points (inclusive ranges) whose lower case and letter or number class Java's
#: and Python's Unicode tables agree on (a Spark test checks every one of them): ASCII,
#: Latin-1 and Latin Extended-A/B, IPA and spacing modifiers, combining marks, Greek and
#: Coptic, Cyrillic (to U+0527), Hebrew, Arabic, Latin Extended Additional, general
#: punctuation, currency signs, CJK symbols and punctuation, kana, CJK
#: ideographs (to U+9FCC), Hangul syllables, half- and full-width forms
LOCAL_RANGES: tuple[tuple[int, int], ...] = (
    (0x0000, 0x03A2),
    (0x03A4, 0x0527),
    (0x0590, 0x06FF),
    (0x1E00, 0x1EFF),
    (0x2000, 0x2064),
    (0x20A0, 0x20B9),
    (0x3000, 0x30FF),
    (0x4E00, 0x9FCC),
    (0xAC00, 0xD7A3),
    (0xFF01, 0xFFEE),
)
#: an RE2 class of every other character (``Σ``, U+03A3, lower-cases by its context)
_OTHER = "[^" + "".join(rf"\x{{{lo:04x}}}-\x{{{hi:04x}}}" for lo, hi in LOCAL_RANGES) + "]"
#: environment variables a JVM reads its default locale or options from
_LOCALE_VARS = ("LC_ALL", "LC_MESSAGES", "LC_CTYPE", "LANG")
_JAVA_OPTION_VARS = ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "SPARK_SUBMIT_OPTS")
#: languages whose lower case Java's ``toLowerCase`` maps differently
_SPECIAL_LANGUAGES = ("tr", "az", "lt")
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


def local_text_problem(
    texts: pa.Array | pa.ChunkedArray, environ: Mapping[str, str] | None = None
) -> str | None:
    """Why Python might shingle these texts otherwise than Spark, or None.

    ASCII text is always shingled alike; other text when each of its characters is in
    :data:`LOCAL_RANGES` and the JVM's default locale (from ``environ``: the process
    environment when None) lower-cases as the root locale does.

    Example:
        >>> local_text_problem(pa.array(["café", None]), {})
        >>> local_text_problem(pa.array(["ᲐᲑ"]), {})
        "the character 'Ა' (U+1C90)"
    """
    if all_ascii(texts):
        return None
    environ = os.environ if environ is None else environ
    for name in _LOCALE_VARS:
        if environ.get(name, "").lower().startswith(_SPECIAL_LANGUAGES):
            return f"the locale {name}={environ[name]} (Java lower-cases by it)"
    for name in _JAVA_OPTION_VARS:
        if "user.language" in environ.get(name, "") or "user.country" in environ.get(name, ""):
            return f"a JVM locale in {name}"
    others = pc.match_substring_regex(texts, _OTHER)
    if not pc.any(others).as_py():
        return None
    text = texts.filter(others)[0].as_py()
    char = next(c for c in text if not _local_char(ord(c)))
    return f"the character {char!r} (U+{ord(char):04X})"


def _local_char(code: int) -> bool:
    return any(lo <= code <= hi for lo, hi in LOCAL_RANGES)


def text_units(text: str | None, kind: str) -> list[str] | str:
    """The words (``word``) or the normalised string (``char``) of a text whose
    characters are in :data:`LOCAL_RANGES`, as Spark SQL splits it; a null text is
    empty."""
    lowered = (text or "").lower()
    if kind == "word":
        return [word for word in _NOT_WORD.split(lowered) if word]
    return _JAVA_SPACE.sub(" ", lowered).strip(" ")


def text_shingles(text: str | None, kind: str, k: int) -> list[str]:
    """The shingles of a text (characters in :data:`LOCAL_RANGES`) in text order,
    repeats kept: every run of ``k`` units (words joined by one space, or characters);
    a text with fewer than ``k`` units but at least one is one shingle, an empty text
    none."""
    units = text_units(text, kind)
    if not units:
        return []
    starts = range(max(len(units) - k, 0) + 1)
    if isinstance(units, str):
        return [units[i : i + k] for i in starts]
    return [" ".join(units[i : i + k]) for i in starts]
