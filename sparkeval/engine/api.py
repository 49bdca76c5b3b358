"""``sparkeval.evaluate``: on Spark when given a session, in this process when not.

Example:
    >>> import pandas as pd
    >>> run = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["b"], "relevance": [1]})
    >>> evaluate(None, run, qrels, ["AP"]).summary["value"].tolist()
    [0.5]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sparkeval.engine.in_process import LocalEvaluation
    from sparkeval.engine.plans.spark_engine import Evaluation
    from sparkeval.measures import Measure


def evaluate(
    spark: SparkSession | None,
    run: Any,
    qrels: Any,
    measures: Sequence[str | Measure] | str,
    **options: Any,
) -> Evaluation | LocalEvaluation:
    """Evaluate runs against qrels: Spark DataFrames on ``spark``, or, with ``spark=None``,
    pandas DataFrames or Arrow tables in this process (no JVM is started).

    Both give the same values to the bit and the same report; per-query and summary
    tables are Spark DataFrames on Spark (cached until ``unpersist()``) and pandas
    DataFrames in process. ``options`` are those of
    :func:`sparkeval.engine.plans.spark_engine.evaluate` (``queries``, ``rel_level``,
    ``depth``, ``names``, ``run_ids``, ``buckets``, ``near_duplicates``) or, in process,
    of :func:`sparkeval.engine.in_process.evaluate_in_process` (the same but
    ``buckets`` and ``near_duplicates``, plus ``run_columns`` and ``qrels_columns``).
    """
    if spark is None:
        from sparkeval.engine.in_process import evaluate_in_process

        return evaluate_in_process(run, qrels, measures, **options)
    from sparkeval.engine.plans.spark_engine import evaluate as evaluate_on_spark
    from sparkeval.spark import without_call_sites

    with without_call_sites():
        return evaluate_on_spark(spark, run, qrels, measures, **options)
