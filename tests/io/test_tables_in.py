"""Tables in: catalog tables, partitioned Parquet datasets, SQL filters, run ids from a
column or partition. Expected values are derived by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT

pytestmark = pytest.mark.spark


def measures(out: Path) -> dict[str, dict[str, float]]:
    summary = json.loads((out / "summary.json").read_text())
    return {run: block["measures"] for run, block in summary["runs"].items()}


@pytest.fixture
def partitioned(tmp_path: Path) -> Path:
    """Two days of one ranking: d1 first on 2026-11-01, d2 first on 2026-11-02."""
    for day, scores in (("2026-11-01", [2.0, 1.0]), ("2026-11-02", [1.0, 2.0])):
        directory = tmp_path / "runs" / f"dt={day}"
        directory.mkdir(parents=True)
        table = pa.table({"qid": ["q1", "q1"], "docno": ["d1", "d2"], "score": scores})
        pq.write_table(table, directory / "part-0.parquet")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    return tmp_path


def test_each_partition_is_a_run_with_run_id_column(spark, partitioned, capsys) -> None:
    out = partitioned / "out"
    argv = ["evaluate", "--run", str(partitioned / "runs"), "--qrels"]
    argv += [str(partitioned / "qrels.txt"), "--measures", "P@1", "--out", str(out)]
    assert main([*argv, "--run-id-column", "dt"]) == 0, capsys.readouterr().err
    # the partition value is text ("2026-11-01"), not a date; d1 is relevant
    assert measures(out) == {"2026-11-01": {"P@1": 1.0}, "2026-11-02": {"P@1": 0.0}}


def test_where_prunes_partitions(spark, partitioned, capsys) -> None:
    out = partitioned / "out"
    argv = ["evaluate", "--run", str(partitioned / "runs"), "--qrels"]
    argv += [str(partitioned / "qrels.txt"), "--measures", "P@1", "--out", str(out)]
    assert main([*argv, "--where", "dt = '2026-11-02'"]) == 0, capsys.readouterr().err
    assert measures(out) == {"runs": {"P@1": 0.0}}  # only 11-02: d2 first


def test_a_partitioned_root_read_as_one_run_says_how_to_split_it(spark, partitioned, capsys):
    argv = ["evaluate", "--run", str(partitioned / "runs"), "--qrels"]
    argv += [str(partitioned / "qrels.txt"), "--measures", "P@1", "--out"]
    assert main([*argv, str(partitioned / "out")]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "duplicate doc d1" in err and "--run-id-column dt" in err


def test_catalog_tables_in(spark, tmp_path, capsys) -> None:
    spark.createDataFrame(
        [
            ("bm25", "q1", "d1", 2.0),
            ("bm25", "q1", "d2", 1.0),
            ("bm25", "q2", "d3", 1.0),
            ("dense", "q1", "d2", 2.0),
            ("dense", "q1", "d1", 1.0),
            ("dense", "q2", "d3", 1.0),
        ],
        "run_id string, query_id string, doc_id string, score double",
    ).write.mode("overwrite").saveAsTable("runs_in_catalog")
    spark.createDataFrame(
        [("q1", "d1", 1), ("q2", "d3", 1), ("q2", "d4", 1)],
        "query_id string, doc_id string, relevance int",
    ).write.mode("overwrite").saveAsTable("qrels_in_catalog")
    out = tmp_path / "out"
    argv = ["evaluate", "--run-table", "runs_in_catalog", "--qrels-table", "qrels_in_catalog"]
    argv += ["--measures", "P@1,NumRelRet", "--out", str(out)]
    assert main([*argv, "--where", "run_id = 'dense' OR query_id = 'q2'"]) == 0
    # bm25 keeps only q2 (d3 relevant: P@1 1; q1 is judged but absent: 0) -> mean 1/2;
    # dense keeps both queries: q1 ranks d2 first (P@1 0), q2 d3 (1) -> 1/2
    assert measures(out) == {
        "bm25": {"P@1": 0.5, "NumRelRet": 1.0},
        "dense": {"P@1": 0.5, "NumRelRet": 2.0},
    }
    capsys.readouterr()
    code = main(
        [
            "evaluate",
            "--run-table",
            "no_such_table",
            "--qrels-table",
            "qrels_in_catalog",
            "--measures",
            "P@1",
            "--out",
            str(tmp_path / "none"),
        ]
    )
    assert code == EXIT_INPUT
    assert "no table no_such_table" in capsys.readouterr().err


def test_where_compares_csv_numbers_as_numbers(spark, tmp_path, capsys) -> None:
    # a CSV field is text; "pred > 0" compares the numbers (1.5 and 2 kept, -1 and 0.0
    # dropped), and the kept doc ids keep their text ("007", not 7)
    (tmp_path / "recs.csv").write_text(
        "query_id,doc_id,pred\nq1,d1,-1\nq1,007,1.5\nq2,d3,2\nq2,d4,0.0\n"
    )
    (tmp_path / "qrels.txt").write_text("q1 0 007 1\nq2 0 d4 1\n")
    out = tmp_path / "out"
    argv = ["evaluate", "--run", str(tmp_path / "recs.csv"), "--qrels"]
    argv += [str(tmp_path / "qrels.txt"), "--measures", "P@1,NumRet", "--out", str(out)]
    assert main([*argv, "--where", "pred > 0"]) == 0, capsys.readouterr().err
    # q1 keeps 007 (relevant): P@1 1; q2 keeps d3 only (d4 is relevant): P@1 0
    assert measures(out) == {"recs": {"P@1": 0.5, "NumRet": 2.0}}


def test_a_bad_where_names_the_option(spark, partitioned, capsys) -> None:
    argv = ["evaluate", "--run", str(partitioned / "runs"), "--qrels"]
    argv += [str(partitioned / "qrels.txt"), "--measures", "P@1", "--out"]
    code = main([*argv, str(partitioned / "out"), "--where", "no_column = 1"])
    assert code == EXIT_INPUT
    assert "--where 'no_column = 1'" in capsys.readouterr().err


def test_rank_only_tables_and_mllib_recommendation_lists_are_runs(spark, tmp_path, capsys):
    pq.write_table(
        pa.table({"user": ["u1", "u1", "u2"], "item": ["b", "a", "a"], "rank": [1, 2, 1]}),
        tmp_path / "ranked.parquet",
    )
    # recommendForAllUsers: a user and a list of (item, rating) structs, best first
    item_type = pa.struct([("itemId", pa.int32()), ("rating", pa.float32())])
    lists = pa.array(
        [[{"itemId": 7, "rating": 0.9}, {"itemId": 3, "rating": 0.5}],
         [{"itemId": 3, "rating": 0.8}]],
        pa.list_(item_type),
    )  # fmt: skip
    pq.write_table(
        pa.table({"userId": ["u1", "u2"], "recommendations": lists}), tmp_path / "mllib.parquet"
    )
    (tmp_path / "truth.csv").write_text("user,item,rating\nu1,a,1\nu1,3,1\nu2,a,1\nu2,3,1\n")
    out = {}
    for name in ("ranked", "mllib"):
        out[name] = tmp_path / f"out-{name}"
        argv = ["evaluate", "--run", str(tmp_path / f"{name}.parquet"), "--qrels"]
        argv += [str(tmp_path / "truth.csv"), "--measures", "P@1,P@2", "--out", str(out[name])]
        assert main(argv) == 0, capsys.readouterr().err
    # ranked: u1 b, a (a relevant): P@1 0, P@2 1/2; u2 a: P@1 1, P@2 1/2
    assert measures(out["ranked"]) == {"ranked": {"P@1": 0.5, "P@2": 0.5}}
    # lists: u1 7, 3 (3 relevant): P@1 0, P@2 1/2; u2 3: P@1 1, P@2 1/2
    assert measures(out["mllib"]) == {"mllib": {"P@1": 0.5, "P@2": 0.5}}


def test_every_input_option_takes_a_catalog_table(spark, tmp_path, capsys) -> None:
    spark.createDataFrame(
        [("u1", "a", 0.9), ("u1", "b", 0.8), ("u2", "a", 0.7), ("u2", "b", 0.6), ("u3", "c", 0.5)],
        "user_id string, item_id string, score double",
    ).write.mode("overwrite").saveAsTable("recs_in_catalog")
    out = tmp_path / "pairs"
    argv = ["similar-users", "--run", "table:recs_in_catalog", "--threshold", "0.5"]
    assert main([*argv, "--out", str(out)]) == 0, capsys.readouterr().err
    pairs = pq.read_table(out / "pairs.parquet").to_pylist()
    # {a, b} = {a, b}; a table without run ids is one run, named by the table
    assert pairs == [{"run_id": "recs_in_catalog", "user_a": "u1", "user_b": "u2", "jaccard": 1.0}]
    spark.createDataFrame(
        [("u1", "a", 4.0)], "user string, item string, prediction double"
    ).write.mode("overwrite").saveAsTable("predictions_in_catalog")
    spark.createDataFrame([("u1", "a", 5.0)], "user string, item string, rating double").write.mode(
        "overwrite"
    ).saveAsTable("truth_in_catalog")
    argv = ["rating-errors", "--predictions", "table:predictions_in_catalog"]
    argv += ["--truth", "table:truth_in_catalog", "--out", str(tmp_path / "errors")]
    assert main(argv) == 0, capsys.readouterr().err
    summary = json.loads((tmp_path / "errors" / "summary.json").read_text())
    assert summary["measures"]["RMSE"] == 1.0  # |4 - 5|
