"""``--dry-run``: check everything a command would need, read no data rows, start no JVM.

The config (keys, types, measures, options) is checked when it is loaded and the
output target by the command's preflight, as for a real run; then each input is
opened by this process to read its schema only:

* Parquet: the footer of each file (pyarrow), checked to agree within a directory;
* CSV/TSV: the header line; JSON Lines: the first object;
* TREC text: the first non-comment line's field count (6 for a run, 4 for qrels).

Column names are then resolved as the real read resolves them (the same aliases and
``--run-columns`` maps), and id columns must be text or integers. Nothing is
written, and the output's writer lock is only probed.
"""

from __future__ import annotations

import csv
import gzip
import json
import lzma
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from sparkeval.errors import InputError
from sparkeval.io.readers import check_exists, detect_format
from sparkeval.io.streams import open_decompressed


@dataclass(frozen=True)
class InputSchema:
    """What a dry run learnt about one input without reading its rows."""

    path: str
    fmt: str
    columns: tuple[str, ...]
    #: column → Arrow type name, where the format has types (Parquet)
    types: dict[str, str]
    #: fields of the first line of a TREC text file
    trec_fields: int | None = None
    #: column → kind of its value on the first line of a JSON Lines file (``array``,
    #: ``object``, ``string``, ``number``, ``boolean``, ``null``)
    json_kinds: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        if self.fmt == "trec":
            return f"{self.path}: TREC text, {self.trec_fields} fields on the first line"
        return f"{self.path}: {self.fmt}, columns {', '.join(self.columns)}"


def _data_files(path: Path) -> list[Path]:
    if path.is_dir():
        files = sorted(
            p for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))
        )
        if not files:
            raise InputError(f"{path}: an empty directory (no data files)")
        return files
    return [path]


def input_schema(path: str, fmt: str | None = None) -> InputSchema:
    """The format and columns of one input, from its metadata or first line.

    Raises:
        InputError: a missing or unreadable input, a file that is not what its name
            says, Parquet files of one directory that disagree, an empty file.
    """
    check_exists(path)
    fmt = detect_format(path, fmt)
    local = Path(path.removeprefix("file://"))
    if "://" in path and not path.startswith("file://"):
        return InputSchema(path, fmt, (), {}, None)  # remote: checked by the real read
    try:
        if fmt == "parquet":
            return _parquet_schema(path, local)
        with open_decompressed(_data_files(local)[0], text=True) as handle:
            if fmt in ("csv", "tsv"):
                header = next(csv.reader(handle, delimiter="\t" if fmt == "tsv" else ","), None)
                if not header:
                    raise InputError(f"{path}: empty (no header line)")
                return InputSchema(path, fmt, tuple(header), {})
            for line in handle:
                if line.strip() and not (fmt == "trec" and line.lstrip().startswith("#")):
                    break
            else:
                raise InputError(f"{path}: empty (no data lines)")
            if fmt == "trec":
                return InputSchema(path, fmt, (), {}, len(line.split()))
            try:
                first = json.loads(line)
            except ValueError:
                first = None
            if not isinstance(first, dict):
                raise InputError(f"{path}:1: expected one JSON object per line")
            kinds = {name: _json_kind(value) for name, value in first.items()}
            return InputSchema(path, fmt, tuple(first), {}, json_kinds=kinds)
    except UnicodeDecodeError:
        raise InputError(f"{path}: not valid UTF-8 text") from None
    except (OSError, EOFError, lzma.LZMAError, gzip.BadGzipFile) as exc:
        raise InputError(f"{path}: cannot be read ({exc})") from None


def _parquet_schema(path: str, local: Path) -> InputSchema:
    schemas = {}
    for file in _data_files(local):
        try:
            schemas[file] = pq.read_schema(file)
        except Exception as exc:  # pyarrow raises ArrowInvalid and OSError subclasses
            raise InputError(f"{file}: not a Parquet file ({exc})") from None
    first_file, first = next(iter(schemas.items()))
    for file, schema in schemas.items():
        if schema.names != first.names:
            raise InputError(
                f"{file}: columns {', '.join(schema.names)} differ from those of "
                f"{first_file} ({', '.join(first.names)})"
            )
    types = {field.name: str(field.type) for field in first}
    return InputSchema(path, "parquet", tuple(first.names), types)


def _json_kind(value: object) -> str:
    """The JSON kind of a parsed value: ``array``, ``object``, ``string``, ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string" if isinstance(value, str) else "number"


#: Arrow types of id columns that Spark reads as text or integers
_ID_ARROW_TYPES = (
    "string", "large_string", "string_view", "binary", "large_binary", "binary_view", "null"
)  # fmt: skip


def _is_id_type(kind: str) -> bool:
    """Whether an id column of Arrow type ``kind`` holds text or integers."""
    return kind in _ID_ARROW_TYPES or kind.startswith(("int", "uint"))


def _is_spark_id_type(kind: str) -> bool:
    """Whether Spark reads an id column of Arrow type ``kind`` as a type
    :func:`sparkeval.io.readers.check_id_types` takes: text, integers, decimals of
    scale 0 (as it reads unsigned 64-bit integers), a categorical column of those."""
    if kind.startswith("dictionary<values="):
        kind = kind.removeprefix("dictionary<values=").split(",", 1)[0]
    return _is_id_type(kind) or re.fullmatch(r"decimal(32|64|128|256)?\(\d+, 0\)", kind) is not None


def _check_ids(
    schema: InputSchema, cols: dict[str, str], accepts: Callable[[str], bool] = _is_id_type
) -> None:
    """The id columns among ``cols`` ({canonical: column}) hold text or integers
    (``accepts`` their Arrow type), where the format has types.

    Raises:
        InputError: naming the column and its type, as the real read does.
    """
    for canonical in ("run_id", "query_id", "doc_id"):
        column = cols.get(canonical)
        kind_name = schema.types.get(column or "")
        if column and kind_name and not accepts(kind_name):
            raise InputError(
                f"{schema.path}: id column {column} has type {kind_name}; ids must be "
                "strings or integers (cast the column to string or bigint first)"
            )


def _found(schema: InputSchema, cols: dict[str, str]) -> str:
    found = ", ".join(f"{k}={v}" for k, v in cols.items())
    return f"{schema.describe()} ({found})"


def check_run_or_qrels(schema: InputSchema, kind: str, mapping: dict[str, str]) -> str:
    """Resolve a run's or qrels' columns on ``schema`` as the real read does.

    Returns a line saying what was found. Raises InputError/ConfigError as the read would.
    """
    from sparkeval.io.columns import resolve_columns

    if schema.fmt == "trec":
        expected = 6 if kind == "run" else 4
        if schema.trec_fields is not None and schema.trec_fields < expected:
            raise InputError(
                f"{schema.path}:1: {schema.trec_fields} fields; a TREC {kind} line has {expected}"
            )
        if kind == "qrels" and schema.trec_fields == 6:
            raise InputError(
                f"{schema.path}:1: 6 fields look like a run line; is this a run file given "
                "as qrels?"
            )
        return schema.describe()
    if not schema.columns:
        return schema.describe()
    cols = resolve_columns(list(schema.columns), kind, mapping, schema.path)
    _check_ids(schema, cols)
    return _found(schema, cols)


def check_run_lists(schema: InputSchema, require_score: bool, run_id: str | None) -> str:
    """A run of ``similar-users`` or ``diversity`` on its schema, as
    :func:`sparkeval.io.lists.read_run_rows` reads it: a TREC run file, or a table
    with user and item columns (and a score if ``require_score``) by their aliases;
    ``run_id`` (``--run-id``) needs a run id column.

    Raises:
        InputError: a missing column, an id column of another type than text or
            integers, a TREC line of too few fields.
        ConfigError: ``run_id`` given and the table has no run ids.
    """
    from sparkeval.io.columns import RUN_ALIASES

    if schema.fmt == "trec":
        return check_run_or_qrels(schema, "run", {})
    required = ("query_id", "doc_id", "score") if require_score else ("query_id", "doc_id")
    line, cols = _check_table(schema, RUN_ALIASES, required)
    if run_id is not None and schema.columns and "run_id" not in cols:
        from sparkeval.io.run_choice import missing_run_id_column

        raise missing_run_id_column(schema.path, run_id)
    return line


def check_list_table(
    schema: InputSchema,
    aliases: dict[str, tuple[str, ...]],
    required: tuple[str, ...],
    arrays: tuple[str, ...] = (),
) -> str:
    """A typed table (training data, item features) on its schema, as
    :func:`sparkeval.io.lists.read_typed_table` and
    :func:`~sparkeval.io.lists.normalise_columns` read it: a table, not TREC text;
    the ``required`` columns by their aliases; id columns of text or integers; each
    column of ``arrays`` an array.

    Raises:
        InputError: naming the file and the missing or mistyped column.
    """
    if schema.fmt == "trec":
        raise InputError(
            f"{schema.path}: not a table; expected a Parquet file or directory, .csv, .tsv "
            "or .jsonl"
        )
    line, cols = _check_table(schema, aliases, required)
    for canonical in arrays:
        column = cols.get(canonical)
        if column is None:
            continue
        kind = _array_problem(schema, column)
        if kind is not None:
            raise InputError(
                f"{schema.path}: column {canonical} ({column}) must be an array (a numeric "
                f"vector or labels), got {kind}"
            )
    return line


def _check_table(
    schema: InputSchema, aliases: dict[str, tuple[str, ...]], required: tuple[str, ...]
) -> tuple[str, dict[str, str]]:
    """The columns of a list table resolved as :func:`~sparkeval.io.lists.normalise_columns`
    resolves them, id types checked: (a line saying what was found, {canonical: column})."""
    from sparkeval.io.columns import match_columns

    if not schema.columns:  # remote: checked by the real read
        return schema.describe(), {}
    optional = [c for c in aliases if c not in required]
    cols = match_columns(
        list(schema.columns), aliases, required, {}, schema.path, "this table", None, optional
    )
    _check_ids(schema, cols, _is_spark_id_type)
    return _found(schema, cols), cols


def _array_problem(schema: InputSchema, column: str) -> str | None:
    """What a column is instead of an array, when its schema says so; None when it is
    (or may be) an array."""
    if schema.fmt in ("csv", "tsv"):
        return f"a {schema.fmt.upper()} column (text or numbers, never an array)"
    if schema.fmt == "parquet":
        kind = schema.types.get(column, "")
        arrays = ("list<", "large_list<", "fixed_size_list<", "list_view<", "large_list_view<")
        return None if not kind or kind.startswith(arrays) else kind
    # JSON Lines: a value other than an array makes Spark infer another type
    kind = schema.json_kinds.get(column, "null")
    return None if kind in ("array", "null") else f"a JSON {kind} on line 1"


def probe_lock(out: str) -> None:
    """Fail as a real run would if another process is writing ``out`` now, or if its
    lock path is a link or not a regular file; creates nothing (a lock file that does
    not exist is not held).

    Raises:
        ConfigError: naming the holder of the writer lock, or the unusable lock path.
    """
    import fcntl
    import os

    from sparkeval.errors import ConfigError
    from sparkeval.output import _lock_path, open_lock_file
    from sparkeval.storage.uris import is_remote

    if is_remote(out):
        from sparkeval.storage.object_commit import probe_remote_lock

        probe_remote_lock(out)
        return
    path = _lock_path(Path(os.path.realpath(out)))
    try:
        handle = open_lock_file(path, out, create=False)
    except OSError:
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = handle.read().strip() or "another process"
            raise ConfigError(f"output directory {out} is being written by {holder}") from None
