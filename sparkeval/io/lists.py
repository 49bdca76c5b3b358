"""Tables read as typed lists: the runs, training data, item features and docs of the
LSH and diversity commands.

They are read by the one table reader (:func:`sparkeval.io.readers.read_table`, the
same format detection and errors as every input) with CSV types inferred; a run may
also be a TREC run file (``qid Q0 docno rank score tag``, read like ``sparkeval
evaluate`` reads it). Column names are matched case-insensitively against the one
alias table, :mod:`sparkeval.io.columns`, so a recommender table ``userID, itemID,
prediction`` reads as ``query_id, doc_id, score``.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparkeval.engine.formats import BAD
from sparkeval.engine.plans.spark_order import with_rank
from sparkeval.errors import ConfigError, InputError
from sparkeval.io.columns import DOC_NAMES, QUERY_NAMES, RUN_ALIASES, RUN_NAMES, match_columns
from sparkeval.io.locate import with_line_number
from sparkeval.io.readers import (
    check_exists,
    check_id_types,
    decodes_text,
    detect_format,
    read_table,
    read_trec_run,
    strict_text_ids,
)
from sparkeval.spark import spark_type


def read_typed_table(spark: SparkSession, path: str) -> DataFrame:
    """A Parquet/CSV/TSV/JSONL table with CSV types inferred but for its id columns,
    which stay text (:func:`_ids_as_text`); the format from the path.

    Raises:
        InputError: the path does not exist or is not a table (TREC text, say).
    """
    check_exists(path)
    fmt = detect_format(path)
    if fmt == "trec":
        raise InputError(
            f"{path}: not a table; expected a Parquet file or directory, .csv, .tsv or .jsonl"
        )
    table = read_table(spark, path, fmt, infer_types=True)
    if fmt not in ("csv", "tsv"):
        return table
    return _ids_as_text(table, read_table(spark, path, fmt), path)


#: column names (any case) that hold ids in the tables read here
_ID_NAMES = frozenset((*QUERY_NAMES, *DOC_NAMES, *RUN_NAMES, "id"))


def _ids_as_text(inferred: DataFrame, text: DataFrame, path: str) -> DataFrame:
    """A CSV table with its id columns as the file's text and every other column of
    the type Spark inferred: ids ``007`` and ``7``, or ``01`` and ``1``, stay two ids.

    ``text`` is the same file read with every column as text (the inference pass of
    ``inferred`` is not repeated: its schema is used)."""
    columns = []
    for field in inferred.schema.fields:
        column = F.col(f"`{field.name}`")
        if field.name.lower() in _ID_NAMES or field.dataType.typeName() == "string":
            columns.append(column)
        else:
            columns.append(column.cast(field.dataType).alias(field.name))
    return text.select(*columns)


def _read_trec_run(spark: SparkSession, path: str) -> DataFrame:
    """A TREC run file as ``run_id, query_id, doc_id, score``; a malformed line is an error.

    Raises:
        InputError: naming the file and line of the first malformed line.
    """
    df, _ = read_trec_run(spark, path)
    bad = df.where(F.col(BAD).isNotNull()).select(BAD).first()
    if bad is not None:
        raise InputError(with_line_number(bad[0]))
    return df.drop(BAD)


def normalise_columns(
    df: DataFrame,
    columns: dict[str, tuple[str, ...]],
    required: tuple[str, ...],
    source: str,
    decoded: bool,
) -> DataFrame:
    """Rename aliased columns to their canonical names; keep only known columns; text
    ids must be UTF-8 (``decoded``: the table came through a decoding reader, see
    :func:`~sparkeval.io.readers.invalid_text_ids`).

    Raises:
        InputError: a required column is missing (the message lists what was found).
    """
    optional = [c for c in columns if c not in required]
    found = match_columns(df.columns, columns, required, {}, source, "this table", None, optional)
    named = df.select(*(F.col(f"`{found[c]}`").alias(c) for c in columns if c in found))
    ids = [c for c in named.columns if c in ID_COLUMNS]
    check_id_types(df, [found[c] for c in ids], source)
    return strict_text_ids(named, ids, source, {c: found[c] for c in ids}, decoded=decoded)


#: canonical columns that hold ids (checked to be valid UTF-8 text)
ID_COLUMNS = ("run_id", "query_id", "doc_id", "user_id", "item_id")


def read_run_table(
    spark: SparkSession, path: str, run_id: str | None = None, require_score: bool = True
) -> DataFrame:
    """A run as ``query_id, doc_id, score[, relevance]`` for one run id.

    When the table holds several run ids, ``run_id`` picks one (a ConfigError lists
    them otherwise). A missing score column is an error when ``require_score``.

    Raises:
        InputError: missing columns, or the same item twice in one user's list.
    """
    return checked_run(read_run_rows(spark, path, require_score), path, run_id)


def checked_run(rows: DataFrame, path: str, run_id: str | None) -> DataFrame:
    """:func:`read_run_rows`' rows of run ``run_id`` (:func:`one_run`), after a job
    has checked that no user lists an item twice.

    Raises:
        InputError: the same item twice in one user's list.
    """
    run = one_run(rows, path, run_id)
    dup = run.groupBy("query_id", "doc_id").count().where(F.col("count") > 1).limit(1).collect()
    if dup:
        raise repeated_item_error(path, dup[0]["query_id"], dup[0]["doc_id"], dup[0]["count"])
    return run


def read_run_rows(spark: SparkSession, path: str, require_score: bool = True) -> DataFrame:
    """A run's rows as ``query_id, doc_id, score[, relevance][, run_id]``: the columns
    found by their aliases, no check of run ids or repeated items yet (no job, but a
    TREC file's check of its lines)."""
    required = ("query_id", "doc_id", "score") if require_score else ("query_id", "doc_id")
    check_exists(path)
    is_trec = detect_format(path) == "trec"
    table = _read_trec_run(spark, path) if is_trec else read_typed_table(spark, path)
    return normalise_columns(table, RUN_ALIASES, required, path, decodes_text(path))


def one_run(run: DataFrame, path: str, run_id: str | None) -> DataFrame:
    """The rows of run ``run_id`` without the ``run_id`` column; with no ``run_id``,
    the table must hold one run (a job looks at up to six run ids).

    Raises:
        ConfigError: several runs and no ``run_id``, or a ``run_id`` and no such column.
    """
    if "run_id" not in run.columns:
        if run_id is not None:
            raise missing_run_id_column(path, run_id)
        return run
    if run_id is not None:
        return run.where(F.col("run_id") == F.lit(run_id)).drop("run_id")
    ids = [r[0] for r in run.select("run_id").distinct().limit(6).collect()]
    if len(ids) > 1:
        raise several_runs_error(path, ids)
    return run.drop("run_id")


def several_runs_error(path: str, ids: list) -> ConfigError:
    """The error of a table holding several runs (``ids``: up to six of them)."""
    shown = ", ".join(map(str, ids[:5]))
    return ConfigError(
        f"{path} holds several runs ({shown}{', ...' if len(ids) > 5 else ''}); "
        "choose one with --run-id"
    )


def missing_run_id_column(path: str, run_id: str) -> ConfigError:
    """The error of a ``--run-id`` given for a table without run ids."""
    return ConfigError(f"--run-id {run_id} given but {path} has no run_id column")


def repeated_item_error(path: str, user: object, item: object, count: int) -> InputError:
    """The error of an item listed ``count`` times for one user."""
    return InputError(
        f"{path}: item {item} appears {count} times in the list of "
        f"user {user}; each item may appear once per user"
    )


def top_k(run: DataFrame, k: int | None) -> DataFrame:
    """Each user's first k rows by score descending, ties by item id descending.

    The scores decide the cut, so a missing or NaN score fails the job naming its
    user and item (infinite scores rank first or last, as numbers do).
    """
    if k is None:
        return run
    from sparkeval.errors import marked_message

    message = F.concat(
        F.lit("user "),
        F.col("query_id").cast(spark_type("string")),
        F.lit(" item "),
        F.col("doc_id").cast(spark_type("string")),
        F.lit(": score is missing or NaN (expected a number; the top-k cut needs one)"),
    )
    unscored = F.col("score").isNull() | F.isnan(F.col("score"))
    checked = run.withColumn(
        "score", F.when(unscored, F.raise_error(marked_message(message))).otherwise(F.col("score"))
    )
    return with_rank(checked, ["query_id"], k, column="_rank").drop("_rank")


def check_k(k: int | None) -> int | None:
    """Validate a list cutoff: ``None`` or an integer >= 1."""
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a positive integer (list cutoff), got {k!r}")
    return k
