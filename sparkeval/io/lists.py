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
from sparkeval.io.columns import RUN_ALIASES, match_columns
from sparkeval.io.locate import with_line_number
from sparkeval.io.readers import (
    check_exists,
    check_id_types,
    detect_format,
    read_table,
    read_trec_run,
    strict_text_ids,
)


def read_typed_table(spark: SparkSession, path: str) -> DataFrame:
    """A Parquet/CSV/TSV/JSONL table with CSV types inferred; the format from the path.

    Raises:
        InputError: the path does not exist or is not a table (TREC text, say).
    """
    check_exists(path)
    fmt = detect_format(path)
    if fmt == "trec":
        raise InputError(
            f"{path}: not a table; expected a Parquet file or directory, .csv, .tsv or .jsonl"
        )
    return read_table(spark, path, fmt, infer_types=True)


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
) -> DataFrame:
    """Rename aliased columns to their canonical names; keep only known columns.

    Raises:
        InputError: a required column is missing (the message lists what was found).
    """
    optional = [c for c in columns if c not in required]
    found = match_columns(df.columns, columns, required, {}, source, "this table", None, optional)
    named = df.select(*(F.col(f"`{found[c]}`").alias(c) for c in columns if c in found))
    ids = [c for c in named.columns if c in ID_COLUMNS]
    check_id_types(df, [found[c] for c in ids], source)
    return strict_text_ids(named, ids, source, {c: found[c] for c in ids})


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
    required = ("query_id", "doc_id", "score") if require_score else ("query_id", "doc_id")
    check_exists(path)
    is_trec = detect_format(path) == "trec"
    table = _read_trec_run(spark, path) if is_trec else read_typed_table(spark, path)
    run = normalise_columns(table, RUN_ALIASES, required, path)
    if "run_id" in run.columns:
        if run_id is not None:
            run = run.where(F.col("run_id") == F.lit(run_id))
        else:
            ids = [r[0] for r in run.select("run_id").distinct().limit(6).collect()]
            if len(ids) > 1:
                shown = ", ".join(map(str, ids[:5]))
                raise ConfigError(
                    f"{path} holds several runs ({shown}{', ...' if len(ids) > 5 else ''}); "
                    "choose one with --run-id"
                )
        run = run.drop("run_id")
    elif run_id is not None:
        raise ConfigError(f"--run-id {run_id} given but {path} has no run_id column")
    dup = run.groupBy("query_id", "doc_id").count().where(F.col("count") > 1).limit(1).collect()
    if dup:
        raise InputError(
            f"{path}: item {dup[0]['doc_id']} appears {dup[0]['count']} times in the list of "
            f"user {dup[0]['query_id']}; each item may appear once per user"
        )
    return run


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
        F.col("query_id").cast("string"),
        F.lit(" item "),
        F.col("doc_id").cast("string"),
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
