"""The Python API of ``evaluate``: :func:`sparkeval.engine.api.evaluate` and
:func:`~sparkeval.engine.api.evaluate_recommendations` with ``train=``, the training
interactions of the measures of the whole recommendation set (``Coverage@k``,
``Novelty@k``; :mod:`sparkeval.measures.set_names`).

``reference_run=`` names the run (a run id of ``run``) that ``Intersection@k``
(RecTools') and ``Unexpectedness@k`` (RePlay's) compare each
run's lists with; ``item_categories=`` (a path or a table, ``item_id, category``)
gives the categories of ``CategoricalDiversity@k`` (RePlay's).

Without ``train`` (and without those measures) the engine's functions run as they are.
With it, the ranking measures are evaluated by the engine and the set measures of each
run's top-k lists are added to the result: its ``report`` (``summary.json``'s
content) and its ``summary`` table; they have no per-query rows. ``train`` is a path
(Parquet in process; any input Spark reads on Spark) or a table: a pandas DataFrame or
an Arrow table in process, a Spark DataFrame on Spark (``query_id, doc_id`` or
``user_id, item_id``).

The intent-aware measures (``alpha-nDCG@20``, ``ERR-IA@20``, ...;
:mod:`sparkeval.measures.intent_aware_names`) take ``subtopic_qrels=``: a path (ndeval's
text, Parquet, CSV or TSV, read in this process) or a pandas DataFrame or Arrow table
with the columns ``query_id, subtopic_id, doc_id, relevance``. They are computed in this
process (``spark=None``) or on Spark; their means are added to the report and the
``summary`` table as the set measures' are (:mod:`sparkeval.evaluation.intent_aware`).

Example::

    ev = evaluate_recommendations(None, recs, truth, "nDCG@10,Coverage@10", train=train)
    ev.report["runs"]["run"]["measures"]["Coverage@10"]
    ev = evaluate(None, run, qrels, "nDCG@20,alpha-nDCG@20", subtopic_qrels="topics.qrels")
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sparkeval.engine import api as engine_api
from sparkeval.errors import ConfigError
from sparkeval.evaluation.set_measures import (
    LocalInputs,
    SetValues,
    SparkInputs,
    add_set_values,
    local_measure_value,
    needs,
    ranked_cut,
    reference_rows,
)
from sparkeval.formats import DEFAULT_RUN_ID
from sparkeval.measures import Measure
from sparkeval.measures.intent_aware_names import IntentAwareMeasure, split_intent_aware
from sparkeval.measures.set_names import SetMeasure, check_set_inputs, split_set_measures

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from sparkeval.engine.in_process import LocalEvaluation
    from sparkeval.engine.plans.spark_engine import Evaluation


def evaluate(
    spark: SparkSession | None,
    run: Any,
    qrels: Any,
    measures: Sequence[str | Measure] | str,
    *,
    train: Any = None,
    reference_run: str | None = None,
    item_categories: Any = None,
    subtopic_qrels: Any = None,
    **keywords: Any,
) -> Evaluation | LocalEvaluation:
    """:func:`sparkeval.engine.api.evaluate` (the same keywords), with ``train`` for
    ``Coverage@k`` and ``Novelty@k``, ``reference_run`` for ``Intersection@k`` and
    ``Unexpectedness@k``, ``item_categories`` for ``CategoricalDiversity@k`` and
    ``subtopic_qrels`` for the intent-aware measures (see the module text)."""
    given = {"train": train, "reference_run": reference_run, "item_categories": item_categories}
    return _with_train(
        engine_api.evaluate, spark, run, qrels, measures, given, keywords, subtopic_qrels
    )


def evaluate_recommendations(
    spark: SparkSession | None,
    recommendations: Any,
    truth: Any,
    measures: Sequence[str | Measure] | str,
    *,
    train: Any = None,
    reference_run: str | None = None,
    item_categories: Any = None,
    subtopic_qrels: Any = None,
    **keywords: Any,
) -> Evaluation | LocalEvaluation:
    """:func:`sparkeval.engine.api.evaluate_recommendations` (the same keywords), with
    ``train`` for ``Coverage@k`` and ``Novelty@k``, ``reference_run`` for
    ``Intersection@k`` and ``Unexpectedness@k``, ``item_categories`` for
    ``CategoricalDiversity@k`` and ``subtopic_qrels`` for the intent-aware measures (see
    the module text)."""
    function = engine_api.evaluate_recommendations
    given = {"train": train, "reference_run": reference_run, "item_categories": item_categories}
    return _with_train(
        function, spark, recommendations, truth, measures, given, keywords, subtopic_qrels
    )


def _with_train(
    function: Callable[..., Any],
    spark: SparkSession | None,
    run: Any,
    qrels: Any,
    measures: Sequence[str | Measure] | str,
    given: dict[str, Any],
    keywords: dict[str, Any],
    subtopic_qrels: Any = None,
) -> Any:
    """``function`` with the ranking measures, then the set measures, each from the
    input of ``given`` it reads (``train``, ``reference_run``, ``item_categories``), and
    the intent-aware measures added.

    Raises:
        ConfigError: a set measure without its input (or without a ranking measure), an
            input no measure reads, or a tie rule other than ``doc-id``; intent-aware
            measures without ``subtopic_qrels``, with a session, or with such a tie rule.
    """
    texts = _texts(measures)
    other, intent_aware = split_intent_aware(texts)
    ranking, sets = split_set_measures(other, str(keywords.get("compat", "trec")))
    check_set_inputs(sets, given, python=True)
    if not sets and not intent_aware:
        return function(spark, run, qrels, measures, **keywords)
    if intent_aware:
        _check_intent_aware(intent_aware, ranking, subtopic_qrels, keywords)
    if not sets:
        evaluation = function(spark, run, qrels, ranking, **keywords)
        _add_intent_aware(spark, evaluation, run, intent_aware, subtopic_qrels, keywords)
        return evaluation
    if not ranking:
        raise ConfigError(f"{sets[0].typed} comes with a ranking measure: give one as well")
    ties = keywords.get("ties", "doc-id")
    if ties != "doc-id":
        raise ConfigError(
            f"ties={ties!r}: {sets[0].typed} cuts each run's top-k lists with tied scores by "
            "doc id, the default tie rule"
        )
    evaluation = function(spark, run, qrels, ranking, **keywords)
    depth = keywords.get("depth")
    columns = keywords.get("run_columns")
    if spark is None:
        values = _held_values(run, given, sets, depth, columns)
    else:
        values = _spark_values(spark, run, given, sets, depth, columns)
    add_set_values(evaluation, sets, values, keywords.get("names", "canonical"), given)
    if intent_aware:
        _add_intent_aware(spark, evaluation, run, intent_aware, subtopic_qrels, keywords)
    return evaluation


def _check_intent_aware(
    measures: list[IntentAwareMeasure],
    ranking: list[str],
    subtopic_qrels: Any,
    keywords: dict[str, Any],
) -> None:
    """Refuse intent-aware measures that cannot be computed as asked."""
    first = measures[0].typed
    if subtopic_qrels is None:
        raise ConfigError(
            f"{first} is an intent-aware measure: it needs subtopic qrels, subtopic_qrels= "
            "(a path or a table of query_id, subtopic_id, doc_id, relevance)"
        )
    if not ranking:
        raise ConfigError(f"{first} comes with a ranking measure: give one as well")
    ties = keywords.get("ties", "doc-id")
    if ties != "doc-id":
        raise ConfigError(
            f"ties={ties!r}: {first} ranks tied scores by doc id ascending, as ndeval does"
        )
    compat = keywords.get("compat", "trec")
    if compat != "trec":
        raise ConfigError(f"compat={compat!r}: {first} is computed under compat='trec' only")


def _add_intent_aware(
    spark: SparkSession | None,
    evaluation: Any,
    run: Any,
    measures: list[IntentAwareMeasure],
    subtopic_qrels: Any,
    keywords: dict[str, Any],
) -> None:
    """The intent-aware means of the runs (held in this process, or a Spark DataFrame
    with a session), added to ``evaluation``."""
    from sparkeval.engine.held_inputs import held_run
    from sparkeval.evaluation.intent_aware import add_intent_aware_values, values_by_run
    from sparkeval.io.subtopic_qrels import read_subtopic_qrels

    qrels = read_subtopic_qrels(subtopic_qrels)
    depth = keywords.get("depth")
    if spark is not None:
        from pyspark.sql import functions as F

        from sparkeval.engine.spark_inputs import spark_run
        from sparkeval.evaluation.intent_aware import spark_results_by_run

        frame = spark_run(run, keywords.get("run_columns"))
        if "run_id" not in frame.columns:
            frame = frame.withColumn("run_id", F.lit(DEFAULT_RUN_ID))
        if "score" not in frame.columns and "rank" in frame.columns:
            frame = frame.withColumn("score", -F.col("rank").cast("double"))
        run_ids = list(evaluation.report["runs"])
        values = spark_results_by_run(frame, run_ids, qrels, measures, depth).values
        names = keywords.get("names", "canonical")
        add_intent_aware_values(evaluation, measures, values, names, subtopic_qrels)
        return
    rows = held_run(run, keywords.get("run_columns")).to_pandas()
    runs = {
        str(run_id): frame[["query_id", "doc_id", "score"]].reset_index(drop=True)
        for run_id, frame in rows.groupby("run_id", sort=True)
    }
    for run_id in evaluation.report["runs"]:
        runs.setdefault(run_id, rows.iloc[:0][["query_id", "doc_id", "score"]])
    values = values_by_run(runs, qrels, measures, depth)
    names = keywords.get("names", "canonical")
    add_intent_aware_values(evaluation, measures, values, names, subtopic_qrels)


def _texts(measures: Any) -> list[str]:
    """The names of ``measures``; none for what is not a list of names or measures (the
    engine names what is wrong with it)."""
    if isinstance(measures, str):
        return [measures]
    if not isinstance(measures, Sequence):
        return []
    return [m if isinstance(m, str) else m.name for m in measures if isinstance(m, str | Measure)]


def _held_values(
    run: Any, given: dict[str, Any], sets: list[SetMeasure], depth: int | None, columns: Any
) -> SetValues:
    """The set measures of runs held in this process."""
    from sparkeval.engine.held_inputs import held_run

    rows = held_run(run, columns).to_pandas()
    runs = {
        str(run_id): frame[["query_id", "doc_id", "score"]].reset_index(drop=True)
        for run_id, frame in rows.groupby("run_id", sort=True)
    }
    inputs = LocalInputs(
        train=_held_train(given["train"]) if needs(sets, "train") else None,
        reference=reference_rows(runs, list(runs), given["reference_run"])
        if needs(sets, "reference_run")
        else None,
        categories=_held_categories(given["item_categories"])
        if needs(sets, "item_categories")
        else None,
    )
    out: SetValues = {}
    for run_id, frame in runs.items():
        ranked = ranked_cut(frame)
        out[run_id] = {m.name: local_measure_value(m, ranked, inputs, _cut(m, depth)) for m in sets}
    return out


def _cut(measure: SetMeasure, depth: int | None) -> int:
    return min(measure.k, depth) if depth else measure.k


def _held_train(train: Any) -> pd.DataFrame:
    """``query_id, doc_id`` as text of a training table or Parquet path held here."""
    import pyarrow as pa

    from sparkeval.diversity.local_read import read_local_table
    from sparkeval.engine.held_inputs import as_arrow
    from sparkeval.io.columns import TRAIN_ALIASES, match_columns

    if isinstance(train, str):
        table = read_local_table(train, TRAIN_ALIASES, ("query_id", "doc_id")).table
    else:
        given = as_arrow(train, "train")
        found = match_columns(
            given.column_names, TRAIN_ALIASES, ("query_id", "doc_id"), {}, "train table",
            "this table", None,
        )  # fmt: skip
        table = pa.table({c: given.column(found[c]) for c in ("query_id", "doc_id")})
    return pd.DataFrame(
        {c: [str(v) for v in table.column(c).to_pylist()] for c in ("query_id", "doc_id")}
    )


def _held_categories(table: Any) -> pd.DataFrame:
    """``doc_id, category`` as text of an item -> category table or Parquet path held
    here (one row per item)."""
    from sparkeval.diversity.category_values import local_categories
    from sparkeval.engine.held_inputs import as_arrow
    from sparkeval.evaluation.set_measures import local_categories_table
    from sparkeval.io.columns import CATEGORY_ALIASES, match_columns

    if isinstance(table, str):
        return local_categories_table(table)
    given = as_arrow(table, "item_categories")
    found = match_columns(
        given.column_names, CATEGORY_ALIASES, ("doc_id", "category"), {},
        "item categories table", "this table", None,
    )  # fmt: skip
    items = given.column(found["doc_id"]).to_numpy(zero_copy_only=False)
    labels = given.column(found["category"]).to_pylist()
    return local_categories(items, np.asarray(labels, dtype=object), "item categories table")


def _spark_values(
    spark: SparkSession,
    run: DataFrame,
    given: dict[str, Any],
    sets: list[SetMeasure],
    depth: int | None,
    columns: Any,
) -> SetValues:
    """The set measures of a run DataFrame on Spark."""
    from pyspark.sql import functions as F

    from sparkeval.engine.spark_inputs import spark_run
    from sparkeval.evaluation.set_measures import spark_values_by_run

    rows = spark_run(run, columns)
    if "run_id" not in rows.columns:
        rows = rows.withColumn("run_id", F.lit(DEFAULT_RUN_ID))
    if "score" not in rows.columns and "rank" in rows.columns:
        rows = rows.withColumn("score", -F.col("rank").cast("double"))
    run_ids = sorted(str(r[0]) for r in rows.select("run_id").distinct().collect())
    inputs = SparkInputs(given["train"], given["reference_run"], given["item_categories"])
    return spark_values_by_run(spark, rows, inputs, run_ids, sets, lambda m: _cut(m, depth))
