"""DataFrames that only scan local Parquet files are read by the workers themselves
(:mod:`sparkeval.io.scan_plan`): the same report, per-query rows and
summary as the same rows evaluated as computed DataFrames, bit for bit; anything else
stays a DataFrame evaluation."""

from __future__ import annotations

import pandas as pd
import pytest

import sparkeval
from sparkeval.engine.plans import driver_plan
from sparkeval.errors import InputError
from sparkeval.io.scan_plan import ParquetScan, _local_paths, scanned_parquet
from tests.random_collection import random_collection

pytestmark = pytest.mark.spark

MEASURES = "AP,nDCG@10,P@5,R@10,RR,bpref,ERR@10,NumRet,Rprec,Judged@10"


@pytest.fixture
def files(tmp_path):
    """A two-run collection as Parquet files (the run split over two files)."""
    run, qrels = random_collection(11, queries=60, runs=2, edge_queries=True)
    (tmp_path / "runs").mkdir()
    half = len(run) // 2
    run.iloc[:half].to_parquet(tmp_path / "runs" / "a.parquet", index=False)
    run.iloc[half:].to_parquet(tmp_path / "runs" / "b.parquet", index=False)
    qrels.to_parquet(tmp_path / "qrels.parquet", index=False)
    return tmp_path


@pytest.fixture
def distributed(monkeypatch):
    """Inputs this small would be evaluated in the driver: take the distributed paths."""
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1)


def _same_results(first, second) -> None:
    try:
        assert first.report == second.report
        rows = [
            ev.ordered_per_query.toPandas().fillna(-1.0).to_dict("list") for ev in (first, second)
        ]
        assert rows[0] == rows[1] and len(rows[0]["query_id"]) > 100
        assert first.summary.collect() == second.summary.collect()
    finally:
        first.unpersist()
        second.unpersist()


def test_file_uris_become_local_paths() -> None:
    assert _local_paths(["file:/data/a%20b.parquet", "file:///data/c.parquet"]) == [
        "/data/a b.parquet",
        "/data/c.parquet",
    ]
    assert _local_paths(["hdfs://nn/data/a.parquet"]) is None
    assert _local_paths([]) is None


def test_only_bare_parquet_scans_are_recognised(spark, files) -> None:
    from pyspark.sql import functions as F

    scan = spark.read.parquet(str(files / "runs"))
    paths = [str(files / "runs" / "a.parquet"), str(files / "runs" / "b.parquet")]
    columns = ["run_id", "query_id", "doc_id", "score"]
    assert scanned_parquet(scan) == ParquetScan(paths, {c: c for c in columns})
    # a selection and a renaming of columns still only scan
    picked = scan.select("query_id", F.col("doc_id").alias("docno"))
    assert scanned_parquet(picked) == ParquetScan(
        paths, {"query_id": "query_id", "docno": "doc_id"}
    )
    assert scanned_parquet(scan.withColumnRenamed("score", "s")).columns["s"] == "score"
    # so do selections of selections, and filters the workers can apply
    assert scanned_parquet(scan.select("query_id").select("query_id")) == ParquetScan(
        paths, {"query_id": "query_id"}
    )
    filtered = scan.where("score > 0").select(F.col("query_id").alias("q")).where("q <> 'x'")
    assert scanned_parquet(filtered) == ParquetScan(
        paths,
        {"q": "query_id"},
        (
            "and",
            ("cmp", ">", "score", "double", "double", 0.0),
            ("not", ("cmp", "==", "query_id", "string", "string", "x")),
        ),
    )
    # anything computed does not (a constant condition is left to Spark too: the tests
    # below use where("true") for a computed DataFrame of the same rows)
    assert scanned_parquet(scan.where("true")) is None
    assert scanned_parquet(scan.where(F.upper("query_id") == "Q1")) is None
    assert scanned_parquet(scan.select((F.col("score") / 2).alias("score"))) is None
    # a double computed with arithmetic is a computed column of the scan
    doubled = scan.select("query_id", (F.col("score") * 2).alias("score"))
    assert scanned_parquet(doubled) == ParquetScan(
        paths,
        {"query_id": "query_id"},
        None,
        {"score": ("multiply", ("col", "score", "double"), ("lit", 2.0))},
    )
    assert scanned_parquet(spark.createDataFrame([(1,)], "x int")) is None
    pd.DataFrame({"x": [1]}).to_json(files / "x.jsonl", orient="records", lines=True)
    assert scanned_parquet(spark.read.json(str(files / "x.jsonl"))) is None


def test_a_scans_size_estimate_needs_no_optimizer(spark, files) -> None:
    """The estimate of a scan taken from its analysed plan is the optimiser's own, for
    every shape the workers read (selections, renamings, filters, a catalog table)."""
    from pyspark.sql import functions as F

    from sparkeval.engine.plans.spark_engine import plan_bytes

    scan = spark.read.parquet(str(files / "runs"))
    scan.write.mode("overwrite").saveAsTable("estimated_runs")
    try:
        shapes = [
            scan,
            scan.select("query_id", F.col("doc_id").alias("docno")),
            scan.where("score > 0").select(F.col("query_id").alias("q")).where("q <> 'x'"),
            spark.table("estimated_runs").select("query_id", "score"),
        ]
        for frame in shapes:
            assert scanned_parquet(frame) is not None
            assert plan_bytes(frame, optimized=False) == plan_bytes(frame) > 0
    finally:
        spark.sql("DROP TABLE IF EXISTS estimated_runs")


def test_parquet_scans_are_read_by_the_workers_alike(spark, files, distributed) -> None:
    run = spark.read.parquet(str(files / "runs"))
    qrels = spark.read.parquet(str(files / "qrels.parquet"))
    scanned = sparkeval.evaluate(spark, run, qrels, MEASURES, buckets=3)
    # the same rows through a filter that keeps them all: computed DataFrames
    computed = sparkeval.evaluate(
        spark, run.where("true"), qrels.where("true"), MEASURES, buckets=3
    )
    assert scanned.reader in ("workers", "driver") and computed.reader == "spark"
    assert sorted(scanned.report["runs"]) == ["run0", "run1"]
    _same_results(scanned, computed)


def test_a_catalog_table_of_parquet_files_is_read_by_the_workers(spark, files, distributed):
    spark.read.parquet(str(files / "runs")).write.mode("overwrite").saveAsTable("scan_runs")
    spark.read.parquet(str(files / "qrels.parquet")).write.mode("overwrite").saveAsTable(
        "scan_qrels"
    )
    try:
        run, qrels = spark.table("scan_runs"), spark.table("scan_qrels")
        scanned = sparkeval.evaluate(spark, run, qrels, MEASURES, queries="both", buckets=2)
        computed = sparkeval.evaluate(
            spark, run.where("true"), qrels.where("true"), MEASURES, queries="both", buckets=2
        )
        assert scanned.reader in ("workers", "driver") and computed.reader == "spark"
        _same_results(scanned, computed)
    finally:
        spark.sql("DROP TABLE IF EXISTS scan_runs")
        spark.sql("DROP TABLE IF EXISTS scan_qrels")


def test_a_run_without_run_id_is_the_run_named_run(spark, files, distributed) -> None:
    run = pd.read_parquet(files / "runs")
    run[run.run_id == "run0"].drop(columns="run_id").to_parquet(files / "one.parquet")
    run_df = spark.read.parquet(str(files / "one.parquet"))
    qrels = spark.read.parquet(str(files / "qrels.parquet"))
    scanned = sparkeval.evaluate(spark, run_df, qrels, MEASURES)
    computed = sparkeval.evaluate(spark, run_df.where("true"), qrels, MEASURES)
    assert scanned.reader in ("workers", "driver") and list(scanned.report["runs"]) == ["run"]
    _same_results(scanned, computed)


def test_a_tag_column_names_the_runs_of_a_dataframe_as_of_a_file(spark, files, distributed):
    # a "tag" column (an alias of run_id) names runs in a DataFrame as in a file: "run0"
    run = pd.read_parquet(files / "runs")
    run[run.run_id == "run0"].rename(columns={"run_id": "tag"}).to_parquet(files / "tagged.parquet")
    run_df = spark.read.parquet(str(files / "tagged.parquet"))
    qrels = spark.read.parquet(str(files / "qrels.parquet"))
    scanned = sparkeval.evaluate(spark, run_df, qrels, MEASURES)
    computed = sparkeval.evaluate(spark, run_df.where("true"), qrels, MEASURES)
    assert scanned.reader in ("workers", "driver") and list(scanned.report["runs"]) == ["run0"]
    _same_results(scanned, computed)


@pytest.mark.parametrize(
    ("kind", "column"), [("run", "doc_id"), ("qrels", "relevance")], ids=["run", "qrels"]
)
def test_a_bad_value_gets_the_dataframe_paths_error(spark, files, distributed, kind, column):
    """A scan with a hole, evaluated with a scanned run (both read from their files) or
    beside a computed run (the qrels read in the driver), gives the error of the same
    rows as a computed DataFrame."""
    source = files / ("runs" if kind == "run" else "qrels.parquet")
    rows = pd.read_parquet(source)
    rows.loc[3, column] = None
    rows.to_parquet(files / "holed.parquet")
    holed = spark.read.parquet(str(files / "holed.parquet"))
    run = spark.read.parquet(str(files / "runs"))
    messages = []
    for frame in (holed, holed.where("true")):
        inputs = (frame, spark.read.parquet(str(files / "qrels.parquet")))
        if kind == "qrels":
            inputs = (run.where("true"), frame)
        with pytest.raises(InputError) as raised:
            sparkeval.evaluate(spark, *inputs, "AP")
        messages.append(str(raised.value))
    assert messages[0] == messages[1] and column.split("_")[0] in messages[0]


def test_selected_and_renamed_columns_are_read_by_the_workers(spark, files, distributed):
    from pyspark.sql import functions as F

    pd.read_parquet(files / "runs").rename(
        columns={"query_id": "qid", "doc_id": "docno", "run_id": "system"}
    ).assign(extra=1.5).to_parquet(files / "named.parquet")
    raw = spark.read.parquet(str(files / "named.parquet"))
    run = raw.select(
        F.col("system").alias("run_id"),
        F.col("qid").alias("query_id"),
        F.col("docno").alias("doc_id"),
        "score",
    )
    qrels = spark.read.parquet(str(files / "qrels.parquet")).select(
        "query_id", "doc_id", "relevance"
    )
    scanned = sparkeval.evaluate(spark, run, qrels, MEASURES)
    computed = sparkeval.evaluate(spark, run.where("true"), qrels, MEASURES)
    assert scanned.reader in ("workers", "driver") and sorted(scanned.report["runs"]) == [
        "run0",
        "run1",
    ]
    _same_results(scanned, computed)


def test_a_computed_run_with_scanned_qrels_reads_only_the_qrels_files(
    spark, files, distributed, monkeypatch
) -> None:
    """Only the run's rows are converted by Spark; the qrels of a scan are read from
    their files in the driver, and the results are those of two computed DataFrames."""
    from pyspark.sql import functions as F

    from sparkeval.engine.plans import spark_engine

    reads = []

    def recorded(*args):
        reads.append(read_scanned_qrels(*args))
        return reads[-1]

    read_scanned_qrels = spark_engine._read_scanned_qrels
    monkeypatch.setattr(spark_engine, "_read_scanned_qrels", recorded)
    # a division stays with Spark (scan_values)
    run = spark.read.parquet(str(files / "runs")).withColumn("score", F.col("score") / 1.0)
    qrels = spark.read.parquet(str(files / "qrels.parquet"))
    mixed = sparkeval.evaluate(spark, run, qrels, MEASURES, queries="both", buckets=3)
    assert len(reads) == 1 and reads[0] is not None
    assert not reads[0].directory.exists()  # removed once the results are in
    computed = sparkeval.evaluate(
        spark, run, qrels.where("true"), MEASURES, queries="both", buckets=3
    )
    assert len(reads) == 2 and reads[1] is None
    assert mixed.reader == computed.reader == "spark"
    _same_results(mixed, computed)
