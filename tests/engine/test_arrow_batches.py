"""Arrow batches of Spark rows sent to the Python workers: bounded by rows, not bytes,
while sparkeval ships evaluation rows (:func:`sparkeval.spark.arrow_batches_bounded_by_rows`),
and the session's own setting back afterwards."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sparkeval.spark import (
    ARROW_BATCH_BYTES_KEY,
    UNMEASURED_BATCH_BYTES,
    arrow_batches_bounded_by_rows,
)

ROWS_KEY = "spark.sql.execution.arrow.maxRecordsPerBatch"


def _batch_sizes(spark, rows: int) -> list[int]:
    """The row counts of the Arrow batches a Python function gets, one partition."""

    def sizes(batches):
        for batch in batches:
            yield pa.RecordBatch.from_pydict({"n": [batch.num_rows]})

    frame = spark.range(rows, numPartitions=1).selectExpr("repeat('x', 100) AS text")
    return [r.n for r in frame.mapInArrow(sizes, "n long").collect()]


@pytest.fixture
def small_batch_settings(spark):
    """maxRecordsPerBatch 500 and a byte bound of 8 KiB (rows of ~100 bytes: ~80 a batch)."""
    saved = {key: spark.conf.get(key, None) for key in (ROWS_KEY, ARROW_BATCH_BYTES_KEY)}
    spark.conf.set(ROWS_KEY, "500")
    spark.conf.set(ARROW_BATCH_BYTES_KEY, str(8 << 10))
    yield
    for key, value in saved.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


def test_batches_end_at_the_row_bound_inside_the_block(spark, small_batch_settings):
    outside = _batch_sizes(spark, 2000)
    assert sum(outside) == 2000
    assert max(outside) < 500  # the byte bound cut them
    with arrow_batches_bounded_by_rows(spark):
        inside = _batch_sizes(spark, 2000)
    assert inside == [500, 500, 500, 500]
    assert spark.conf.get(ARROW_BATCH_BYTES_KEY) == str(8 << 10)


def test_an_unset_bound_is_unset_again(spark):
    saved = spark.conf.get(ARROW_BATCH_BYTES_KEY, None)
    spark.conf.unset(ARROW_BATCH_BYTES_KEY)
    try:
        with arrow_batches_bounded_by_rows(spark):
            assert spark.conf.get(ARROW_BATCH_BYTES_KEY) == UNMEASURED_BATCH_BYTES
        assert spark.conf.get(ARROW_BATCH_BYTES_KEY, None) is None
    finally:
        if saved is not None:
            spark.conf.set(ARROW_BATCH_BYTES_KEY, saved)


def test_the_bound_is_restored_after_an_error(spark):
    before = spark.conf.get(ARROW_BATCH_BYTES_KEY, None)
    with pytest.raises(RuntimeError, match="boom"), arrow_batches_bounded_by_rows(spark):
        raise RuntimeError("boom")
    assert spark.conf.get(ARROW_BATCH_BYTES_KEY, None) == before


@pytest.mark.parametrize("path", ["driver", "distributed"])
def test_evaluating_a_computed_frame_leaves_the_session_setting(
    spark, small_batch_settings, monkeypatch, path
):
    import sparkeval
    from sparkeval.engine.plans import driver_plan

    if path == "distributed":
        monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1)

    run = spark.createDataFrame(
        [("q1", "d1", 3.0), ("q1", "d2", 2.0), ("q2", "d1", 1.0)],
        "query_id string, doc_id string, score double",
    ).selectExpr("query_id", "doc_id", "score + 0.0 AS score")
    qrels = spark.createDataFrame(
        [("q1", "d2", 1), ("q2", "d1", 1)], "query_id string, doc_id string, relevance int"
    )
    report = sparkeval.evaluate(spark, run, qrels, ["AP"]).report
    # q1: the relevant d2 at rank 2 (AP 1/2); q2: d1 at rank 1 (AP 1)
    assert report["runs"]["run"]["measures"]["AP"] == pytest.approx(0.75)
    assert spark.conf.get(ARROW_BATCH_BYTES_KEY) == str(8 << 10)


_ERROR_AFTER_THE_JVM_DIED = """
import os, signal
from sparkeval.spark import arrow_batches_bounded_by_rows, build_session

spark = build_session("local[1]", "jvm-gone")
java = spark.sparkContext._gateway.proc  # the JVM (spark-submit execs java)
try:
    with arrow_batches_bounded_by_rows(spark):
        os.kill(java.pid, signal.SIGKILL)
        java.wait()
        raise RuntimeError("the evaluation's own error")
except RuntimeError as exc:
    print("propagated:", exc)
"""


def test_the_error_that_ended_the_block_propagates_when_the_jvm_is_gone(tmp_path):
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _ERROR_AFTER_THE_JVM_DIED],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert "propagated: the evaluation's own error" in done.stdout, done.stderr[-3000:]
