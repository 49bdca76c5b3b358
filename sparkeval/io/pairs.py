"""Read near-duplicate pairs: ``doc_a, doc_b`` (undirected, global, not per query).

Formats are those of runs and qrels (:func:`~sparkeval.io.readers.detect_format`):
Parquet, CSV with a header, JSON Lines (columns ``doc_a`` and ``doc_b``; extra
columns such as ``jaccard``, ``hamming`` or ``similarity`` are ignored) and
whitespace-separated text with two doc ids per line (``doc_a doc_b``; ``#`` lines
are comments; further fields are ignored).  The ``pairs.parquet`` written by
``sparkeval near-duplicates`` is read as it is.

Ids are strings.  A row without both ids carries a ``_bad`` message naming the
file and the row (the line, for text), and reading the pairs fails on it.

Example::

    df = read_pairs(spark, "nd/pairs.parquet")
    df.columns  # -> ['doc_a', 'doc_b', '_bad']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sparkeval.errors import InputError
from sparkeval.formats import BAD
from sparkeval.io import readers

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PAIR_COLUMNS: tuple[str, ...] = ("doc_a", "doc_b")


def _missing_id(col):
    return col.isNull() | (col == "")


def pairs_frame(table, source: str, decoded: bool = False):
    """``doc_a, doc_b, _bad`` from a table with (at least) columns ``doc_a, doc_b``.

    Args:
        table: a Spark DataFrame (read from a file or handed to the Python API).
        source: the file name or a label for messages.

    Raises:
        InputError: a required column is missing.
    """
    from pyspark.sql import functions as F

    missing = [c for c in PAIR_COLUMNS if c not in table.columns]
    if missing:
        raise InputError(
            f"{source}: missing column(s) {', '.join(repr(c) for c in missing)}; "
            f"columns are: {', '.join(table.columns)}"
        )
    readers.check_id_types(table, PAIR_COLUMNS, source)
    table = readers.strict_text_ids(table, PAIR_COLUMNS, source, decoded=decoded)
    a, b = readers.id_column("doc_a"), readers.id_column("doc_b")
    which = F.when(_missing_id(a), F.lit("doc_a")).otherwise(F.lit("doc_b"))
    message = F.concat(
        F.lit(f"{source}: pair row with a missing or empty "),
        which,
        F.lit(" (doc_a '"),
        F.coalesce(a, F.lit("")),
        F.lit("', doc_b '"),
        F.coalesce(b, F.lit("")),
        F.lit("'); both doc ids are required"),
    )
    bad = F.when(_missing_id(a) | _missing_id(b), message)
    return table.select(a.alias("doc_a"), b.alias("doc_b"), bad.alias(BAD))


def _read_text_pairs(spark: SparkSession, path: str):
    from pyspark.sql import functions as F

    rows = readers._trec_lines(spark, path)
    bad = readers._bad_line(
        path, F.size("_f") < 2, "expected two whitespace separated doc ids 'doc_a doc_b'"
    )
    return rows.select(
        F.get(F.col("_f"), 0).alias("doc_a"),
        F.get(F.col("_f"), 1).alias("doc_b"),
        bad.alias(BAD),
    )


def read_pairs(spark: SparkSession, path: str, fmt: str | None = None):
    """Read a near-duplicate pairs input into ``doc_a, doc_b, _bad``.

    An empty input is allowed (no pairs: every measure is as without pairs).
    ``fmt`` ``trec`` means whitespace-separated text.
    """
    readers.check_exists(path)
    fmt = readers.detect_format(path, fmt)
    if fmt == "trec":
        return _read_text_pairs(spark, path)
    table = readers.read_table(spark, path, fmt)
    return pairs_frame(table, path, fmt in readers.DECODED_FORMATS)


__all__ = ["PAIR_COLUMNS", "pairs_frame", "read_pairs"]
