"""Shingles of document text as Spark SQL expressions (no Python per row).

Word shingles: the text is lower-cased and split into words on every run of
characters that are neither letters nor digits; a shingle is k consecutive words
joined by one space. Char shingles: the lower-cased text with every whitespace run
replaced by one space and the ends trimmed; a shingle is k consecutive characters.
A text with fewer than k units (but at least one) has one shingle, all of it; an
empty text has none.

Example:
    ``"The cat sat."`` with word k=2 gives ``["the cat", "cat sat"]``;
    with char k=3, ``"ab  c"`` gives ``["ab ", "b c"]``.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from sparkeval.errors import ConfigError

SHINGLE_KINDS: tuple[str, ...] = ("word", "char")


def check_shingles(kind: str, k: int) -> None:
    """Validate a shingle kind and size."""
    if kind not in SHINGLE_KINDS:
        raise ConfigError(f"shingle kind must be one of {', '.join(SHINGLE_KINDS)}; got {kind!r}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"shingle size k must be a positive integer, got {k!r}")


def shingles(text: Column | str, kind: str = "word", k: int = 3) -> Column:
    """The list of shingles of a text column, in text order, repeats kept.

    Args:
        text: a string column (null counts as empty).
        kind: ``word`` or ``char``.
        k: units per shingle.
    """
    check_shingles(kind, k)
    col = F.col(text) if isinstance(text, str) else text
    lowered = F.lower(F.coalesce(col, F.lit("")))
    if kind == "word":
        units = F.filter(F.split(lowered, r"[^\p{L}\p{N}]+"), lambda w: w != "")
        return _guard_empty(
            F.size(units),
            F.transform(
                F.sequence(F.lit(0), F.greatest(F.size(units) - k, F.lit(0))),
                lambda i: F.array_join(F.slice(units, i + 1, F.lit(k)), " "),
            ),
        )
    norm = F.trim(F.regexp_replace(lowered, r"\s+", " "))
    return _guard_empty(
        F.length(norm),
        F.transform(
            F.sequence(F.lit(0), F.greatest(F.length(norm) - k, F.lit(0))),
            lambda i: F.substring(norm, i + 1, F.lit(k)),
        ),
    )


def _guard_empty(size: Column, shingle_list: Column) -> Column:
    return F.when(size > 0, shingle_list).otherwise(F.array().cast("array<string>"))
