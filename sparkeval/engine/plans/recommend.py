"""Evaluate recommendation tables: ``(user, item, score)`` against ``(user, item[, rating])``.

The recommendations become a run (user = query, item = doc, score), the truth
becomes integer qrels by a :class:`~sparkeval.io.truth.RelevanceRule`, and a
:class:`~sparkeval.compat.CompatPlan` picks the measures, query policy and
relevance rule of the chosen compatibility profile.  The evaluation itself is
:func:`sparkeval.engine.plans.spark_engine.evaluate`, unchanged.

Example::

    ev = evaluate_recommendations(
        spark, recs, truth, "P@10,R@10,nDCG@10,MAP,MAP@10", compat="recommenders"
    )
    ev.report["compat"]["measures"]["MAP@10"]  # -> 'AP(denom=min_k)@10'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sparkeval.compat import CompatPlan, plan_compat
from sparkeval.engine.plans.spark_engine import Evaluation, evaluate
from sparkeval.io.columns import parse_mapping, resolve_columns
from sparkeval.io.readers import id_column, recommendation_shapes, run_frame
from sparkeval.io.truth import RelevanceRule, truth_to_qrels

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


def evaluate_recommendations(
    spark: SparkSession,
    recommendations_df: DataFrame,
    truth_df: DataFrame,
    measures: Sequence[str] | str,
    *,
    compat: str = "trec",
    relevance: str | None = None,
    relevance_threshold: float | None = None,
    relevant_only: bool = False,
    queries: str | None = None,
    depth: int | None = None,
    names: str | Mapping[str, str] = "canonical",
    run_columns: str | Mapping[str, str] | None = None,
    truth_columns: str | Mapping[str, str] | None = None,
    buckets: int | None = None,
) -> Evaluation:
    """Evaluate recommendations against a truth table on Spark; nothing is written.

    Args:
        spark: the SparkSession.
        recommendations_df: user, item and score columns (and optionally a run id).
        truth_df: user, item and (unless ``relevance='all'``) rating columns.
        measures: measure names; under a profile, the peer's names (``MAP@10``).
        compat: ``trec`` (default), ``mllib`` or ``recommenders`` (see :mod:`sparkeval.compat`).
        relevance: ``grade`` (integer ratings are grades), ``all`` (every truth
            item relevant) or None for the profile's default.
        relevance_threshold: ratings >= this value are relevant (grade 1).
        relevant_only: keep only relevant truth rows: a user without a relevant item is
            not judged (the ``recommenders`` profile does so with a threshold).
        queries: query policy (``trec`` profile only; the others fix it).
        depth: keep the first ``depth`` items per user (trec_eval ``-M``).
        names: ``canonical`` or ``trec`` output names.
        run_columns: explicit recommendation columns ``query_id=user,doc_id=item,score=s``.
        truth_columns: explicit truth columns ``query_id=user,doc_id=item,relevance=r``.
        buckets: number of hash buckets of users.

    Returns:
        The :class:`~sparkeval.engine.plans.spark_engine.Evaluation`; its report has a
        ``compat`` entry (profile, query policy, relevance rule, measure mapping).
    """
    rule = RelevanceRule.from_options(relevance, relevance_threshold, relevant_only)
    plan = plan_compat(compat, measures, rule, queries)
    return evaluate_plan(
        spark,
        plan,
        recommendations_to_run(recommendations_df, run_columns),
        truth_to_qrels(truth_df, plan.relevance, truth_columns),
        depth=depth,
        names=names,
        buckets=buckets,
    )


def evaluate_plan(
    spark: SparkSession,
    plan: CompatPlan,
    run_df: DataFrame | None,
    qrels_df: DataFrame | None,
    **options: Any,
) -> Evaluation:
    """Run the engine for a resolved plan and record the plan in the report.

    The plan gives the measures and the query policy; ``options`` are the other
    keyword arguments of :func:`~sparkeval.engine.plans.spark_engine.evaluate`
    (``rel_level``, ``depth``, ``names``, ``run_ids``, ``buckets``, ...).
    """
    if options.get("names") == "requested":
        options = {**options, "names": plan.labels()}
    evaluation = evaluate(spark, run_df, qrels_df, plan.measures, queries=plan.queries, **options)
    evaluation.report["compat"] = plan.describe()
    return evaluation
