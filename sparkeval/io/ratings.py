"""Read rating tables: predictions ``(user, item, prediction)`` and truth ``(user, item, rating)``.

Canonical frame: ``user_id, item_id, value, _bad`` (strings, strings, double,
message).  Values may be any finite numbers (ratings need not be integers).

Formats: Parquet (file or directory), CSV with a header, JSON Lines, and plain
text with whitespace separated ``user item value`` per line (further fields, such
as a timestamp, are ignored; ``#`` lines are comments).  Columns are found by
name or alias (see :data:`ALIASES`) or by an explicit mapping such as
``user_id=uid,item_id=movie,prediction=p,rating=stars``.

A value that is missing, not a number or not finite does not stop the read: the
row carries a ``_bad`` message naming the file, user, item and column.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from sparkeval.errors import InputError
from sparkeval.formats import BAD
from sparkeval.io.columns import RATING_ALIASES, mapping_onto, match_columns
from sparkeval.io.readers import (
    DECODED_FORMATS,
    _bad_line,
    _trec_lines,
    check_exists,
    check_id_types,
    detect_format,
    no_rows_message,
    read_table,
    strict_text_ids,
)
from sparkeval.spark import spark_type

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

KINDS = ("predictions", "truth")

#: the value column of each kind of table
VALUE_COLUMN = {"predictions": "prediction", "truth": "rating"}

#: accepted names of every canonical column (the one alias table, :mod:`sparkeval.io.columns`)
ALIASES = RATING_ALIASES


def parse_columns(text: str | Mapping[str, str] | None) -> dict[str, str]:
    """Parse ``canonical=source,...`` for rating tables into {canonical: source}.

    ``user_id`` and ``item_id`` apply to both tables, ``prediction`` to the
    predictions and ``rating`` to the truth.

    Example:
        >>> parse_columns("user_id=uid, rating=stars")
        {'user_id': 'uid', 'rating': 'stars'}
    """
    return mapping_onto(text, tuple(ALIASES), "--columns", "columns")


def resolve(available: list[str], kind: str, mapping: Mapping[str, str], source: str) -> dict:
    """{canonical: source column} for ``user_id``, ``item_id`` and the kind's value column."""
    required = ("user_id", "item_id", VALUE_COLUMN[kind])
    return match_columns(
        available, ALIASES, required, mapping, source, f"a {kind} table", "--columns"
    )


def _value(source: str, raw, user, item, column: str):
    """(value, bad message) columns: the value must be a finite number."""
    from pyspark.sql import functions as F

    value = raw.cast(spark_type("string")).try_cast(spark_type("double"))
    bad = raw.isNull() | value.isNull() | F.isnan(value) | (F.abs(value) == float("inf"))
    no_key = F.concat(
        F.lit(f"{source}: a row has an empty user or item (user '"),
        F.coalesce(user, F.lit("")),
        F.lit("', item '"),
        F.coalesce(item, F.lit("")),
        F.lit("')"),
    )
    message = F.concat(
        F.lit(f"{source}: user "),
        F.coalesce(user, F.lit("<missing>")),
        F.lit(" item "),
        F.coalesce(item, F.lit("<missing>")),
        F.lit(f": column {column} value '"),
        F.coalesce(raw.cast(spark_type("string")), F.lit("")),
        F.lit("' is not a finite number"),
    )
    return value, F.when(user.isNull() | item.isNull(), no_key).when(bad, message)


def canonical_ratings(
    df: DataFrame,
    kind: str,
    mapping: Mapping[str, str] | None = None,
    source: str = "<DataFrame>",
    decoded: bool = False,
):
    """A Spark DataFrame with user, item and value columns as ``user_id, item_id, value, _bad``.

    Raises:
        InputError: a required column is missing.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    cols = resolve(list(df.columns), kind, mapping or {}, source)
    check_id_types(df, [cols["user_id"], cols["item_id"]], source)
    df = strict_text_ids(df, [cols["user_id"], cols["item_id"]], source, decoded=decoded)
    user = df[cols["user_id"]].cast(spark_type("string"))
    item = df[cols["item_id"]].cast(spark_type("string"))
    column = VALUE_COLUMN[kind]
    value, bad = _value(source, df[cols[column]], user, item, cols[column])
    return df.select(
        user.alias("user_id"), item.alias("item_id"), value.alias("value"), bad.alias(BAD)
    )


def _read_text(spark: SparkSession, path: str, kind: str):
    from pyspark.sql import functions as F

    rows = _trec_lines(spark, path)
    user = F.get(F.col("_f"), 0)
    item = F.get(F.col("_f"), 1)
    raw = F.get(F.col("_f"), 2)
    value, bad = _value(path, raw, user, item, VALUE_COLUMN[kind])
    short = _bad_line(path, F.size("_f") < 3, "expected 'user item value'")
    return rows.select(
        user.alias("user_id"),
        item.alias("item_id"),
        value.alias("value"),
        F.coalesce(short, bad).alias(BAD),
    )


def read_ratings(
    spark: SparkSession,
    path: str,
    kind: str,
    fmt: str | None = None,
    columns: str | Mapping[str, str] | None = None,
):
    """Read a predictions or truth table into ``user_id, item_id, value, _bad``.

    ``fmt`` ``trec`` (the default for unknown extensions) means whitespace separated
    ``user item value`` text.
    """
    check_exists(path)
    fmt = detect_format(path, fmt)
    if fmt == "trec":
        df = _read_text(spark, path, kind)
    else:
        table = read_table(spark, path, fmt)
        decoded = fmt in DECODED_FORMATS
        df = canonical_ratings(table, kind, parse_columns(columns), path, decoded)
    if df.first() is None:
        raise InputError(no_rows_message(path, kind))
    return df
