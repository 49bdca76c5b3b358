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

import errno
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sparkeval.errors import ConfigError, InputError
from sparkeval.formats import BAD, TIE_KEY
from sparkeval.io.columns import DOC_NAMES, SCORE_NAMES, parse_mapping, resolve_columns
from sparkeval.io.sql_text import check_table_name, spark_condition
from sparkeval.io.streams import DECOMPRESS_ERRORS, open_decompressed, suffix_from_content
from sparkeval.spark import spark_type
from sparkeval.storage import files as storage_files
from sparkeval.storage.uris import is_remote

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

FORMATS = ("trec", "parquet", "csv", "tsv", "jsonl")
#: formats Spark reads by decoding their text, turning invalid bytes into U+FFFD
DECODED_FORMATS = ("csv", "tsv", "jsonl")
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
#: compression suffixes Spark's text, CSV and JSON readers decompress by (Hadoop codecs)
COMPRESSION_SUFFIXES = (".gz", ".bz2", ".zst", ".lz4", ".deflate", ".snappy", ".xz")


#: the whitespace a TREC text line is trimmed of and split on (Java's \\s)
WHITESPACE = " \t\r\n\f\v"


@dataclass(frozen=True)
class RunInput:
    """A run read from one path, with the run ids it holds."""

    path: str
    df: DataFrame
    run_ids: tuple[str, ...]


#: how a catalog table is named where a path is expected (``table:db.runs``)
TABLE_PREFIX = "table:"


def is_catalog_table(path: str) -> bool:
    """Whether ``path`` names a table of the session's catalog (``table:NAME``)."""
    return path.startswith(TABLE_PREFIX)


def is_local_path(path: str) -> bool:
    """Whether ``path`` is on this machine's file system (no scheme, or ``file://``)."""
    return "://" not in path or path.startswith("file://")


def local_path(path: str) -> str:
    """``path`` without its ``file://`` scheme."""
    return path[len("file://") :] if path.startswith("file://") else path


#: the characters Hadoop's path globbing gives a meaning to (a backslash escapes each)
_GLOB_CHARACTERS = re.compile(r"[\\\[\]{}*?]")
#: Hadoop's local file system without its checksum layer, which cannot name the
#: checksum file of a name holding a colon
_RAW_LOCAL = {
    "fs.file.impl": "org.apache.hadoop.fs.RawLocalFileSystem",
    "fs.file.impl.disable.cache": "true",
}


def spark_location(path: str) -> str:
    """What Spark's file readers are given for the input ``path``: a name of exactly
    that file or directory, never a pattern.

    Spark's readers expand Hadoop glob patterns: ``run[1].jsonl`` would read
    ``run1.jsonl``, ``run{a,b}.parquet`` reads ``runa.parquet`` and ``runb.parquet``.
    Hadoop's ``Path`` also refuses a relative name whose first part holds a colon
    (``run:v2.jsonl``).  So a local path is given as an absolute ``file://`` URI whose
    glob characters (``\\ [ ] { } * ?``) are escaped with a backslash, which Hadoop's
    globbing reads as the characters themselves.  Other paths (``s3a://...``) and
    catalog tables are returned as they are.

    Example:
        >>> spark_location("/data/run[1].jsonl")
        'file:///data/run\\\\[1\\\\].jsonl'
    """
    if not is_local_path(path) or is_catalog_table(path):
        return path
    absolute = os.path.abspath(local_path(path))
    return "file://" + _GLOB_CHARACTERS.sub(lambda found: "\\" + found.group(), absolute)


def spark_reader(spark: SparkSession, *paths: str):
    """``spark.read`` for reading ``paths`` (see :func:`spark_location`).

    Hadoop's local file system finds a file's checksum file by a name it builds from
    the file's (``.run:v2.jsonl.crc``), and a colon at the start of that relative name
    fails; so where a local input's path, or a name below a local directory, holds a
    colon, the read goes through Hadoop's raw local file system (no checksum files)
    instead, for this read only.
    """
    reader = spark.read
    if any(_holds_a_colon(path) for path in paths):
        for key, value in _RAW_LOCAL.items():
            reader = reader.option(key, value)
    return reader


def _holds_a_colon(path: str) -> bool:
    """Whether the local ``path``, or any name below it, holds a colon."""
    if not is_local_path(path) or is_catalog_table(path):
        return False
    local = os.path.abspath(local_path(path))
    if ":" in local:
        return True
    if not os.path.isdir(local):
        return False
    for _, directories, files in os.walk(local):
        if any(":" in name for name in (*directories, *files)):
            return True
    return False


def detect_format(path: str, fmt: str | None = None) -> str:
    """The input format: ``fmt`` when given, else from the extension.

    A directory is Parquet; ``.parquet/.pq``, ``.csv``, ``.tsv``, ``.jsonl/.ndjson/.json``
    by suffix, also before a compression suffix (``run.csv.gz``, ``docs.jsonl.zst``);
    anything else (``qrels.test``, ``run.txt``, ``run.txt.gz``) is TREC text.
    """
    if is_catalog_table(path):
        return "table"
    if fmt is not None:
        if fmt not in FORMATS:
            raise InputError(
                f"{path}: unknown format {fmt!r}; expected one of {', '.join(FORMATS)}"
            )
        return fmt
    if is_local_path(path) and os.path.isdir(local_path(path)):
        return "parquet"
    if is_remote(path) and storage_files.kind(path) == "directory":
        return "parquet"
    name = Path(path).name.lower()
    if name.endswith(COMPRESSION_SUFFIXES):
        name = name.rsplit(".", 1)[0]
    return TABLE_SUFFIXES.get(Path(name).suffix, "trec")


def check_exists(path: str) -> None:
    """The input exists and can be read; a compressed file's name says how.

    Raises:
        InputError: a missing path, a symlink loop, a file this user cannot read, or a
            compressed file without its compression suffix (Spark picks the decompressor
            by the name, and would read the compressed bytes as text).
    """
    if is_catalog_table(path):
        return
    if not is_local_path(path):
        if is_remote(path) and storage_files.kind(path) is None:
            raise InputError(f"{path}: no such file or directory")
        return
    local = local_path(path)
    try:
        os.stat(local)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(f"{path}: a symbolic link loop (no file behind it)") from None
        if exc.errno == errno.EACCES:
            raise InputError(f"{path}: permission denied") from None
        raise InputError(f"{path}: no such file or directory") from None
    if os.path.isdir(local):
        if not os.access(local, os.R_OK | os.X_OK):
            raise InputError(f"{path}: permission denied (cannot list the directory)")
        return
    try:
        with open(local, "rb") as handle:
            head = handle.read(16)
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from None
    suffix = suffix_from_content(head)
    if suffix in COMPRESSION_SUFFIXES and not local.lower().endswith(COMPRESSION_SUFFIXES):
        raise InputError(
            f"{path}: the content is {suffix[1:]}-compressed but the name does not end in "
            f"{suffix}; rename it (the decompressor is chosen by the file name)"
        )


def _trec_lines(spark: SparkSession, path: str):
    from pyspark.sql import functions as F

    if is_remote(path):
        from sparkeval.storage.local_copies import jvm_path

        path = jvm_path(spark, path)
    lines = spark_reader(spark, path).text(spark_location(path))
    # every whitespace character, not only spaces: a tab-indented or CRLF line parses the same
    body = F.btrim(F.col("value"), F.lit(WHITESPACE))
    return lines.where((body != "") & ~body.startswith("#")).select(
        F.make_valid_utf8("value").alias("_raw"),
        F.split(body, r"\s+").alias("_f"),
        F.is_valid_utf8("value").alias("_utf8"),
    )


#: why a line or id with invalid UTF-8 is refused (docs/evaluate.md: "Strict reading")
NOT_UTF8 = (
    "not valid UTF-8 (ids are compared as UTF-8 text; convert the file, e.g. "
    "iconv -f latin1 -t utf-8)"
)


def _bad_line(path: str, condition, reason: str):
    """A ``_bad`` column: the message for rows where ``condition`` holds, else null.

    A line that is not valid UTF-8 gets that reason first, whatever ``condition``.
    """
    from pyspark.sql import functions as F

    def message(why: str):
        return F.concat(F.lit(f"{path}: malformed line ["), F.col("_raw"), F.lit(f"]: {why}"))

    return F.when(~F.col("_utf8"), message(NOT_UTF8)).when(condition, message(reason))


def read_trec_run(spark: SparkSession, path: str, ties: str = "doc-id"):
    """Read a TREC run; the run id is the tag of the first line (as trec_eval does).
    Under ``ties="rank"`` the rank field (the fourth) becomes the ``_tie`` column, and
    a line whose rank is not a number is refused."""
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
    score = F.get(F.col("_f"), 4).try_cast(spark_type("double"))
    bad = _bad_line(
        path,
        (F.size("_f") < 6) | score.isNull(),
        "expected 'qid Q0 docno rank score tag' with a numeric score",
    )
    tie = []
    if ties == "rank":
        rank = F.get(F.col("_f"), 3).try_cast(spark_type("double"))
        unusable = rank.isNull() | F.isnan(rank) | (F.abs(rank) == float("inf"))
        why = "the rank field is not a finite number (--ties rank orders ties by it)"
        bad = F.coalesce(bad, _bad_line(path, unusable, why))
        tie = [rank.alias(TIE_KEY)]
    df = rows.select(
        F.lit(run_id).alias("run_id"),
        F.get(F.col("_f"), 0).alias("query_id"),
        F.get(F.col("_f"), 2).alias("doc_id"),
        score.alias("score"),
        bad.alias(BAD),
        *tie,
    )
    return df, (run_id,)


def read_trec_qrels(spark: SparkSession, path: str):
    """Read TREC qrels ``qid iter docno rel`` (iter ignored; rel an integer)."""
    from pyspark.sql import functions as F

    rows = _trec_lines(spark, path)
    if rows.first() is None:
        raise InputError(f"{path}: no qrels lines (the file is empty or only has comments)")
    grade = F.get(F.col("_f"), 3).try_cast(spark_type("double"))
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
        | (grade != F.rint(grade))
        | F.isnan(grade)
        | (F.abs(grade) > GRADE_BOUND),
        "expected 4 fields 'qid iter docno rel' with an integer relevance",
    )
    bad = F.coalesce(looks_like_a_run, bad)
    return rows.select(
        F.get(F.col("_f"), 0).alias("query_id"),
        F.get(F.col("_f"), 2).alias("doc_id"),
        F.when(bad.isNull(), grade.cast(spark_type("long"))).alias("relevance"),
        bad.alias(BAD),
    )


def read_table(
    spark: SparkSession, path: str, fmt: str, infer_types: bool = False, where: str | None = None
):
    """A Parquet, CSV/TSV (with a header row), JSON Lines or catalog table as Spark reads
    it, filtered by the SQL condition ``where`` (before anything else, so partitions
    are pruned; only the subset of :mod:`sparkeval.io.sql_text`, written back from its
    checked parse, reaches Spark).

    CSV fields are strings unless ``infer_types`` (then Spark infers numbers, as the
    LSH and diversity inputs want). Partition columns of a partitioned dataset
    (``dt=2026-11-01/``) are read as text. An unreadable Parquet file or a JSON line
    that is not an object is an InputError naming the file (and line).
    """
    table = _read_source(spark, path, fmt, infer_types)
    if where is None:
        return table
    condition = spark_condition(where, "--where")  # only the documented subset of SQL
    try:
        if fmt in ("csv", "tsv") and not infer_types:
            return _where_on_typed_values(table, _read_source(spark, path, fmt, True), condition)
        return table.where(condition)
    except Exception as exc:  # AnalysisException (an unknown column): name the option
        raise InputError(f"{path}: --where {where!r}: {_first_line(exc)}") from None


def _where_on_typed_values(text_table, typed_table, condition: str):
    """The rows of ``text_table`` (CSV fields read as strings) whose values, typed as
    Spark infers them (``typed_table``), meet ``condition``; the fields stay strings.

    ``pred > 0`` on a text field would make Spark cast each value to the literal's type
    (``'1.5'`` to a whole number fails under ANSI SQL); the typed copy compares numbers
    as numbers. A value its column's inferred type does not hold is null there.
    """
    typed = {field.name: field.dataType for field in typed_table.schema.fields}
    names = text_table.columns
    kept = [f"__sparkeval_text_{i}" for i in range(len(names))]
    view = text_table.select(
        *(text_table[name].try_cast(typed[name]).alias(name) for name in names),
        *(text_table[name].alias(hidden) for name, hidden in zip(names, kept, strict=True)),
    )
    return view.where(condition).select(
        *(view[hidden].alias(name) for name, hidden in zip(names, kept, strict=True))
    )


def _read_source(spark: SparkSession, path: str, fmt: str, infer_types: bool):
    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    if fmt != "table" and is_remote(path):
        from sparkeval.storage.local_copies import jvm_path

        return _read_source(spark, jvm_path(spark, path), fmt, infer_types)
    if fmt == "table":
        name = check_table_name(path[len(TABLE_PREFIX) :], "table input", path)
        if not spark.catalog.tableExists(name):
            raise InputError(f"{path}: no table {name} in the session's catalog")
        return spark.table(name)
    if fmt == "parquet":
        try:
            return spark_reader(spark, path).parquet(spark_location(path))
        except Exception as exc:  # corrupt or unreadable Parquet: say which file
            bad_file = _UNREADABLE_FILE.search(str(exc))
            if bad_file and "footer" in str(exc).lower():
                name = bad_file["file"].removeprefix("file:").replace("///", "/", 1)
                if os.path.isdir(local_path(path)):
                    raise InputError(
                        f"{name}: not a Parquet file (could not read its footer; in {path}): "
                        "remove it, or hide it from readers with a name starting with '_' or '.'"
                    ) from None
                raise InputError(
                    f"{path}: not a Parquet file (could not read its footer)"
                ) from None
            raise InputError(f"{path}: cannot read as Parquet ({_first_line(exc)})") from exc
    if fmt in ("csv", "tsv"):
        return _read_csv(spark, path, "\t" if fmt == "tsv" else ",", infer_types)
    try:
        return spark_reader(spark, path).option("mode", "FAILFAST").json(spark_location(path))
    except Exception as exc:  # schema inference parses every line: a bad one fails here
        raise InputError(_bad_json_message(path, exc)) from exc


#: the column Spark's CSV reader puts a malformed record's text in
CORRUPT_RECORD = "_corrupt_record"


def _read_csv(spark: SparkSession, path: str, sep: str, infer_types: bool):
    """A CSV/TSV table in which every malformed record fails the job, naming its line.

    Spark's PERMISSIVE mode would keep a row with extra fields (dropping them) or
    missing ones (as nulls) without a word, and its FAILFAST error names no line. So
    the header's columns plus Spark's corrupt-record column are read, and every column
    of a malformed row raises an error that quotes the record (its line number is found
    on the error path, :func:`sparkeval.io.locate.with_line_number`). Quoted fields may
    hold line breaks: a local file with a quote character is read in Spark's multi-line
    mode (one task per file), others line by line.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    from sparkeval.errors import marked_message

    # with column pruning, a row with an extra field is malformed only if a needed column
    # is affected: every field is parsed so that every malformed row is found
    spark.conf.set("spark.sql.csv.parser.columnPruning.enabled", "false")
    base = spark_reader(spark, path).option("header", "true").option("sep", sep)
    if _has_quotes(path):
        base = base.option("multiLine", "true")
    location = spark_location(path)
    header = base.option("inferSchema", "true" if infer_types else "false").csv(location).schema
    if CORRUPT_RECORD in header.fieldNames():
        raise InputError(f"{path}: a column may not be named {CORRUPT_RECORD}")
    schema = StructType([*header.fields, StructField(CORRUPT_RECORD, StringType())])
    table = (
        base.schema(schema)
        .option("mode", "PERMISSIVE")
        .option("columnNameOfCorruptRecord", CORRUPT_RECORD)
        .csv(location)
    )
    names = ", ".join(header.fieldNames())
    failure = F.raise_error(
        marked_message(
            F.concat(
                F.lit(f"{path}: malformed line ["),
                F.make_valid_utf8(F.col(CORRUPT_RECORD)),
                F.lit(
                    f"]: expected {len(header.fields)} {'tab' if sep == chr(9) else 'comma'} "
                    f"separated fields ({names}) with balanced quotes"
                ),
            )
        )
    )
    malformed = F.col(CORRUPT_RECORD).isNotNull()
    return table.select(
        *(
            F.when(malformed, failure).otherwise(F.col(f"`{f.name}`")).alias(f.name)
            for f in header.fields
        )
    )


def _has_quotes(path: str) -> bool:
    """Whether a local (plain or compressed) CSV input holds a double quote; remote
    inputs are read line by line.

    Raises:
        InputError: a quote that is never closed (an odd number of quote characters,
            not counting backslash-escaped ones), which would swallow the rest of the
            file into one field; the message names the line it opens on.
    """
    found = False
    for candidate in _local_files(path):
        quotes = 0
        try:
            with open_decompressed(candidate) as handle:
                while block := handle.read(1 << 24):
                    quotes += block.count(b'"') - block.count(b'\\"')
        except DECOMPRESS_ERRORS:
            continue  # unreadable: the read itself reports it
        found = found or quotes > 0
        if quotes % 2:
            line = _unclosed_quote_line(candidate)
            raise InputError(
                f"{candidate}:{line}: a quote opened on this line is never closed "
                '(CSV fields are quoted with "; a quote inside one is doubled or escaped)'
            )
    return found


def _unclosed_quote_line(path: Path) -> int:
    """The line on which the quote that stays open to the end of ``path`` opens."""
    inside, opened = False, 0
    with open_decompressed(path) as handle:
        for number, line in enumerate(handle, start=1):
            for _ in range(line.count(b'"') - line.count(b'\\"')):
                inside = not inside
                if inside:
                    opened = number
    return opened


_UNREADABLE_FILE = re.compile(r"while reading file (?P<file>\S+?)\.(?:\s|$)")
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
    """Name the first line of a local JSON Lines input (compressed or not) that is not
    valid UTF-8 or not a JSON object."""
    found = bad_json_line(path)
    if found is None:
        return f"{path}: cannot read as JSON Lines ({_first_line(exc)})"
    return found


def bad_json_line(path: str) -> str | None:
    """The message naming the first line of a local JSON Lines input (compressed or
    not) that is not valid UTF-8 or not one JSON object (Python's ``json``), or None.

    Example: ``docs.jsonl:2: malformed line 'hello': expected one JSON object per line``.
    """
    for candidate in _local_files(path):
        try:
            with open_decompressed(candidate) as handle:
                for number, raw in enumerate(handle, start=1):
                    try:
                        line = raw.decode("utf-8")
                    except UnicodeDecodeError:
                        return f"{candidate}:{number}: the line is {NOT_UTF8}"
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
        except DECOMPRESS_ERRORS:
            continue
    return None


def _local_files(path: str) -> list[Path]:
    if not is_local_path(path):
        return []
    local = Path(local_path(path))
    if local.is_dir():
        return sorted(
            p for p in local.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))
        )
    return [local] if local.is_file() else []


def id_column(col):
    from pyspark.sql import functions as F

    return F.col(f"`{col}`").cast(spark_type("string"))


#: Spark types a score or grade column may have as it is (others are parsed from text)
NUMERIC_TYPES = ("tinyint", "smallint", "int", "bigint", "float", "double")
#: grades must be whole numbers within ±this bound
GRADE_BOUND = 10**9
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
    _check_json_object_ids(table, [c for c in columns if types.get(c) == "string"], source)


def _check_json_object_ids(table, columns: Sequence[str], source: str) -> None:
    """A JSON Lines id that is an object or array on some lines is an error naming the line.

    Spark infers a string column when one line holds a string and another an object,
    and keeps the object as its JSON text (``{"x":"d2"}``), an id nothing else matches.
    A value that looks like JSON text is looked up in the file to tell it from a string
    that merely starts with a brace.
    """
    if not columns or not is_local_path(source) or detect_format(source) != "jsonl":
        return
    from functools import reduce

    from pyspark.sql import functions as F

    looks_like_json = reduce(
        lambda a, b: a | b, (F.col(f"`{c}`").rlike(r"^\s*[\[{]") for c in columns)
    )
    if table.where(looks_like_json).select(*(f"`{c}`" for c in columns)).first() is None:
        return
    for candidate in _local_files(source):
        try:
            with open_decompressed(candidate) as handle:
                for number, raw in enumerate(handle, start=1):
                    try:
                        record = json.loads(raw)
                    except ValueError:
                        continue
                    for column in columns if isinstance(record, dict) else ():
                        value = record.get(column)
                        if isinstance(value, dict | list):
                            kind = "an object" if isinstance(value, dict) else "an array"
                            raise InputError(
                                f"{candidate}:{number}: id column {column} holds {kind} "
                                f"({json.dumps(value)[:80]}); ids must be strings or integers"
                            )
        except DECOMPRESS_ERRORS:
            continue


def distinct_values(table, column) -> list:
    """The distinct non-null values of ``column`` (a name or a Column) of the DataFrame
    ``table``, sorted: one Spark job.

    Example: the run ids of a run with a run id column,
    ``distinct_values(run_df, "run_id")`` -> ``["bm25", "dense"]``.
    """
    return sorted(row[0] for row in table.select(column).distinct().collect() if row[0] is not None)


def invalid_text_ids(table, columns: Sequence[str], source: str, decoded: bool):
    """Spark expression: a message for a row whose text id is not valid UTF-8, else null.

    Parquet, catalog tables and DataFrames keep a string's bytes (``decoded`` False:
    checked with ``is_valid_utf8``, and U+FFFD is a character like any other); the CSV
    and JSON readers (``decoded`` True, :data:`DECODED_FORMATS`) decode text with
    replacement, so there an id holding U+FFFD, the replacement character, is refused
    as well: two different Latin-1 ids would otherwise both become
    ``caf\N{REPLACEMENT CHARACTER}`` and match.
    """
    from pyspark.sql import functions as F

    types = dict(table.dtypes)
    checks = [F.lit(None).cast(spark_type("string"))]
    for column in columns:
        if _is_text(types.get(column)):
            broken, message = _utf8_problem(column, source, decoded=decoded)
            checks.append(F.when(broken, message))
    return F.coalesce(*checks)


def strict_text_ids(
    table,
    columns: Sequence[str],
    source: str,
    labels: Mapping[str, str] | None = None,
    *,
    decoded: bool,
):
    """``table`` whose text id ``columns`` fail the job on a value that is not valid
    UTF-8 (or, ``decoded``, holds U+FFFD: see :func:`invalid_text_ids`), for readers
    without a ``_bad`` column. ``labels`` names the columns as the input file does,
    for the message."""
    from pyspark.sql import functions as F

    from sparkeval.errors import marked_message

    types = dict(table.dtypes)
    selected = []
    for name in table.columns:
        column = F.col(f"`{name}`")
        if name in columns and _is_text(types.get(name)):
            label = (labels or {}).get(name, name)
            broken, message = _utf8_problem(name, source, label, decoded=decoded)
            column = F.when(broken, F.raise_error(marked_message(message))).otherwise(column)
        selected.append(column.alias(name))
    return table.select(*selected)


def strict_text(table, column: str, key: str, source: str, decoded: bool):
    """``table`` whose free-text ``column`` fails the job where it is not valid UTF-8.

    ``decoded``: the text came through Spark's CSV or JSON reader, which turns invalid
    bytes into U+FFFD, so a U+FFFD is refused too (two texts differing only in their
    invalid bytes would otherwise be the same text). The message names ``key``'s value.
    """
    from pyspark.sql import functions as F

    from sparkeval.errors import marked_message

    text = F.col(f"`{column}`").cast(spark_type("string"))
    broken = _not_utf8(text, decoded)
    message = F.concat(
        F.lit(f"{source}: column {column} of {key} '"),
        F.col(f"`{key}`").cast(spark_type("string")),
        F.lit("' is not valid UTF-8 (text is read as UTF-8; convert the file, e.g. "),
        F.lit("iconv -f latin1 -t utf-8)"),
    )
    checked = F.when(broken, F.raise_error(marked_message(message))).otherwise(F.col(f"`{column}`"))
    return table.withColumn(column, checked)


def decodes_text(path: str, fmt: str | None = None) -> bool:
    """Whether Spark reads ``path`` (in format ``fmt``, else by its name) by decoding
    its text, which turns invalid bytes into U+FFFD (:data:`DECODED_FORMATS`)."""
    return detect_format(path, fmt) in DECODED_FORMATS


def _is_text(spark_type: str | None) -> bool:
    return spark_type in ("string", "binary") or str(spark_type).startswith("varchar")


def _not_utf8(text, decoded: bool):
    """Spark condition: ``text`` is not valid UTF-8, or (``decoded``: it came through a
    decoder that replaces invalid bytes) holds U+FFFD."""
    from pyspark.sql import functions as F

    broken = ~F.is_valid_utf8(text)
    return broken | text.contains("\ufffd") if decoded else broken


def _utf8_problem(column: str, source: str, label: str | None = None, *, decoded: bool):
    """(condition, message) of a text column value that is not valid UTF-8 or, where the
    text was ``decoded`` by Spark's reader, holds U+FFFD."""
    from pyspark.sql import functions as F

    text = F.col(f"`{column}`").cast(spark_type("string"))
    broken = _not_utf8(text, decoded)
    message = F.concat(
        F.lit(f"{source}: column {label or column} value '"),
        F.make_valid_utf8(text),
        F.lit(f"' is {NOT_UTF8}"),
    )
    return broken, message


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
    numeric = source_type in NUMERIC_TYPES or str(source_type).startswith("decimal")
    value = (
        raw.cast(spark_type("double"))
        if numeric
        else raw.cast(spark_type("string")).try_cast(spark_type("double"))
    )
    cond = raw.isNull() | value.isNull()
    expected = "a number"
    if integer:
        cond = cond | (value != F.rint(value)) | F.isnan(value) | (F.abs(value) > GRADE_BOUND)
        expected = "an integer between -1e9 and 1e9"
    message = F.concat(
        F.lit(f"{path}: query "),
        F.coalesce(id_column(key_cols[0]), F.lit("<missing>")),
        F.lit(" doc "),
        F.coalesce(id_column(key_cols[1]), F.lit("<missing>")),
        F.lit(f": column {source_col} value '"),
        F.coalesce(raw.cast(spark_type("string")), F.lit("")),
        F.lit(f"' is not {expected}"),
    )
    return value, F.when(cond, message)


def run_frame(
    table, cols: Mapping[str, str], source: str, run_col, decoded: bool, ties: str = "doc-id"
):
    """``run_id, query_id, doc_id, score, _bad`` from a table with resolved columns ``cols``.

    ``run_col`` is the run id expression (a column of the table or a literal); ids
    become strings and a score that is not a number gets its ``_bad`` message, as does
    an id that is not UTF-8 text (``decoded``: see :func:`invalid_text_ids`).  Under
    ``ties="rank"`` the table's rank column (:func:`tie_rank_column`) follows as
    ``_tie``, a rank that is not a number getting its ``_bad`` message.

    Raises:
        ConfigError: ``ties="rank"`` and the table has no rank column.
    """
    from pyspark.sql import functions as F

    check_id_types(table, [cols[c] for c in ("run_id", "query_id", "doc_id") if c in cols], source)
    score, bad = numeric_column(
        table, source, cols["score"], (cols["query_id"], cols["doc_id"]), integer=False
    )
    id_cols = [cols[c] for c in ("run_id", "query_id", "doc_id") if c in cols]
    bad = F.coalesce(invalid_text_ids(table, id_cols, source, decoded), bad)
    tie = []
    if ties == "rank":
        rank_name = tie_rank_column(table.columns)
        if rank_name is None:
            raise ConfigError(no_rank_column_message(source, table.columns))
        keys = (cols["query_id"], cols["doc_id"])
        rank, rank_bad = numeric_column(table, source, rank_name, keys, integer=False)
        bad = F.coalesce(bad, rank_bad)
        tie = [rank.alias(TIE_KEY)]
    return table.select(
        run_col.alias("run_id"),
        id_column(cols["query_id"]).alias("query_id"),
        id_column(cols["doc_id"]).alias("doc_id"),
        score.alias("score"),
        bad.alias(BAD),
        *tie,
    )


#: names of a rank column (1 = first), read as the score -rank when there is no score
RANK_NAMES = ("rank", "position", "pos")


def rank_column(columns: Sequence[str], mapping: Mapping[str, str]) -> str | None:
    """The rank column (1 = first) that orders a run table without a score column, which
    then gets the score ``-rank`` (on Spark and in process alike); None when the table
    has a score column (by name, alias or ``mapping``) or no rank column.

    Example:
        >>> rank_column(["user_id", "item_id", "Rank"], {})
        'Rank'
        >>> rank_column(["user_id", "item_id", "rank", "prediction"], {}) is None
        True
    """
    if "score" in mapping or any(c.lower() in SCORE_NAMES for c in columns):
        return None
    return tie_rank_column(columns)


def tie_rank_column(columns: Sequence[str]) -> str | None:
    """The rank column (by name: ``rank``, ``position``, ``pos``, any case) whose values
    order tied scores under ``--ties rank``, score column or not; None without one.

    Example:
        >>> tie_rank_column(["user_id", "item_id", "score", "Rank"])
        'Rank'
    """
    lower = {c.lower(): c for c in columns}
    return next((lower[n] for n in RANK_NAMES if n in lower), None)


def no_rank_column_message(source: str, columns: Sequence[str]) -> str:
    """The refusal of ``--ties rank`` for a run table without a rank column."""
    return (
        f"{source}: ties rank orders tied scores by the run's rank column, and it has none "
        f"(a column named {', '.join(RANK_NAMES)}; columns are: {', '.join(columns)})"
    )


def rank_only(columns: Sequence[str], mapping: str | Mapping[str, str] | None = None) -> bool:
    """Whether a run table with ``columns`` is ordered by a rank column (it has none
    for the score; :func:`rank_column`)."""
    return rank_column(columns, parse_mapping(mapping, "run")) is not None


def recommendation_shapes(table, columns: str | Mapping[str, str] | None, source: str):
    """The recommendation tables pipelines write, as ``user, item, score`` rows.

    * a list column of ``(item, rating)`` structs per user (MLlib's
      ``recommendForAllUsers``: ``userId, recommendations: array<struct<itemId, rating>>``)
      becomes one row per item: the struct field named like an item id (else the first)
      is the item, one named like a score or ``rating`` (else the second) the score, and
      without a score field the list order ranks the items;
    * a table with a rank column (``rank``, ``position``, ``pos``; 1 = first) and no
      score column gets the score ``-rank``, so the order is the ranks' order.

    Other tables are returned as they are.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import ArrayType, StructType

    mapping = parse_mapping(columns, "run")
    lower = {c.lower(): c for c in table.columns}
    lists = [
        f.name
        for f in table.schema.fields
        if isinstance(f.dataType, ArrayType) and isinstance(f.dataType.elementType, StructType)
    ]
    has_doc = "doc_id" in mapping or any(n in lower for n in DOC_NAMES)
    if lists and not has_doc:
        (column,) = lists[:1]
        fields = table.schema[column].dataType.elementType.fieldNames()
        item = next((f for f in fields if f.lower() in DOC_NAMES), fields[0])
        scores = [f for f in fields if f.lower() in (*SCORE_NAMES, "rating") and f != item]
        others = [c for c in table.columns if c != column]
        exploded = table.select(*others, F.posexplode(column).alias("_pos", "_rec"))
        score = F.col(f"_rec.`{scores[0]}`") if scores else -(F.col("_pos") + 1)
        return exploded.select(
            *others,
            F.col(f"_rec.`{item}`").alias("doc_id"),
            score.cast(spark_type("double")).alias("score"),
        )
    rank = rank_column(table.columns, mapping)
    if rank is not None:
        return table.withColumn("score", -F.col(f"`{rank}`").cast(spark_type("double")))
    del source
    return table


def default_run_id(path: str) -> str:
    """The run id of a table without a run id column: its file name up to the first dot."""
    if is_catalog_table(path):
        return path[len(TABLE_PREFIX) :].rsplit(".", 1)[-1]
    name = Path(local_path(path).rstrip("/")).name
    return name.split(".")[0] or name


def read_run(
    spark: SparkSession,
    path: str,
    fmt: str | None = None,
    columns: str | Mapping[str, str] | None = None,
    where: str | None = None,
    check_rows: bool = True,
    ties: str = "doc-id",
) -> RunInput:
    """Read one run input into ``run_id, query_id, doc_id, score, _bad`` (and ``_tie``,
    its ranks, under ``ties="rank"``: :func:`read_trec_run`, :func:`run_frame`).

    Without a run id column (or TREC tag) the file name without extension is the run id.
    ``where`` filters a table's rows first (SQL over its own columns).  ``check_rows``
    runs a job that fails now on a table without (kept) rows; a caller that finds a run
    without rows by evaluating it (:class:`sparkeval.errors.EmptyRunError`) saves it.
    """
    from pyspark.sql import functions as F

    check_exists(path)
    fmt = detect_format(path, fmt)
    if fmt == "trec":
        _no_where_for_text(path, where)
        df, run_ids = read_trec_run(spark, path, ties)
        return RunInput(path, df, run_ids)
    table = recommendation_shapes(read_table(spark, path, fmt, where=where), columns, path)
    cols = resolve_columns(table.columns, "run", parse_mapping(columns, "run"), path)
    if "run_id" in cols:
        run_col = id_column(cols["run_id"])
        run_ids = tuple(distinct_values(table, run_col))
    else:
        run_col = F.lit(default_run_id(path))
        empty = check_rows and table.first() is None
        run_ids = () if empty else (default_run_id(path),)
    df = run_frame(table, cols, path, run_col, fmt in DECODED_FORMATS, ties)
    if not run_ids:
        raise InputError(no_rows_message(path, "run", where))
    return RunInput(path, df, run_ids)


def no_rows_message(path: str, kind: str, where: str | None = None) -> str:
    """The error message of an input without rows (``where``: without rows that the
    condition keeps)."""
    if where is not None:
        return f"{path}: no {kind} rows where {where}"
    return f"{path}: no {kind} rows (the input is empty)"


def read_qrels(
    spark: SparkSession,
    path: str,
    fmt: str | None = None,
    columns: str | Mapping[str, str] | None = None,
    where: str | None = None,
    check_rows: bool = True,
):
    """Read qrels into ``query_id, doc_id, relevance, _bad`` (``where`` and
    ``check_rows``: as for runs)."""
    from pyspark.sql import functions as F

    check_exists(path)
    fmt = detect_format(path, fmt)
    if fmt == "trec":
        _no_where_for_text(path, where)
        return read_trec_qrels(spark, path)
    table = read_table(spark, path, fmt, where=where)
    cols = resolve_columns(table.columns, "qrels", parse_mapping(columns, "qrels"), path)
    check_id_types(table, [cols["query_id"], cols["doc_id"]], path)
    grade, bad = numeric_column(
        table, path, cols["relevance"], (cols["query_id"], cols["doc_id"]), integer=True
    )
    ids = [cols["query_id"], cols["doc_id"]]
    bad = F.coalesce(invalid_text_ids(table, ids, path, fmt in DECODED_FORMATS), bad)
    df = table.select(
        id_column(cols["query_id"]).alias("query_id"),
        id_column(cols["doc_id"]).alias("doc_id"),
        F.when(bad.isNull(), grade.cast(spark_type("long"))).alias("relevance"),
        bad.alias(BAD),
    )
    if check_rows and df.first() is None:
        raise InputError(no_rows_message(path, "qrels", where))
    return df


def _no_where_for_text(path: str, where: str | None) -> None:
    if where is not None:
        raise InputError(
            f"{path}: --where filters tables (Parquet, CSV, JSON, catalog), not TREC text"
        )


def read_runs(
    spark: SparkSession,
    paths: Sequence[str],
    fmt: str | None = None,
    columns: str | Mapping[str, str] | None = None,
    where: str | None = None,
    check_rows: bool = True,
    ties: str = "doc-id",
):
    """Read and union several run inputs; two inputs may not share a run id
    (``check_rows`` and ``ties``: as for :func:`read_run`)."""
    if not paths:
        raise InputError("no run given (use --run PATH or --run-table NAME)")
    inputs = [read_run(spark, p, fmt, columns, where, check_rows, ties) for p in paths]
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
