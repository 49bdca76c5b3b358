"""A run's score that a scanned DataFrame computes with arithmetic is computed by the
workers that read the files (:mod:`sparkeval.io.scan_values`): the same bits
as Spark's own computation of every value, and the same evaluation as the DataFrame
path; anything else stays with Spark."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sparkeval
from sparkeval.engine.plans import driver_plan
from sparkeval.io.scan_plan import scanned_parquet
from sparkeval.io.scan_values import compute_value

pytestmark = pytest.mark.spark

MEASURES = "AP,nDCG@10,P@5,RR,bpref,ERR@10,Rprec"
QUERIES, DOCS = 40, 30


@pytest.fixture
def run_file(tmp_path):
    """A run whose number columns hold the values where arithmetic and conversions
    round: halves, tenths, signed zeros, infinities, extremes, integers beyond 2**53."""
    rng = np.random.default_rng(5)
    n = QUERIES * DOCS
    special = [0.0, -0.0, math.inf, -math.inf, 1e308, -1e308, 5e-324, 0.1, 2.5, -2.5]
    score = rng.normal(size=n)
    score[: len(special)] = special
    rank = rng.integers(-(2**62), 2**62, size=n)
    rank[:4] = [2**53 + 1, 2**53 + 3, -(2**63), 2**63 - 1]
    table = pa.table(
        {
            "query_id": [f"q{i // DOCS}" for i in range(n)],
            "doc_id": [f"d{i % DOCS}" for i in range(n)],
            "score": score,
            "rank": pa.array(rank, pa.int64()),
            "f": pa.array(rng.normal(size=n).astype(np.float32) / np.float32(10)),
            "i": pa.array(rng.integers(-(2**31), 2**31, size=n), pa.int32()),
        }
    )
    pq.write_table(table, tmp_path / "run.parquet", row_group_size=n // 3)
    grades = rng.choice([0, 1, 2], size=n)
    qrels = pa.table(
        {"query_id": table["query_id"], "doc_id": table["doc_id"], "relevance": grades}
    )
    pq.write_table(qrels, tmp_path / "qrels.parquet")
    return tmp_path


#: score expressions the workers compute (built once a session runs)
EXPRESSIONS = {
    "score + 0.0": lambda F: F.col("score") + 0.0,
    "score * 2 (an integer constant)": lambda F: F.col("score") * 2,
    "0.1 - score * 3.0": lambda F: F.lit(0.1) - F.col("score") * 3.0,
    "-score": lambda F: -F.col("score"),
    "-rank as double": lambda F: -F.col("rank").cast("double"),
    "rank + 0.5": lambda F: F.col("rank") + 0.5,
    "float * 2.0": lambda F: F.col("f") * 2.0,
    "int - score": lambda F: F.col("i") - F.col("score"),
    "(score - 1.5) * score": lambda F: (F.col("score") - 1.5) * F.col("score"),
    "(score * 2.0) cast to double": lambda F: (F.col("score") * 2.0).cast("double"),
}


def expression(name: str):
    from pyspark.sql import functions as F

    return EXPRESSIONS[name](F)


@pytest.mark.parametrize("name", list(EXPRESSIONS))
def test_the_workers_compute_the_bits_spark_computes(spark, run_file, name) -> None:
    frame = spark.read.parquet(str(run_file / "run.parquet")).select(
        "query_id", "doc_id", expression(name).alias("score")
    )
    scan = scanned_parquet(frame)
    assert scan is not None and set(scan.computed) == {"score"}, scan
    ours = compute_value(scan.computed["score"], pq.read_table(run_file / "run.parquet"))
    theirs = frame.select("score").toArrow().column("score")
    bits = [np.asarray(values.to_numpy()).view(np.int64) for values in (ours, theirs)]
    assert np.array_equal(bits[0], bits[1])


@pytest.mark.parametrize(
    "expression",
    [
        "score / 2.0",  # Spark makes x / 0 null, or an error
        "cast(-rank as double)",  # integer negation can overflow
        "cast(f * 2.0f as double)",  # float arithmetic
        "cast(rank as decimal(20, 0)) * 1.0",
        "log(score)",
        "score + cast(null as double)",
        "cast('NaN' as double) * score",
        "1.0 + 2.0",  # a constant: nothing to read
    ],
)
def test_other_expressions_stay_with_spark(spark, run_file, expression) -> None:
    frame = spark.read.parquet(str(run_file / "run.parquet")).selectExpr(
        "query_id", "doc_id", f"{expression} as score"
    )
    scan = scanned_parquet(frame)
    assert scan is None or "score" not in scan.computed
    qrels = spark.read.parquet(str(run_file / "qrels.parquet"))
    from sparkeval.io.scan_plan import scanned_input

    assert scanned_input(frame, "run") is None
    assert scanned_input(qrels, "qrels") is not None


def test_computed_ids_and_filters_on_computed_scores_stay_with_spark(spark, run_file) -> None:
    from pyspark.sql import functions as F

    from sparkeval.io.scan_plan import scanned_input

    scan = spark.read.parquet(str(run_file / "run.parquet"))
    doubled = scan.select("query_id", "doc_id", (F.col("score") * 2.0).alias("score"))
    assert scanned_input(doubled, "run") is not None
    assert scanned_parquet(doubled.where("score > 0")) is None
    # a filter on a file column under the computed score is still the workers'
    kept = scan.where("rank > 0").select(
        "query_id", "doc_id", (F.col("score") * 2.0).alias("score")
    )
    assert scanned_input(kept, "run") is not None
    qrels = spark.read.parquet(str(run_file / "qrels.parquet"))
    graded = qrels.select("query_id", "doc_id", (F.col("relevance") * 1.0).alias("relevance"))
    assert scanned_input(graded, "qrels") is None
    assert scanned_input(scan.select((F.col("rank") * 1.0).alias("query_id"), "doc_id",
                                     "score"), "run") is None  # fmt: skip


@pytest.fixture
def distributed(monkeypatch):
    """Inputs this small would be evaluated in the driver: take the distributed paths."""
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1)


@pytest.mark.parametrize("name", ["score * 2 (an integer constant)", "rank + 0.5"])
def test_a_computed_score_is_evaluated_as_spark_computes_it(
    spark, run_file, distributed, name
) -> None:
    run = spark.read.parquet(str(run_file / "run.parquet")).select(
        "query_id", "doc_id", expression(name).alias("score")
    )
    qrels = spark.read.parquet(str(run_file / "qrels.parquet"))
    report = evaluated_alike(spark, run, qrels)
    assert sum(entry["queries"]["evaluated"] for entry in report["runs"].values()) == QUERIES


def test_a_constant_run_id_names_the_run(spark, run_file, distributed) -> None:
    """``lit("bm25")`` as the run id is every row's run id, with no pass over the rows
    to find the run ids; a null one stays with Spark."""
    from pyspark.sql import functions as F

    from sparkeval.io.scan_plan import scanned_input

    scan = spark.read.parquet(str(run_file / "run.parquet"))
    named = scan.select(F.lit("bm25").alias("run_id"), "query_id", "doc_id", "score")
    assert scanned_input(named, "run").run_id == "bm25"
    renamed = named.select(F.col("run_id").alias("run_id"), "query_id", "doc_id", "score")
    assert scanned_input(renamed, "run").run_id == "bm25"
    unnamed = scan.select(F.lit(None).cast("string").alias("run_id"), "query_id", "doc_id", "score")
    assert scanned_input(unnamed, "run") is None
    assert scanned_input(scan.withColumn("query_id", F.lit("q1")), "run") is None
    qrels = spark.read.parquet(str(run_file / "qrels.parquet"))
    assert list(evaluated_alike(spark, named, qrels)["runs"]) == ["bm25"]


def evaluated_alike(spark, run, qrels) -> dict:
    """The report of ``run`` and ``qrels`` read by the workers, after checking that
    Spark computing the same DataFrames (through filters that keep every row) gives
    the same report and per-query rows."""
    read = sparkeval.evaluate(spark, run, qrels, MEASURES, buckets=3)
    computed = sparkeval.evaluate(
        spark, run.where("true"), qrels.where("true"), MEASURES, buckets=3
    )
    try:
        assert read.reader in ("workers", "driver") and computed.reader == "spark"
        assert read.report == computed.report
        rows = [
            ev.ordered_per_query.toPandas().fillna(-1.0).to_dict("list") for ev in (read, computed)
        ]
        assert rows[0] == rows[1] and rows[0]["query_id"]
        return read.report
    finally:
        read.unpersist()
        computed.unpersist()
