"""The measures of the whole recommendation set in ``evaluate`` (``Coverage@k``,
``Novelty@k``, ... with ``--train``): each run's top-k lists cut from the rows the
evaluation reads, in its ranking order (score descending, ties by the doc id's text
descending; ``--depth`` cuts first), measured by :mod:`sparkeval.diversity.set_values`
in this process (the local engine) or on Spark, and added to the evaluation's report.

Every query of a run counts (a list is a recommendation whether or not the qrels
judge its user), as in ``sparkeval diversity``; ids are compared as text on both
engines.

The report gets, per run, each value under ``measures`` (0 ``undefined``, no
interval) and its counts under ``set_measures``; ``parameters.set_measures`` names
them and ``compat.definitions`` says what each computes. Each user's value of a
measure that is a mean over users goes to ``per_user_set.parquet``
(:mod:`sparkeval.evaluation.per_user_set`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from sparkeval.diversity.set_values import local_per_user, local_value, spark_per_user, spark_value
from sparkeval.errors import ConfigError
from sparkeval.evaluation import per_user_set
from sparkeval.formats import RUN_CODE
from sparkeval.io.direct_input import NotDirect

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from sparkeval.evaluation.options import EvaluateConfig
    from sparkeval.io.direct_input import DirectPlan
    from sparkeval.measures.set_names import SetMeasure

#: {run id: {output name: the value and its counts}}
SetValues = dict[str, dict[str, dict[str, Any]]]


@dataclass
class SetResults:
    """The set measures of every run and the rows of ``per_user_set.parquet``.

    Attributes:
        values: each run's values and counts (:data:`SetValues`).
        per_user: the per-user rows: an Arrow table (the local engine), a cached Spark
            frame in the file's order, or None when no measure has per-user values.
    """

    values: SetValues
    per_user: pa.Table | DataFrame | None = None

    def write(self, directory: Any) -> bool:
        """Write ``per_user_set.parquet`` into ``directory`` when there are per-user
        rows; whether it was written."""
        if self.per_user is None:
            return False
        per_user_set.write_table(self.per_user, directory / per_user_set.FILE_NAME)
        return True

    def rows(self) -> list[dict[str, Any]]:
        """The per-user rows as dicts, in the file's order (None where undefined)."""
        if self.per_user is None:
            return []
        if isinstance(self.per_user, pa.Table):
            return self.per_user.to_pylist()
        return [row.asDict() for row in self.per_user.toLocalIterator()]

    def unpersist(self) -> None:
        """Release a cached Spark frame of per-user rows."""
        if self.per_user is not None and not isinstance(self.per_user, pa.Table):
            self.per_user.unpersist()


def _cut(config: EvaluateConfig, measure: SetMeasure) -> int:
    """The ranks a measure takes: ``k``, or ``--depth`` when shorter."""
    return min(measure.k, config.depth) if config.depth else measure.k


def local_set_values(config: EvaluateConfig, direct: DirectPlan) -> SetResults:
    """Each run's set measures in this process, from the run rows of ``direct`` as the
    local engine reads them (:func:`~sparkeval.io.direct.read_unit`: every format,
    column map and run id of the plan) and the Parquet training interactions.

    Raises:
        NotDirect: training interactions that are not Parquet, or ids Spark's readers
            judge (the run is then evaluated on Spark under ``--engine auto``).
    """
    from sparkeval.diversity.local_read import read_local_table
    from sparkeval.io.columns import TRAIN_ALIASES

    assert config.train is not None
    train_table = read_local_table(config.train, TRAIN_ALIASES, ("query_id", "doc_id"))
    train = pd.DataFrame({c: _text(train_table.column(c)) for c in ("query_id", "doc_id")})
    out: SetValues = {}
    measures = config.set_measures()
    parts = []
    for run_id, rows in _planned_runs(direct).items():
        ranked = ranked_cut(rows)
        out[run_id] = {}
        for order, m in enumerate(measures):
            lists = ranked[ranked["_rank"] <= _cut(config, m)]
            out[run_id][m.name] = local_value(m.kind, lists, train, m.k)
            if m in per_user_set.per_user_measures(measures):
                frame = local_per_user(m.kind, lists, train, m.k)
                parts.append((run_id, per_user_set.shown_name(m, config.names), order, frame))
    table = per_user_set.local_table(parts) if parts else None
    return SetResults(out, table)


def _text(values: np.ndarray) -> np.ndarray:
    """Ids as Python strings (integers as their decimal text, as Spark casts them)."""
    return np.asarray([str(v) for v in values.tolist()], dtype=object)


def _planned_runs(direct: DirectPlan) -> dict[str, pd.DataFrame]:
    """``query_id, doc_id`` (text) and ``score`` of each run of the plan, by run id."""
    from sparkeval.io.direct import read_unit

    parts = [
        read_unit(source, unit, direct.run_ids)
        for source in direct.runs
        for unit in range(len(source.units))
    ]
    codes = _joined(parts, RUN_CODE)
    frame = pd.DataFrame(
        {
            "query_id": _text(_joined(parts, "query_id")),
            "doc_id": _text(_joined(parts, "doc_id")),
            "score": _joined(parts, "score").astype(np.float64),
        }
    )
    out: dict[str, pd.DataFrame] = {}
    for code in np.unique(codes):
        if code >= 0:  # a negative code: a placeholder row of a run without rows
            out[direct.run_ids[int(code)]] = frame[codes == code].reset_index(drop=True)
    return out


def _joined(parts: list[pa.Table], column: str) -> np.ndarray:
    """``column`` of every table, one after the other (ids decoded, as text)."""
    chunks = []
    for part in parts:
        for chunk in part.column(column).chunks:
            if pa.types.is_dictionary(chunk.type):
                chunk = chunk.dictionary_decode()
            chunks.append(
                chunk.cast(pa.string()) if column != "score" and column != RUN_CODE else chunk
            )
    if not chunks:
        return np.zeros(0)
    return pa.concat_arrays(chunks).to_numpy(zero_copy_only=False)


def ranked_cut(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with ``_rank``, 1-based within each query: score descending, tied
    scores by the doc id's text descending (:mod:`sparkeval.spark_order`)."""
    if np.isnan(frame["score"].to_numpy()).any():
        raise NotDirect("a missing or NaN score is judged by Spark's readers")
    order = frame.sort_values(
        ["query_id", "score", "doc_id"], ascending=[True, False, False], kind="stable"
    )
    return order.assign(_rank=order.groupby("query_id", sort=False).cumcount() + 1)


def spark_set_values(spark: SparkSession, config: EvaluateConfig) -> SetResults:
    """Each run's set measures on Spark, from the run rows as the evaluation reads them
    (every format, ``--where``, column maps, catalog tables)."""

    from sparkeval.io import read_runs

    run_df, run_ids = read_runs(
        spark,
        config.run_inputs(),
        config.run_format or config.format,
        config.run_column_map(),
        config.where,
        check_rows=False,
    )
    if "score" not in run_df.columns:
        raise ConfigError("the measures of the recommendation set need the runs' scores")
    assert config.train is not None
    return spark_results_by_run(
        spark, run_df, config.train, run_ids, config.set_measures(),
        lambda m: _cut(config, m), config.names,
    )  # fmt: skip


def spark_values_by_run(
    spark: SparkSession,
    rows: DataFrame,
    train: Any,
    run_ids: Sequence[str],
    measures: Sequence[SetMeasure],
    cut: Callable[[SetMeasure], int],
) -> SetValues:
    """Each run's value of each set measure on Spark: ``rows`` (``run_id, query_id,
    doc_id, score``) ranked once to the deepest cut, each measure over its run's rows
    within ``cut(measure)``, against the training interactions ``train`` (a path or a
    DataFrame)."""
    return spark_results_by_run(spark, rows, train, run_ids, measures, cut, None).values


def spark_results_by_run(
    spark: SparkSession,
    rows: DataFrame,
    train: Any,
    run_ids: Sequence[str],
    measures: Sequence[SetMeasure],
    cut: Callable[[SetMeasure], int],
    names: Any,
) -> SetResults:
    """:func:`spark_values_by_run`, and with ``names`` (the output's naming, not None)
    the per-user rows too, cached and counted before the inputs' cache is released."""
    from pyspark.sql import functions as F

    ranked = spark_ranked(rows, max(cut(m) for m in measures)).cache()
    frame = spark_train(spark, train).cache()
    try:
        out: SetValues = {}
        parts = []
        for run_id in run_ids:
            of_run = ranked.where(F.col("run_id") == F.lit(run_id))
            out[run_id] = {}
            for order, m in enumerate(measures):
                lists = of_run.where(F.col("_rank") <= cut(m))
                out[run_id][m.name] = spark_value(m.kind, lists, frame, m.k)
                if names is not None and m in per_user_set.per_user_measures(measures):
                    values = spark_per_user(m.kind, lists, frame, m.k)
                    parts.append((run_id, per_user_set.shown_name(m, names), order, values))
        per_user = per_user_set.spark_frame(parts)
        if per_user is not None:
            per_user = per_user.cache()
            per_user.count()
        return SetResults(out, per_user)
    finally:
        ranked.unpersist()
        frame.unpersist()


def spark_ranked(rows: DataFrame, deepest: int) -> DataFrame:
    """``run_id, query_id, doc_id`` as text with ``_rank`` (1-based in each run's
    query, :func:`~sparkeval.spark_order.with_rank`), the first ``deepest`` ranks."""
    from pyspark.sql import functions as F

    from sparkeval.spark_order import with_rank

    text = [F.col(c).cast("string").alias(c) for c in ("run_id", "query_id", "doc_id")]
    frame = rows.select(*text, F.col("score").cast("double").alias("score"))
    return with_rank(frame, ["run_id", "query_id"], deepest, column="_rank")


def spark_train(spark: SparkSession, train: Any) -> DataFrame:
    """The training interactions (a path, or a DataFrame) as text ``query_id, doc_id``,
    their columns found by the same aliases as ``diversity`` finds them."""
    from pyspark.sql import functions as F

    from sparkeval.io.columns import TRAIN_ALIASES
    from sparkeval.io.lists import normalise_columns, read_typed_table
    from sparkeval.io.readers import decodes_text

    if isinstance(train, str):
        frame = normalise_columns(
            read_typed_table(spark, train), TRAIN_ALIASES, ("query_id", "doc_id"), train,
            decodes_text(train),
        )  # fmt: skip
    else:
        frame = normalise_columns(
            train, TRAIN_ALIASES, ("query_id", "doc_id"), "train DataFrame", False
        )
    return frame.select(*(F.col(c).cast("string").alias(c) for c in ("query_id", "doc_id")))


def add_set_measures(evaluation: Any, config: EvaluateConfig, values: SetValues) -> None:
    """Add each run's set measures of the ``evaluate`` job to its evaluation."""
    add_set_values(evaluation, config.set_measures(), values, config.names, config.train)


def add_set_values(
    evaluation: Any, measures: list[SetMeasure], values: SetValues, names: Any, train: Any
) -> None:
    """Add each run's set measures to an evaluation (in place): to its report (values,
    counts, their names and definitions) and to its ``summary`` table's names.

    Raises:
        ConfigError: a run of the report without its lists (none should be missing).
    """
    report = evaluation.report
    shown = {m.name: per_user_set.shown_name(m, names) for m in measures}
    for run_id, run in report["runs"].items():
        blocks = values.get(run_id)
        if blocks is None:
            raise ConfigError(f"run {run_id}: its recommendation lists were not found")
        run["set_measures"] = {}
        for m in measures:
            block = dict(blocks[m.name])
            name = shown[m.name]
            run["measures"][name] = block.pop("value")
            run["undefined"][name] = 0
            run["ci95"][name] = None
            run["set_measures"][name] = {"k": m.k, **block}
    report["parameters"]["set_measures"] = list(shown.values())
    report["parameters"]["train"] = train if isinstance(train, str) else "a table"
    compat = report.setdefault("compat", {})
    compat.setdefault("definitions", {}).update({shown[m.name]: m.definition() for m in measures})
    evaluation.set_names = [*evaluation.set_names, *shown.values()]
