"""Count the Spark jobs a piece of test code runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def jobs_run(spark, group: str, call: Callable[[], Any]) -> int:
    """The Spark jobs ``call`` runs, counted in the job group ``group`` (a name of its
    own: a group's count includes every job run in it so far)."""
    spark.sparkContext.setJobGroup(group, group)
    try:
        call()
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    return len(spark.sparkContext.statusTracker().getJobIdsForGroup(group))
