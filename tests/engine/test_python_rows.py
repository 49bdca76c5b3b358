"""Frames of Python rows (``spark.createDataFrame`` of a list) are read back from the
driver without a Spark job, and their rows are the rows Spark's job gives, to the bit.
A value Spark would turn into another one (null, a wrapped integer, another text) is
not read there: the frame is then collected by a job, as any other frame."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sparkeval.engine.plans import driver_plan, python_rows
from tests.engine.test_local_rows import CASES, same_rows_to_the_bit
from tests.job_groups import jobs_run

pytestmark = pytest.mark.spark


def _listed(spark, case: str):
    run_rows, run_types, qrels_rows, qrels_types = CASES[case]
    return spark.createDataFrame(run_rows, run_types), spark.createDataFrame(
        qrels_rows, qrels_types
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_rows_read_back_are_the_jobs_rows_to_the_bit(spark, case) -> None:
    run, qrels = _listed(spark, case)
    projections = driver_plan.plain_projections(run.dtypes, qrels.dtypes)
    assert projections is not None
    read = jobs_run(
        spark,
        f"read back: {case}",
        lambda: python_rows.plain_parallelized(run, qrels, run.dtypes, qrels.dtypes),
    )
    assert read == 0
    by_job = driver_plan.plain_rows_by_a_job(run, qrels, projections, 0)
    local = python_rows.plain_parallelized(run, qrels, run.dtypes, qrels.dtypes)
    same_rows_to_the_bit(local, by_job)


def test_every_batch_of_every_partition_is_read_in_order(spark) -> None:
    rows = [(f"q{i % 7}", f"d{i}", float(i)) for i in range(2500)]
    # pickled in batches of 1,024 rows (the last of 452), sliced into the partitions
    frame = spark.createDataFrame(rows, "query_id string, doc_id string, score double")
    read = python_rows.parallelized_rows(frame, ["query_id", "doc_id", "score"])
    assert read is not None
    assert read.to_pylist() == frame.toArrow().to_pylist()
    assert read.column("score").to_pylist() == [float(i) for i in range(2500)]


#: values Spark's conversion turns into others, with what Spark's job reads
CONVERTED = {
    "an int in a double column": ("score double", 3, None),
    "a bool in a bigint column": ("score bigint", True, None),
    "an int beyond an int column": ("score int", 2**31 + 5, -(2**31) + 5),  # wrapped
    "a float in a bigint column": ("score bigint", 2.0, None),
}


@pytest.mark.parametrize("case", sorted(CONVERTED))
def test_a_value_spark_converts_is_left_to_its_job(spark, case) -> None:
    """Unchecked (``verifySchema=False``), such values reach Spark's own conversion,
    which the job's rows show; they are not read back."""
    spark_type, value, by_spark = CONVERTED[case]
    frame = spark.createDataFrame(
        [("q", "d", value)], f"query_id string, doc_id string, {spark_type}", verifySchema=False
    )
    assert frame.collect()[0]["score"] == by_spark
    assert python_rows.parallelized_rows(frame, ["query_id", "doc_id", "score"]) is None


def test_only_frames_of_listed_rows_are_read_back(spark) -> None:
    rows = [("q", "d1", 1.0), ("q", "d2", 2.0)]
    types = "query_id string, doc_id string, score double"
    columns = ["query_id", "doc_id", "score"]
    listed = spark.createDataFrame(rows, types)
    assert python_rows.parallelized_rows(listed, columns).num_rows == 2
    context = spark.sparkContext
    others = {
        # the RDD's own Python function runs in the job
        "an RDD": spark.createDataFrame(context.parallelize(rows), types),
        "a mapped RDD": spark.createDataFrame(context.parallelize(rows).map(lambda r: r), types),
        "a projection": listed.selectExpr("upper(query_id) AS query_id", "doc_id", "score"),
        "a filter": listed.where("score > 1"),
        "cached": spark.createDataFrame(rows, types).cache(),
        "local data": spark.createDataFrame(listed.toPandas()),
    }
    for name, frame in others.items():
        assert python_rows.parallelized_rows(frame, columns) is None, name
    others["cached"].unpersist()


def test_a_frame_with_more_rows_than_the_limit_is_refused(spark) -> None:
    rows = [("q", f"d{i}", float(i)) for i in range(10)]
    frame = spark.createDataFrame(rows, "query_id string, doc_id string, score double")
    assert python_rows.parallelized_rows(frame, ["doc_id"], row_limit=10).num_rows == 10
    with pytest.raises(python_rows.TooManyRows):
        python_rows.parallelized_rows(frame, ["doc_id"], row_limit=9)


def test_a_stream_cut_short_is_not_taken_for_the_rows(spark, monkeypatch) -> None:
    from pyspark.serializers import CloudPickleSerializer

    rows = [("q", f"d{i}", float(i)) for i in range(10)]
    frame = spark.createDataFrame(rows, "query_id string, doc_id string, score double")
    assert python_rows.parallelized_rows(frame, ["doc_id"]).num_rows == 10  # 2 batches
    load_stream = CloudPickleSerializer.load_stream
    # the socket closes after one batch, as when the JVM fails while serving
    monkeypatch.setattr(
        CloudPickleSerializer, "load_stream", lambda self, s: list(load_stream(self, s))[:1]
    )
    assert python_rows.parallelized_rows(frame, ["doc_id"]) is None


def test_text_spark_would_not_keep_is_left_to_its_job(spark) -> None:
    frame = spark.createDataFrame(
        [("q", "d\udc80", 1.0)], "query_id string, doc_id string, score double"
    )
    assert python_rows.parallelized_rows(frame, ["doc_id"]) is None


def test_an_empty_list_reads_as_no_rows(spark) -> None:
    frame = spark.createDataFrame([], "query_id string, doc_id string, score double")
    read = python_rows.parallelized_rows(frame, ["query_id", "score"])
    assert read is not None
    assert read.schema == pa.schema([("query_id", pa.string()), ("score", pa.float64())])
    assert read.num_rows == 0


def test_rows_dicts_and_inferred_types_read_as_spark_reads_them(spark) -> None:
    from pyspark.sql import Row

    made = {
        "Row objects": [
            Row(query_id="q", doc_id="d1", score=2.5),
            Row(query_id="q", doc_id="d2", score=-1.0),
        ],
        "dicts": [{"doc_id": "d1", "score": 2.5, "query_id": "q"}],
        "tuples, names only": [("q", "d1", 7), ("q", "d2", None)],
    }
    columns = ["query_id", "doc_id", "score"]
    for name, rows in made.items():
        frame = spark.createDataFrame(rows, columns if name.startswith("tuples") else None)
        read = python_rows.parallelized_rows(frame, columns)
        assert read is not None, name
        assert read.to_pylist() == frame.select(*columns).toArrow().to_pylist(), name


def test_text_columns_read_the_text_pyspark_made_of_other_values(spark) -> None:
    """Unchecked, a bool or an int given for a text column is made text before it is
    pickled; it is read back as the job reads it."""
    frame = spark.createDataFrame(
        [("q", True, 1.0), ("q", 7, 2.0)],
        "query_id string, doc_id string, score double",
        verifySchema=False,
    )
    read = python_rows.parallelized_rows(frame, ["doc_id"])
    assert read is not None
    by_job = [row["doc_id"] for row in frame.collect()]
    assert read.column("doc_id").to_pylist() == by_job == ["true", "7"]
