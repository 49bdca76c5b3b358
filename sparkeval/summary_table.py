"""Metrics over time: every command's summary as long-format rows.

``summary.parquet`` (beside ``summary.json``) holds one row per run and number of
the summary, with what a dashboard needs to plot it over time and to tell
evaluations apart:

=================== ==========================================================
``evaluation_id``   hash of the command, its parameters and its inputs' fingerprint:
                    the same evaluation run again gets the same id
``command``         ``evaluate``, ``compare``, ``similar-users``, ...
``run_id``          the run (``""`` where the command has no runs, and for numbers
                    of a summary that are not a run's)
``measure``         the measure as named in the outputs (``AP``, ``nDCG@10``), or
                    the dotted path of a count (``counts.pairs``)
``value``           its value (a mean over queries for ranking measures)
``queries``         queries (users) averaged, where the command averages
``undefined``       queries whose value is undefined (left out of the mean)
``evaluated_at``    when the summary was written (UTC)
``sparkeval_version`` the version that computed it
``parameters_hash`` hash of the summary's parameters (measures, cutoffs, options)
``inputs_hash``     hash of each input file's path, size and modification time, and
                    of each catalog table's version, snapshot or content
=================== ==========================================================

The evaluation id also covers the SQL conditions applied to the inputs (``--where``)
and ``--evaluation-key`` (a key of the caller's own, such as a scheduler's run date).

``--append-to TARGET`` adds these rows to a Parquet dataset (a directory: one file
per evaluation, named by its id) or to a catalog table (partitioned by
``evaluation_id``; an evaluation's partition is overwritten), so a rerun of the same
evaluation replaces its rows and never duplicates them.

Example:
    >>> rows = summary_rows({"runs": {"bm25": {"measures": {"AP": 0.25},
    ...     "undefined": {"AP": 0}, "queries": {"evaluated": 4}}}}, "evaluate")
    >>> rows[0]["run_id"], rows[0]["measure"], rows[0]["value"], rows[0]["queries"]
    ('bm25', 'AP', 0.25, 4)
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from sparkeval.errors import ConfigError
from sparkeval.storage.uris import is_remote, name

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SUMMARY_TABLE = "summary.parquet"

SCHEMA = pa.schema(
    [
        ("evaluation_id", pa.string()),
        ("command", pa.string()),
        ("run_id", pa.string()),
        ("measure", pa.string()),
        ("value", pa.float64()),
        ("queries", pa.int64()),
        ("undefined", pa.int64()),
        ("evaluated_at", pa.timestamp("us", tz="UTC")),
        ("sparkeval_version", pa.string()),
        ("parameters_hash", pa.string()),
        ("inputs_hash", pa.string()),
    ]
)

#: summary keys that describe the evaluation rather than measure it
_NOT_NUMBERS = ("parameters", "inputs", "compat", "command", "seed")


def _digest(payload: Any) -> str:
    text = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


#: what else tells this process's evaluation apart (:func:`set_identity`)
_identity: dict[str, Any] = {}


def set_identity(
    key: str | None = None,
    conditions: Mapping[str, str] | None = None,
    tables: Sequence[str] = (),
) -> None:
    """What, beside the command, its parameters and its input files, identifies the
    evaluation this process runs (set by the runner from the config):

    * ``key``: ``--evaluation-key``, a key of the caller's own (a scheduler's run date);
    * ``conditions``: the SQL conditions applied to the inputs (``--where``), which
      select other rows of the same files;
    * ``tables``: the catalog tables read, fingerprinted by :func:`table_fingerprint`.
    """
    _identity.clear()
    _identity.update(key=key, conditions=dict(conditions or {}), tables=list(tables))


def table_fingerprint(name: str) -> list[Any]:
    """What identifies the content of catalog table ``name`` now, from the active
    session: a Delta table's latest version, an Iceberg table's current snapshot, else
    its row count and the sum of its rows' 64-bit hashes (one job over the table).

    ``name`` is a checked plain identifier (:func:`check_append_name`'s rule).
    """
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        return [name, None]
    probes = (
        ("delta version", f"DESCRIBE HISTORY {name} LIMIT 1", "version"),
        (
            "iceberg snapshot",
            f"SELECT snapshot_id FROM {name}.snapshots ORDER BY committed_at DESC LIMIT 1",
            "snapshot_id",
        ),
    )
    for kind, query, column in probes:
        try:
            rows = spark.sql(query).collect()
        except Exception:  # not a table of that format
            continue
        if rows:
            return [name, kind, rows[0][column]]
    row = spark.sql(
        f"SELECT count(*) AS n, sum(CAST(xxhash64(*) AS DECIMAL(38, 0))) AS h FROM {name}"
    ).collect()[0]
    return [name, "content", row["n"], str(row["h"])]


def inputs_fingerprint(paths: Sequence[str]) -> str:
    """Hash of each input file's path, size and modification time (directories: of
    every file below them), without reading their contents; of a catalog table
    (``table:NAME``), its :func:`table_fingerprint`."""
    from sparkeval.io.readers import TABLE_PREFIX

    entries = []
    for raw in paths:
        if raw.startswith(TABLE_PREFIX):
            entries.append(table_fingerprint(raw[len(TABLE_PREFIX) :]))
            continue
        if is_remote(raw):
            entries += _remote_entries(raw)
            continue
        local = Path(raw[len("file://") :] if raw.startswith("file://") else raw)
        files = sorted(p for p in local.rglob("*") if p.is_file()) if local.is_dir() else [local]
        for file in files:
            try:
                stat = file.stat()
                entries.append([str(file.resolve()), stat.st_size, stat.st_mtime_ns])
            except OSError:
                entries.append([str(file), None, None])
    return _digest(entries)


def _remote_entries(uri: str) -> list[list[Any]]:
    """``[uri, size, modification time]`` of each file of a remote input."""
    from sparkeval.storage import files

    try:
        found = files.kind(uri)
        listed = files.list_files(uri, recursive=True) if found == "directory" else [uri]
        return [[p, *files.stat(p)] for p in listed]
    except OSError:
        return [[uri, None, None]]


def _numbers(node: Any, path: str) -> Iterator[tuple[str, float]]:
    if isinstance(node, bool):
        return
    if isinstance(node, int | float):
        yield path, float(node)
    elif isinstance(node, Mapping):
        for key in sorted(node):
            if key not in _NOT_NUMBERS:
                yield from _numbers(node[key], f"{path}.{key}" if path else str(key))


def summary_rows(summary: Mapping[str, Any], command: str) -> list[dict[str, Any]]:
    """The long rows of a summary: the measures per run (value, queries, undefined)
    where it has ``runs`` with ``measures`` (and, beyond ``evaluate``, every other
    number of the summary by its path, with an empty run id); every number of each
    run by its path where it has ``runs`` of other entries (``similar-users``,
    ``diversity``: :func:`_rows_per_run`); else every number by its path."""
    rows: list[dict[str, Any]] = []
    runs = summary.get("runs")
    if (
        isinstance(runs, Mapping)
        and runs
        and all(isinstance(b, Mapping) for b in runs.values())
        and not all("measures" in b for b in runs.values())
    ):
        return _rows_per_run(summary, runs)
    if isinstance(runs, Mapping) and all(
        isinstance(b, Mapping) and "measures" in b for b in runs.values()
    ):
        for run_id in sorted(runs):
            block = runs[run_id]
            queries = block.get("queries", {})
            evaluated = queries.get("evaluated") if isinstance(queries, Mapping) else queries
            for measure, value in block["measures"].items():
                undefined = block.get("undefined", {}).get(measure)
                if isinstance(value, Mapping):  # compare: {"mean": ..., "queries": ...}
                    evaluated = value.get("queries", value.get("n_queries", evaluated))
                    undefined = value.get("undefined", undefined)
                    value = value.get("mean")
                rows.append(
                    {
                        "run_id": str(run_id),
                        "measure": measure,
                        "value": None if value is None else float(value),
                        "queries": None if evaluated is None else int(evaluated),
                        "undefined": None if undefined is None else int(undefined),
                    }
                )
        if command == "evaluate":  # its counts are in summary.json; the rows are measures
            return rows
        rest = {k: v for k, v in summary.items() if k != "runs"}
        rows += [
            {"run_id": "", "measure": m, "value": v, "queries": None, "undefined": None}
            for m, v in _numbers(rest, "")
        ]
        return rows
    run_id = summary.get("run_id") or summary.get("run") or ""
    for measure, value in _numbers(summary, ""):
        rows.append(
            {"run_id": str(run_id), "measure": measure, "value": value, "queries": None}
            | {"undefined": None}
        )
    return rows


def _rows_per_run(summary: Mapping[str, Any], runs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every number of each run's entry by its path, with the run id; then every other
    number of the summary by its path, with an empty run id. A key of the runs' entries
    at the top of the summary is a one-run summary's copy of its run's: not repeated.

    Example:
        >>> rows = _rows_per_run({"k": 5, "runs": {"b": {"users": 3}, "a": {"users": 4}}}, {
        ...     "b": {"users": 3}, "a": {"users": 4}})
        >>> [(r["run_id"], r["measure"], r["value"]) for r in rows]
        [('a', 'users', 4.0), ('b', 'users', 3.0), ('', 'k', 5.0)]
    """
    copied = {key for block in runs.values() for key in block}
    rest = {k: v for k, v in summary.items() if k != "runs" and k not in copied}
    numbers = [
        (str(run_id), *pair) for run_id in sorted(runs) for pair in _numbers(runs[run_id], "")
    ]
    numbers += [("", *pair) for pair in _numbers(rest, "")]
    return [
        {"run_id": run_id, "measure": m, "value": v, "queries": None, "undefined": None}
        for run_id, m, v in numbers
    ]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sparkeval")
    except PackageNotFoundError:
        return "unknown"


def summary_table(summary: Mapping[str, Any], command: str, inputs: Sequence[str]) -> pa.Table:
    """The rows of :func:`summary_rows` with the evaluation's id, time, version and hashes."""
    parameters = {
        k: summary.get(k) for k in ("parameters", "compat", "measures_requested") if k in summary
    }
    if summary.get("run_id") is not None:  # --run-id: one run of the input, its own evaluation
        parameters["run_id"] = summary["run_id"]
    conditions = _identity.get("conditions")
    parameters_hash = _digest(
        [command, parameters, conditions] if conditions else [command, parameters]
    )
    tables = [f"table:{name}" for name in _identity.get("tables", ())]
    inputs_hash = inputs_fingerprint([*inputs, *(t for t in tables if t not in inputs)])
    key = _identity.get("key")
    identity = [command, parameters_hash, inputs_hash] + ([key] if key is not None else [])
    evaluation_id = _digest(identity)
    now = dt.datetime.now(dt.UTC)
    common = {
        "evaluation_id": evaluation_id,
        "command": command,
        "evaluated_at": now,
        "sparkeval_version": _version(),
        "parameters_hash": parameters_hash,
        "inputs_hash": inputs_hash,
    }
    rows = [common | row for row in summary_rows(summary, command)]
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def write_summary_table(
    directory: Path, summary: Mapping[str, Any], command: str, inputs: Sequence[str]
) -> None:
    """Write ``summary.parquet`` into an output (staging) directory."""
    pq.write_table(summary_table(summary, command, inputs), directory / SUMMARY_TABLE)


def is_path_target(target: str) -> bool:
    """Whether ``--append-to`` names a Parquet dataset (a path) rather than a table."""
    return "/" in target or target.endswith(".parquet") or os.path.isdir(target)


def check_append_name(target: str) -> None:
    """``--append-to`` names a path, a URI of a store or a plain catalog table
    (``[db.]name``: see :func:`sparkeval.io.sql_text.check_table_name`); checked before
    Spark starts.

    Raises:
        ConfigError: a table name that is not plain identifiers.
    """
    if not is_path_target(target) and not is_remote(target):
        from sparkeval.io.sql_text import check_table_name

        check_table_name(target, "--append-to")


def check_append_target(
    spark: SparkSession | None,
    target: str,
    out: str | None = None,
    inputs: Sequence[str] = (),
) -> None:
    """An ``--append-to`` target that can take the summary rows, checked before any work.

    A path must be a Parquet dataset directory (or not exist yet) that neither overlaps
    ``out`` nor an input, and whose files have the summary rows' columns. A catalog
    table target needs a catalog that outlives the process: Spark's default in-memory
    catalog forgets a table when the session ends, so the next run could neither find
    nor recreate it: name a path instead, or use a persistent catalog
    (``spark.sql.catalogImplementation=hive``, Delta, Iceberg).

    Raises:
        ConfigError: naming the target and what is wrong.
    """
    check_append_name(target)
    if is_path_target(target) or is_remote(target):
        _check_dataset_target(target, out, inputs)
        return
    if spark is None:
        raise ConfigError(f"--append-to {target}: a catalog table needs a Spark session")
    in_memory = spark.conf.get("spark.sql.catalogImplementation", "in-memory") == "in-memory"
    if in_memory and "." not in target and not spark.catalog.tableExists(target):
        raise ConfigError(
            f"--append-to {target}: Spark's in-memory catalog forgets tables when the "
            "process ends; give a path (a Parquet dataset, e.g. ./metrics) or a persistent "
            "catalog (spark.sql.catalogImplementation: hive, or a Delta/Iceberg catalog)"
        )


def _overlaps(a: str, b: str) -> bool:
    """Whether two paths or URIs are the same, or one lies inside the other."""
    if is_remote(a) != is_remote(b):
        return False
    if is_remote(a):
        from sparkeval.storage.targets import inside

        return inside(a, b) or inside(b, a)
    first, second = (Path(os.path.realpath(p.removeprefix("file://"))) for p in (a, b))
    return first == second or first in second.parents or second in first.parents


def _check_dataset_target(target: str, out: str | None, inputs: Sequence[str]) -> None:
    """:func:`check_append_target` for a Parquet dataset path or URI."""
    from sparkeval.storage import files

    for other, what in [(out, "--out"), *((i, "the input") for i in inputs)]:
        if other and _overlaps(target, other):
            raise ConfigError(
                f"--append-to {target} overlaps {what} {other}; keep the metrics "
                "history apart from the outputs and inputs"
            )
    found = files.kind(target)
    if found == "file":
        raise ConfigError(f"--append-to {target}: a file, not a Parquet dataset directory")
    if found is None:
        return
    for path in files.list_files(target):
        if name(path).startswith((".", "_")) or os.path.islink(path):
            continue  # hidden, or a link: never read through (the append replaces it)
        try:
            schema = pq.read_schema(files.parquet_source(path))
        except (OSError, pa.ArrowException):
            raise ConfigError(
                f"--append-to {target}: {path} is not a Parquet file; the target must be a "
                "dataset of sparkeval's summary rows"
            ) from None
        if not schema.remove_metadata().equals(SCHEMA):
            raise ConfigError(
                f"--append-to {target}: {path} has other columns than sparkeval's summary "
                "rows; choose a dataset of its own"
            )
        return  # every file of the dataset was written by this function: one is enough


def _read_summary_table(out: str) -> pa.Table:
    """``OUT/summary.parquet``, locally or on a store."""
    if not is_remote(out):
        return pq.read_table(Path(out) / SUMMARY_TABLE)
    from sparkeval.storage import files
    from sparkeval.storage.uris import join

    return pq.read_table(pa.BufferReader(files.read_bytes(join(out, SUMMARY_TABLE))))


def _append_to_store(table: pa.Table, target: str, evaluation_id: str) -> str:
    """One object ``evaluation_id=ID.parquet`` in the remote dataset: a single upload
    replaces it whole (an object store never shows half an object)."""
    from sparkeval.storage import files
    from sparkeval.storage.uris import join

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    final = join(target, f"evaluation_id={evaluation_id}.parquet")
    files.write_bytes(final, sink.getvalue().to_pybytes())
    return f"{table.num_rows} summary rows in {final}"


def append_summary(spark: SparkSession | None, out: str, target: str) -> str:
    """Add ``OUT/summary.parquet`` to ``target``, replacing the rows of the same
    evaluation; returns what was written where.

    * a path: a Parquet dataset directory holding ``evaluation_id=ID.parquet`` files;
      the file is written under a temporary name and renamed over the old one;
    * a catalog table (``db.name``): created partitioned by ``evaluation_id`` on first
      use; later the evaluation's partition is overwritten (dynamic partition
      overwrite), so other evaluations' rows are untouched.
    """
    table = _read_summary_table(out)
    if table.num_rows == 0:
        return f"no summary rows to append to {target}"
    evaluation_id = table.column("evaluation_id")[0].as_py()
    check_append_target(spark, target)
    if is_remote(target):
        return _append_to_store(table, target, evaluation_id)
    if is_path_target(target):
        directory = Path(target.removeprefix("file://"))
        if directory.exists() and not directory.is_dir():
            raise ConfigError(f"--append-to {target}: a file, not a Parquet dataset directory")
        directory.mkdir(parents=True, exist_ok=True)
        final = directory / f"evaluation_id={evaluation_id}.parquet"
        _write_new_then_rename(table, final)
        return f"{table.num_rows} summary rows in {final.absolute()}"
    assert spark is not None
    frame = spark.createDataFrame(table.to_pandas())
    if spark.catalog.tableExists(target):
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
        columns = spark.table(target).columns
        frame.select(*columns).write.insertInto(target, overwrite=True)
    else:
        frame.write.partitionBy("evaluation_id").saveAsTable(target)
    return f"{table.num_rows} summary rows in table {target} (evaluation {evaluation_id})"


def _write_new_then_rename(table: pa.Table, final: Path) -> None:
    """Write ``table`` as Parquet to a new hidden file beside ``final``, then rename it
    over ``final``.

    The file is created anew (``O_EXCL``, ``O_NOFOLLOW``) under a name no other process
    can guess, and written through that descriptor: a name planted in the dataset
    directory (a link to a file elsewhere) is never followed, truncated or written.
    """
    partial = final.with_name(f".{final.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    descriptor = os.open(partial, flags, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            pq.write_table(table, stream)
        os.replace(partial, final)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
