"""``sparkeval rating-errors``: rating-prediction errors, pooled and per user."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from sparkeval.job.command import Command, spark_job
from sparkeval.rating_config import RatingErrorsConfig

if TYPE_CHECKING:
    from sparkeval.engine.plans.rating_engine import RatingEvaluation


def show(evaluation: RatingEvaluation, config: RatingErrorsConfig, stdout: TextIO) -> None:
    """One line per error (pooled value), then the matched and skipped pair counts."""
    report = evaluation.report
    try:
        for name, value in report["measures"].items():
            text = "null" if value is None or value != value else f"{value:.6f}"
            stdout.write(f"{name:<26}\t{text}\n")
        pairs = report["pairs"]
        stdout.write(f"{'pairs_matched':<26}\t{pairs['matched']}\n")
        stdout.write(f"{'pairs_skipped':<26}\t{pairs['skipped']}\n")
    finally:
        evaluation.unpersist()


COMMAND = Command(
    name="rating-errors",
    help="rating-prediction errors (RMSE, MAE, R2, ...) pooled and per user",
    description="Join predictions (user, item, prediction) with true ratings (user, item, "
    "rating) on (user, item) and compute each error pooled over all pairs and as the mean "
    "of per-user values. Writes OUT/per_user.parquet (user_id, measure, value) and "
    "OUT/summary.json.",
    config=RatingErrorsConfig,
    run=spark_job("sparkeval.rating_job:run_rating_errors"),
    show=show,
)
