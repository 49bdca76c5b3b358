"""The ``rating-errors`` job body: read predictions and truth, evaluate, write.

The command is :mod:`sparkeval.commands.rating_errors`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from sparkeval.engine.plans.rating_engine import rating_errors
from sparkeval.io.ratings import parse_columns, read_ratings
from sparkeval.job.runner import log
from sparkeval.output import atomic_output_dir, shown_path, write_parquet, write_summary

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sparkeval.engine.plans.rating_engine import RatingEvaluation
    from sparkeval.rating_config import RatingErrorsConfig


def run_rating_errors(spark: SparkSession, config: RatingErrorsConfig) -> RatingEvaluation:
    """Read, evaluate and write ``per_user.parquet`` and ``summary.json`` all or nothing.

    The returned evaluation's per-user values stay cached until ``unpersist()``.
    """
    config.preflight()
    started = time.time()
    columns = parse_columns(config.columns)
    log(f"[read] {config.predictions} and {config.truth}; computing the errors")
    pred = read_ratings(spark, config.predictions, "predictions", config.format, columns)
    truth = read_ratings(spark, config.truth, "truth", config.format, columns)
    evaluation = rating_errors(
        spark,
        pred,
        truth,
        config.measure_names(),
        missing=config.missing,
        buckets=config.buckets,
    )
    try:
        report = dict(evaluation.report)
        report["inputs"] = {"predictions": config.predictions, "truth": config.truth}
        with atomic_output_dir(config.out) as staging:
            write_parquet(
                evaluation.ordered_per_user,
                staging / "per_user.parquet",
            )
            report["timings_s"] = {"total": round(time.time() - started, 3)}
            write_summary(staging, report, "rating-errors", config.input_paths())
    except BaseException:
        evaluation.unpersist()
        raise
    evaluation.report = report
    log(f"results in {shown_path(config.out)} (per_user.parquet, summary.json, summary.parquet)")
    return evaluation
