"""``sparkeval rating-errors``: rating-prediction errors, pooled and per user."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Self, TextIO

from sparkeval.engine.plans.rating_engine import MISSING_POLICIES
from sparkeval.errors import ConfigError
from sparkeval.io.readers import FORMATS
from sparkeval.job.command import Command, spark_job
from sparkeval.job.options import input_path, option
from sparkeval.job.spark_options import OutputJobConfig
from sparkeval.measures.rating_names import DEFAULT_RATING_MEASURES, parse_rating_measures

if TYPE_CHECKING:
    from sparkeval.engine.plans.rating_engine import RatingEvaluation


@dataclass(frozen=True, kw_only=True)
class RatingErrorsConfig(OutputJobConfig):
    """Predictions, true ratings and the errors asked for."""

    predictions: str = input_path(
        "predictions table (Parquet, CSV, JSON Lines or 'user item value' text)"
    )
    truth: str = input_path("true ratings table")
    measures: tuple[str, ...] = option(
        (),
        metavar="LIST",
        help="comma separated: RMSE, MAE, MaxAE, TopL_AE(L=3), Lp(p=3), R2, ExpVar "
        f"(default {','.join(DEFAULT_RATING_MEASURES)})",
    )
    columns: Mapping[str, str] | str | None = option(
        None,
        metavar="MAP",
        help="explicit columns, e.g. user_id=uid,item_id=iid,prediction=p,rating=r",
    )
    missing: str = option(
        "error",
        choices=MISSING_POLICIES,
        help="a pair on one side only: error (default) or skip it (it is counted)",
    )
    format: str | None = option(
        None,
        choices=FORMATS,
        help="format of both inputs ('trec' means 'user item value' text)",
    )
    buckets: int | None = option(
        None, metavar="B", help="hash buckets of users (default spark.sql.shuffle.partitions)"
    )

    def validate(self) -> Self:
        self.measure_names()
        if self.buckets is not None and self.buckets < 1:
            raise ConfigError(f"--buckets: expected a whole number >= 1, got {self.buckets}")
        return self

    def input_paths(self) -> list[str]:
        return [self.predictions, self.truth]

    def measure_names(self) -> list[str]:
        """The canonical names of the errors asked for (the defaults when none)."""
        try:
            requests = parse_rating_measures(list(self.measures) or None)
        except ValueError as exc:
            raise ConfigError(f"--measures: {exc}") from None
        return [r.name for r in requests]


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
