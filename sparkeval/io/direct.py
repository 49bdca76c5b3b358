"""Parquet and TREC text inputs that the Python workers read themselves (the *direct*
read path).

Spark hands rows to a Python UDF by converting them, row by row, into Arrow
batches; for a 10M-row run that conversion costs several seconds.  When an input
is plain Parquet on a filesystem the workers can open, there is no need for it:
each task reads one Parquet row group with pyarrow, already columnar, and only
Arrow IPC payloads travel through Spark (see :mod:`sparkeval.engine.transport.arrow_exchange`).

An input qualifies when, judged from the Parquet footers alone:

* it is a local path (or ``file://``): one ``.parquet`` file, or a directory of
  Parquet files with no subdirectories (no ``key=value`` partition columns) and no
  glob characters;
* its query and doc id columns are strings or integers (an integer id is its
  decimal text, as Spark's cast to string writes it: ``-7``, ``18446744073709551615``),
  its run id column is a string column, and its value column is a plain integer or
  floating point column (grades: integers), the same in every file.

TREC text runs and qrels (plain or gzip, on a local path) qualify too; their reading
is :mod:`sparkeval.io.direct_text`.  So do CSV and TSV files whose reading is plain
(no quoting or escaping; :mod:`sparkeval.io.direct_csv`).

Anything else is read by Spark as before.  The values are checked in the task that
reads them; a value the checks of the Spark readers would reject (a null, a grade
that is not an integer within ±1e9, an id that is not valid UTF-8) stops the direct
pass with :class:`~sparkeval.io.direct_input.NotDirect`, and the job is evaluated
again through the Spark readers, so that a bad input gets exactly the same error
message whichever path read it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.errors import ConfigError, InputError
from sparkeval.formats import RUN_CODE, TIE_KEY
from sparkeval.io.columns import resolve_columns
from sparkeval.io.direct_input import (
    GLOB_CHARS,
    QRELS_SCHEMA,
    RUN_SCHEMA,
    DirectInput,
    NotDirect,
    local_single_file,
    run_codes,
)
from sparkeval.io.readers import (
    GRADE_BOUND,
    detect_format,
)
from sparkeval.io.tie_keys import input_order_keys, tie_rank_name
from sparkeval.io.utf8_check import first_invalid_utf8
from sparkeval.storage import files as storage_files
from sparkeval.storage.files import parquet_source
from sparkeval.storage.stores import store_of, use_store
from sparkeval.storage.uris import is_remote

_RUN_VALUE_TYPES = (pa.types.is_integer, pa.types.is_floating)
_QRELS_VALUE_TYPES = (pa.types.is_integer,)


def parquet_files(path: str) -> list[str] | None:
    """The Parquet files ``path`` names (a file, or a directory of files without
    partition directories, hidden and ``_`` files left out; local paths absolute), or
    None when Spark's readers should read it."""
    if is_remote(path):
        return _remote_parquet_files(path)
    local = path[len("file://") :] if path.startswith("file://") else path
    if "://" in local or GLOB_CHARS & set(local):
        return None
    target = Path(local).absolute()  # the workers may run in another directory
    if target.is_file():
        return [str(target)]
    if not target.is_dir():
        return None
    files = []
    for entry in sorted(target.iterdir()):
        if entry.name.startswith((".", "_")):
            continue
        if not entry.is_file():
            return None  # partitioned layout: Spark adds columns from the directory names
        files.append(str(entry))
    return files or None


def _remote_parquet_files(path: str) -> list[str] | None:
    """The Parquet files of a remote input: the object itself, or the files of a
    prefix that has no deeper prefixes (no partition directories); None when sparkeval
    has no filesystem for the store (Spark's readers may have one)."""
    try:
        found = storage_files.kind(path)
    except ConfigError:
        return None
    if found == "file":
        return [path]
    if found != "directory":
        return None
    entries = storage_files.list_entries(path)
    names = []
    for entry, is_file in entries:
        if entry.rstrip("/").rsplit("/", 1)[-1].startswith((".", "_")):
            continue
        if not is_file:
            return None  # partitioned layout: Spark adds columns from the directory names
        names.append(entry)
    return names or None


def plan_direct(
    path: str,
    kind: str,
    mapping: Mapping[str, str],
    run_id: str | None = None,
    where: tuple | None = None,
) -> DirectInput | None:
    """The direct plan of a Parquet input, or None when Spark should read it.

    Args:
        path: the input path (already known to exist and to be Parquet).
        kind: ``run`` or ``qrels``.
        mapping: the user's ``canonical=source`` column mapping.
        run_id: the run id for a run file without a run id column.
        where: the rows to keep (:attr:`DirectInput.where`); None keeps all.
    """
    files = parquet_files(path)
    if not files:
        return None
    return plan_direct_files(files, path, kind, mapping, run_id, where=where)


def plan_direct_files(
    files: Sequence[str],
    path: str,
    kind: str,
    mapping: Mapping[str, str],
    run_id: str | None,
    mapped_only: bool = False,
    where: tuple | None = None,
    score: tuple | None = None,
) -> DirectInput | None:
    """The direct plan of the local Parquet ``files`` of an input named ``path`` (in
    messages), or None when Spark should read them; the arguments as :func:`plan_direct`'s.
    With ``mapped_only`` the columns are exactly ``mapping``'s (no column is found by
    its name, as a DataFrame's columns are not); ``where`` keeps the rows of a filtered
    DataFrame (:attr:`DirectInput.where`), ``score`` computes a run's score
    (:attr:`DirectInput.score`; with ``mapped_only`` only).
    """
    import pyarrow.parquet as pq

    try:
        metas = [pq.ParquetFile(parquet_source(f)).metadata for f in files]
    except (OSError, pa.ArrowException):
        return None  # the Spark reader reports unreadable files
    schema = metas[0].schema.to_arrow_schema()
    if any(not m.schema.to_arrow_schema().equals(schema) for m in metas[1:]):
        return None  # (metadata, such as pandas' index description, may differ)
    if score is not None:
        from sparkeval.io.scan_values import fits_value_schema, value_columns

        if not mapped_only or kind != "run" or "score" in mapping:
            return None
        if not value_columns(score) or not fits_value_schema(score, schema):
            return None  # a constant score (nothing to read), or other column types
    if mapped_only:
        if not set(mapping.values()) <= set(schema.names):
            return None
        cols = dict(mapping)
    else:
        try:
            cols = resolve_columns(schema.names, kind, mapping, path)
        except InputError:
            return None  # other shapes (rank-only, lists of structs) or a real error: Spark's
    value = "score" if kind == "run" else "relevance"
    allowed = _RUN_VALUE_TYPES if kind == "run" else _QRELS_VALUE_TYPES
    if not all(is_id_type(schema.field(cols[c]).type) for c in ("query_id", "doc_id")):
        return None
    if "run_id" in cols and not _is_text(schema.field(cols["run_id"]).type):
        return None
    if score is None and not any(test(schema.field(cols[value]).type) for test in allowed):
        return None
    if kind == "run" and "run_id" not in cols and run_id is None:
        return None
    if where is not None:
        from sparkeval.io.scan_filter import fits_schema

        if not fits_schema(where, schema):
            return None
    rows = sum(meta.num_rows for meta in metas)
    if not rows:
        return None  # the Spark readers report an empty input
    wanted = set(cols.values())
    if score is not None:
        wanted |= set(value_columns(score))
    units, size = [], 0
    for file, meta in zip(files, metas, strict=True):
        for group in range(meta.num_row_groups):
            row_group = meta.row_group(group)
            units.append((file, group))
            for i in range(row_group.num_columns):
                column = row_group.column(i)
                if column.path_in_schema in wanted:
                    size += column.total_uncompressed_size
    return DirectInput(
        kind=kind,
        path=path,
        units=tuple(units),
        columns=tuple(cols.items()),
        run_id=None if "run_id" in cols else run_id,
        size=size,
        rows=rows,
        where=where,
        score=score,
        store=store_of(files[0]),
    )


def plan_direct_text(path: str, kind: str) -> DirectInput | None:
    """The direct plan of a TREC text run or qrels file, or None when Spark should read it
    (not a local file, compressed other than gzip, or no readable first data line)."""
    from sparkeval.io import direct_text

    local = local_single_file(path)
    if local is None:
        return None
    fields = direct_text.first_data_fields(local)
    needed, _ = direct_text._FIELDS[kind]
    if fields is None or len(fields) < needed:
        return None
    ranges = direct_text.byte_ranges(local)
    size = storage_files.file_size(local)
    if direct_text.is_gzip(local):
        size *= direct_text.GZIP_EXPANSION
    return DirectInput(
        kind=kind,
        path=path,
        units=tuple((local, i) for i in range(len(ranges))),
        columns=(),
        run_id=fields[5] if kind == "run" else None,
        size=size,
        rows=0,
        fmt="trec",
        ranges=tuple(ranges),
        store=store_of(local),
    )


def _is_text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def is_id_type(kind: pa.DataType) -> bool:
    """A query or doc id column the workers read: text, or integers (as decimal text)."""
    return _is_text(kind) or pa.types.is_integer(kind)


def read_unit(
    source: DirectInput, unit: int, run_ids: Sequence[str], ties: str = "doc-id"
) -> pa.Table:
    """Row group ``unit`` of ``source`` in the engine's shipped form.

    Returns:
        For a run: ``_run`` (int32 index into ``run_ids``), ``query_id``, ``doc_id``,
        ``score`` (float64), and under ``ties`` ``rank`` or ``input-order`` ``_tie``
        (float64: the run's rank column, a TREC run's rank field; or the row's place
        in the input, :mod:`sparkeval.io.tie_keys`).  For qrels: ``query_id``,
        ``doc_id``, ``relevance`` (int64).

    Raises:
        NotDirect: a null id or value, an unknown run id, a grade out of bounds, or a
            rank that is not a finite number.
        ConfigError: ``ties="rank"`` and the run has no rank column.
    """
    import pyarrow.parquet as pq

    use_store(source.store)
    if source.kind != "run":
        ties = "doc-id"
    if source.fmt == "trec":
        return _read_text_unit(source, unit, run_ids, ties)
    if source.fmt in ("csv", "tsv"):
        from sparkeval.io.direct_csv import csv_unit_table

        schema = RUN_SCHEMA if source.kind == "run" else QRELS_SCHEMA
        return csv_unit_table(source, unit, run_ids, schema, ties)
    file, group = source.units[unit]
    cols = dict(source.columns)
    computing: set[str] = set()  # the columns of the filter and of a computed score
    if source.where is not None:
        from sparkeval.io.scan_filter import spec_columns

        computing |= set(spec_columns(source.where))
    if source.score is not None:
        from sparkeval.io.scan_values import value_columns

        computing |= set(value_columns(source.score))
    read = set(cols.values()) | computing
    others = computing | {name for key, name in cols.items() if key != "query_id"}
    opened = parquet_source(file)  # one handle of a remote file for the footer and the rows
    metadata = pq.read_metadata(opened)
    rank = None
    if ties == "rank":
        rank = tie_rank_name(metadata.schema.to_arrow_schema().names, source.path)
        read.add(rank)
        others.add(rank)
    encoded = _encoded_query_column(cols["query_id"], others, metadata.schema.to_arrow_schema())
    parquet = pq.ParquetFile(opened, metadata=metadata, read_dictionary=encoded)
    raw = parquet.read_row_group(group, columns=sorted(read))
    if ties == "input-order":  # the places of the rows read, before a filter keeps some
        if TIE_KEY in raw.column_names:
            raise NotDirect(f"{source.path}: a column named {TIE_KEY}")
        raw = raw.append_column(TIE_KEY, input_order_keys(raw.num_rows, unit))
    if source.where is not None:
        raw = _kept_rows(raw, source)
    out: dict[str, pa.ChunkedArray] = {}
    for canonical in ("query_id", "doc_id"):
        out[canonical] = _text(raw, cols[canonical])
    if source.kind == "qrels":
        grades = raw.column(cols["relevance"])
        _no_nulls(grades, cols["relevance"])
        low, high = pc.min_max(grades).values()
        if len(grades) and max(-low.as_py(), high.as_py()) > GRADE_BOUND:
            raise NotDirect(f"{source.path}: a grade beyond ±{GRADE_BOUND}")
        out["relevance"] = grades.cast(pa.int64())
        return pa.table(out, schema=_with_query_type(QRELS_SCHEMA, out["query_id"]))
    scores = _scores(raw, source)
    _no_nulls(scores, cols.get("score", "score"))
    names = _text(raw, cols["run_id"]) if "run_id" in cols else None
    codes = run_codes(source, names, raw.num_rows, run_ids)
    table = pa.table(
        {
            RUN_CODE: codes,
            "query_id": out["query_id"],
            "doc_id": out["doc_id"],
            "score": scores.cast(pa.float64(), safe=False),
        },
        schema=_with_query_type(RUN_SCHEMA, out["query_id"]),
    )
    if ties == "input-order":
        return table.append_column(TIE_KEY, raw.column(TIE_KEY))
    if rank is not None:
        return table.append_column(TIE_KEY, _ranks(raw.column(rank), source.path, rank))
    return table


def _ranks(values: pa.ChunkedArray, path: str, column: str) -> pa.ChunkedArray:
    """A Parquet run's rank column as float64 tie keys.

    Raises:
        NotDirect: a null, a column that is not numbers, or a rank that is not finite
            (Spark's readers name the row).
    """
    _no_nulls(values, column)
    if not any(test(values.type) for test in _RUN_VALUE_TYPES):
        raise NotDirect(f"{path}: rank column {column} has type {values.type}")
    ranks = values.cast(pa.float64(), safe=False)
    if len(ranks) and not pc.all(pc.is_finite(ranks)).as_py():
        raise NotDirect(f"{path}: rank column {column} holds a value that is not finite")
    return ranks


def _encoded_query_column(column: str, others: set[str], schema: pa.Schema) -> list[str] | None:
    """The file column of the query ids, to be read dictionary-encoded, when it holds
    text that nothing else reads (``others``: the doc or run ids, a filter, a computed
    score); else None.

    A row group holds few distinct queries: decoding them once per row group instead
    of once per row, and bucketing by the dictionary, takes 0.86 CPU s instead of
    1.46 per 10M run rows (100k queries x 100 docs), bucket slicing included.
    """
    if column in others:
        return None
    index = schema.get_field_index(column)
    return [column] if index >= 0 and _is_text(schema.field(index).type) else None


def _with_query_type(schema: pa.Schema, query_ids: pa.ChunkedArray) -> pa.Schema:
    """``schema`` with the query ids' type (dictionary-encoded, or plain text)."""
    index = schema.get_field_index("query_id")
    return schema.set(index, schema.field(index).with_type(query_ids.type))


def _scores(raw: pa.Table, source: DirectInput) -> pa.ChunkedArray:
    """The run's scores: its score column, or the value computed from file columns."""
    if source.score is None:
        return raw.column(dict(source.columns)["score"])
    from sparkeval.io.scan_values import compute_value

    return compute_value(source.score, raw)


def _kept_rows(raw: pa.Table, source: DirectInput) -> pa.Table:
    """The rows of ``raw`` that the input's filter keeps.

    Raises:
        NotDirect: a floating point column of the filter holds a NaN.
    """
    from sparkeval.io.scan_filter import nan_columns, row_mask

    assert source.where is not None
    with_nan = nan_columns(source.where, raw)
    if with_nan:
        raise NotDirect(f"{source.path}: NaN in column {with_nan[0]} of a filter")
    kept = row_mask(source.where, raw)
    if not kept.null_count and pc.all(kept).as_py():
        return raw  # every row kept: nothing to copy
    return raw.filter(kept)


def _read_text_unit(
    source: DirectInput, unit: int, run_ids: Sequence[str], ties: str = "doc-id"
) -> pa.Table:
    """Byte range ``unit`` of a TREC text input in the shipped form."""
    from sparkeval.io import direct_text

    file, _ = source.units[unit]
    start, end = source.ranges[unit]
    data = direct_text.read_text_range(file, start, end, source.path)
    code = list(run_ids).index(str(source.run_id)) if source.kind == "run" else None
    schema = RUN_SCHEMA if source.kind == "run" else QRELS_SCHEMA
    return direct_text.text_unit_table(data, source.kind, source.path, code, schema, ties, unit)


def _text(table: pa.Table, column: str) -> pa.ChunkedArray:
    """Column ``column`` as ``string`` ids; a dictionary-encoded column of one chunk stays
    encoded, its dictionary made ``string`` (the values are checked there, once each)."""
    values = table.column(column)
    _no_nulls(values, column)
    if pa.types.is_dictionary(values.type):
        if values.num_chunks == 1:
            chunk = values.chunk(0)
            dictionary = _checked_text(chunk.dictionary, column)
            return pa.chunked_array([pa.DictionaryArray.from_arrays(chunk.indices, dictionary)])
        values = values.cast(values.type.value_type)
    return _checked_text(values, column)


def _checked_text(values, column: str):
    if first_invalid_utf8(values) is not None:  # the Spark readers report it by file
        raise NotDirect(f"column {column} holds text that is not valid UTF-8")
    return values.cast(pa.string())


def _no_nulls(values: pa.ChunkedArray, column: str) -> None:
    if values.null_count:
        raise NotDirect(f"column {column} has nulls")


#: the input formats the workers can read themselves
DIRECT_FORMATS = ("parquet", "trec", "csv", "tsv")


def all_direct_formats(
    runs: Sequence[str], qrels: str, run_format: str | None, qrels_format: str | None
) -> bool:
    """Whether every input is Parquet, TREC text, CSV or TSV (by its format or name; no
    file is read)."""
    formats = {detect_format(path, run_format) for path in runs}
    formats.add(detect_format(qrels, qrels_format))
    return formats <= set(DIRECT_FORMATS)


def parquet_run_ids(source: DirectInput) -> list[str] | None:
    """The distinct run ids of a Parquet run input's run id column, sorted, nulls left
    out, read from its files in this process (no Spark job); None when its rows are
    filtered, a value is not valid UTF-8 (Spark's readers report it) or a file cannot
    be read here.

    The same ids as Spark's ``distinct`` over the column, which this replaces: a
    Spark job (two under adaptive execution) before the evaluation, and one that
    kept the command line from reading a run file holding a run id column while its
    JVM starts.  Each file's column is read dictionary-encoded, so each distinct
    value is decoded once per row group.
    """
    import pyarrow.parquet as pq

    if source.fmt != "parquet" or source.where is not None or source.kind != "run":
        return None
    column = dict(source.columns).get("run_id")
    if column is None:
        return None
    found: set[str] = set()
    try:
        for file in source.files:
            parquet = pq.ParquetFile(parquet_source(file), read_dictionary=[column])
            for chunk in parquet.read(columns=[column]).column(0).chunks:
                if pa.types.is_dictionary(chunk.type):
                    chunk = chunk.dictionary.take(pc.unique(chunk.indices).drop_null())
                values = pc.unique(chunk.drop_null())
                if first_invalid_utf8(values) is not None:
                    return None
                found.update(values.to_pylist())
    except (OSError, pa.ArrowException, KeyError):
        return None
    return sorted(found)
