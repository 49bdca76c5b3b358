"""The run rows of ``evaluate`` as Spark's readers give them, for the evaluation and
for the measures computed beside it (the set measures, the intent-aware measures):
every run input of the config, in its format, column map and ``--where``, with the
check for runs without rows left to the evaluation (which reports it per run)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sparkeval.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from sparkeval.evaluation.options import EvaluateConfig


def read_evaluated_runs(
    spark: SparkSession,
    config: EvaluateConfig,
    ties: str = "doc-id",
    scored_for: str | None = None,
) -> tuple[DataFrame, list[str]]:
    """(the union of the config's run rows, their run ids in input order).

    ``ties`` is the tie rule the rows are ranked by (``--ties``); ``scored_for``, when
    given, names the measures that rank by score, and a run without a score column is
    refused with that name ("the intent-aware measures need the runs' scores").
    """
    from sparkeval.io import read_runs

    run_df, run_ids = read_runs(
        spark,
        config.run_inputs(),
        config.run_format or config.format,
        config.run_column_map(),
        config.where,
        check_rows=False,
        ties=ties,
    )
    if scored_for is not None and "score" not in run_df.columns:
        raise ConfigError(f"{scored_for} need the runs' scores")
    return run_df, list(run_ids)
