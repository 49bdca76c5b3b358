"""Small inputs cost little: a handful of tasks, no job to find the run ids of one run,
and the per-query frame built only when it is asked for."""

from __future__ import annotations

import pandas as pd
import pytest

import sparkeval
from sparkeval.engine.plans.spark_engine import BYTES_PER_BUCKET, default_buckets

pytestmark = pytest.mark.spark


def _frames(spark, runs: int = 1):
    rows = [
        (f"r{r}", f"q{q}", f"d{d}", float(10 - d)) for r in range(runs) for q in range(5)
        for d in range(10)
    ]  # fmt: skip
    run = pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"])
    if runs == 1:
        run = run.drop(columns="run_id")
    qrels = pd.DataFrame(
        [(f"q{q}", f"d{d}", 1) for q in range(5) for d in (1, 4)],
        columns=["query_id", "doc_id", "relevance"],
    )
    return spark.createDataFrame(run), spark.createDataFrame(qrels)


def _counted(spark, group: str, call):
    """``(call's result, Spark jobs it ran, tasks of their stages)``."""
    tracker = spark.sparkContext.statusTracker()
    spark.sparkContext.setJobGroup(group, group)
    try:
        result = call()
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    jobs = sorted(tracker.getJobIdsForGroup(group))
    stages = [s for job in jobs for s in (getattr(tracker.getJobInfo(job), "stageIds", ()) or ())]
    tasks = [getattr(tracker.getStageInfo(s), "numTasks", 0) for s in sorted(stages)]
    return result, len(jobs), tasks


def _evaluated(spark, group: str, run, qrels, measures: str):
    return _counted(spark, group, lambda: sparkeval.evaluate(spark, run, qrels, measures))


def test_a_tiny_input_is_one_bucket_whatever_the_shuffle_partitions(spark) -> None:
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "200")
    try:
        assert default_buckets(spark, 1_000) == 1
        assert default_buckets(spark, 3 * BYTES_PER_BUCKET + 1) == 4
        assert default_buckets(spark, 10**12) == 200
        assert default_buckets(spark, None) == 200
        run, qrels = _frames(spark)
        ev, jobs, tasks = _evaluated(spark, "tiny", run, qrels, "AP,P@5")
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", previous)
    try:
        # by hand: every query ranks its relevant docs d1, d4 at ranks 2 and 5
        assert ev.report["runs"]["run"]["measures"] == {"AP": (1 / 2 + 2 / 5) / 2, "P@5": 0.4}
    finally:
        ev.unpersist()
    # the evaluation stage (the last) is one task, one bucket: it was 200; every stage
    # listed (adaptive execution lists a shuffle's map stage again, skipped) is small
    assert tasks[-1] == 1 and sum(tasks) < 20, (jobs, tasks)


def test_one_run_needs_no_job_to_find_its_id_and_the_per_query_frame_waits(spark) -> None:
    ev, one_run, _ = _evaluated(spark, "one-run", *_frames(spark), "AP")
    ev.unpersist()
    ev, three_runs, _ = _evaluated(spark, "three-runs", *_frames(spark, runs=3), "AP")
    try:
        assert sorted(ev.report["runs"]) == ["r0", "r1", "r2"]
        # the run ids of several runs cost a job that one run does not
        assert one_run < three_runs, (one_run, three_runs)
        _, asked, _ = _counted(spark, "per-query", lambda: ev.per_query.count())
        assert asked >= 1  # the per-query frame is built when asked for, not before
    finally:
        ev.unpersist()
