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

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from sparkeval.lsh.text_units import SHINGLE_KINDS, check_shingles  # noqa: F401 (also here)
from sparkeval.spark import spark_type


def shingle_table(
    docs: DataFrame, text: str, kind: str = "word", k: int = 3, keep: tuple[str, ...] = ()
) -> DataFrame:
    """``keep`` columns and ``shingles``: each text's shingles, in text order, repeats kept.

    The text is split into units (words, or the normalised characters) once per row
    in one projection, and cut into shingles in the next, so the split is not
    repeated for every shingle.

    Args:
        docs: a table with a string column ``text`` (null counts as empty).
        text: the text column.
        kind: ``word`` or ``char``.
        k: units per shingle.
        keep: columns carried along (e.g. the doc id).
    """
    check_shingles(kind, k)
    lowered = F.lower(F.coalesce(F.col(text), F.lit("")))
    if kind == "word":
        units = F.filter(F.split(lowered, r"[^\p{L}\p{N}]+"), lambda w: w != "")
    else:
        units = F.trim(F.regexp_replace(lowered, r"\s+", " "))
    split = docs.select(*keep, units.alias("_units"))
    return split.select(*keep, _cut(F.col("_units"), kind, k).alias("shingles"))


def _cut(units: Column, kind: str, k: int) -> Column:
    """Shingles of k consecutive units of an already split text."""
    if kind == "word":
        size = F.size(units)
        cut = F.transform(
            F.sequence(F.lit(0), F.greatest(size - k, F.lit(0))),
            lambda i: F.array_join(F.slice(units, i + 1, F.lit(k)), " "),
        )
    else:
        size = F.length(units)
        cut = F.transform(
            F.sequence(F.lit(0), F.greatest(size - k, F.lit(0))),
            lambda i: F.substring(units, i + 1, F.lit(k)),
        )
    return F.when(size > 0, cut).otherwise(F.array().cast(spark_type("array<string>")))
