"""Run and truth DataFrames handed to the Python API, as the engine's canonical frames.

Columns are found by name or alias as in files and in process
(:func:`~sparkeval.io.columns.resolve_columns`: ``user_id, item_id, prediction`` reads
as ``query_id, doc_id, score``), a run with a rank column and no score gets the score
``-rank`` and a list of recommendations per user becomes one row per item
(:func:`~sparkeval.io.readers.recommendation_shapes`), and the truth's ratings become
grades by a :class:`~sparkeval.io.truth.RelevanceRule`
(:func:`~sparkeval.io.truth.truth_to_qrels`). Frames whose columns already have their
canonical names are passed on as they are, so the engine still sees the caller's plan
(a bare scan of Parquet files is read by the workers).

Example::

    run_df = spark_run(spark.createDataFrame(recs), {"user_id": "uid"})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from sparkeval.errors import ConfigError, OptionTypeError
from sparkeval.formats import BAD, TIE_KEY
from sparkeval.io.columns import PYTHON_KEYWORDS, OptionNaming, parse_mapping, resolve_columns
from sparkeval.io.readers import no_rank_column_message, recommendation_shapes, tie_rank_column
from sparkeval.io.truth import RelevanceRule, truth_to_qrels

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: a column mapping as the API takes it: ``"query_id=u,doc_id=i"`` or a dict
Columns = str | Mapping[str, str] | None


def spark_run(
    df: DataFrame,
    columns: Columns = None,
    naming: OptionNaming = PYTHON_KEYWORDS,
    ties: str = "doc-id",
) -> DataFrame:
    """The run ``df`` with canonical column names (``[run_id,] query_id, doc_id, score``);
    a frame of the readers (with ``_bad``) as it is.  Under ``ties="rank"`` the frame's
    rank column (:func:`~sparkeval.io.readers.tie_rank_column`) follows as ``_tie``.

    Raises:
        ConfigError: ``ties="rank"`` and the frame has no rank column.
    """
    _check_frame(df, "run")
    if BAD in df.columns:
        return df
    source = "run DataFrame"
    shaped = recommendation_shapes(df, columns, source)
    found = resolve_columns(
        list(shaped.columns), "run", parse_mapping(columns, "run"), source, naming
    )
    if ties != "rank":
        return _canonical(shaped, found)
    rank = tie_rank_column(list(shaped.columns))
    if rank is None:
        raise ConfigError(no_rank_column_message(source, list(shaped.columns)))
    return _canonical(shaped, {**found, TIE_KEY: rank}, force=True)


def spark_qrels(
    df: DataFrame,
    rule: RelevanceRule | None = None,
    columns: Columns = None,
    naming: OptionNaming = PYTHON_KEYWORDS,
) -> DataFrame:
    """The qrels or truth ``df`` as ``query_id, doc_id, relevance``: renamed when its
    ratings are the grades (``rule`` None or plain ``grade``), else graded by ``rule``
    (with a ``_bad`` column, checked as a file's truth is)."""
    _check_frame(df, "qrels")
    if BAD in df.columns:
        return df
    source = "qrels DataFrame"
    if rule is None or rule == RelevanceRule("grade"):
        mapping = parse_mapping(columns, "qrels")
        return _canonical(df, resolve_columns(list(df.columns), "qrels", mapping, source, naming))
    return truth_to_qrels(df, rule, columns, source, naming=naming)


def _check_frame(given: object, kind: str) -> None:
    """An :class:`~sparkeval.errors.OptionTypeError` unless ``given`` is a Spark DataFrame."""
    if not (hasattr(given, "sparkSession") and hasattr(given, "schema")):
        raise OptionTypeError(
            f"{kind}: expected a Spark DataFrame with a SparkSession (or spark=None for "
            f"a pandas DataFrame or an Arrow table), got {type(given).__name__}"
        )


def _canonical(df: DataFrame, found: Mapping[str, str], force: bool = False) -> DataFrame:
    """``df``'s columns ``found`` ({canonical: source}) under their canonical names;
    ``df`` itself when they have them already (unless ``force``)."""
    if not force and all(canonical == source for canonical, source in found.items()):
        return df
    from pyspark.sql import functions as F

    return df.select(
        *(
            F.col("`" + source.replace("`", "``") + "`").alias(canonical)
            for canonical, source in found.items()
        )
    )
