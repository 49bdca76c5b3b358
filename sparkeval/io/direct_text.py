"""TREC text runs and qrels that the Python workers read themselves (the direct path).

The workers read a plain text file in byte ranges that end at line ends (one read task
each), or a gzip file whole, with pyarrow, and parse its lines with vectorised Arrow
kernels exactly as Spark's readers do (:func:`sparkeval.io.readers.read_trec_run`):

* a line is trimmed of ASCII whitespace (``" \\t\\r\\n\\f\\v"``); empty lines and lines
  starting with ``#`` are skipped; fields are split on runs of ASCII whitespace; lines
  end at ``\\n``, ``\\r`` or ``\\r\\n``;
* a run line is ``qid Q0 docno rank score tag`` (more fields are ignored); the run id
  is the tag of the first line, as trec_eval reads it;
* a qrels line is ``qid iter docno rel``, exactly (six fields are a run line);
* a number is a plain decimal (``3``, ``-1.5``, ``2e-3``): both parsers round such text
  to the same double.

Anything else — a short line, a score such as ``NaN`` or ``1d``, a grade that is not a
whole number within ±1e9, invalid UTF-8, a byte-order mark — is left to Spark's
readers (:class:`~sparkeval.io.direct_input.NotDirect`), so that a bad input gets exactly
their error, with its line number.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from typing import IO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.formats import RUN_CODE, TIE_KEY
from sparkeval.io.direct_input import NotDirect
from sparkeval.io.readers import GRADE_BOUND
from sparkeval.io.readers import WHITESPACE as _WHITESPACE
from sparkeval.io.streams import DECOMPRESS_ERRORS
from sparkeval.io.tie_keys import input_order_keys
from sparkeval.storage.files import file_size, open_input
from sparkeval.storage.uris import is_remote

#: bytes of plain text per read task
TEXT_CHUNK_BYTES = 64 << 20
#: assumed expansion of a gzip file, for sizing the buckets before it is read
GZIP_EXPANSION = 4
_FIELD_SPLIT = re.compile(r"[ \t\r\n\f\v]+")
#: a plain decimal number, the only text both parsers are known to read alike
_NUMBER = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
#: the fields a line needs, and the field holding the value, by kind of input
_FIELDS = {"run": (6, 4), "qrels": (4, 3)}
_BOM = b"\xef\xbb\xbf"
#: a damaged compressed file or text that is not UTF-8: leave the file to Spark's reader
_UNREADABLE: tuple[type[BaseException], ...] = (*DECOMPRESS_ERRORS, UnicodeDecodeError)


def is_gzip(path: str) -> bool:
    """A gzip file, by its name."""
    return path.lower().endswith(".gz")


def first_data_fields(path: str) -> list[str] | None:
    """The fields of the first line that is not empty or a comment; None when there is
    none, or the text before it is not UTF-8."""
    try:
        with open_bytes(path) as handle:
            head = handle.read(len(_BOM))
            if head == _BOM:
                return None
            for raw in _lines_after(head, handle):
                body = raw.decode("utf-8").strip(_WHITESPACE)
                if body and not body.startswith("#"):
                    return _FIELD_SPLIT.split(body)
    except _UNREADABLE:
        return None
    return None


def open_bytes(path: str) -> IO[bytes]:
    """The file's bytes, decompressed when it is gzip."""
    if is_gzip(path):
        source = open_input(path) if is_remote(path) else path
        return gzip.open(source, "rb")  # type: ignore[return-value]
    return open_input(path)


def _lines_after(head: bytes, handle: IO[bytes]) -> Iterator[bytes]:
    """The lines of a file whose first bytes were ``head`` (ends: ``\\n``, ``\\r``, ``\\r\\n``)."""
    text = head + handle.read(1 << 20)
    while text:
        lines = re.split(rb"\r\n|\r|\n", text)
        yield from lines[:-1]
        more = handle.read(1 << 20)
        if not more:
            yield lines[-1]
            return
        text = lines[-1] + more


#: read tasks of a gzip file (gzip cannot be cut: each task decompresses the text up to
#: the end of its part and parses its part; :func:`read_gzip_part`)
GZIP_PARTS = 2
#: decompressing a byte of gzip text costs about this share of parsing it (measured on
#: 10M run lines: 0.28-0.35 s for ISA-L to decompress the 360 MB, 1.2-1.4 s to parse them)
DECOMPRESS_COST = 0.25


def byte_ranges(path: str, chunk: int | None = None) -> list[tuple[int, int]]:
    """``[start, end)`` ranges covering a plain text file, each ending after a ``\\n``
    (or at the end), about ``chunk`` bytes each (default :data:`TEXT_CHUNK_BYTES`).

    A gzip file larger than a chunk is expected to hold has :data:`GZIP_PARTS` ranges
    ``(part, parts)`` instead (see :func:`read_text_range`); a smaller one, ``(0, 1)``.
    """
    chunk = chunk or TEXT_CHUNK_BYTES
    size = file_size(path)
    if is_gzip(path):
        parts = GZIP_PARTS if size * GZIP_EXPANSION > chunk else 1
        return [(part, parts) for part in range(parts)]
    if size <= chunk:
        return [(0, size)]
    bounds = [0]
    with open_input(path) as handle:
        while bounds[-1] + chunk < size:
            handle.seek(bounds[-1] + chunk)
            tail = b""
            while True:
                block = handle.read(1 << 16)
                if not block:
                    break
                found = block.find(b"\n")
                if found >= 0:
                    tail += block[: found + 1]
                    break
                tail += block
            end = bounds[-1] + chunk + len(tail)
            if end >= size:
                break
            bounds.append(end)
    return [(start, end) for start, end in zip(bounds, [*bounds[1:], size], strict=True)]


def read_text_range(path: str, start: int, end: int, name: str | None = None) -> bytes:
    """The bytes of one read task: ``[start, end)`` of a plain file; of a gzip file, part
    ``start`` of ``end`` (:func:`read_gzip_part`).  ``name`` is the input as given, for
    messages (default ``path``, which the plan holds made absolute).

    Raises:
        NotDirect: a gzip file that is truncated or corrupt (Spark's reader reports it).
    """
    if is_gzip(path):
        try:
            return read_gzip_part(path, start, end)
        except DECOMPRESS_ERRORS as exc:
            raise NotDirect(f"{name or path}: {exc}") from exc
    with open_input(path) as handle:
        handle.seek(start)
        return handle.read(end - start)


def gzip_part_ends(parts: int, cost: float = DECOMPRESS_COST) -> list[float]:
    """Where parts ``0 .. parts - 2`` of a gzip file's text end, as shares of the text,
    so that the parts' read tasks cost alike: part ``i`` decompresses the text up to its
    end ``e_i`` and parses its own share, ``cost * e_i + (e_i - e_(i-1))``.

    Equal costs ``c`` give ``e_i = (c + e_(i-1)) / (1 + cost)``, scaled so that the last
    part ends at 1. Example: two parts split the text at ``(1 + cost) / (2 + cost)``::

        >>> [round(e, 4) for e in gzip_part_ends(2)], gzip_part_ends(1)
        ([0.5556], [])
    """
    ends = [0.0]
    for _ in range(parts):
        ends.append((1 + ends[-1]) / (1 + cost))
    return [e / ends[-1] for e in ends[1:-1]]


def read_gzip_part(path: str, part: int, parts: int) -> bytes:
    """Part ``part`` (from 0) of ``parts`` line-aligned parts of a gzip file's text,
    decompressed only as far as the part's end (the last part checks the whole file).

    Part ``i`` starts at the first line start at or after ``L * e_i`` bytes
    (:func:`gzip_part_ends`), where ``L`` is the text's length as the gzip trailer
    records it (modulo 2**32). Every part computes the cuts alike, so the parts always
    make the whole text, each starting at a line start; only their balance relies on
    the trailer (a text over 4 GiB, or of several gzip members, splits less evenly).

    Raises:
        OSError, EOFError, isal.isal_zlib.error: a truncated or corrupt file.
    """
    length = _recorded_length(path)
    cuts = [None, *(max(1, int(length * e)) for e in gzip_part_ends(parts)), None]
    return _between_cuts(_decompressed(path), cuts[part], cuts[part + 1])


def _recorded_length(path: str) -> int:
    """The text length a gzip file's trailer records (its last 4 bytes, little-endian)."""
    with open_input(path) as handle:
        handle.seek(0, 2)
        if handle.tell() < 4:
            return 0
        handle.seek(-4, 2)
        return int.from_bytes(handle.read(4), "little")


def _decompressed(path: str, block: int = 1 << 20) -> Iterator[bytes]:
    """The text of a gzip file (of one or more members), in pieces.

    Inflated by ISA-L (the ``isal`` package), a drop-in for :mod:`zlib` that is about
    3.7x faster here (10M run lines: 0.28 s instead of 1.05 s); the bytes are the same.

    Raises:
        EOFError: the file ends inside a member.
        isal.isal_zlib.error: damaged compressed data.
    """
    from isal import isal_zlib

    with open_input(path) as handle:
        inflater = isal_zlib.decompressobj(wbits=31)
        fed = False
        while compressed := handle.read(block):
            while compressed:
                fed = True
                if text := inflater.decompress(compressed):
                    yield text
                if not inflater.eof:
                    break
                compressed = inflater.unused_data  # another member follows, maybe
                inflater, fed = isal_zlib.decompressobj(wbits=31), False
        if fed and not inflater.eof:
            raise EOFError("compressed file ended before the end-of-stream marker")


def _between_cuts(pieces: Iterator[bytes], start_cut: int | None, end_cut: int | None) -> bytes:
    """The text from the line start at or after ``start_cut`` (None: the beginning) to
    the line start at or after ``end_cut`` (None: the end); a line start at or after
    ``cut`` is just past the first ``\\n`` at position ``cut - 1`` or later (the end of
    the text when there is none).

    Example:
        >>> text = [b"a\\nbb", b"\\nc\\n"]
        >>> [_between_cuts(iter(text), a, b) for a, b in [(None, 2), (2, 5), (5, None)]]
        [b'a\\n', b'bb\\n', b'c\\n']
    """
    kept: list[bytes] = []
    position = 0  # the text position of the piece's first byte
    start = 0 if start_cut is None else None
    for piece in pieces:
        begin = 0  # where the part begins in this piece
        if start is None:
            found = piece.find(b"\n", max(0, start_cut - 1 - position))  # type: ignore[operator]
            if found < 0:
                position += len(piece)
                continue
            start = position + found + 1
            begin = found + 1
            if end_cut is not None and start >= end_cut:
                return b""  # one line spans both cuts: the next part starts there too
        if end_cut is not None:
            found = piece.find(b"\n", max(begin, end_cut - 1 - position))
            if found >= 0:
                kept.append(piece[begin : found + 1])
                return b"".join(kept)
        kept.append(piece[begin:] if begin else piece)
        position += len(piece)
    return b"".join(kept)


#: bytes after which text is parsed on several threads (a read task's text is larger
#: only for a part of a gzip file, which other tasks do not share the cores with)
_THREADED_BYTES = 2 * TEXT_CHUNK_BYTES


def plain_fields(
    data: bytes,
    names: list[str],
    delimiter: str,
    columns: list[str] | None = None,
    block_size: int | None = None,
) -> pa.Table:
    """The ``columns`` (default: all ``names``) of ``data`` split at ``delimiter`` and
    line ends by Arrow's CSV reader with quoting and escaping off, as UTF-8 text; empty
    lines are skipped.  Several threads parse when ``data`` is over
    :data:`_THREADED_BYTES`.

    Raises:
        pyarrow.ArrowInvalid: a line with another number of fields, or invalid UTF-8.
    """
    import pyarrow.csv as csv

    wanted = list(names if columns is None else columns)
    return csv.read_csv(
        pa.BufferReader(data),
        read_options=csv.ReadOptions(
            column_names=names,
            use_threads=len(data) > _THREADED_BYTES,
            block_size=block_size or 1 << 20,
        ),
        parse_options=csv.ParseOptions(
            delimiter=delimiter,
            quote_char=False,
            escape_char=False,
            newlines_in_values=False,
            ignore_empty_lines=True,
        ),
        convert_options=csv.ConvertOptions(
            include_columns=wanted,
            column_types={name: pa.string() for name in wanted},
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            check_utf8=True,
        ),
    )


def _lines(data: bytes) -> pa.Array:
    """The lines of ``data`` as UTF-8 strings (lines may end in ``\\n``, ``\\r``, ``\\r\\n``)."""
    if not data.strip():
        return pa.array([], pa.string())
    return plain_fields(data, ["line"], "\x1f").column("line").combine_chunks()


#: whitespace other than the space and the line feed (splits fields in the general parse)
_OTHER_WHITESPACE = (b"\t", b"\x0b", b"\x0c", b"\r", b"\x1c", b"\x1d", b"\x1e", b"\x1f")


def _single_spaced_fields(
    data: bytes, kind: str
) -> tuple[pa.ChunkedArray, pa.ChunkedArray, pa.ChunkedArray, pa.ChunkedArray] | None:
    """``(query ids, doc ids, value texts, fourth fields)`` when ``data`` is the common
    case: every line empty or exactly the kind's fields (6 for a run, 4 for qrels) with
    one space between them and none around, no comment; None otherwise.

    Such text gives the same fields as the general parse (trimming changes nothing,
    splitting on runs of whitespace is splitting on one space) from one pass of Arrow's
    CSV reader, about three times faster.  Split on single spaces, two spaces in a row
    or a space at either end of a line make an empty field (or another field count),
    which sends the text to the general parse.
    """
    if not data.strip() or any(byte in data for byte in _OTHER_WHITESPACE):
        return None
    count, value_field = _FIELDS[kind]
    names = [f"f{i}" for i in range(count)]
    # a few large blocks: the rows are later taken in bucket order, which is slower
    # over many chunks (and concatenating them would copy every string)
    threaded = len(data) > _THREADED_BYTES
    block_size = max(1 << 20, len(data) // 4 + 1 if threaded else len(data) + 1)
    try:
        table = plain_fields(data, names, " ", block_size=block_size)
    except pa.ArrowInvalid:  # another field count (extra run fields), or invalid UTF-8
        return None
    if not table.num_rows:
        return None
    for column in table.columns:
        if pc.min(pc.binary_length(column)).as_py() == 0:
            return None  # two spaces in a row, or a space at the start or end of a line
    if pc.any(pc.starts_with(table.column(0), "#")).as_py():
        return None  # a comment line
    return table.column(0), table.column(2), table.column(value_field), table.column(3)


def whitespace_fields(data: bytes, needed: int, where: str) -> pa.ListArray:
    """The fields of the data lines of ``data`` as Spark's text readers split them:
    each line trimmed of whitespace, empty lines and ``#`` comment lines skipped, the
    rest split on runs of whitespace; every line has at least ``needed`` fields.

    Raises:
        NotDirect: a byte-order mark, invalid UTF-8, or a line with fewer fields.
    """
    if data.startswith(_BOM):
        raise NotDirect(f"{where}: a byte-order mark")
    try:
        lines = _lines(data)
    except pa.ArrowInvalid as exc:  # invalid UTF-8, or a \x1f byte
        raise NotDirect(f"{where}: {str(exc).splitlines()[0]}") from None
    body = pc.utf8_trim(lines, characters=_WHITESPACE)
    keep = pc.and_(pc.not_equal(body, ""), pc.invert(pc.starts_with(body, "#")))
    fields = pc.ascii_split_whitespace(body.filter(keep))
    if len(fields) and pc.min(pc.list_value_length(fields)).as_py() < needed:
        raise NotDirect(f"{where}: a line with fewer than {needed} fields")
    return fields


def parse_text(data: bytes, kind: str, where: str) -> tuple[pa.Array, pa.Array, pa.Array]:
    """``(query ids, doc ids, values)`` of the data lines of ``data``, in line order.

    Raises:
        NotDirect: a line or value for Spark's readers to judge.
    """
    query, doc, values, _ = parse_text_ranks(data, kind, where, ranks=False)
    return query, doc, values


def parse_text_ranks(
    data: bytes, kind: str, where: str, ranks: bool = True
) -> tuple[pa.Array, pa.Array, pa.Array, pa.Array | None]:
    """:func:`parse_text`'s fields and, with ``ranks``, a run's rank fields (the
    fourth) as float64 (else None).

    Raises:
        NotDirect: a line or value (a rank too) for Spark's readers to judge.
    """
    if data.startswith(_BOM):
        raise NotDirect(f"{where}: a byte-order mark")
    single_spaced = _single_spaced_fields(data, kind)
    if single_spaced is not None:
        query, doc, text, fourth = single_spaced
        rank_values = parse_values(fourth, "run", where) if ranks else None
        return query, doc, parse_values(text, kind, where), rank_values
    needed, value_field = _FIELDS[kind]
    fields = whitespace_fields(data, needed, where)
    many = len(fields) and pc.max(pc.list_value_length(fields)).as_py() > needed
    if kind == "qrels" and many:  # a qrels line has exactly 4
        raise NotDirect(f"{where}: a qrels line with more than {needed} fields")
    values = parse_values(pc.list_element(fields, value_field), kind, where)
    rank_values = parse_values(pc.list_element(fields, 3), "run", where) if ranks else None
    return pc.list_element(fields, 0), pc.list_element(fields, 2), values, rank_values


def parse_values(text: pa.Array, kind: str, where: str) -> pa.Array:
    """The scores (float64) of a run or the grades (int64) of qrels written as ``text``.

    Raises:
        NotDirect: a value that is not a plain decimal number, that is out of range, or a
            grade that is not a whole number within ±1e9 (for Spark's readers to judge).
    """
    if not pc.all(pc.match_substring_regex(text, _NUMBER)).as_py() and len(text):
        raise NotDirect(f"{where}: a value that is not a plain decimal number")
    try:
        values = pc.cast(text, pa.float64())
    except pa.ArrowInvalid:
        raise NotDirect(f"{where}: a number out of range") from None
    if len(values) and not pc.all(pc.is_finite(values)).as_py():
        raise NotDirect(f"{where}: a number out of range")  # Spark's readers decide
    if kind == "qrels" and len(values):
        whole = pc.all(pc.equal(values, pc.floor(values))).as_py()
        low, high = pc.min_max(values).values()
        if not whole or max(-low.as_py(), high.as_py()) > GRADE_BOUND:
            raise NotDirect(f"{where}: a grade that is not a whole number within ±1e9")
        values = pc.cast(values, pa.int64())
    return values


def text_unit_table(
    data: bytes,
    kind: str,
    where: str,
    run_code: int | None,
    schema: pa.Schema,
    ties: str = "doc-id",
    unit: int = 0,
) -> pa.Table:
    """One read task's rows in the engine's shipped form (see ``direct.read_unit``); a
    run's rows under ``ties`` ``rank`` or ``input-order`` with a ``_tie`` column: the
    rank fields, or the lines' places (read unit ``unit``, :mod:`sparkeval.io.tie_keys`)."""
    query, doc, values, ranks = parse_text_ranks(data, kind, where, ranks=ties == "rank")
    if kind == "qrels":
        return pa.table({"query_id": query, "doc_id": doc, "relevance": values}, schema=schema)
    codes = pa.array(np.full(len(query), run_code, np.int32))
    table = pa.table(
        {RUN_CODE: codes, "query_id": query, "doc_id": doc, "score": values}, schema=schema
    )
    return with_tie_keys(table, ties, ranks, unit)


def with_tie_keys(table: pa.Table, ties: str, ranks: pa.Array | None, unit: int) -> pa.Table:
    """``table`` (a read unit's run rows, in input order) with its ``_tie`` column under
    ``ties`` ``rank`` (``ranks``) or ``input-order`` (the rows' places); as it is under
    ``doc-id``."""
    if ties == "input-order":
        return table.append_column(TIE_KEY, input_order_keys(table.num_rows, unit))
    if ties == "rank":
        assert ranks is not None
        return table.append_column(TIE_KEY, pa.chunked_array([ranks], pa.float64()))
    return table
