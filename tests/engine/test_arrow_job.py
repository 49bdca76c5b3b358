"""Small inputs Spark does not hold in the driver (cached frames, files) are collected by
one plain RDD job of Arrow batches, and their rows are the rows of the SQL projection's
job, to the bit. A failed job or a stream cut short gives no rows."""

from __future__ import annotations

import pytest

from sparkeval.engine.plans import arrow_job, driver_plan
from tests.engine.test_local_rows import CASES, _frames, same_rows_to_the_bit
from tests.job_groups import jobs_run

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("stored", ["cached", "parquet"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_one_job_gives_the_projections_rows_to_the_bit(spark, case, stored, tmp_path) -> None:
    run, qrels = _frames(spark, case)
    if stored == "cached":
        run, qrels = run.cache(), qrels.cache()
    else:
        run.write.parquet(str(tmp_path / "run"))
        qrels.write.parquet(str(tmp_path / "qrels"))
        run, qrels = (spark.read.parquet(str(tmp_path / name)) for name in ("run", "qrels"))
    projections = driver_plan.plain_projections(run.dtypes, qrels.dtypes)
    assert projections is not None
    by_projection = driver_plan.plain_rows_by_a_job(run, qrels, projections, 0)
    collected = {}

    def one_job() -> None:
        collected["rows"] = arrow_job.plain_rows_by_one_job(run, qrels, run.dtypes, qrels.dtypes)

    assert jobs_run(spark, f"one job: {case} {stored}", one_job) == 1
    same_rows_to_the_bit(collected["rows"], by_projection)
    run.unpersist()
    qrels.unpersist()


def test_other_columns_are_left_out_and_empty_inputs_give_empty_tables(spark) -> None:
    run = spark.createDataFrame(
        [("q", "d1", 2.0, "x"), ("q", "d2", 1.0, "y")],
        "query_id string, doc_id string, score double, note string",
    ).cache()
    qrels = spark.createDataFrame([], "relevance int, doc_id string, query_id string").cache()
    names = (["query_id", "doc_id", "score"], ["query_id", "doc_id", "relevance"])
    tables = arrow_job.frames_by_one_job(run, qrels, names)
    assert tables is not None
    assert tables[0].to_pylist() == [
        {"query_id": "q", "doc_id": "d1", "score": 2.0},
        {"query_id": "q", "doc_id": "d2", "score": 1.0},
    ]
    assert tables[1].num_rows == 0
    assert sorted(tables[1].column_names) == sorted(names[1])
    run.unpersist()
    qrels.unpersist()


def test_a_failed_job_gives_no_rows(spark) -> None:
    run = spark.range(4).selectExpr(
        "CAST(id AS STRING) AS query_id",
        "'d' AS doc_id",
        "CASE WHEN id = 2 THEN CAST(raise_error('row 2 is bad') AS DOUBLE) ELSE 1.0 END AS score",
    )
    qrels = spark.createDataFrame([("0", "d", 1)], "query_id string, doc_id string, relevance int")
    names = (["query_id", "doc_id", "score"], ["query_id", "doc_id", "relevance"])
    assert arrow_job.frames_by_one_job(run, qrels, names) is None


def test_a_stream_cut_short_is_not_taken_for_the_rows(spark, monkeypatch) -> None:
    from pyspark.serializers import NoOpSerializer

    run = spark.createDataFrame([("q", "d", 1.0)], "query_id string, doc_id string, score double")
    qrels = spark.createDataFrame([("q", "d", 1)], "query_id string, doc_id string, relevance int")
    run, qrels = run.cache(), qrels.cache()
    names = (["query_id", "doc_id", "score"], ["query_id", "doc_id", "relevance"])
    assert arrow_job.frames_by_one_job(run, qrels, names) is not None
    load_stream = NoOpSerializer.load_stream
    # the socket closes before the last element, as when the JVM fails while serving
    monkeypatch.setattr(
        NoOpSerializer, "load_stream", lambda self, s: list(load_stream(self, s))[:-1]
    )
    assert arrow_job.frames_by_one_job(run, qrels, names) is None
    run.unpersist()
    qrels.unpersist()


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_task_each_gives_the_same_rows_in_four_tasks(spark, case) -> None:
    run, qrels = (frame.cache() for frame in _frames(spark, case))
    types = (run.dtypes, qrels.dtypes)
    spread = arrow_job.plain_rows_by_one_job(run, qrels, *types)
    group = f"one task each: {case}"
    collected = {}

    def one_task_each() -> None:
        collected["rows"] = arrow_job.plain_rows_by_one_job(run, qrels, *types, True)

    assert jobs_run(spark, group, one_task_each) == 1
    tracker = spark.sparkContext.statusTracker()
    (job,) = tracker.getJobIdsForGroup(group)
    (stage,) = tracker.getJobInfo(job).stageIds
    assert tracker.getStageInfo(stage).numTasks == 4  # each input, each marker
    assert spread is not None and collected["rows"] is not None
    # the same rows, maybe in another order (repr: each double's shortest exact text)
    assert sorted(map(repr, collected["rows"].to_pylist())) == sorted(map(repr, spread.to_pylist()))
    run.unpersist()
    qrels.unpersist()
