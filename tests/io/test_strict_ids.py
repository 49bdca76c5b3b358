"""Inputs that used to be read wrong without a word are errors naming the file and line
or column: a run file given as qrels, and id columns that are not text or integers."""

from __future__ import annotations

import json
from decimal import Decimal

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sparkeval
from sparkeval.errors import EXIT_INPUT, InputError
from tests.io.test_bad_input import GOOD_QRELS, GOOD_RUN, assert_no_output, run_cli, write

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("reader", ["auto", "spark"])
def test_a_run_file_given_as_qrels_is_refused(spark, tmp_path, capsys, reader) -> None:
    run = write(tmp_path, "run.txt", GOOD_RUN)
    code, err = run_cli(capsys, tmp_path, run, run, "--reader", reader)
    assert code == EXIT_INPUT, err
    assert "run.txt:1:" in err and "look like a run line" in err, err
    assert_no_output(tmp_path)


def test_a_qrels_line_with_five_fields_is_refused(spark, tmp_path, capsys) -> None:
    run = write(tmp_path, "run.txt", GOOD_RUN)
    qrels = write(tmp_path, "qrels.txt", GOOD_QRELS + "q2 0 d4 1 extra\n")
    code, err = run_cli(capsys, tmp_path, run, qrels)
    assert code == EXIT_INPUT and "qrels.txt:4:" in err and "expected 4 fields" in err, err
    assert_no_output(tmp_path)


def _parquet(path, columns: dict) -> str:
    pq.write_table(pa.table(columns), path)
    return str(path)


@pytest.mark.parametrize(
    ("column", "values", "type_name"),
    [
        ("doc_id", [1.0, 2.0, 1.0], "double"),
        ("doc_id", [Decimal("1.00"), Decimal("2.00"), Decimal("1.00")], "decimal(3,2)"),
        ("query_id", [True, False, True], "boolean"),
    ],
)
def test_an_id_column_that_is_not_text_or_integers_is_refused(
    spark, tmp_path, capsys, column, values, type_name
) -> None:
    columns = {"query_id": ["q1", "q1", "q2"], "doc_id": ["1", "2", "1"], "score": [3.0, 2.0, 1.0]}
    columns[column] = values
    run = _parquet(tmp_path / "run.parquet", columns)
    qrels = _parquet(
        tmp_path / "qrels.parquet",
        {"query_id": ["q1"], "doc_id": ["1"], "relevance": [1]},
    )
    code, err = run_cli(capsys, tmp_path, run, qrels)
    assert code == EXIT_INPUT, err
    assert f"id column {column} has type {type_name}" in err and "run.parquet" in err, err
    assert_no_output(tmp_path)


def test_nested_json_ids_are_refused(spark, tmp_path, capsys) -> None:
    rows = [{"query_id": "q1", "doc_id": {"id": "d1", "v": 2}, "score": 1.0}]
    (tmp_path / "run.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    qrels = write(tmp_path, "qrels.txt", GOOD_QRELS)
    code, err = run_cli(capsys, tmp_path, str(tmp_path / "run.jsonl"), qrels)
    assert code == EXIT_INPUT and "id column doc_id has type struct<" in err, err


def test_integer_ids_stay_welcome(spark, tmp_path, capsys) -> None:
    run = _parquet(
        tmp_path / "run.parquet",
        {"query_id": [1, 1, 2], "doc_id": [10, 20, 10], "score": [3.0, 2.0, 1.0]},
    )
    qrels = write(tmp_path, "qrels.txt", "1 0 20 1\n2 0 10 1\n")
    code, err = run_cli(capsys, tmp_path, run, qrels, "--queries", "both")
    assert code == 0, err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    # by hand: query 1 finds its relevant doc 20 at rank 2 (AP 1/2), query 2 at rank 1
    assert summary["runs"]["run"]["measures"]["AP"] == 0.75


def test_api_dataframes_with_float_ids_are_refused(spark) -> None:
    run = spark.createDataFrame(pd.DataFrame({"query_id": ["q"], "doc_id": [1.5], "score": [1.0]}))
    qrels = spark.createDataFrame(
        pd.DataFrame({"query_id": ["q"], "doc_id": ["1.5"], "relevance": [1]})
    )
    with pytest.raises(InputError, match="run DataFrame: id column doc_id has type double"):
        sparkeval.evaluate(spark, run, qrels, ["AP"])
