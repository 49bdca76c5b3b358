"""A ``near-duplicates`` docs file in CSV or TSV read in this process, for the local
engine: the header and fields of :mod:`sparkeval.io.direct_csv` (the direct reader of
CSV runs), so the doc ids and texts are the text Spark's CSV reader gives the Spark
job.

Spark reads a docs table with its column types inferred, ids kept as text; a field
left empty is null (a text without shingles). This reader takes the files whose
reading is plain and leaves the rest to Spark
(:class:`~sparkeval.io.direct_input.NotDirect`): what the direct CSV reader leaves to
it (quoting, backslashes, a row of another field count, invalid UTF-8, ...), an empty
or padded doc id, a text with surrounding whitespace, a ``tokens`` column (CSV has no
arrays), and a text column whose values Spark's inference might read as numbers,
booleans or timestamps: one value at least must hold a letter, whitespace and a letter
(``a b``), which the text of no other type holds.

Example::

    names = csv_doc_names("docs.csv", "csv")
    columns = read_csv_doc_columns("docs.csv", "csv", {"doc_id": "id", "text": "body"})
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.io.direct_csv import SEPARATORS, plain_ids, read_fields, read_header
from sparkeval.io.direct_input import NotDirect, local_single_file
from sparkeval.io.direct_text import is_gzip, open_bytes

#: text that only a string column holds (an RE2 pattern)
_WORDS = r"[A-Za-z]\s+[A-Za-z]"


def _local_file(path: str) -> str:
    """The local CSV or TSV file ``path`` names (plain or gzip).

    Raises:
        NotDirect: not one local file of that kind.
    """
    local = local_single_file(path)
    if local is None or not (is_gzip(local) or Path(local).suffix.lower() in (".csv", ".tsv")):
        raise NotDirect(f"{path}: not one local CSV or TSV file")
    return local


def csv_doc_names(path: str, fmt: str) -> list[str]:
    """The column names of the header line of the docs file ``path``.

    Raises:
        NotDirect: a header Spark's reader judges
            (:func:`~sparkeval.io.direct_csv.read_header`).
    """
    header = read_header(_local_file(path), SEPARATORS[fmt])
    if header is None:
        raise NotDirect(f"{path}: a header line Spark's CSV reader judges")
    return header


def read_csv_doc_columns(path: str, fmt: str, used: Mapping[str, str]) -> dict[str, pa.Array]:
    """The ``used`` columns ({canonical: column of the file}) of the docs file ``path``
    by their canonical names: ``doc_id`` as text, ``text`` as text (null where empty).

    Raises:
        NotDirect: what this reader leaves to Spark (see the module text).
    """
    if "tokens" in used:
        raise NotDirect(f"{path}: a {used['tokens']} column in a {fmt.upper()} docs file")
    local = _local_file(path)
    header = csv_doc_names(path, fmt)
    with open_bytes(local) as handle:
        data = handle.read().partition(b"\n")[2]
    fields = read_fields(data, header, SEPARATORS[fmt], sorted(set(used.values())), path)
    columns = {"doc_id": plain_ids(fields[used["doc_id"]], used["doc_id"], path)}
    if "text" in used:
        columns["text"] = _texts(fields[used["text"]], used["text"], path)
    return columns


def _texts(values: pa.Array, column: str, path: str) -> pa.Array:
    """The text column as Spark reads it: an empty field null.

    Raises:
        NotDirect: a text with surrounding whitespace, or no value that only a string
            column holds (Spark's inference might give the column another type).
    """
    if len(values) and not pc.all(pc.equal(pc.utf8_trim_whitespace(values), values)).as_py():
        raise NotDirect(f"{path}: column {column} has a value with surrounding whitespace")
    if not pc.any(pc.match_substring_regex(values, _WORDS)).as_py():
        raise NotDirect(f"{path}: column {column} may be read as another type than text")
    empty = pc.equal(values, "")
    return pc.if_else(empty, pa.scalar(None, pa.string()), values)


def is_csv_docs(fmt: str) -> bool:
    """Whether a docs file of format ``fmt`` is read by this module."""
    return fmt in SEPARATORS
