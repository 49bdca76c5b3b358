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


def tasks_run(spark, group: str, call: Callable[[], Any]) -> int:
    """The Spark tasks ``call`` runs: of every stage of every job it runs in the job
    group ``group`` (a name of its own)."""
    jobs_run(spark, group, call)
    tracker = spark.sparkContext.statusTracker()
    stages = {
        stage
        for job in tracker.getJobIdsForGroup(group)
        for stage in (tracker.getJobInfo(job).stageIds if tracker.getJobInfo(job) else [])
    }
    infos = [tracker.getStageInfo(stage) for stage in stages]
    return sum(info.numTasks for info in infos if info is not None)
