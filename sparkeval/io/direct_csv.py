"""CSV and TSV runs and qrels that the Python workers read themselves (the direct path).

Spark's CSV reader (:func:`sparkeval.io.readers.read_table`: a header row, every field
text, malformed rows refused) is matched on the files where its reading is plain, and
every other file is left to it:

* one local file, plain or gzip, whose first line is a header of distinct,
  non-empty column names (no surrounding spaces; a name may be quoted whole, as
  pyarrow writes headers) that resolve to the run or qrels columns, and which has a
  second line;
* in the bytes a read task takes: no double quote (quoting), backslash (escaping),
  carriage return, NUL, byte-order mark or U+FFFD (which Spark's decoding makes of
  invalid bytes and the id checks refuse), and valid UTF-8;
* every line that is not empty has exactly the header's number of fields (Spark skips
  empty lines; a line of spaces or a short one is for Spark to judge);
* the id and run id fields are not empty (Spark reads an empty field as null) and have
  no surrounding whitespace; the value is a plain decimal number, and a grade a whole
  number within ±1e9 (:func:`sparkeval.io.direct_text.parse_values`).

Fields are then the same text both readers see: the bytes between two separators.
A file that breaks a rule stops the direct pass (:class:`~sparkeval.io.direct_input.NotDirect`)
and the evaluation is read by Spark instead, so a bad row gets Spark's error, with its
line number.  Plain files are read in byte ranges that end at line ends, the first
range without its header line; a gzip file is one range.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.errors import InputError
from sparkeval.formats import RUN_CODE
from sparkeval.io.columns import resolve_columns
from sparkeval.io.direct_input import DirectInput, NotDirect, local_single_file, run_codes
from sparkeval.io.direct_text import (
    GZIP_EXPANSION,
    byte_ranges,
    is_gzip,
    open_bytes,
    parse_values,
    plain_fields,
    read_text_range,
    with_tie_keys,
)
from sparkeval.io.tie_keys import tie_rank_name
from sparkeval.storage.files import file_size
from sparkeval.storage.stores import store_of

#: bytes that make a file's reading depend on Spark's CSV options, and what each is
_NOT_PLAIN = (
    (b'"', "a double quote"),
    (b"\\", "a backslash"),
    (b"\r", "a carriage return"),
    (b"\x00", "a NUL byte"),
    (b"\xef\xbb\xbf", "a byte-order mark"),
    ("\N{REPLACEMENT CHARACTER}".encode(), "a replacement character (U+FFFD)"),
)
#: the separator of each delimited format
SEPARATORS = {"csv": ",", "tsv": "\t"}


def plain_text_problem(data: bytes) -> str | None:
    """What in ``data`` only Spark's CSV reader may judge, if anything.

    Example:
        >>> plain_text_problem(b'q1,d1,1.5\\n')
        >>> plain_text_problem(b'q1,"d,1",1.5\\n')
        'a double quote'
    """
    return next((why for byte, why in _NOT_PLAIN if byte in data), None)


def _unquoted(field: str) -> str | None:
    """A header field's name: the field, or the text inside its quotes when the whole
    field is quoted (as pyarrow and others write headers); None when quoting is more
    than that.

    Example:
        >>> _unquoted('"query_id"'), _unquoted("query_id"), _unquoted('"a""b"')
        ('query_id', 'query_id', None)
    """
    if len(field) >= 2 and field[0] == field[-1] == '"':
        field = field[1:-1]
    return None if '"' in field else field


def read_header(path: str, sep: str) -> list[str] | None:
    """The column names of ``path``'s first line when it is a plain header (names may be
    quoted whole) followed by at least one more line; None otherwise (Spark's reader
    judges such a file)."""
    try:
        with open_bytes(path) as handle:
            head = handle.read(1 << 20)
    except (OSError, EOFError):
        return None
    first, newline, rest = head.partition(b"\n")
    if not newline or not rest.strip(b"\n"):
        return None
    try:
        found = [_unquoted(field) for field in first.decode("utf-8").split(sep)]
    except UnicodeDecodeError:
        return None
    names = [name for name in found if name is not None and not plain_text_problem(name.encode())]
    if len(names) != len(found):
        return None
    folded = [name.lower() for name in names]
    if any(not n or n != n.strip() for n in names) or len(set(folded)) != len(names):
        return None  # Spark renames empty and duplicate names (_c0, name0, ...)
    return names


def plan_direct_csv(
    path: str, kind: str, fmt: str, mapping: Mapping[str, str], run_id: str | None
) -> DirectInput | None:
    """The direct plan of a CSV or TSV run or qrels file, or None when Spark should read it.

    Args:
        path: the input path as given.
        kind: ``run`` or ``qrels``.
        fmt: ``csv`` or ``tsv``.
        mapping: the user's ``canonical=source`` column mapping.
        run_id: the run id of a run file without a run id column (its name).
    """
    local = local_single_file(path)
    if local is None or not (is_gzip(local) or Path(local).suffix.lower() in (".csv", ".tsv")):
        return None
    header = read_header(local, SEPARATORS[fmt])
    if header is None:
        return None
    try:
        cols = resolve_columns(header, kind, mapping, path)
    except InputError:
        return None  # other shapes (rank-only, recommendation lists) or a real error: Spark
    if "run_id" in cols:
        run_id = None
    elif kind == "run" and run_id is None:
        return None
    ranges = byte_ranges(local)
    size = file_size(local) * (GZIP_EXPANSION if is_gzip(local) else 1)
    return DirectInput(
        kind=kind,
        path=path,
        units=tuple((local, i) for i in range(len(ranges))),
        columns=tuple(cols.items()),
        run_id=run_id,
        size=size,
        rows=0,
        fmt=fmt,
        ranges=tuple(ranges),
        header=tuple(header),
        store=store_of(local),
    )


def read_fields(
    data: bytes, header: Sequence[str], sep: str, wanted: Sequence[str], where: str
) -> dict[str, pa.Array]:
    """The ``wanted`` columns of the header-less rows in ``data``, as text.

    Raises:
        NotDirect: the bytes, a row's field count or a field need Spark's reader.
    """
    problem = plain_text_problem(data)
    if problem:
        raise NotDirect(f"{where}: {problem}")
    if not data:
        return {name: pa.array([], pa.string()) for name in wanted}
    try:
        table = plain_fields(data, list(header), sep, list(wanted))  # empty lines: skipped,
    except pa.ArrowInvalid as exc:  # as Spark does; another field count, invalid UTF-8
        raise NotDirect(f"{where}: {str(exc).splitlines()[0]}") from None
    return {name: table.column(name).combine_chunks() for name in wanted}


def _unit_text(source: DirectInput, unit: int) -> bytes:
    """The data lines of read task ``unit`` (the first one's header line left out)."""
    file, _ = source.units[unit]
    start, end = source.ranges[unit]
    data = read_text_range(file, start, end, source.path)
    return data.partition(b"\n")[2] if start == 0 else data


def plain_ids(values: pa.Array, column: str, where: str) -> pa.Array:
    """``values`` when no id is empty (null to Spark) or padded with whitespace."""
    if len(values) and not pc.all(pc.equal(pc.utf8_trim_whitespace(values), values)).as_py():
        raise NotDirect(f"{where}: column {column} has a value with surrounding whitespace")
    if len(values) and pc.any(pc.equal(values, "")).as_py():
        raise NotDirect(f"{where}: column {column} has an empty value")
    return values


def csv_unit_table(
    source: DirectInput,
    unit: int,
    run_ids: Sequence[str],
    schema: pa.Schema,
    ties: str = "doc-id",
) -> pa.Table:
    """Byte range ``unit`` of a CSV or TSV input in the engine's shipped form (a run's
    rows with their ``_tie`` column under ``ties`` ``rank`` or ``input-order``:
    :func:`~sparkeval.io.direct_text.with_tie_keys`).

    Raises:
        ConfigError: ``ties="rank"`` and the run has no rank column.
    """
    cols = dict(source.columns)
    rank = None
    if ties == "rank" and source.kind == "run":
        rank = tie_rank_name(source.header, source.path)
    wanted = set(cols.values()) | ({rank} if rank else set())
    fields = read_fields(
        _unit_text(source, unit),
        source.header,
        SEPARATORS[source.fmt],
        sorted(wanted),
        source.path,
    )
    query = plain_ids(fields[cols["query_id"]], cols["query_id"], source.path)
    doc = plain_ids(fields[cols["doc_id"]], cols["doc_id"], source.path)
    value = "score" if source.kind == "run" else "relevance"
    values = parse_values(fields[cols[value]], source.kind, source.path)
    if source.kind == "qrels":
        return pa.table({"query_id": query, "doc_id": doc, "relevance": values}, schema=schema)
    names = fields[cols["run_id"]] if "run_id" in cols else None
    codes = run_codes(source, names, len(query), run_ids)
    table = pa.table(
        {RUN_CODE: codes, "query_id": query, "doc_id": doc, "score": values}, schema=schema
    )
    ranks = parse_values(fields[rank], "run", source.path) if rank else None
    return with_tie_keys(table, ties, ranks, unit)


def run_ids_in(source: DirectInput) -> list[str] | None:
    """The distinct run ids of a CSV run with a run id column (empty fields left out);
    None when the file is not plain (Spark's reader then reads it)."""
    column = dict(source.columns)["run_id"]
    read = source
    if is_gzip(source.units[0][0]):  # read a gzip file whole once, not once per part
        read = replace(source, units=source.units[:1], ranges=((0, 1),))
    found: set[str] = set()
    for unit in range(len(read.units)):
        data = _unit_text(read, unit)
        try:
            fields = read_fields(data, source.header, SEPARATORS[source.fmt], [column], source.path)
        except NotDirect:
            return None
        found.update(pc.unique(fields[column]).to_pylist())
    found.discard("")
    return sorted(found)
