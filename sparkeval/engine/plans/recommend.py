"""Evaluate recommendation tables: ``(user, item, score)`` against ``(user, item[, rating])``.

The recommendations become a run (user = query, item = doc, score), the truth
becomes integer qrels by a :class:`~sparkeval.io.truth.RelevanceRule`, and a
:class:`~sparkeval.compat.CompatPlan` picks the measures, query policy and
relevance rule of the chosen compatibility profile.  The evaluation itself is
:func:`sparkeval.engine.plans.spark_engine.evaluate`, unchanged;
:func:`sparkeval.engine.api.evaluate_recommendations` is the API (on Spark
or in process).

Example::

    ev = evaluate_recommendations(
        spark, recs, truth, "P@10,R@10,nDCG@10,MAP,MAP@10", compat="recommenders"
    )
    ev.report["compat"]["measures"]["MAP@10"]  # -> 'AP(denom=min_k)@10'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sparkeval.compat import CompatPlan
from sparkeval.engine.aggregation_modes import add_modes
from sparkeval.engine.min_score import count_spark_rows_below, keep_spark_rows
from sparkeval.engine.plans.spark_engine import Evaluation, evaluate
from sparkeval.io.columns import parse_mapping, resolve_columns
from sparkeval.io.readers import id_column, recommendation_shapes, run_frame

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def recommendations_to_run(
    df: DataFrame, columns: str | Mapping[str, str] | None = None, source: str = "<recommendations>"
):
    """A run frame (``run_id, query_id, doc_id, score, _bad``) from a recommendation table.

    Columns are found by name or alias (``userID``/``user_id`` → query, ``itemID``/
    ``item_id`` → doc, ``prediction``/``score`` → score); without a run id column
    the run is called ``run``.
    """
    from pyspark.sql import functions as F

    df = recommendation_shapes(df, columns, source)  # rank-only tables, lists of structs
    cols = resolve_columns(list(df.columns), "run", parse_mapping(columns, "run"), source)
    run_col = id_column(cols["run_id"]) if "run_id" in cols else F.lit("run")
    return run_frame(df, cols, source, run_col, decoded=False)  # a DataFrame keeps its bytes


def evaluate_plan(
    spark: SparkSession,
    plan: CompatPlan,
    run_df: DataFrame | None,
    qrels_df: DataFrame | None,
    **options: Any,
) -> Evaluation:
    """Run the engine for a resolved plan and record the plan in the report.

    The plan gives the measures and the query policy (and drops the run rows below its
    ``min_score``, counted in the report); ``options`` are the other
    keyword arguments of :func:`~sparkeval.engine.plans.spark_engine.evaluate`
    (``rel_level``, ``depth``, ``names``, ``run_ids``, ``buckets``, ...).
    """
    if options.get("names") == "requested":
        options = {**options, "names": plan.labels()}
    below = None
    if plan.min_score is not None:
        if run_df is None:
            raise ValueError("a plan with min_score takes run_df (not direct inputs)")
        below = count_spark_rows_below(run_df, plan.min_score)
        run_df = keep_spark_rows(run_df, plan.min_score)
    evaluation = evaluate(spark, run_df, qrels_df, plan.measures, queries=plan.queries, **options)
    evaluation.report["compat"] = plan.describe(below, options.get("rel_level", 1))
    add_modes(evaluation, plan.modes, options.get("names", "canonical"), evaluation.measure_values)
    return evaluation


__all__ = ["evaluate_plan", "recommendations_to_run"]
