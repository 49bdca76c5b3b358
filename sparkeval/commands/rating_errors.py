"""``sparkeval rating-errors``: rating-prediction errors, pooled and per user."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from sparkeval.job.command import Command, LocalEngine, spark_job
from sparkeval.job.engine_choice import run_here_or_on_spark, runs_locally
from sparkeval.rating.options import RatingErrorsConfig

if TYPE_CHECKING:
    from sparkeval.engine.local_ratings import LocalRatingEvaluation
    from sparkeval.engine.plans.rating_engine import RatingEvaluation


def show(
    evaluation: RatingEvaluation | LocalRatingEvaluation,
    config: RatingErrorsConfig,
    stdout: TextIO,
) -> None:
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


def needs_spark(config: RatingErrorsConfig) -> str | None:
    """Why ``config`` needs Spark whatever the size of its inputs, or None: what the
    local engine (:mod:`sparkeval.engine.local_ratings`) does not do."""
    from sparkeval.engine.local_ratings import lp_needs_spark
    from sparkeval.io.readers import detect_format, is_catalog_table
    from sparkeval.measures.rating_names import parse_rating_measures

    paths = config.input_paths()
    if any(is_catalog_table(path) for path in paths):
        return "catalog tables are read through Spark"
    if any(detect_format(path, config.format) == "jsonl" for path in paths):
        return "JSON Lines inputs are read by Spark"
    return lp_needs_spark(parse_rating_measures(config.measure_names()))


def run_locally(config: RatingErrorsConfig) -> LocalRatingEvaluation | None:
    """The evaluation in this process (:func:`sparkeval.rating.job.run_rating_errors_locally`);
    None sends an ``auto`` run to Spark when an input or value needs Spark's readers."""
    from sparkeval.rating.job import run_rating_errors_locally

    return run_here_or_on_spark(config, run_rating_errors_locally)


COMMAND = Command(
    name="rating-errors",
    help="rating-prediction errors (RMSE, MAE, R2, ...) pooled and per user",
    description="Join predictions (user, item, prediction) with true ratings (user, item, "
    "rating) on (user, item) and compute each error pooled over all pairs and as the mean "
    "of per-user values. Writes OUT/per_user.parquet (user_id, measure, value) and "
    "OUT/summary.json.",
    config=RatingErrorsConfig,
    run=spark_job("sparkeval.rating.job:run_rating_errors"),
    show=show,
    local=LocalEngine(lambda config: runs_locally(config, needs_spark), run_locally),
)
