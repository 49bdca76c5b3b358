"""Tables read as typed lists: the runs, training data, item features and docs of the
LSH and diversity commands.

They are read by the one table reader (:func:`sparkeval.io.readers.read_table`, the
same format detection and errors as every input) with CSV types inferred; a run may
also be a TREC run file (``qid Q0 docno rank score tag``, read like ``sparkeval
evaluate`` reads it). Column names are matched case-insensitively against the one
alias table, :mod:`sparkeval.io.columns`, so a recommender table ``userID, itemID,
prediction`` reads as ``query_id, doc_id, score``.

A run table may hold several runs (a ``run_id`` column, a TREC file's tag):
:func:`checked_runs` gives every run (or the one asked for) with their ids, for the
commands that evaluate each run of their input in one call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparkeval.errors import InputError
from sparkeval.formats import BAD
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
from sparkeval.io.run_choice import (
    check_k,
    chosen_runs,
    missing_run_id_column,
    repeated_item_error,
)
from sparkeval.spark import spark_type
from sparkeval.spark_order import with_rank

__all__ = [
    "RunTable",
    "check_k",
    "check_repeated_items",
    "checked_runs",
    "missing_run_id_column",
    "normalise_columns",
    "read_run_rows",
    "read_typed_table",
    "repeated_item_error",
    "select_runs",
    "top_k",
]


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


@dataclass(frozen=True)
class RunTable:
    """The runs of a run table to evaluate: their rows and their ids, in order.

    Attributes:
        path: the run file, for messages.
        rows: ``query_id, doc_id[, score][, relevance][, run_id]``, the rows of the
            runs in ``ids`` only; ``run_id`` (text) where the table has run ids.
        ids: the runs, sorted; a table without run ids is one run named by its file
            (:func:`~sparkeval.io.readers.default_run_id`, as ``evaluate`` names it).
        cached: the cached table ``rows`` is taken from (several runs are read
            once), for :meth:`release` to unpersist; None when nothing is cached.
    """

    path: str
    rows: DataFrame
    ids: tuple[str, ...]
    cached: DataFrame | None = None

    @property
    def has_ids(self) -> bool:
        """Whether the rows carry a ``run_id`` column."""
        return "run_id" in self.rows.columns

    def rows_of(self, run_id: str) -> DataFrame:
        """Run ``run_id``'s rows, without the ``run_id`` column."""
        if not self.has_ids:
            return self.rows
        return self.rows.where(F.col("run_id") == F.lit(run_id)).drop("run_id")

    def run_label(self, run_id: str) -> str | None:
        """``run_id`` where the table has run ids (for messages), else None."""
        return run_id if self.has_ids else None

    def release(self) -> None:
        """Unpersist the cached rows, if any."""
        if self.cached is not None:
            self.cached.unpersist()


def checked_runs(rows: DataFrame, path: str, run_id: str | None) -> RunTable:
    """The runs of :func:`read_run_rows`' rows (every run, or run ``run_id``): a job
    lists the run ids, another checks that no user of a run lists an item twice.

    Rows that may hold several runs (run ids, none chosen) are cached by the first
    job and read once for every run; :meth:`RunTable.release` unpersists them.

    Raises:
        ConfigError: ``run_id`` given for a table without run ids or not among them.
        InputError: the same item twice in one user's list.
    """
    several = "run_id" in rows.columns and run_id is None
    if several:
        rows = rows.cache()
    try:
        runs = select_runs(rows, path, run_id, distinct_run_ids(rows))
        if several:
            runs = RunTable(path, runs.rows, runs.ids, cached=rows)
        check_repeated_items(runs.rows, path)
    except BaseException:
        if several:
            rows.unpersist()
        raise
    return runs


def distinct_run_ids(rows: DataFrame) -> list[str | None]:
    """The run ids of :func:`read_run_rows`' rows (a job); none without the column."""
    if "run_id" not in rows.columns:
        return []
    return [r[0] for r in rows.select("run_id").distinct().collect()]


def select_runs(
    rows: DataFrame, path: str, run_id: str | None, found: Sequence[str | None]
) -> RunTable:
    """The runs to evaluate of :func:`read_run_rows`' rows, whose run ids are ``found``
    (``None`` for rows without one): every run, or ``run_id`` alone
    (:func:`~sparkeval.io.run_choice.chosen_runs`). A ``run_id`` column without a
    value is no run id (one run, named by its file).

    Raises:
        ConfigError: ``run_id`` given for a table without run ids or not among them.
        InputError: rows without a run id beside rows with one.
    """
    has_column = "run_id" in rows.columns
    keeps_ids, ids = chosen_runs(path, has_column, run_id, found)
    if has_column and not keeps_ids:
        rows = rows.drop("run_id")
    if keeps_ids and run_id is not None:
        rows = rows.where(F.col("run_id") == F.lit(run_id))
    return RunTable(path, rows, ids)


def check_repeated_items(rows: DataFrame, path: str, run_id: str | None = None) -> None:
    """A job checks that no user of a run lists an item twice.

    Raises:
        InputError: naming the run (the rows' ``run_id``, else ``run_id`` if given),
            the user and the item.
    """
    keys = [c for c in ("run_id", "query_id", "doc_id") if c in rows.columns]
    dup = rows.groupBy(*keys).count().where(F.col("count") > 1).limit(1).collect()
    if dup:
        row = dup[0].asDict()
        raise repeated_item_error(
            path, row["query_id"], row["doc_id"], row["count"], row.get("run_id", run_id)
        )


def read_run_rows(spark: SparkSession, path: str, require_score: bool = True) -> DataFrame:
    """A run's rows as ``query_id, doc_id, score[, relevance][, run_id]``: the columns
    found by their aliases, run ids as text, no check of run ids or repeated items
    yet (no job, but a TREC file's check of its lines)."""
    required = ("query_id", "doc_id", "score") if require_score else ("query_id", "doc_id")
    check_exists(path)
    is_trec = detect_format(path) == "trec"
    table = _read_trec_run(spark, path) if is_trec else read_typed_table(spark, path)
    rows = normalise_columns(table, RUN_ALIASES, required, path, decodes_text(path))
    if "run_id" in rows.columns:
        rows = rows.withColumn("run_id", F.col("run_id").cast(spark_type("string")))
    return rows


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
