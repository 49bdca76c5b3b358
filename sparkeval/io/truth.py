"""Relevance from recommender truth tables: ``(user, item[, rating])`` to integer qrels.

The ranking engine evaluates integer grades (trec_eval semantics).  Recommender
truth usually holds ratings, often non-integer, or no rating at all.  A
:class:`RelevanceRule` turns such a table into qrels before the engine runs:

* ``grade`` (default): the rating column is the integer grade (trec_eval qrels);
* ``all``: every truth item is relevant with grade 1 (the rating, if any, is
  ignored) — Spark MLlib's label sets and Microsoft Recommenders' ground truth;
* ``threshold`` T: grade 1 when rating >= T, else grade 0 (judged, not relevant:
  the user still counts as judged, and scores 0 when none of its items pass).

Output frame: ``query_id, doc_id, relevance, _bad`` (strings, strings, long,
message), the canonical qrels of :mod:`sparkeval.io.readers`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sparkeval.errors import ConfigError, InputError
from sparkeval.formats import BAD
from sparkeval.io.columns import (
    COMMAND_LINE,
    QRELS_ALIASES,
    OptionNaming,
    parse_mapping,
    resolve_columns,
)
from sparkeval.io.readers import (
    DECODED_FORMATS,
    _bad_line,
    _trec_lines,
    check_exists,
    check_id_types,
    detect_format,
    id_column,
    invalid_text_ids,
    no_rows_message,
    numeric_column,
    read_qrels,
    read_table,
)
from sparkeval.spark import spark_type

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

RELEVANCE_KINDS = ("grade", "all", "threshold")


@dataclass(frozen=True)
class RelevanceRule:
    """How truth rows become integer grades.

    Attributes:
        kind: ``grade``, ``all`` or ``threshold``.
        threshold: for ``threshold``, ratings >= this value are relevant (grade 1).
        relevant_only: keep only the relevant truth rows, so that a user (query) with
            no relevant item is not judged at all, as when the truth is filtered by the
            threshold before evaluating (Microsoft Recommenders, most pipelines).
    """

    kind: str = "grade"
    threshold: float | None = None
    relevant_only: bool = False

    def __post_init__(self) -> None:
        if self.kind not in RELEVANCE_KINDS:
            raise ConfigError(
                f"key 'relevance': {self.kind!r} is not one of {', '.join(RELEVANCE_KINDS)}"
            )
        if self.kind == "threshold":
            if (
                isinstance(self.threshold, bool)
                or not isinstance(self.threshold, int | float)
                or not math.isfinite(self.threshold)
            ):
                raise ConfigError(
                    f"key 'relevance_threshold': expected a finite number, got {self.threshold!r}"
                )
        elif self.threshold is not None:
            raise ConfigError(
                f"key 'relevance_threshold' applies only to the threshold rule, not to "
                f"relevance {self.kind!r}"
            )

    @classmethod
    def from_options(
        cls, relevance: str | None, threshold: float | None, relevant_only: bool = False
    ) -> RelevanceRule | None:
        """The rule given by ``relevance`` / ``relevance_threshold`` / ``relevant_only``
        options; None if none is given.

        A threshold alone means the ``threshold`` rule.
        """
        if threshold is not None:
            if relevance not in (None, "threshold"):
                raise ConfigError(
                    f"key 'relevance_threshold' cannot be combined with relevance {relevance!r}"
                )
            return cls("threshold", threshold, relevant_only)
        if relevance is None:
            return cls("grade", None, True) if relevant_only else None
        if relevance == "threshold":
            raise ConfigError("relevance 'threshold' needs key 'relevance_threshold' (a number)")
        return cls(relevance, None, relevant_only)

    @property
    def binary(self) -> bool:
        """True when every grade is 0 or 1."""
        return self.kind != "grade"

    def describe(self) -> dict[str, Any]:
        """The rule as recorded in ``summary.json``."""
        out: dict[str, Any] = {"rule": self.kind}
        if self.kind == "threshold":
            out["threshold"] = self.threshold
        if self.relevant_only:
            out["relevant_only"] = True
        return out

    def grades(self, value):
        """Spark expression: the integer grade of a double rating column ``value``."""
        from pyspark.sql import functions as F

        if self.kind == "all":
            return F.lit(1).cast(spark_type("long"))
        if self.kind == "threshold":
            return (
                F.when(value >= F.lit(float(self.threshold or 0.0)), 1)
                .otherwise(0)
                .cast(spark_type("long"))
            )
        return value.cast(spark_type("long"))

    def grade_values(self, values: np.ndarray) -> np.ndarray:
        """The integer grades (int64) of the ratings ``values`` (a float64 array), as
        :meth:`grades` gives them on Spark."""
        if self.kind == "all":
            return np.ones(len(values), np.int64)
        if self.kind == "threshold":
            return (values >= float(self.threshold or 0.0)).astype(np.int64)
        return values.astype(np.int64)


def has_relevance(columns: list[str], mapping: Mapping[str, str]) -> bool:
    """Whether a truth table with ``columns`` has a rating column (by alias or
    ``mapping``); without one only the ``all`` rule applies."""
    lower = {c.lower() for c in columns}
    return "relevance" in mapping or any(a in lower for a in QRELS_ALIASES["relevance"])


def truth_to_qrels(
    df: DataFrame,
    rule: RelevanceRule,
    columns: str | Mapping[str, str] | None = None,
    source: str = "<truth DataFrame>",
    decoded: bool = False,
    naming: OptionNaming = COMMAND_LINE,
):
    """Canonical qrels from a truth DataFrame with user, item and (optionally) rating columns.

    Column names are found as for qrels (``user_id``/``userID``/``query_id``,
    ``item_id``/``itemID``/``doc_id``, ``rating``/``relevance``/...).  The rating
    column may be absent under the ``all`` rule. ``decoded``: the table came through
    Spark's CSV or JSON reader (see :func:`~sparkeval.io.readers.invalid_text_ids`).
    ``naming``: how an error names the option that maps the columns.
    """
    from pyspark.sql import functions as F

    mapping = parse_mapping(columns, "qrels")
    if rule.kind == "all" and not has_relevance(list(df.columns), mapping):
        df = df.withColumn("_relevance_all", F.lit(1))
        mapping = {**mapping, "relevance": "_relevance_all"}
    cols = resolve_columns(list(df.columns), "qrels", mapping, source, naming)
    check_id_types(df, [cols["query_id"], cols["doc_id"]], source)
    value, bad = numeric_column(
        df,
        source,
        cols["relevance"],
        (cols["query_id"], cols["doc_id"]),
        integer=rule.kind == "grade",
    )
    if rule.kind == "all":
        bad = F.lit(None).cast(spark_type("string"))
    ids = [cols["query_id"], cols["doc_id"]]
    bad = F.coalesce(invalid_text_ids(df, ids, source, decoded), bad)
    qrels = df.select(
        id_column(cols["query_id"]).alias("query_id"),
        id_column(cols["doc_id"]).alias("doc_id"),
        F.when(bad.isNull(), rule.grades(value)).alias("relevance"),
        bad.alias(BAD),
    )
    return keep_relevant(qrels, rule)


def _read_trec_truth(spark: SparkSession, path: str, rule: RelevanceRule):
    from pyspark.sql import functions as F

    rows = _trec_lines(spark, path)
    if rows.first() is None:
        raise InputError(f"{path}: no qrels lines (the file is empty or only has comments)")
    rating = F.get(F.col("_f"), 3).try_cast(spark_type("double"))
    if rule.kind == "all":
        cond = F.size("_f") < 3
        expected = "expected 'qid iter docno [rel]'"
    else:
        cond = (F.size("_f") < 4) | rating.isNull() | F.isnan(rating)
        expected = "expected 'qid iter docno rel' with a numeric rating"
    bad = _bad_line(path, cond, expected)
    qrels = rows.select(
        F.get(F.col("_f"), 0).alias("query_id"),
        F.get(F.col("_f"), 2).alias("doc_id"),
        F.when(bad.isNull(), rule.grades(rating)).alias("relevance"),
        bad.alias(BAD),
    )
    return keep_relevant(qrels, rule)


def read_truth(
    spark: SparkSession,
    path: str,
    rule: RelevanceRule,
    fmt: str | None = None,
    columns: str | Mapping[str, str] | None = None,
    where: str | None = None,
    check_rows: bool = True,
):
    """Read qrels or a recommender truth table and apply the relevance rule.

    The ``grade`` rule is exactly :func:`sparkeval.io.readers.read_qrels`; ``where``
    filters a table's rows first.  ``check_rows=False`` leaves out the job that fails
    on qrels without rows under the ``grade`` rule (the caller finds them so from the
    rows the evaluation reads); other rules' tables are always checked.
    """
    if rule.kind == "grade":
        df = read_qrels(spark, path, fmt, columns, where, check_rows)
    else:
        check_exists(path)
        fmt = detect_format(path, fmt)
        if fmt == "trec":
            if where is not None:
                raise InputError(f"{path}: --qrels-where filters tables, not TREC text")
            df = _read_trec_truth(spark, path, rule)
        else:
            table = read_table(spark, path, fmt, where=where)
            df = truth_to_qrels(table, rule, columns, path, fmt in DECODED_FORMATS)
            if df.first() is None:
                raise InputError(no_rows_message(path, "truth"))
    return keep_relevant(df, rule) if rule.kind == "grade" else df


def keep_relevant(qrels, rule: RelevanceRule):
    """``qrels`` without the non-relevant rows when ``rule.relevant_only`` (rows with a
    ``_bad`` message stay, so that they are still reported)."""
    from pyspark.sql import functions as F

    if not rule.relevant_only:
        return qrels
    return qrels.where((F.col("relevance") > 0) | F.col(BAD).isNotNull())
