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
from dataclasses import dataclass
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
            return InputSchema(path, fmt, tuple(first), {})
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


_ID_ARROW_TYPES = ("string", "large_string", "binary", "null")


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
    for canonical in ("run_id", "query_id", "doc_id"):
        column = cols.get(canonical)
        kind_name = schema.types.get(column or "")
        if (
            column
            and kind_name
            and not (kind_name in _ID_ARROW_TYPES or kind_name.startswith(("int", "uint")))
        ):
            raise InputError(
                f"{schema.path}: id column {column} has type {kind_name}; ids must be "
                "strings or integers (cast the column to string or bigint first)"
            )
    found = ", ".join(f"{k}={v}" for k, v in cols.items())
    return f"{schema.describe()} ({found})"


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
