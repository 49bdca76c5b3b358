"""Whether the runs of an ``evaluate`` command are ordered by a rank column, and so how
their ranks give positions (:meth:`sparkeval.compat.CompatPlan.ranks`), judged from the
inputs' columns before their rows are read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sparkeval.compat import CompatPlan
from sparkeval.errors import ConfigError
from sparkeval.io.readers import TABLE_PREFIX, is_catalog_table, rank_only

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sparkeval.commands.evaluate import EvaluateConfig


def run_ranks(spark: SparkSession, config: EvaluateConfig, plan: CompatPlan) -> str | None:
    """``EvalOptions.ranks`` for the runs of ``config``: None unless every run is
    rank-only (a TREC run and a remote file whose columns are not read here have
    scores); under ``rectools`` runs with ranks and runs with scores cannot be mixed.

    Raises:
        ConfigError: rank-only and scored runs together under ``rectools``.
    """
    from sparkeval.job.dry_run import input_schema

    fmt = config.run_format or config.format
    found: dict[str, bool] = {}
    for path in config.run_inputs():
        if is_catalog_table(path):
            columns = list(spark.table(path[len(TABLE_PREFIX) :]).columns)
        else:
            schema = input_schema(path, fmt)
            columns = [] if schema.fmt == "trec" else list(schema.columns)
        found[path] = rank_only(columns, config.run_column_map())
    ranked = set(found.values())
    if len(ranked) > 1 and plan.profile == "rectools":
        with_ranks = ", ".join(p for p, r in found.items() if r)
        raise ConfigError(
            f"compat rectools reads ranks as positions: the runs {with_ranks} have a rank "
            "column and the others scores; evaluate them separately"
        )
    return plan.ranks(ranked == {True})
