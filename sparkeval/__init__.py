"""sparkeval: ranking and recommendation evaluation at Spark scale.

The Python API::

    from sparkeval import evaluate
    ev = evaluate(spark, run_df, qrels_df, measures=["nDCG@10", "AP", "P@5"])
    ev.per_query   # DataFrame run_id, query_id, measure, value
    ev.summary     # DataFrame run_id, measure, value, queries, undefined

    from sparkeval import evaluate_recommendations, rating_errors
    recs = evaluate_recommendations(spark, recs_df, truth_df, "P@10,MAP@10", compat="mllib")

    errors = rating_errors(spark, pred_df, truth_df, "RMSE,MAE,R2", missing="skip")
    errors.report["measures"]   # RMSE, RMSE_per_user, MAE, MAE_per_user, ...
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sparkeval.api import evaluate, evaluate_recommendations
    from sparkeval.engine.plans.rating_engine import RatingEvaluation, rating_errors
    from sparkeval.engine.plans.spark_engine import Evaluation

__version__ = "0.1.0"
__all__ = [
    "Evaluation",
    "RatingEvaluation",
    "__version__",
    "evaluate",
    "evaluate_recommendations",
    "rating_errors",
]

#: where each name of the API lives; imported on first use, so that importing one
#: submodule (as every Python worker does) does not import pandas and the whole API
_API = {
    "Evaluation": "sparkeval.engine.plans.spark_engine",
    "evaluate": "sparkeval.api",
    "RatingEvaluation": "sparkeval.engine.plans.rating_engine",
    "rating_errors": "sparkeval.engine.plans.rating_engine",
    "evaluate_recommendations": "sparkeval.api",
}


def __getattr__(name: str) -> Any:
    if name in _API:
        value = getattr(import_module(_API[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'sparkeval' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
