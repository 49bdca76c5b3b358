"""Read runs and qrels into canonical Spark DataFrames.

Run:   ``run_id, query_id, doc_id, score`` (strings, strings, strings, double)
Qrels: ``query_id, doc_id, relevance``     (strings, strings, long)

Formats: TREC text (``qid Q0 docno rank score tag`` / ``qid iter docno rel``,
whitespace separated, ``#`` lines are comments), Parquet (file or directory), CSV
with a header, JSON Lines.  Ids are always strings ("007" differs from "7").

Values that cannot be parsed do not stop the read: the row carries a ``_bad``
message (file, raw line or key, what was expected) and the evaluation fails on it
with that message, so a bad file is never evaluated silently.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sparkeval.engine.formats import BAD
from sparkeval.errors import InputError
from sparkeval.io.columns import parse_mapping, resolve_columns

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

FORMATS = ("trec", "parquet", "csv", "tsv", "jsonl")
#: the format of a table by its extension (anything else is TREC text)
TABLE_SUFFIXES = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
}


#: the whitespace a TREC text line is trimmed of and split on (Java's \\s)
WHITESPACE = " \t\r\n\f\v"


@dataclass(frozen=True)
class RunInput:
    """A run read from one path, with the run ids it holds."""

    path: str
    df: DataFrame
    run_ids: tuple[str, ...]


def _is_local(path: str) -> bool:
    return "://" not in path or path.startswith("file://")


def _local(path: str) -> str:
    return path[len("file://") :] if path.startswith("file://") else path


def detect_format(path: str, fmt: str | None = None) -> str:
    """The input format: ``fmt`` when given, else from the extension.

    A directory is Parquet; ``.parquet/.pq``, ``.csv``, ``.tsv``, ``.jsonl/.ndjson/.json``
    by suffix; anything else (``qrels.test``, ``run.txt``) is TREC text.
    """
    if fmt is not None:
        if fmt not in FORMATS:
            raise InputError(
                f"{path}: unknown format {fmt!r}; expected one of {', '.join(FORMATS)}"
            )
        return fmt
    if _is_local(path) and os.path.isdir(_local(path)):
        return "parquet"
    return TABLE_SUFFIXES.get(Path(path).suffix.lower(), "trec")


def check_exists(path: str) -> None:
    if _is_local(path) and not os.path.exists(_local(path)):
        raise InputError(f"{path}: no such file or directory")


def _trec_lines(spark: SparkSession, path: str):
    from pyspark.sql import functions as F

    lines = spark.read.text(path)
    # every whitespace character, not only spaces: a tab-indented or CRLF line parses the same
    body = F.btrim(F.col("value"), F.lit(WHITESPACE))
    return lines.where((body != "") & ~body.startswith("#")).select(
        F.col("value").alias("_raw"), F.split(body, r"\s+").alias("_f")
    )


def _bad_line(path: str, condition, reason: str):
    """A ``_bad`` column: the message for rows where ``condition`` holds, else null."""
    from pyspark.sql import functions as F

    message = F.concat(F.lit(f"{path}: malformed line ["), F.col("_raw"), F.lit(f"]: {reason}"))
    return F.when(condition, message)


def read_trec_run(spark: SparkSession, path: str):
    """Read a TREC run; the run id is the tag of the first line (as trec_eval does)."""
    from pyspark.sql import functions as F

    rows = _trec_lines(spark, path)
    first = rows.select("_f").first()
    if first is None:
        raise InputError(f"{path}: no run lines (the file is empty or only has comments)")
    fields = first["_f"]
    if len(fields) < 6:
        raise InputError(
            f"{path}:1: malformed line {' '.join(fields)!r}: expected 6 whitespace separated "
            "fields 'qid Q0 docno rank score tag'"
        )
    run_id = fields[5]
    score = F.get(F.col("_f"), 4).try_cast("double")
    bad = _bad_line(
        path,
        (F.size("_f") < 6) | score.isNull(),
        "expected 'qid Q0 docno rank score tag' with a numeric score",
    )
    df = rows.select(
        F.lit(run_id).alias("run_id"),
        F.get(F.col("_f"), 0).alias("query_id"),
        F.get(F.col("_f"), 2).alias("doc_id"),
        score.alias("score"),
        bad.alias(BAD),
    )
    return df, (run_id,)


def read_trec_qrels(spark: SparkSession, path: str):
    """Read TREC qrels ``qid iter docno rel`` (iter ignored; rel an integer)."""
    from pyspark.sql import functions as F

    rows = _trec_lines(spark, path)
    if rows.first() is None:
        raise InputError(f"{path}: no qrels lines (the file is empty or only has comments)")
    grade = F.get(F.col("_f"), 3).try_cast("double")
    looks_like_a_run = _bad_line(
        path,
        F.size("_f") == 6,
        "6 fields look like a run line ('qid Q0 docno rank score tag'); qrels lines are "
        "'qid iter docno rel': is this a run file given as qrels?",
    )
    bad = _bad_line(
        path,
        (F.size("_f") != 4)
        | grade.isNull()
        | (grade != F.floor(grade))
        | F.isnan(grade)
        | (F.abs(grade) > 1e9),
        "expected 4 fields 'qid iter docno rel' with an integer relevance",
    )
    bad = F.coalesce(looks_like_a_run, bad)
    return rows.select(
        F.get(F.col("_f"), 0).alias("query_id"),
        F.get(F.col("_f"), 2).alias("doc_id"),
        F.when(bad.isNull(), grade.cast("long")).alias("relevance"),
        bad.alias(BAD),
    )


def read_table(spark: SparkSession, path: str, fmt: str, infer_types: bool = False):
    """A Parquet, CSV/TSV (with a header row) or JSON Lines table as Spark reads it.

    CSV fields are strings unless ``infer_types`` (then Spark infers numbers, as the
    LSH and diversity inputs want). An unreadable Parquet file or a JSON line that is
    not an object is an InputError naming the file (and line).
    """
    if fmt == "parquet":
        try:
            return spark.read.parquet(path)
        except Exception as exc:  # corrupt or unreadable Parquet: say which file
            raise InputError(f"{path}: cannot read as Parquet ({_first_line(exc)})") from exc
    if fmt in ("csv", "tsv"):
        reader = spark.read.option("header", "true").option("mode", "PERMISSIVE")
        reader = reader.option("inferSchema", "true" if infer_types else "false")
        return reader.option("sep", "\t" if fmt == "tsv" else ",").csv(path)
    try:
        return spark.read.option("mode", "FAILFAST").json(path)
    except Exception as exc:  # schema inference parses every line: a bad one fails here
        raise InputError(_bad_json_message(path, exc)) from exc


_JAVA_EXCEPTION = re.compile(r"(?:Exception|Error): (.+)")


def _first_line(exc: BaseException) -> str:
    """The first line of an error that says what went wrong (Java's message if wrapped)."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    for line in lines:
        match = _JAVA_EXCEPTION.search(line)
        if match:
            return match.group(1)[:300]
    return lines[0][:300] if lines else type(exc).__name__


def _bad_json_message(path: str, exc: BaseException) -> str:
    """Name the first line of a local JSON Lines input that is not a JSON object."""
    for candidate in _local_files(path):
        try:
            with open(candidate, encoding="utf-8", errors="replace") as handle:
                for number, line in enumerate(handle, start=1):
                    if not line.strip():
                        continue
                    try:
                        parsed = json.loads(line)
                    except ValueError:
                        parsed = None
                    if not isinstance(parsed, dict):
                        return (
                            f"{candidate}:{number}: malformed line {line.rstrip()[:200]!r}: "
                            "expected one JSON object per line"
                        )
        except OSError:
            continue
    return f"{path}: cannot read as JSON Lines ({_first_line(exc)})"


def _local_files(path: str) -> list[Path]:
    if not _is_local(path):
        return []
    local = Path(_local(path))
    if local.is_dir():
        return sorted(
            p for p in local.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))
        )
    return [local] if local.is_file() else []


def id_column(col):
    from pyspark.sql import functions as F

    return F.col(f"`{col}`").cast("string")


_NUMERIC_TYPES = ("tinyint", "smallint", "int", "bigint", "float", "double")
#: Spark types an id column may have: text (binary: bytes as text), integers, or all-null;
#: decimals of scale 0 are integers too (Spark reads Parquet's unsigned 64-bit so)
ID_TYPES = ("string", "binary", "tinyint", "smallint", "int", "bigint", "void")


def check_id_types(table, columns: Sequence[str], source: str) -> None:
    """Every id column of ``table`` holds text or integers.

    A fractional decimal, floating-point, boolean, date or nested id would become text that no
    other file writes the same way (``1.00``, ``7.0``, ``{d1, 2}``) and silently match
    nothing, so it is an error naming the column and its type.

    Raises:
        InputError: an id column of another type.
    """
    types = dict(table.dtypes)
    for column in columns:
        kind = types.get(column)
        whole = kind is not None and kind.startswith("decimal(") and kind.endswith(",0)")
        if (
            kind is not None
            and kind not in ID_TYPES
            and not whole
            and not kind.startswith("varchar")
        ):
            raise InputError(
                f"{source}: id column {column} has type {kind}; ids must be strings or "
                "integers (cast the column to string or bigint first)"
            )


def numeric_column(
    table,
    path: str,
    source_col: str,
    key_cols: tuple[str, str],
    integer: bool,
):
    """(value column, bad-message column) for a numeric column ``source_col`` of ``table``.

    A column of a numeric Spark type is cast directly; any other column is parsed
    from its text form, so nothing non-numeric slips through.
    """
    from pyspark.sql import functions as F

    raw = F.col(f"`{source_col}`")
    source_type = dict(table.dtypes).get(source_col)
    numeric = source_type in _NUMERIC_TYPES or str(source_type).startswith("decimal")
    value = raw.cast("double") if numeric else raw.cast("string").try_cast("double")
    cond = raw.isNull() | value.isNull()
    expected = "a number"
    if integer:
        cond = cond | (value != F.floor(value)) | F.isnan(value) | (F.abs(value) > 1e9)
        expected = "an integer"
    message = F.concat(
        F.lit(f"{path}: query "),
        F.coalesce(id_column(key_cols[0]), F.lit("<missing>")),
        F.lit(" doc "),
        F.coalesce(id_column(key_cols[1]), F.lit("<missing>")),
        F.lit(f": column {source_col} value '"),
        F.coalesce(raw.cast("string"), F.lit("")),
        F.lit(f"' is not {expected}"),
    )
    return value, F.when(cond, message)


def run_frame(table, cols: Mapping[str, str], source: str, run_col):
    """``run_id, query_id, doc_id, score, _bad`` from a table with resolved columns ``cols``.

    ``run_col`` is the run id expression (a column of the table or a literal); ids
    become strings and a score that is not a number gets its ``_bad`` message.
    """
    check_id_types(table, [cols[c] for c in ("run_id", "query_id", "doc_id") if c in cols], source)
    score, bad = numeric_column(
        table, source, cols["score"], (cols["query_id"], cols["doc_id"]), integer=False
    )
    return table.select(
        run_col.alias("run_id"),
        id_column(cols["query_id"]).alias("query_id"),
        id_column(cols["doc_id"]).alias("doc_id"),
        score.alias("score"),
        bad.alias(BAD),
    )


def default_run_id(path: str) -> str:
    """The run id of a table without a run id column: its file name up to the first dot."""
    name = Path(_local(path).rstrip("/")).name
    return name.split(".")[0] or name


def read_run(
    spark: SparkSession,
    path: str,
    fmt: str | None = None,
    columns: str | Mapping[str, str] | None = None,
) -> RunInput:
    """Read one run input into ``run_id, query_id, doc_id, score, _bad``.

    Without a run id column (or TREC tag) the file name without extension is the run id.
    """
    from pyspark.sql import functions as F

    check_exists(path)
    fmt = detect_format(path, fmt)
    if fmt == "trec":
        df, run_ids = read_trec_run(spark, path)
        return RunInput(path, df, run_ids)
    table = read_table(spark, path, fmt)
    cols = resolve_columns(table.columns, "run", parse_mapping(columns, "run"), path)
    if "run_id" in cols:
        run_col = id_column(cols["run_id"])
        run_ids = tuple(
            sorted(r[0] for r in table.select(run_col).distinct().collect() if r[0] is not None)
        )
    else:
        run_col = F.lit(default_run_id(path))
        run_ids = (default_run_id(path),) if table.first() is not None else ()
    df = run_frame(table, cols, path, run_col)
    if not run_ids:
        raise InputError(f"{path}: no run rows (the input is empty)")
    return RunInput(path, df, run_ids)


def read_qrels(
    spark: SparkSession,
    path: str,
    fmt: str | None = None,
    columns: str | Mapping[str, str] | None = None,
):
    """Read qrels into ``query_id, doc_id, relevance, _bad``."""
    check_exists(path)
    fmt = detect_format(path, fmt)
    if fmt == "trec":
        return read_trec_qrels(spark, path)
    table = read_table(spark, path, fmt)
    cols = resolve_columns(table.columns, "qrels", parse_mapping(columns, "qrels"), path)
    check_id_types(table, [cols["query_id"], cols["doc_id"]], path)
    grade, bad = numeric_column(
        table, path, cols["relevance"], (cols["query_id"], cols["doc_id"]), integer=True
    )
    df = table.select(
        id_column(cols["query_id"]).alias("query_id"),
        id_column(cols["doc_id"]).alias("doc_id"),
        grade.cast("long").alias("relevance"),
        bad.alias(BAD),
    )
    if df.first() is None:
        raise InputError(f"{path}: no qrels rows (the input is empty)")
    return df


def read_runs(
    spark: SparkSession,
    paths: Sequence[str],
    fmt: str | None = None,
    columns: str | Mapping[str, str] | None = None,
):
    """Read and union several run inputs; two inputs may not share a run id."""
    if not paths:
        raise InputError("no run given (use --run PATH)")
    inputs = [read_run(spark, p, fmt, columns) for p in paths]
    owner: dict[str, str] = {}
    for item in inputs:
        for run_id in item.run_ids:
            if run_id in owner:
                raise InputError(
                    f"run id {run_id!r} appears in both {owner[run_id]} and {item.path}; "
                    "give the runs distinct tags/run_id values or file names"
                )
            owner[run_id] = item.path
    df = inputs[0].df
    for item in inputs[1:]:
        df = df.unionByName(item.df)
    return df, tuple(owner)
