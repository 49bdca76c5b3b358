"""Metrics over time: ``summary.parquet`` and ``--append-to``, read as a dashboard would.

Expected values are derived by hand from the two-query collection below.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT
from tests.jobs import run_job

pytestmark = pytest.mark.spark

RUN = "q1 Q0 d1 1 3.0 bm25\nq1 Q0 d3 2 2.0 bm25\nq2 Q0 d2 1 1.0 bm25\n"
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d2 2\nq2 0 d4 1\n"
#: by hand: q1 AP 1 (d1 at rank 1, one relevant); q2 AP 1/2 (d2 at rank 1 of two relevant)
AP = 0.75


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "qrels.txt").write_text(QRELS)
    return tmp_path


def evaluate(files: Path, out: str, measures: str, *extra: str) -> int:
    inputs = ["--run", str(files / "run.txt"), "--qrels", str(files / "qrels.txt")]
    return main(["evaluate", *inputs, "--measures", measures, "--out", str(files / out), *extra])


def test_summary_parquet_is_long_format_beside_summary_json(spark, files, capsys) -> None:
    assert evaluate(files, "out", "AP,P@1") == 0
    table = pd.read_parquet(files / "out" / "summary.parquet")
    assert list(table.columns) == [
        "evaluation_id", "command", "run_id", "measure", "value", "queries", "undefined",
        "evaluated_at", "sparkeval_version", "parameters_hash", "inputs_hash",
    ]  # fmt: skip
    rows = table.set_index("measure")
    assert rows.loc["AP", "value"] == AP and rows.loc["P@1", "value"] == 1.0
    assert set(table["run_id"]) == {"bm25"} and set(table["queries"]) == {2}
    assert set(table["command"]) == {"evaluate"} and table["evaluation_id"].nunique() == 1
    summary = json.loads((files / "out" / "summary.json").read_text())
    assert summary["runs"]["bm25"]["measures"] == {"AP": AP, "P@1": 1.0}


def test_append_to_a_parquet_dataset_is_idempotent(spark, files, capsys) -> None:
    history = files / "history"
    assert evaluate(files, "a", "AP", "--append-to", str(history)) == 0
    assert evaluate(files, "a", "AP", "--overwrite", "--append-to", str(history)) == 0
    assert len(list(history.glob("*.parquet"))) == 1  # the same evaluation: replaced
    assert evaluate(files, "b", "AP,P@1", "--append-to", str(history)) == 0
    assert len(list(history.glob("*.parquet"))) == 2  # another evaluation: added
    spark.read.parquet(str(history)).createOrReplaceTempView("history")
    rows = spark.sql(
        "SELECT run_id, measure, value FROM history WHERE measure = 'AP' ORDER BY value"
    ).collect()
    assert [(r.run_id, r.measure, r.value) for r in rows] == [("bm25", "AP", AP)] * 2
    assert spark.table("history").count() == 3  # AP; AP and P@1: no duplicates
    assert "summary rows in" in capsys.readouterr().err


def test_a_new_table_in_the_in_memory_catalog_is_refused_before_the_work(spark, files, capsys):
    code = evaluate(files, "c", "AP", "--append-to", "metrics_forgotten")
    err = capsys.readouterr().err
    assert code == EXIT_INPUT
    assert "in-memory catalog forgets tables" in err
    assert not (files / "c").exists()


@pytest.mark.slow
def test_append_to_a_catalog_table_in_a_local_warehouse(files) -> None:
    """Three processes share a Hive metastore and warehouse in the test directory: two
    append (one of them twice), a third reads the table with SQL as a dashboard does."""
    config = files / "job.yaml"
    config.write_text(
        "run: [run.txt]\nqrels: qrels.txt\nappend_to: metrics\nmaster: local[1]\n"
        "spark:\n  spark.sql.catalogImplementation: hive\n"
        f"  spark.sql.warehouse.dir: {files / 'warehouse'}\n"
    )
    cli = [sys.executable, "-m", "sparkeval.cli", "evaluate", "--config", str(config)]
    for out, measures, extra in [
        ("a", "AP", []),
        ("a", "AP", ["--overwrite"]),
        ("b", "P@1", []),
    ]:
        result = run_job([*cli, "--measures", measures, "--out", out, *extra], files)
        assert result.returncode == 0, result.stderr[-3000:]
    reader = files / "dashboard.py"
    reader.write_text(
        "from pyspark.sql import SparkSession\n"
        "spark = (SparkSession.builder.master('local[1]').enableHiveSupport()\n"
        f"    .config('spark.sql.warehouse.dir', {str(files / 'warehouse')!r}).getOrCreate())\n"
        "rows = spark.sql('SELECT run_id, measure, value FROM metrics "
        "WHERE run_id = \\'bm25\\' ORDER BY measure').collect()\n"
        "print([(r.run_id, r.measure, r.value) for r in rows])\n"
    )
    result = run_job([sys.executable, str(reader)], files)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == str([("bm25", "AP", AP), ("bm25", "P@1", 1.0)])


def test_a_rewritten_catalog_table_is_a_new_evaluation(spark, files, capsys) -> None:
    """A run table overwritten every day is a new evaluation each day: its content
    (no Delta or Iceberg version in this catalog) is part of the evaluation id."""
    history = files / "history"
    qrels = ["--qrels", str(files / "qrels.txt"), "--measures", "AP", "--append-to", str(history)]

    def day(scores: list[float], out: str, *extra: str) -> int:
        rows = [("bm25", "q1", "d1", scores[0]), ("bm25", "q1", "d2", scores[1])]
        frame = spark.createDataFrame(
            rows, "run_id string, query_id string, doc_id string, score double"
        )
        frame.write.mode("overwrite").saveAsTable("daily_run")
        argv = ["evaluate", "--run-table", "daily_run", *qrels, "--out", str(files / out)]
        return main([*argv, "--overwrite", *extra])

    assert day([2.0, 1.0], "out") == 0
    assert day([1.0, 2.0], "out") == 0  # the next day: other rows in the same table
    assert len(list(history.glob("*.parquet"))) == 2
    assert day([1.0, 2.0], "out") == 0  # a rerun of that day: replaced
    assert len(list(history.glob("*.parquet"))) == 2
    # a scheduler's own key tells runs of the same content apart
    assert day([1.0, 2.0], "out", "--evaluation-key", "2026-11-29") == 0
    assert len(list(history.glob("*.parquet"))) == 3
    # so do the conditions applied to the rows
    assert day([1.0, 2.0], "out", "--where", "score > 0") == 0
    assert len(list(history.glob("*.parquet"))) == 4
    spark.sql("DROP TABLE daily_run")
