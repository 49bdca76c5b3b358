"""Filters of scanned DataFrames applied by the workers
(:mod:`sparkeval.io.scan_filter`): the rows kept are the rows Spark keeps,
and evaluations of filtered scans equal those of the same rows as computed
DataFrames."""

from __future__ import annotations

import datetime
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import sparkeval
from sparkeval.engine.plans import driver_plan
from sparkeval.io.scan_filter import row_mask
from sparkeval.io.scan_plan import scanned_parquet
from tests.random_collection import random_collection

pytestmark = pytest.mark.spark

MEASURES = "AP,nDCG@10,P@5,RR,bpref,NumRet,Rprec"

#: conditions the workers apply; Spark's own result on the file is the expectation
TAKEN = [
    "s >= 0",
    "s < 1.5",
    "s = 0",
    "s = -0.0",
    "s > -1e308",
    "0 < s",
    "i > 3",
    "i <= -2",
    "2 >= i",
    "i in (1, 2, 3)",
    "l = 9223372036854775807",
    "l > 5",
    "l < -9223372036854775807",
    "q = 'a'",
    "q > 'a'",
    "q < 'b'",
    "q = ''",
    "q in ('a', 'ä')",
    "not q in ('a')",
    "not (q = 'a')",
    "q <> 'a'",
    "s is null",
    "s is not null and i > 0",
    "f",
    "not f",
    "f = false",
    "f or s > 1",
    "q < 'b' or i is null",
    "not (q < 'b' or i is null)",
    "x > 0.5",
    "x = 0.25",
    "x in (0.25, 3.0)",
    "i > 1.5",
    "i < 3000000000",
    "not (i in (1, 2) and f)",
]
#: conditions left to Spark
NOT_TAKEN = [
    "true",
    "cast(s as float) > 1.5",
    "cast(l as double) > 1.5",
    "cast(q as int) = 1",
    "upper(q) = 'A'",
    "s > rand()",
    "q = null",
    "d > date'2020-01-01'",
    "s = 'NaN'",
    "i + 1 > 2",
]


@pytest.fixture
def table_file(tmp_path):
    """A file of every kind of value a condition may meet: nulls, signed zeros,
    infinities, extreme integers, empty and non-ASCII strings."""
    table = pa.table(
        {
            "s": pa.array([0.5, -1.0, None, 0.0, -0.0, math.inf, -math.inf, 1.5, 2.0, 1e-300]),
            "i": pa.array([1, 2, 3, 4, -2, None, -5, 0, 7, 2], pa.int32()),
            "l": pa.array([2**63 - 1, -(2**63), 5, 6, None, 0, 1, 2, 3, 4], pa.int64()),
            "q": pa.array(["a", "b", "", "ä", None, "A", "ab", "a", "z", "b"]),
            "f": pa.array([True, False, None, True, False, True, None, False, True, True]),
            "x": pa.array([0.25, 0.75, None, 1.0, 0.5, 0.6, 0.1, 0.25, 2.5, 3.0], pa.float32()),
            "d": pa.array([datetime.date(2021, 1, 1)] * 10, pa.date32()),
        }
    )
    path = tmp_path / "values.parquet"
    pq.write_table(table, path)
    return path


@pytest.mark.parametrize("condition", TAKEN)
def test_the_workers_keep_the_rows_spark_keeps(spark, table_file, condition) -> None:
    frame = spark.read.parquet(str(table_file)).where(condition)
    scan = scanned_parquet(frame)
    assert scan is not None and scan.where is not None, condition
    read = pq.read_table(table_file)
    ours = read.filter(row_mask(scan.where, read)).drop(["d"])
    theirs = frame.drop("d").toPandas()
    expected = sorted(map(_comparable, theirs.itertuples(index=False)))
    assert sorted(map(_comparable, ours.to_pandas().itertuples(index=False))) == expected


def _comparable(row) -> tuple:
    # nulls as a marker that sorts; -0.0 kept apart from 0.0
    return tuple(
        ("null",) if v is None or (isinstance(v, float) and math.isnan(v)) else ("v", repr(v))
        for v in row
    )


@pytest.mark.parametrize("condition", NOT_TAKEN)
def test_other_conditions_stay_with_spark(spark, table_file, condition) -> None:
    assert scanned_parquet(spark.read.parquet(str(table_file)).where(condition)) is None


@pytest.fixture
def files(tmp_path):
    """A two-run collection with an extra column to filter on."""
    run, qrels = random_collection(17, queries=60, runs=3, edge_queries=True)
    run = run.assign(day=np.where(np.arange(len(run)) % 3 == 0, "mon", "tue"))
    run.to_parquet(tmp_path / "run.parquet", index=False)
    qrels.to_parquet(tmp_path / "qrels.parquet", index=False)
    return tmp_path


@pytest.fixture
def distributed(monkeypatch):
    """Inputs this small would be evaluated in the driver: take the distributed paths."""
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1)


def _evaluations(spark, run, qrels, **options):
    scanned = sparkeval.evaluate(spark, run, qrels, MEASURES, **options)
    # the same rows as a computed DataFrame (a constant condition stays with Spark)
    computed = sparkeval.evaluate(spark, run.where("true"), qrels, MEASURES, **options)
    return scanned, computed


def _same(scanned, computed) -> None:
    try:
        assert scanned.report == computed.report
        rows = [
            ev.ordered_per_query.toPandas().fillna(-1.0).to_dict("list")
            for ev in (scanned, computed)
        ]
        assert rows[0] == rows[1]
    finally:
        scanned.unpersist()
        computed.unpersist()


def test_filtered_scans_are_read_by_the_workers_alike(spark, files, distributed) -> None:
    from pyspark.sql import functions as F

    raw = spark.read.parquet(str(files / "run.parquet"))
    run = raw.where((F.col("day") == "mon") & (F.col("score") > 0.2)).drop("day")
    qrels = spark.read.parquet(str(files / "qrels.parquet")).where("relevance >= 0")
    scanned, computed = _evaluations(spark, run, qrels, buckets=3)
    assert scanned.reader in ("workers", "driver") and computed.reader == "spark"
    kept = pd.read_parquet(files / "run.parquet").query("day == 'mon' and score > 0.2")
    # by hand: the rows read are those the filter keeps
    assert sum(r["rows"]["read"] for r in scanned.report["runs"].values()) == len(kept)
    _same(scanned, computed)


def test_the_run_ids_are_those_of_the_kept_rows(spark, files, distributed) -> None:
    run = spark.read.parquet(str(files / "run.parquet")).where("run_id <> 'run1'")
    qrels = spark.read.parquet(str(files / "qrels.parquet"))
    scanned, computed = _evaluations(spark, run, qrels)
    assert scanned.reader in ("workers", "driver")
    assert sorted(scanned.report["runs"]) == ["run0", "run2"]
    _same(scanned, computed)


def test_a_nan_in_a_filtered_column_leaves_the_rows_to_spark(spark, files, distributed):
    # Spark orders NaN above every number: "score > 0.5" keeps it (IEEE would not),
    # and a NaN score is a bad value either way
    frame = pd.read_parquet(files / "run.parquet")
    weights = pa.array(np.where(np.arange(len(frame)) == 4, np.nan, 1.0), from_pandas=False)
    table = pa.Table.from_pandas(frame, preserve_index=False).append_column("weight", weights)
    assert pc.is_nan(table.column("weight")).to_pylist().count(True) == 1
    pq.write_table(table, files / "weighted.parquet")
    run = spark.read.parquet(str(files / "weighted.parquet")).where("weight > 0.5")
    qrels = spark.read.parquet(str(files / "qrels.parquet"))
    assert scanned_parquet(run) is not None
    scanned, computed = _evaluations(spark, run.drop("weight"), qrels)
    assert scanned.reader == "spark"  # the workers found the NaN and handed back
    assert sum(r["rows"]["read"] for r in scanned.report["runs"].values()) == len(frame)
    _same(scanned, computed)
