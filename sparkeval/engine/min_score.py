"""Keep the run rows whose score reaches a floor: Microsoft Recommenders'
``relevancy_method="by_threshold"`` (:attr:`sparkeval.compat.CompatPlan.min_score`).

A row stays when ``score >= min_score``; a row whose score is missing or not a number
stays too, so that the evaluation reports it as it reports any bad row. The same rule
on Spark (:func:`keep_spark_rows`) and in process (:func:`keep_held_rows`); the rows
left out are counted (:func:`count_spark_rows_below`), for the summary to say so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.formats import BAD

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


def _kept(run_df: DataFrame, min_score: float) -> Column:
    """The condition of the rows :func:`keep_spark_rows` keeps."""
    from pyspark.sql import functions as F

    score = F.col("score")
    keep = score.isNull() | F.isnan(score) | (score >= F.lit(float(min_score)))
    if BAD in run_df.columns:
        keep = keep | F.col(BAD).isNotNull()
    return keep


def keep_spark_rows(run_df: DataFrame, min_score: float | None) -> DataFrame:
    """``run_df`` (canonical columns) without the rows whose score is below ``min_score``."""
    if min_score is None:
        return run_df
    return run_df.where(_kept(run_df, min_score))


def count_spark_rows_below(run_df: DataFrame, min_score: float) -> int:
    """How many rows of ``run_df`` :func:`keep_spark_rows` leaves out (one Spark job):
    the rows with a number for a score below ``min_score``."""
    return int(run_df.where(~_kept(run_df, min_score)).count())


def keep_held_rows(run: pa.Table, min_score: float | None) -> pa.Table:
    """The held run table ``run`` (checked scores) without the rows below ``min_score``."""
    if min_score is None:
        return run
    return run.filter(pc.greater_equal(run.column("score"), pa.scalar(float(min_score))))
