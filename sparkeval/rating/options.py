"""The config of ``sparkeval rating-errors`` (:class:`RatingErrorsConfig`), checked before
Spark starts; read by the job body (:func:`sparkeval.rating.job.run_rating_errors`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Self

from sparkeval.engine.plans.rating_engine import MISSING_POLICIES
from sparkeval.errors import ConfigError
from sparkeval.io.readers import FORMATS
from sparkeval.job.engine_choice import ENGINE_HELP, ENGINES
from sparkeval.job.options import input_path, option
from sparkeval.job.spark_options import OutputJobConfig
from sparkeval.measures.rating_names import DEFAULT_RATING_MEASURES, parse_rating_measures


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
    engine: str = option("auto", choices=ENGINES, help=ENGINE_HELP)

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
