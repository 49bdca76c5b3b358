"""Rating tables read in this process, as Spark's rating readers read them
(:mod:`sparkeval.io.ratings`), for ``rating-errors`` without a JVM.

Only files whose reading is plain are taken; anything else is left to Spark's readers
(:class:`~sparkeval.io.direct_input.NotDirect`), which judge it and name the row:

* Parquet (one local file, or a directory of files without partition directories):
  user and item ids of text or integer type (integers become their decimal text, as
  Spark casts them), valid UTF-8, no null; values of an integer or float64 type, or
  text holding plain decimal numbers; every value finite;
* CSV and TSV (one local file, plain or gzip, with a plain header): the rules of
  :mod:`sparkeval.io.direct_csv` (no quoting, no empty or padded id);
* ``user item value`` text (one local file, plain or gzip): lines trimmed of
  whitespace, empty and ``#`` lines skipped, at least three fields split on runs of
  whitespace, a plain decimal value (:func:`sparkeval.io.direct_text.parse_values`).

A value is the double Spark's ``CAST(CAST(value AS STRING) AS DOUBLE)`` gives: the
number itself for integers and doubles, the correctly rounded parse of plain decimal
text.  Float32 and decimal columns (whose text form depends on Java's formatting) and
JSON Lines are Spark's.

Example::

    rows = read_rating_rows("preds.csv", "predictions", None, {})
    rows.user, rows.item, rows.value   # Arrow strings, strings, float64 numpy
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.io.direct import parquet_files
from sparkeval.io.direct_csv import SEPARATORS, plain_ids, read_fields, read_header
from sparkeval.io.direct_input import NotDirect, local_single_file
from sparkeval.io.direct_text import open_bytes, parse_values, whitespace_fields
from sparkeval.io.ratings import VALUE_COLUMN, resolve


@dataclass(frozen=True)
class RatingRows:
    """The rows of one rating table: user and item ids as text, the values as doubles."""

    user: pa.Array
    item: pa.Array
    value: np.ndarray

    def __len__(self) -> int:
        return len(self.value)


def read_rating_rows(path: str, kind: str, fmt: str, mapping: Mapping[str, str]) -> RatingRows:
    """The rows of the ``kind`` (``predictions`` or ``truth``) table at ``path``, in
    format ``fmt`` (``parquet``, ``csv``, ``tsv`` or ``trec``).

    Raises:
        NotDirect: the file, a column or a value is for Spark's readers to judge.
        InputError: a required column is missing (the same message as Spark's reader).
    """
    if fmt == "parquet":
        return _parquet_rows(path, kind, mapping)
    if fmt in SEPARATORS:
        return _delimited_rows(path, kind, fmt, mapping)
    if fmt == "trec":
        return _text_rows(path)
    raise NotDirect(f"{path}: {fmt} files are read by Spark")


def _parquet_rows(path: str, kind: str, mapping: Mapping[str, str]) -> RatingRows:
    import pyarrow.parquet as pq

    files = parquet_files(path)
    if files is None:
        raise NotDirect(f"{path}: not one Parquet file or a directory of them")
    try:
        tables = [pq.read_table(file) for file in files]
        table = pa.concat_tables(tables)
    except (pa.ArrowInvalid, OSError) as exc:  # unreadable, or files of other schemas
        raise NotDirect(f"{path}: {str(exc).splitlines()[0]}") from None
    cols = resolve(list(table.column_names), kind, mapping, path)
    user = _id_text(table.column(cols["user_id"]), path)
    item = _id_text(table.column(cols["item_id"]), path)
    raw = table.column(cols[VALUE_COLUMN[kind]])
    if raw.null_count:
        raise NotDirect(f"{path}: a null value")
    kind_of = raw.type
    if pa.types.is_signed_integer(kind_of) or pa.types.is_float64(kind_of):
        values = raw.combine_chunks().to_numpy(zero_copy_only=False).astype(np.float64)
        if not np.isfinite(values).all():
            raise NotDirect(f"{path}: a value that is not finite")
    elif pa.types.is_string(kind_of) or pa.types.is_large_string(kind_of):
        text = pc.cast(raw.combine_chunks(), pa.string())
        values = _parsed(text, path)
    else:
        raise NotDirect(f"{path}: value column of type {kind_of}")
    return RatingRows(user, item, values)


def _id_text(column: pa.ChunkedArray, where: str) -> pa.Array:
    """An id column as text, as Spark casts it: integers as their decimal text."""
    values = column.combine_chunks()
    if values.null_count:
        raise NotDirect(f"{where}: a null id")
    if pa.types.is_signed_integer(values.type):
        return pc.cast(values, pa.string())
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        raise NotDirect(f"{where}: an id column of type {values.type}")
    try:
        values.validate(full=True)  # UTF-8
    except pa.ArrowInvalid:
        raise NotDirect(f"{where}: an id that is not valid UTF-8") from None
    return pc.cast(values, pa.string())


def _parsed(text: pa.Array, where: str) -> np.ndarray:
    return parse_values(text, "run", where).to_numpy(zero_copy_only=False).astype(np.float64)


def _delimited_rows(path: str, kind: str, fmt: str, mapping: Mapping[str, str]) -> RatingRows:
    local = local_single_file(path)
    sep = SEPARATORS[fmt]
    header = None if local is None else read_header(local, sep)
    if local is None or header is None:
        raise NotDirect(f"{path}: not a plain {fmt.upper()} file")
    cols = resolve(header, kind, mapping, path)
    with open_bytes(local) as handle:
        data = handle.read().partition(b"\n")[2]
    value_column = cols[VALUE_COLUMN[kind]]
    fields = read_fields(data, header, sep, sorted(set(cols.values())), path)
    user = plain_ids(fields[cols["user_id"]], cols["user_id"], path)
    item = plain_ids(fields[cols["item_id"]], cols["item_id"], path)
    return RatingRows(user, item, _parsed(fields[value_column], path))


def _text_rows(path: str) -> RatingRows:
    local = local_single_file(path)
    if local is None:
        raise NotDirect(f"{path}: not one local file")
    with open_bytes(local) as handle:
        data = handle.read()
    fields = whitespace_fields(data, 3, path)
    user, item = pc.list_element(fields, 0), pc.list_element(fields, 1)
    return RatingRows(user, item, _parsed(pc.list_element(fields, 2), path))


def check_has_rows(rows: RatingRows, path: str, kind: str) -> None:
    """An input without rows is Spark's to report (its reader names it)."""
    if not len(rows):
        raise NotDirect(f"{path}: no {kind} rows")
