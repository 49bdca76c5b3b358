"""Frames of local data (``spark.createDataFrame`` of pandas) are written as Arrow by the
driver, without a Spark job, and their rows are the rows the job's casts give, to the
bit: the same text of every id and the same 64 bits of every value, extremes included.
Where the driver cannot write them, a job per frame collects them, with the same rows."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import sparkeval
from sparkeval.engine.plans import driver_plan, local_rows
from tests.job_groups import jobs_run

pytestmark = pytest.mark.spark

_BIG = 2**53 + 1  # the nearest doubles are 2**53 and 2**53 + 2: a tie, rounded to even
CASES = {
    "integer ids and integer scores beyond 2**53": (
        [
            (7, -3, "é", _BIG),
            (7, 2**62, "𝄞", -(2**63)),
            (-8, 0, "", 2**63 - 1),
            (0, -(2**63), "d", 3),
            (0, 1, "e", 2**53 + 3),
        ],
        "run_id int, query_id bigint, doc_id string, score bigint",
        [(-3, "é", 1), (2**62, "x", -128), (0, "", 127), (-(2**63), "d", 0)],
        "query_id bigint, doc_id string, relevance tinyint",
    ),
    "float scores, small integer ids, no run id": (
        [(-128, -32768, 0.1), (127, 32767, 1e-45), (0, 1, 3.4e38), (0, 2, -0.0), (1, 3, None)],
        "query_id tinyint, doc_id smallint, score float",
        [(-128, -32768, 2**62 + 1), (0, 1, 0)],
        "query_id tinyint, doc_id smallint, relevance bigint",
    ),
    "double scores and grades, text ids": (
        [("r", "q", "a", 5e-324), ("r", "q", "b", math.inf), ("s", "q", "c", math.nan)],
        "run_id string, query_id string, doc_id string, score double",
        [("q", "a", 2.5), ("q", "b", -1e9), ("q", "c", 0.1)],
        "query_id string, doc_id string, relevance double",
    ),
}


def _local(spark, rows: list[tuple], types: str):
    """A frame of local data: what ``spark.createDataFrame`` makes of a pandas frame
    (a list of rows becomes an RDD, which only a job reads)."""
    names = [field.split()[0] for field in types.split(",")]
    return spark.createDataFrame(pd.DataFrame(rows, columns=names), types)


def _frames(spark, case: str):
    run_rows, run_types, qrels_rows, qrels_types = CASES[case]
    return _local(spark, run_rows, run_types), _local(spark, qrels_rows, qrels_types)


def _bits(column: pa.ChunkedArray) -> list[int | None]:
    """Each double's 64 bits (None for a null)."""
    values = column.to_pylist()
    packed = np.array([0.0 if v is None else v for v in values]).view(np.int64)
    return [None if v is None else int(b) for v, b in zip(values, packed, strict=True)]


def same_rows_to_the_bit(rows: pa.Table | None, by_job: pa.Table | None) -> None:
    """``rows`` are the plain rows ``by_job`` holds: the same columns, the same text of
    every id, the same 64 bits of every value, in the same order."""
    assert rows is not None and by_job is not None
    assert rows.column_names == by_job.column_names
    for name in by_job.column_names:
        if name == "_value":
            assert _bits(rows.column(name)) == _bits(by_job.column(name))
        else:
            assert rows.column(name).to_pylist() == by_job.column(name).to_pylist()


@pytest.mark.parametrize("collect", ["in the driver", "by a job per frame"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_local_rows_are_the_jobs_rows_to_the_bit(spark, case, collect, monkeypatch) -> None:
    """Both ways of collecting local data give the rows of Spark's own casts."""
    run, qrels = _frames(spark, case)
    assert local_rows.held_in_driver(run, qrels)
    if collect == "in the driver":
        assert local_rows.arrow_in_driver(run) is not None
    else:
        monkeypatch.setattr(local_rows, "arrow_in_driver", lambda frame: None)
    projections = driver_plan.plain_projections(run.dtypes, qrels.dtypes)
    assert projections is not None
    by_job = driver_plan.plain_rows_by_a_job(run, qrels, projections, 0)
    local = local_rows.plain_local_arrow(run, qrels, run.dtypes, qrels.dtypes)
    same_rows_to_the_bit(local, by_job)


def test_the_driver_writes_what_toarrow_collects(spark) -> None:
    """Every column of the frame as it is, text as its bytes (not UTF-8 here), batch
    after batch."""
    rows = [("q", bytes([100, 233]), float(i)) for i in range(5)]  # b"d\xe9": Latin-1
    frame = spark.createDataFrame(
        pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]),
        "query_id string, doc_id binary, score double",
    ).selectExpr("query_id", "CAST(doc_id AS STRING) AS doc_id", "score", "score > 2 AS high")
    assert local_rows.held_in_driver(frame)
    written = local_rows.arrow_in_driver(frame)
    assert written is not None
    assert written.equals(frame.toArrow())
    assert written.column("doc_id").cast(pa.binary()).to_pylist() == [b"d\xe9"] * 5


def test_a_conversion_cut_short_is_not_taken_for_the_rows(spark, monkeypatch) -> None:
    from pyspark.serializers import NoOpSerializer

    frame = _local(
        spark,
        [("q", f"d{i}", 1.0) for i in range(5)],
        "query_id string, doc_id string, score double",
    )
    monkeypatch.setattr(local_rows, "_BATCH_ROWS", 2)  # three batches
    assert local_rows.arrow_in_driver(frame).num_rows == 5
    load_stream = NoOpSerializer.load_stream
    # the socket closes after two batches, as when the JVM fails while writing
    monkeypatch.setattr(
        NoOpSerializer, "load_stream", lambda self, s: list(load_stream(self, s))[:2]
    )
    assert local_rows.arrow_in_driver(frame) is None


def test_a_frame_not_held_in_the_driver_is_not_written_there(spark) -> None:
    rows = spark.createDataFrame([("q", "d", 1.0)], "query_id string, doc_id string, score double")
    assert local_rows.arrow_in_driver(rows) is None  # a list of rows: an RDD


def test_only_uncached_local_data_is_held_in_the_driver(spark, tmp_path) -> None:
    run, qrels = _frames(spark, "double scores and grades, text ids")
    # a projection and a filter over local data are folded into local data
    assert local_rows.held_in_driver(run.select("query_id", "score").where("score > 0"), qrels)
    path = str(tmp_path / "qrels.parquet")
    qrels.write.parquet(path)
    assert not local_rows.held_in_driver(run, spark.read.parquet(path))
    cached = _local(spark, [("q", "z", 1)], "query_id string, doc_id string, relevance int")
    cached.cache()
    try:
        assert not local_rows.held_in_driver(cached)
    finally:
        cached.unpersist()


def test_an_empty_local_run_is_evaluated_as_an_empty_cached_one(spark) -> None:
    # a model that recommended nothing: its one judged query retrieved nothing, AP 0
    run = _local(spark, [], "query_id string, doc_id string, score double")
    qrels = _local(spark, [("q", "d", 1)], "query_id string, doc_id string, relevance int")
    reports = [sparkeval.evaluate(spark, frame, qrels, "AP").report for frame in (run, run.cache())]
    run.unpersist()
    assert reports[0] == reports[1]
    assert reports[0]["runs"]["run"]["measures"] == {"AP": 0.0}


def test_local_data_the_driver_cannot_write_is_collected_by_jobs_with_the_same_values(
    spark, monkeypatch
) -> None:
    rng = np.random.default_rng(7)
    run_rows = [(f"r{r}", q, f"d{d}", int(rng.integers(0, 3))) for r in range(2) for q in range(4)
                for d in range(6)]  # fmt: skip
    run = _local(spark, run_rows, "run_id string, query_id int, doc_id string, score bigint")
    qrels_rows = [(q, f"d{d}", float(rng.integers(0, 3))) for q in range(5) for d in range(0, 8, 2)]
    qrels = _local(spark, qrels_rows, "query_id int, doc_id string, relevance double")
    qrels = qrels.where("relevance >= 0")  # folded into the local data
    report = {}

    def evaluated(size: str) -> None:
        evaluation = sparkeval.evaluate(spark, run, qrels, "AP,P@2,nDCG@2", queries="both")
        report[size] = evaluation.report
        evaluation.unpersist()

    assert jobs_run(spark, "in the driver", lambda: evaluated("in the driver")) == 0
    monkeypatch.setattr(local_rows, "arrow_in_driver", lambda frame: None)
    # each frame collected as it is: one job each, no plan of casts over the rows
    assert jobs_run(spark, "a job each", lambda: evaluated("a job each")) == 2
    monkeypatch.setattr(driver_plan, "held_in_driver", lambda *frames: False)
    assert jobs_run(spark, "by the job", lambda: evaluated("by the job")) == 1
    assert report["in the driver"] == report["a job each"] == report["by the job"]


def test_frames_of_arrow_tables_pandas_and_lists_of_rows_need_no_job(spark) -> None:
    """Lists of rows are read back from the driver (:mod:`python_rows`); an RDD mapped
    by a Python function is not: only a job reads it."""
    run_rows = [("q1", "d1", 2.0), ("q1", "d2", 1.0)]
    qrels_rows = [("q1", "d2", 1)]
    run_types, qrels_types = (
        "query_id string, doc_id string, score double",
        ("query_id string, doc_id string, relevance bigint"),
    )
    inputs = {
        "pandas": (_local(spark, run_rows, run_types), _local(spark, qrels_rows, qrels_types)),
        "arrow": (
            spark.createDataFrame(_local(spark, run_rows, run_types).toArrow()),
            spark.createDataFrame(_local(spark, qrels_rows, qrels_types).toArrow()),
        ),
        "rows": (
            spark.createDataFrame(run_rows, run_types),  # an RDD of Python rows
            spark.createDataFrame(qrels_rows, qrels_types),
        ),
        "mapped": (
            spark.createDataFrame(spark.sparkContext.parallelize(run_rows), run_types),
            spark.createDataFrame(qrels_rows, qrels_types),
        ),
    }
    jobs = {}
    for kind, (run, qrels) in inputs.items():

        def evaluated(run=run, qrels=qrels) -> None:
            evaluation = sparkeval.evaluate(spark, run, qrels, "P@1,RR")
            # by hand: the one relevant doc d2 is ranked second
            assert evaluation.report["runs"]["run"]["measures"] == {"P@1": 0.0, "RR": 0.5}
            evaluation.unpersist()

        jobs[kind] = jobs_run(spark, kind, evaluated)
    assert (jobs["pandas"], jobs["arrow"], jobs["rows"]) == (0, 0, 0)
    assert jobs["mapped"] >= 1
