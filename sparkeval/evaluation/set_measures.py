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

from sparkeval.diversity.category_values import local_category_value, spark_category_value
from sparkeval.diversity.reference_values import (
    REFERENCE_KINDS,
    local_reference_value,
    spark_reference_value,
)
from sparkeval.diversity.set_values import local_per_user, local_value, spark_per_user, spark_value
from sparkeval.errors import ConfigError
from sparkeval.evaluation import per_user_set
from sparkeval.evaluation.run_rows import read_evaluated_runs
from sparkeval.formats import RUN_CODE
from sparkeval.io.direct_input import NotDirect
from sparkeval.measures.set_names import needed_input

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


@dataclass(frozen=True)
class LocalInputs:
    """What the set measures read beside each run's lists, held in this process.

    Attributes:
        train: the training interactions, ``query_id, doc_id`` as text (or None).
        reference: the reference run's rows ranked by :func:`ranked_cut` (or None).
        categories: ``doc_id, category`` as text, one row per item (or None).
    """

    train: pd.DataFrame | None = None
    reference: pd.DataFrame | None = None
    categories: pd.DataFrame | None = None


def local_measure_value(
    measure: SetMeasure, ranked: pd.DataFrame, inputs: LocalInputs, cut: int
) -> dict[str, Any]:
    """One set measure of one run's ranked rows (:func:`ranked_cut`) within ``cut``
    ranks, from what it reads in ``inputs``."""
    lists = ranked[ranked["_rank"] <= cut]
    if measure.kind in REFERENCE_KINDS:
        assert inputs.reference is not None
        reference = inputs.reference[inputs.reference["_rank"] <= cut]
        return local_reference_value(measure.kind, lists, reference, measure.k)
    if measure.kind == "categorical_diversity":
        assert inputs.categories is not None
        return local_category_value(lists, inputs.categories, measure.k)
    assert inputs.train is not None
    return local_value(measure.kind, lists, inputs.train, measure.k)


def needs(measures: Sequence[SetMeasure], key: str) -> bool:
    """Whether one of ``measures`` reads the input of config key ``key``."""
    return any(needed_input(m.kind) == key for m in measures)


def reference_rows(
    runs: dict[str, pd.DataFrame], run_ids: Sequence[str], reference_run: str | None
) -> pd.DataFrame:
    """The reference run's rows ranked (:func:`ranked_cut`; none for a run without
    rows).

    Raises:
        ConfigError: no run of that id.
    """
    check_reference_run(reference_run, run_ids)
    assert reference_run is not None
    rows = runs.get(reference_run)
    if rows is None:
        rows = pd.DataFrame({"query_id": [], "doc_id": [], "score": []}).astype(
            {"query_id": object, "doc_id": object, "score": np.float64}
        )
    return ranked_cut(rows)


def check_reference_run(reference_run: str | None, run_ids: Sequence[str]) -> None:
    """The reference run is one of the runs evaluated.

    Raises:
        ConfigError: naming the option and the runs found.
    """
    if reference_run is None or reference_run not in run_ids:
        shown = ", ".join(repr(r) for r in list(run_ids)[:10])
        raise ConfigError(
            f"--reference-run {reference_run!r} (key 'reference_run'; reference_run= in "
            f"Python): no run of that id among the runs evaluated ({shown})"
        )


def local_set_values(config: EvaluateConfig, direct: DirectPlan) -> SetResults:
    """Each run's set measures in this process, from the run rows of ``direct`` as the
    local engine reads them (:func:`~sparkeval.io.direct.read_unit`: every format,
    column map and run id of the plan), the Parquet training interactions and the
    reference run among them.

    Raises:
        NotDirect: training interactions that are not Parquet, or ids Spark's readers
            judge (the run is then evaluated on Spark under ``--engine auto``).
        ConfigError: a reference run that is not among the runs.
    """
    measures = config.set_measures()
    runs = _planned_runs(direct)
    inputs = LocalInputs(
        train=_local_train(config.train) if needs(measures, "train") else None,
        reference=reference_rows(runs, direct.run_ids, config.reference_run)
        if needs(measures, "reference_run")
        else None,
        categories=local_categories_table(config.item_categories)
        if needs(measures, "item_categories")
        else None,
    )
    out: SetValues = {}
    per_user = per_user_set.per_user_measures(measures)
    parts = []
    for run_id, rows in runs.items():
        ranked = ranked_cut(rows)
        out[run_id] = {}
        for order, m in enumerate(measures):
            out[run_id][m.name] = local_measure_value(m, ranked, inputs, _cut(config, m))
            if m in per_user:
                lists = ranked[ranked["_rank"] <= _cut(config, m)]
                assert inputs.train is not None
                frame = local_per_user(m.kind, lists, inputs.train, m.k)
                parts.append((run_id, per_user_set.shown_name(m, config.names), order, frame))
    table = per_user_set.local_table(parts) if parts else None
    return SetResults(out, table)


def local_categories_table(path: str | None) -> pd.DataFrame:
    """The Parquet item -> category table as text ``doc_id, category``.

    Raises:
        NotDirect: a table that is not Parquet (Spark's readers read it).
        InputError: a missing column, or an item with two rows.
    """
    from sparkeval.diversity.category_values import local_categories
    from sparkeval.diversity.local_read import read_local_table
    from sparkeval.io.columns import CATEGORY_ALIASES

    assert path is not None
    table = read_local_table(path, CATEGORY_ALIASES, ("doc_id", "category"))
    labels = np.asarray(table.table.column("category").to_pylist(), dtype=object)
    return local_categories(table.column("doc_id"), labels, path)


def _local_train(path: str | None) -> pd.DataFrame:
    """The Parquet training interactions as text ``query_id, doc_id``."""
    from sparkeval.diversity.local_read import read_local_table
    from sparkeval.io.columns import TRAIN_ALIASES

    assert path is not None
    table = read_local_table(path, TRAIN_ALIASES, ("query_id", "doc_id"))
    return pd.DataFrame({c: _text(table.column(c)) for c in ("query_id", "doc_id")})


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

    run_df, run_ids = read_evaluated_runs(
        spark, config, scored_for="the measures of the recommendation set"
    )
    inputs = SparkInputs(config.train, config.reference_run, config.item_categories)
    return spark_results_by_run(
        spark, run_df, inputs, run_ids, config.set_measures(),
        lambda m: _cut(config, m), config.names,
    )  # fmt: skip


@dataclass(frozen=True)
class SparkInputs:
    """What the set measures read beside each run's lists, on Spark.

    Attributes:
        train: the training interactions, a path or a DataFrame (or None).
        reference_run: the id of the reference run among the runs (or None).
        item_categories: the item -> category table, a path or a DataFrame (or None).
    """

    train: Any = None
    reference_run: str | None = None
    item_categories: Any = None


def spark_values_by_run(
    spark: SparkSession,
    rows: DataFrame,
    inputs: SparkInputs,
    run_ids: Sequence[str],
    measures: Sequence[SetMeasure],
    cut: Callable[[SetMeasure], int],
) -> SetValues:
    """Each run's value of each set measure on Spark: ``rows`` (``run_id, query_id,
    doc_id, score``) ranked once to the deepest cut, each measure over its run's rows
    within ``cut(measure)``, against what it reads in ``inputs``.

    Raises:
        ConfigError: a reference run that is not among ``run_ids``.
    """
    return spark_results_by_run(spark, rows, inputs, run_ids, measures, cut, None).values


def spark_results_by_run(
    spark: SparkSession,
    rows: DataFrame,
    inputs: SparkInputs,
    run_ids: Sequence[str],
    measures: Sequence[SetMeasure],
    cut: Callable[[SetMeasure], int],
    names: Any,
) -> SetResults:
    """:func:`spark_values_by_run`, and with ``names`` (the output's naming, not None)
    the per-user rows too, cached and counted before the inputs' cache is released."""
    from pyspark.sql import functions as F

    if needs(measures, "reference_run"):
        check_reference_run(inputs.reference_run, run_ids)
    ranked = spark_ranked(rows, max(cut(m) for m in measures)).cache()
    frame = spark_train(spark, inputs.train).cache() if needs(measures, "train") else None
    reference = ranked.where(F.col("run_id") == F.lit(inputs.reference_run))
    categories = (
        spark_categories_table(spark, inputs.item_categories).cache()
        if needs(measures, "item_categories")
        else None
    )
    per_user_measures = per_user_set.per_user_measures(measures) if names is not None else []
    try:
        out: SetValues = {}
        parts = []
        for run_id in run_ids:
            of_run = ranked.where(F.col("run_id") == F.lit(run_id))
            values = {}
            for order, m in enumerate(measures):
                lists = of_run.where(F.col("_rank") <= cut(m))
                if m.kind in REFERENCE_KINDS:
                    base = reference.where(F.col("_rank") <= cut(m))
                    values[m.name] = spark_reference_value(m.kind, lists, base, m.k)
                elif m.kind == "categorical_diversity":
                    assert categories is not None
                    values[m.name] = spark_category_value(lists, categories, m.k)
                else:
                    assert frame is not None
                    values[m.name] = spark_value(m.kind, lists, frame, m.k)
                if m in per_user_measures:
                    assert frame is not None
                    rows_of_users = spark_per_user(m.kind, lists, frame, m.k)
                    parts.append((run_id, per_user_set.shown_name(m, names), order, rows_of_users))
            out[run_id] = values
        per_user = per_user_set.spark_frame(parts)
        if per_user is not None:
            per_user = per_user.cache()
            per_user.count()
        return SetResults(out, per_user)
    finally:
        ranked.unpersist()
        for held in (frame, categories):
            if held is not None:
                held.unpersist()


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


def spark_categories_table(spark: SparkSession, table: Any) -> DataFrame:
    """The item -> category table (a path, or a DataFrame) as text ``doc_id,
    category``, its columns found by :data:`~sparkeval.io.columns.CATEGORY_ALIASES`.

    Raises:
        InputError: a missing column, or an item with two rows.
    """
    from sparkeval.diversity.category_values import spark_categories
    from sparkeval.io.columns import CATEGORY_ALIASES
    from sparkeval.io.lists import normalise_columns, read_typed_table
    from sparkeval.io.readers import decodes_text

    required = ("doc_id", "category")
    if isinstance(table, str):
        frame = normalise_columns(
            read_typed_table(spark, table), CATEGORY_ALIASES, required, table,
            decodes_text(table),
        )  # fmt: skip
        return spark_categories(frame, table)
    frame = normalise_columns(table, CATEGORY_ALIASES, required, "item categories", False)
    return spark_categories(frame, "the item categories DataFrame")


def add_set_measures(evaluation: Any, config: EvaluateConfig, values: SetValues) -> None:
    """Add each run's set measures of the ``evaluate`` job to its evaluation."""
    inputs = config.set_input_values()
    add_set_values(evaluation, config.set_measures(), values, config.names, inputs)


def add_set_values(
    evaluation: Any, measures: list[SetMeasure], values: SetValues, names: Any, inputs: Any
) -> None:
    """Add each run's set measures to an evaluation (in place): to its report (values,
    counts, their names and definitions, and under ``parameters`` the inputs they read:
    ``train`` and ``item_categories``, a path or ``"a table"``; ``reference_run``, a run
    id) and to its
    ``summary`` table's names.

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
    parameters = report["parameters"]
    parameters["set_measures"] = list(shown.values())
    for key, given in inputs.items():
        if needs(measures, key):
            parameters[key] = given if isinstance(given, str) else "a table"
    compat = report.setdefault("compat", {})
    compat.setdefault("definitions", {}).update({shown[m.name]: m.definition() for m in measures})
    evaluation.set_names = [*evaluation.set_names, *shown.values()]
