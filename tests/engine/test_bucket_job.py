"""The evaluation on handed-over files runs as a plain Python job, and the query that
writes the files before it runs its Python tasks in the same workers."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from sparkeval.engine.plans.bucket_job import PLAIN_WORKER_SETTINGS
from sparkeval.spark import session_settings

pytestmark = pytest.mark.spark


def _daemons_of_a_query(spark) -> set[int]:
    """The parent processes (daemons) of the Python workers a query's tasks ran in."""

    def parents(batches):
        for _ in batches:
            pass
        yield pa.record_batch({"daemon": pa.array([os.getppid()], pa.int64())})

    frame = spark.range(0, 4, 1, numPartitions=2).mapInArrow(parents, "daemon long")
    return {row.daemon for row in frame.collect()}


def _daemons_of_a_plain_job(spark) -> set[int]:
    """The parent processes (daemons) of the Python workers a plain job's tasks ran in."""
    tasks = spark.sparkContext.parallelize(range(2), 2)
    return set(tasks.mapPartitions(lambda _: [os.getppid()]).collect())


def test_a_query_with_the_plain_settings_runs_in_the_plain_jobs_workers(spark) -> None:
    with session_settings(spark, PLAIN_WORKER_SETTINGS):
        query = _daemons_of_a_query(spark)
    assert query == _daemons_of_a_plain_job(spark)


def test_a_query_without_them_runs_in_workers_of_its_own(spark) -> None:
    # what the settings change: Spark keeps a pool of Python workers per environment
    key = next(iter(PLAIN_WORKER_SETTINGS))
    with session_settings(spark, {key: "true"}):
        query = _daemons_of_a_query(spark)
    assert query.isdisjoint(_daemons_of_a_plain_job(spark))
