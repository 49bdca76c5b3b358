"""``sparkeval.evaluate`` and ``sparkeval.evaluate_recommendations``: on Spark when given
a session, in this process when not.

Both paths take the same keywords with the same meaning
(:mod:`sparkeval.engine.api_request`), find columns by the same names and aliases,
and give the same values to the bit and the same report.

Example:
    >>> import pandas as pd
    >>> run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["b"], "relevance": [1]})
    >>> evaluate(None, run, qrels, ["AP"]).summary["value"].tolist()
    [0.5]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sparkeval.engine.api_request import ApiRequest, api_request
from sparkeval.io.columns import OptionNaming

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sparkeval.engine.in_process import LocalEvaluation
    from sparkeval.engine.plans.spark_engine import Evaluation
    from sparkeval.measures import Measure

#: errors of ``evaluate_recommendations`` name its keyword for the truth's columns
_RECOMMENDATION_KEYWORDS = OptionNaming({"--qrels-columns": "truth_columns"})


def evaluate(
    spark: SparkSession | None,
    run: Any,
    qrels: Any,
    measures: Sequence[str | Measure] | str,
    *,
    queries: str | None = None,
    rel_level: int = 1,
    depth: int | None = None,
    names: str | Mapping[str, str] = "canonical",
    run_ids: Sequence[str] | None = None,
    compat: str = "trec",
    relevance: str | None = None,
    relevance_threshold: float | None = None,
    relevant_only: bool = False,
    run_columns: str | Mapping[str, str] | None = None,
    qrels_columns: str | Mapping[str, str] | None = None,
    buckets: int | None = None,
    near_duplicates: Any = None,
    ties: str | None = None,
) -> Evaluation | LocalEvaluation:
    """Evaluate runs against qrels: Spark DataFrames on ``spark``, or, with ``spark=None``,
    pandas DataFrames or Arrow tables in this process (no JVM is started).

    Both give the same values to the bit and the same report; per-query and summary
    tables are Spark DataFrames on Spark (cached until ``unpersist()``) and pandas
    DataFrames in process.

    Args:
        spark: the SparkSession, or None to evaluate in this process.
        run: ``[run_id,] query_id, doc_id, score`` (or a rank column instead of the
            score: rank 1 first); columns are found by name or alias
            (``user_id, item_id, prediction`` too). A run without a run id column is
            one run, ``run``; a run without rows scores each query as trec_eval
            scores a query that retrieved nothing.
        qrels: ``query_id, doc_id, relevance`` (or aliases: ``user_id, item_id, rating``).
        measures: names (``["nDCG@10", "AP"]``, ``"P@5,RR"``, ``"official"``) or parsed
            measures; under a profile, the peer's names (``HitRate@10``).
        queries: ``qrels`` (default), ``both``, ``run`` or ``union``; a profile other
            than ``trec`` fixes it (:mod:`sparkeval.compat`).
        rel_level: grade >= rel_level is relevant (trec_eval ``-l``).
        depth: keep the first ``depth`` docs of each ranking (trec_eval ``-M``).
        names: ``canonical``, ``trec`` (trec_eval's names), ``requested`` (as typed)
            or {canonical name: output name}.
        run_ids: every run id, when known (a named run without rows scores as empty).
        compat: ``trec`` (default), ``mllib``, ``recommenders``, ``replay`` or
            ``rectools``: reproduce that evaluator's numbers.
        relevance: ``grade`` (the ratings are grades), ``all`` (every truth row is
            relevant; no rating column needed) or ``threshold``; None: the profile's.
        relevance_threshold: ratings >= this value are relevant (grade 1); under
            ``compat="recommenders"`` the recommendations with score >= this value are
            kept instead and every truth row is relevant (Recommenders' ``by_threshold``).
        relevant_only: keep only the relevant truth rows (a query without one is not
            judged).
        run_columns: explicit run columns, ``{"query_id": "u", "doc_id": "i"}`` or
            ``"query_id=u,doc_id=i"``; a key may be a canonical name or an accepted
            alias (``{"user_id": "u"}``).
        qrels_columns: explicit qrels columns, as ``run_columns``.
        buckets: Spark's hash buckets (a tuning knob; no meaning in process).
        near_duplicates: ``doc_a, doc_b`` pairs (a Spark DataFrame on Spark, a pandas
            DataFrame or Arrow table in process): a doc that near-duplicates a
            higher-ranked doc gains nothing.
        ties: how tied scores are ordered: ``doc-id`` (None, the default: doc id
            descending, trec_eval's), ``rank`` (the run's rank column ascending, then
            doc id descending; a run without a column named ``rank``, ``position`` or
            ``pos`` is refused) or ``input-order`` (the table's row order, then doc id
            descending; in process only, Spark does not keep a DataFrame's row order).

    Raises:
        sparkeval.errors.SparkevalError: bad input, option or measure name; also a
            ``ValueError`` (or ``TypeError`` for an argument of the wrong type).
    """
    request = api_request(
        measures, compat=compat, relevance=relevance, relevance_threshold=relevance_threshold,
        relevant_only=relevant_only, queries=queries, rel_level=rel_level, depth=depth,
        names=names, run_ids=run_ids, run_columns=run_columns, qrels_columns=qrels_columns,
        buckets=buckets, near_duplicates=near_duplicates, ties=ties,
    )  # fmt: skip
    return evaluate_request(spark, run, qrels, request)


def evaluate_recommendations(
    spark: SparkSession | None,
    recommendations: Any,
    truth: Any,
    measures: Sequence[str | Measure] | str,
    *,
    compat: str = "trec",
    relevance: str | None = None,
    relevance_threshold: float | None = None,
    relevant_only: bool = False,
    queries: str | None = None,
    rel_level: int = 1,
    depth: int | None = None,
    names: str | Mapping[str, str] = "canonical",
    run_ids: Sequence[str] | None = None,
    run_columns: str | Mapping[str, str] | None = None,
    truth_columns: str | Mapping[str, str] | None = None,
    buckets: int | None = None,
    near_duplicates: Any = None,
    ties: str | None = None,
) -> Evaluation | LocalEvaluation:
    """Evaluate recommendations (user, item, score or rank) against a truth table
    (user, item[, rating]): :func:`evaluate` with the truth's columns mapped by
    ``truth_columns``; on Spark with a session, in this process with ``spark=None``.

    Example::

        ev = evaluate_recommendations(spark, recs, truth, "P@10,MAP@10", compat="mllib")
        ev.report["compat"]["measures"]["MAP@10"]  # -> 'AP(denom=min_k)@10'
    """
    request = api_request(
        measures, compat=compat, relevance=relevance, relevance_threshold=relevance_threshold,
        relevant_only=relevant_only, queries=queries, rel_level=rel_level, depth=depth,
        names=names, run_ids=run_ids, run_columns=run_columns, qrels_columns=truth_columns,
        buckets=buckets, near_duplicates=near_duplicates, naming=_RECOMMENDATION_KEYWORDS,
        ties=ties,
    )  # fmt: skip
    return evaluate_request(spark, recommendations, truth, request)


def evaluate_request(
    spark: SparkSession | None, run: Any, qrels: Any, request: ApiRequest
) -> Evaluation | LocalEvaluation:
    """Evaluate a checked request on Spark (``spark`` given) or in this process."""
    if spark is None:
        from sparkeval.engine.in_process import evaluate_held_request

        return evaluate_held_request(run, qrels, request)
    from sparkeval.engine.plans.recommend import evaluate_plan
    from sparkeval.engine.spark_inputs import spark_qrels, spark_run
    from sparkeval.io.readers import rank_only
    from sparkeval.spark import without_call_sites

    rule, naming = request.plan.relevance, request.naming
    ranks = request.plan.ranks(rank_only(list(run.columns), request.run_columns))
    check_spark_ties(request.plan.ties)
    run_df = spark_run(run, request.run_columns, naming, request.plan.ties)
    qrels_df = spark_qrels(qrels, rule, request.qrels_columns, naming)
    with without_call_sites():
        return evaluate_plan(
            spark, request.plan, run_df, qrels_df,
            rel_level=request.options.rel_level, depth=request.options.depth,
            names=request.names, run_ids=request.run_ids, buckets=request.buckets,
            near_duplicates=request.near_duplicates, empty_runs=True, ranks=ranks,
            ties=request.plan.ties,
        )  # fmt: skip


def check_spark_ties(ties: str) -> None:
    """Refuse ``input-order`` on Spark, naming the option: Spark does not keep the
    order of a DataFrame's rows (nor of a dataset's files) through a shuffle."""
    from sparkeval.errors import ConfigError

    if ties == "input-order":
        raise ConfigError(
            "ties input-order: Spark does not keep the order of the input rows; use "
            "ties rank (a rank column) or evaluate tables held in memory (spark=None)"
        )
