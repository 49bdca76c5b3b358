"""The ``rating-errors`` job body: read predictions and truth, evaluate, write; on Spark
(:func:`run_rating_errors`) or in this process (:func:`run_rating_errors_locally`).

The command is :mod:`sparkeval.commands.rating_errors`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparkeval.engine.local_ratings import PER_USER_SCHEMA, LocalRatingEvaluation
from sparkeval.engine.plans.rating_engine import rating_errors
from sparkeval.io.ratings import parse_columns, read_ratings
from sparkeval.job.runner import log
from sparkeval.output import (
    atomic_output_dir,
    shown_path,
    write_arrow_parquet,
    write_spark_table,
    write_summary,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sparkeval.engine.plans.rating_engine import RatingEvaluation
    from sparkeval.rating.options import RatingErrorsConfig


def run_rating_errors(spark: SparkSession, config: RatingErrorsConfig) -> RatingEvaluation:
    """Read, evaluate and write ``per_user.parquet`` and ``summary.json`` all or nothing.

    The returned evaluation's per-user values stay cached until ``unpersist()``.
    """
    config.preflight()
    started = time.time()
    columns = parse_columns(config.columns)
    _log_reading(config)
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

    def write_per_user(directory: Path) -> None:
        # the row count is the summary's: no pass to count (sparkeval.output.write_spark_table)
        rows = evaluation.report["users"]["evaluated"] * len(evaluation.requests)
        write_spark_table(evaluation.ordered_per_user, directory, PER_USER_SCHEMA, rows)

    try:
        evaluation.report = _write(config, evaluation.report, write_per_user, started)
    except BaseException:
        evaluation.unpersist()
        raise
    return evaluation


def run_rating_errors_locally(config: RatingErrorsConfig) -> LocalRatingEvaluation:
    """The same job in this process, without Spark (:mod:`sparkeval.engine.local_ratings`):
    the same files, values and messages as :func:`run_rating_errors`.

    Raises:
        NotDirect: an input or a value needs Spark's readers; nothing was written.
    """
    from sparkeval.engine.local_ratings import rating_errors_locally
    from sparkeval.io.direct_ratings import check_has_rows, read_rating_rows
    from sparkeval.io.readers import check_exists, detect_format
    from sparkeval.measures.rating_names import parse_rating_measures

    config.preflight()
    started = time.time()
    columns = parse_columns(config.columns)
    _log_reading(config)
    tables = []
    for path, kind in ((config.predictions, "predictions"), (config.truth, "truth")):
        check_exists(path)
        rows = read_rating_rows(path, kind, detect_format(path, config.format), columns)
        check_has_rows(rows, path, kind)
        tables.append(rows)
    requests = parse_rating_measures(config.measure_names())
    evaluation = rating_errors_locally(tables[0], tables[1], requests, config.missing)

    def write_per_user(directory: Path) -> None:
        write_arrow_parquet(evaluation.per_user, directory)

    evaluation.report = _write(config, evaluation.report, write_per_user, started)
    return evaluation


def _log_reading(config: RatingErrorsConfig) -> None:
    log(f"[read] {config.predictions} and {config.truth}; computing the errors")


def _write(
    config: RatingErrorsConfig,
    computed: dict[str, Any],
    write_per_user: Callable[[Path], None],
    started: float,
) -> dict[str, Any]:
    """Write ``per_user.parquet`` (by ``write_per_user``), ``summary.json`` and
    ``summary.parquet`` to ``--out``, all or nothing; returns the written report."""
    report = dict(computed)
    report["inputs"] = {"predictions": config.predictions, "truth": config.truth}
    with atomic_output_dir(config.out) as staging:
        write_per_user(staging / "per_user.parquet")
        report["timings_s"] = {"total": round(time.time() - started, 3)}
        write_summary(staging, report, "rating-errors", config.input_paths())
    log(f"results in {shown_path(config.out)} (per_user.parquet, summary.json, summary.parquet)")
    return report
