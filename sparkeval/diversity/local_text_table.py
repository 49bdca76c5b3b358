"""A CSV or TSV table of ``sparkeval diversity`` read in this process, for its local
engine: the training interactions (``--train``) and a run with a relevance column, as
Spark's reader gives them to the Spark job (:func:`~sparkeval.io.lists.read_typed_table`:
a header row, ids as the file's text, numbers as numbers; every malformed row an error
naming its file and line).

Read here only where Spark's reading is plain (:mod:`sparkeval.io.direct_csv`'s rules):
one local file, plain or gzip, whose first line is a header of distinct names followed
by data; no double quote, backslash, carriage return, NUL, byte-order mark, U+FFFD or
invalid UTF-8; no line of blanks; no empty or blank-padded id; scores and relevances
plain decimal numbers (an empty relevance is null, as Spark reads it). Anything else
raises :class:`~sparkeval.io.direct_input.NotDirect` (the command runs on Spark under
``--engine auto``).

A line with another number of fields than the header is Spark's malformed row: the
error Spark raises, ``FILE:LINE: malformed line 'RAW': expected N comma separated
fields (NAMES) with balanced quotes``, is kept with the table
(:attr:`TextTable.malformed`) for the caller to raise where the Spark job first reads
the file's rows.

Example::

    train = read_text_table("train.csv", TRAIN_ALIASES, ("query_id", "doc_id"))
    train.table.column("doc_id")   # the items, as text
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.diversity.local_read import LocalTable
from sparkeval.errors import InputError
from sparkeval.io.columns import match_columns
from sparkeval.io.direct_csv import SEPARATORS, plain_ids, plain_text_problem, read_header
from sparkeval.io.direct_input import NotDirect, local_single_file
from sparkeval.io.direct_text import open_bytes, parse_values, plain_fields
from sparkeval.io.locate import with_line_number
from sparkeval.io.readers import detect_format

#: the text columns of the tables read here (ids); the others are numbers
TEXT_COLUMNS = ("run_id", "query_id", "doc_id")
#: a line of blanks only (Spark's reading of it is its own)
_BLANK = re.compile(rb"^[ \t\f\v]+$")


@dataclass(frozen=True)
class TextTable:
    """A table read here and, if it has one, its first malformed line's error.

    Attributes:
        local: the table's canonical columns (empty when a line is malformed).
        malformed: Spark's error for the first malformed line, or None.
    """

    local: LocalTable
    malformed: str | None = None

    def check_rows(self) -> None:
        """Raise the malformed line's error, as the Spark job does on reading the rows.

        Raises:
            InputError: ``FILE:LINE: malformed line ...`` (Spark's message).
        """
        if self.malformed is not None:
            raise InputError(self.malformed)


def is_text_table(path: str) -> bool:
    """Whether ``path`` is a CSV or TSV input (by its name, as Spark's readers judge)."""
    return detect_format(path) in SEPARATORS


def read_text_table(
    path: str,
    aliases: Mapping[str, Sequence[str]],
    required: Sequence[str],
    numeric: Sequence[str] = (),
) -> TextTable:
    """The canonical columns of the CSV or TSV input ``path`` (found as on Spark: the
    first alias, any case; the optional columns of ``aliases`` when present): ids as
    text, the ``numeric`` columns (``score``, ``relevance``) as float64.

    Raises:
        InputError: a required column is missing (Spark's message).
        NotDirect: a file or value Spark's reader judges (see the module).
    """
    fmt = detect_format(path)
    sep = SEPARATORS[fmt]
    local = local_single_file(path)
    if local is None:
        raise NotDirect(f"{path}: not one local {fmt.upper()} file")
    header = read_header(local, sep)
    if header is None:
        raise NotDirect(f"{path}: a header row (or no data row) that Spark's reader judges")
    optional = [c for c in aliases if c not in required]
    found = match_columns(header, aliases, required, {}, path, "this table", None, optional)
    with open_bytes(local) as handle:
        data = handle.read().partition(b"\n")[2]
    problem = plain_text_problem(data)
    if problem:
        raise NotDirect(f"{path}: {problem}")
    malformed = _malformed(data, header, sep, path)
    if malformed is not None:
        empty = pa.table({c: pa.array([], pa.string()) for c in found})
        return TextTable(LocalTable(path, empty), malformed)
    try:
        fields = plain_fields(data, list(header), sep, sorted(set(found.values())))
    except pa.ArrowInvalid as exc:  # invalid UTF-8
        raise NotDirect(f"{path}: {str(exc).splitlines()[0]}") from None
    columns = {}
    for canonical, source in found.items():
        text = fields.column(source).combine_chunks()
        if canonical in numeric:
            columns[canonical] = _numbers(text, canonical, path)
        else:
            columns[canonical] = plain_ids(text, source, path)
    return TextTable(LocalTable(path, pa.table(columns)))


def _numbers(text: pa.Array, column: str, path: str) -> pa.Array:
    """A numeric column as float64: plain decimal numbers, an empty relevance null.

    Raises:
        NotDirect: another value, an empty score, or a column with no value at all
            (Spark would read it as text).
    """
    empty = pc.equal(text, "")
    blanks = int(pc.sum(empty).as_py() or 0)
    if blanks and column != "relevance":
        raise NotDirect(f"{path}: column {column} has an empty value")
    if blanks and blanks == len(text):
        raise NotDirect(f"{path}: column {column} has no value (Spark reads it as text)")
    values = parse_values(pc.filter(text, pc.invert(empty)), "run", f"{path}: column {column}")
    if not blanks:
        return values
    return pc.cast(pc.if_else(empty, pa.scalar(None, pa.string()), text), pa.float64())


def _malformed(data: bytes, header: Sequence[str], sep: str, path: str) -> str | None:
    """Spark's error for the first line of ``data`` (the rows after the header) with
    another number of fields than ``header``, or None; empty lines are skipped, as
    Spark skips them.

    Raises:
        NotDirect: a line of blanks before any malformed line (Spark's own reading).
    """
    needed = len(header)
    separator = sep.encode()
    for line in data.split(b"\n"):
        if not line:
            continue
        if _BLANK.match(line):
            raise NotDirect(f"{path}: a line of blanks")
        if line.count(separator) + 1 != needed:
            raw = line.decode("utf-8", errors="replace")
            kind = "tab" if sep == "\t" else "comma"
            names = ", ".join(header)
            return with_line_number(
                f"{path}: malformed line [{raw}]: expected {needed} {kind} separated fields "
                f"({names}) with balanced quotes"
            )
    return None
