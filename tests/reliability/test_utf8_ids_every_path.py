"""Ids that are not UTF-8 text are refused on every evaluation path, and a valid U+FFFD
reads the same on every path that keeps a string's bytes; similar-users and
rating-errors read Parquet ids the same way.

The inputs are one query: the run ranks ``caf\\xe9`` (Latin-1 bytes) or ``caf\\ufffd``
first and ``d2`` second; the qrels judge ``caf\\ufffd`` relevant. Read as bytes, a
valid ``caf\\ufffd`` in the run is the judged doc: P@1 = 1, P@2 = 1/2. The Latin-1 id
would decode to the same text and match, which is why it must be an error instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sparkeval
from sparkeval.cli import main
from sparkeval.engine.plans import driver_plan, local_rows
from sparkeval.errors import EXIT_INPUT, InputError

REPLACED = "caf\ufffd"
LATIN1 = b"caf\xe9"
NOT_UTF8 = "is not valid UTF-8"


def strings(*values: str | bytes) -> pa.Array:
    """A string array holding the given bytes as they are (no UTF-8 check on the way)."""
    raw = [v.encode() if isinstance(v, str) else v for v in values]
    return pa.array(raw, pa.binary()).cast(pa.string(), safe=False)


def run_table(first: str | bytes) -> pa.Table:
    return pa.table({"query_id": ["q1", "q1"], "doc_id": strings(first, "d2"), "score": [2.0, 1.0]})


def qrels_table(judged: str | bytes = REPLACED) -> pa.Table:
    return pa.table({"query_id": ["q1"], "doc_id": strings(judged), "relevance": [1]})


def write_inputs(tmp: Path, run_first: str | bytes, judged: str | bytes = REPLACED):
    run, qrels = tmp / "run.parquet", tmp / "qrels.parquet"
    pq.write_table(run_table(run_first), run)
    pq.write_table(qrels_table(judged), qrels)
    return run, qrels


def cli(capsys, tmp: Path, run: Path, qrels: Path, reader: str) -> tuple[int, str]:
    argv = ["evaluate", "--run", str(run), "--qrels", str(qrels), "--measures", "P@1,P@2"]
    code = main([*argv, "--out", str(tmp / "out"), "--reader", reader])
    return code, capsys.readouterr().err


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if "sparkeval evaluate: error:" in line]
    assert lines, err
    return lines[-1]


# --- files: the workers' direct read and Spark's readers -------------------------------


@pytest.mark.spark
@pytest.mark.parametrize("reader", ["auto", "spark"])
@pytest.mark.parametrize("bad_input", ["run", "qrels"])
def test_a_latin1_parquet_id_is_refused_by_both_readers(spark, tmp_path, capsys, reader, bad_input):
    if bad_input == "run":
        run, qrels = write_inputs(tmp_path, LATIN1)
    else:
        run, qrels = write_inputs(tmp_path, REPLACED, judged=LATIN1)
    code, err = cli(capsys, tmp_path, run, qrels, reader)
    assert code == EXIT_INPUT, err
    line = error_line(err)
    assert f"{bad_input}.parquet: column doc_id value '{REPLACED}' {NOT_UTF8}" in line, line
    assert not (tmp_path / "out").exists()


@pytest.mark.spark
@pytest.mark.parametrize("reader", ["auto", "spark"])
def test_a_latin1_parquet_query_id_is_refused_by_both_readers(spark, tmp_path, capsys, reader):
    """The workers read query ids dictionary-encoded and check each distinct id once."""
    run, qrels = tmp_path / "run.parquet", tmp_path / "qrels.parquet"
    pq.write_table(
        pa.table({"query_id": strings("q1", LATIN1), "doc_id": ["d1", "d2"], "score": [2.0, 1.0]}),
        run,
    )
    pq.write_table(qrels_table(), qrels)
    code, err = cli(capsys, tmp_path, run, qrels, reader)
    assert code == EXIT_INPUT, err
    line = error_line(err)
    assert f"run.parquet: column query_id value '{REPLACED}' {NOT_UTF8}" in line, line
    assert not (tmp_path / "out").exists()


@pytest.mark.spark
@pytest.mark.parametrize(
    ("reader", "read_by"),
    [("auto", "read by the driver's threads"), ("spark", "read by Spark's readers")],
)
def test_a_valid_replacement_character_in_parquet_is_an_ordinary_character(
    spark, tmp_path, capsys, reader, read_by
):
    run, qrels = write_inputs(tmp_path, REPLACED)
    code, err = cli(capsys, tmp_path, run, qrels, reader)
    assert code == 0, err
    assert read_by in err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["runs"]["run"]["measures"] == {"P@1": 1.0, "P@2": 0.5}


@pytest.mark.spark
@pytest.mark.parametrize("reader", ["auto", "spark"])
def test_a_replacement_character_in_csv_is_still_refused(spark, tmp_path, capsys, reader):
    # Spark's CSV reader decodes with replacement: caf\xe9 and caf\xe8 both arrive as it
    run = tmp_path / "run.csv"
    run.write_text(f"qid,docno,score\nq1,{REPLACED},2.0\nq1,d2,1.0\n", encoding="utf-8")
    qrels = tmp_path / "qrels.parquet"
    pq.write_table(qrels_table(), qrels)
    code, err = cli(capsys, tmp_path, run, qrels, reader)
    assert code == EXIT_INPUT, err
    assert "run.csv" in error_line(err) and NOT_UTF8 in error_line(err)


# --- the Python API on Spark: the driver path and the distributed plan ----------------


@pytest.fixture(params=["driver", "distributed"])
def plan(request, monkeypatch) -> str:
    """Both Spark plans of the API: small inputs in the driver, or (no input is small
    enough) the distributed plan."""
    if request.param == "distributed":
        monkeypatch.setattr(driver_plan, "DRIVER_BYTES", 0)
    return request.param


def frames(spark, tmp: Path, run_first: str | bytes, judged: str | bytes, computed: bool):
    from pyspark.sql import functions as F

    run, qrels = write_inputs(tmp, run_first, judged)
    run_df = spark.read.parquet(str(run))
    if computed:  # not a bare scan: Spark converts its rows for the workers
        run_df = run_df.withColumn("score", F.col("score") + F.lit(0.0))
    return run_df, spark.read.parquet(str(qrels))


@pytest.mark.spark
@pytest.mark.parametrize("computed", [False, True], ids=["scan", "computed"])
@pytest.mark.parametrize("bad_input", ["run", "qrels"])
def test_api_dataframes_with_a_latin1_id_are_refused(spark, tmp_path, plan, computed, bad_input):
    run_first, judged = (LATIN1, REPLACED) if bad_input == "run" else (REPLACED, LATIN1)
    run_df, qrels_df = frames(spark, tmp_path, run_first, judged, computed)
    with pytest.raises(InputError) as caught:
        sparkeval.evaluate(spark, run_df, qrels_df, ["P@1", "P@2"])
    expected = f"{bad_input} DataFrame: column doc_id value '{REPLACED}' {NOT_UTF8}"
    assert expected in str(caught.value)


@pytest.mark.spark
@pytest.mark.parametrize("computed", [False, True], ids=["scan", "computed"])
def test_api_dataframes_read_a_valid_replacement_character(spark, tmp_path, plan, computed):
    run_df, qrels_df = frames(spark, tmp_path, REPLACED, REPLACED, computed)
    evaluation = sparkeval.evaluate(spark, run_df, qrels_df, ["P@1", "P@2"])
    try:
        assert evaluation.report["runs"]["run"]["measures"] == {"P@1": 1.0, "P@2": 0.5}
    finally:
        evaluation.unpersist()


def local_frames(spark, run_first: str | bytes, judged: str | bytes):
    """The inputs as frames of local data (pandas made into Spark local relations): the
    ids as bytes, cast to text in a projection that Spark folds into the local data."""

    def frame(rows: list[tuple], value: str):
        table = pd.DataFrame(rows, columns=["query_id", "doc_id", value])
        kind = "double" if value == "score" else "int"
        types = f"query_id string, doc_id binary, {value} {kind}"
        local = spark.createDataFrame(table, types)
        return local.selectExpr("query_id", "CAST(doc_id AS STRING) AS doc_id", value)

    def raw(value: str | bytes) -> bytes:
        return value.encode() if isinstance(value, str) else value

    run = frame([("q1", raw(run_first), 2.0), ("q1", b"d2", 1.0)], "score")
    return run, frame([("q1", raw(judged), 1)], "relevance")


@pytest.mark.spark
@pytest.mark.parametrize("bad_input", ["run", "qrels"])
def test_local_frames_with_a_latin1_id_are_refused(spark, bad_input):
    run_first, judged = (LATIN1, REPLACED) if bad_input == "run" else (REPLACED, LATIN1)
    run_df, qrels_df = local_frames(spark, run_first, judged)
    assert local_rows.held_in_driver(run_df, qrels_df)  # written by the driver, bytes kept
    with pytest.raises(InputError) as caught:
        sparkeval.evaluate(spark, run_df, qrels_df, ["P@1", "P@2"])
    expected = f"{bad_input} DataFrame: column doc_id value '{REPLACED}' {NOT_UTF8}"
    assert expected in str(caught.value)


@pytest.mark.spark
def test_local_frames_read_a_valid_replacement_character(spark):
    run_df, qrels_df = local_frames(spark, REPLACED, REPLACED)
    evaluation = sparkeval.evaluate(spark, run_df, qrels_df, ["P@1", "P@2"])
    try:
        assert evaluation.report["runs"]["run"]["measures"] == {"P@1": 1.0, "P@2": 0.5}
    finally:
        evaluation.unpersist()


# --- in process: Arrow tables and pandas ----------------------------------------------


def test_an_arrow_table_with_a_latin1_id_is_refused_in_process():
    with pytest.raises(InputError) as caught:
        sparkeval.evaluate(None, run_table(LATIN1), qrels_table(), ["P@1"])
    assert f"run table: row 1: column doc_id value '{REPLACED}' {NOT_UTF8}" in str(caught.value)
    with pytest.raises(InputError) as caught:
        sparkeval.evaluate(None, run_table(REPLACED), qrels_table(LATIN1), ["P@1"])
    assert "qrels table: row 1: column doc_id" in str(caught.value)


def test_a_valid_replacement_character_reads_the_same_in_process():
    arrow = sparkeval.evaluate(None, run_table(REPLACED), qrels_table(), ["P@1", "P@2"])
    assert arrow.report["runs"]["run"]["measures"] == {"P@1": 1.0, "P@2": 0.5}
    run = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": [REPLACED, "d2"], "score": [2, 1]})
    qrels = pd.DataFrame({"query_id": ["q1"], "doc_id": [REPLACED], "relevance": [1]})
    frame = sparkeval.evaluate(None, run, qrels, ["P@1", "P@2"])
    assert frame.report["runs"]["run"]["measures"] == {"P@1": 1.0, "P@2": 0.5}


# --- the other commands read Parquet ids the same way --------------------------------


def other_command(capsys, argv: list[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


@pytest.mark.spark
@pytest.mark.parametrize("first", [REPLACED, LATIN1], ids=["replacement", "latin1"])
def test_similar_users_reads_parquet_ids_as_bytes(spark, tmp_path, capsys, first):
    # u1 and u2 list the same two items: one pair, Jaccard 1
    items = strings(first, "i2", first, "i2")
    users = ["u1", "u1", "u2", "u2"]
    lists = pa.table({"user_id": users, "item_id": items, "score": [2.0, 1.0, 2.0, 1.0]})
    pq.write_table(lists, tmp_path / "recs.parquet")
    argv = ["similar-users", "--run", str(tmp_path / "recs.parquet"), "--threshold", "0.5"]
    code, err = other_command(capsys, [*argv, "--out", str(tmp_path / "out")])
    if first == LATIN1:
        assert code == EXIT_INPUT, err
        assert f"recs.parquet: column item_id value '{REPLACED}' {NOT_UTF8}" in err
        assert not (tmp_path / "out").exists()
        return
    assert code == 0, err
    pairs = pq.read_table(tmp_path / "out" / "pairs.parquet").to_pylist()
    assert [(p["user_a"], p["user_b"], p["jaccard"]) for p in pairs] == [("u1", "u2", 1.0)]


@pytest.mark.spark
@pytest.mark.parametrize("user", [REPLACED, LATIN1], ids=["replacement", "latin1"])
def test_rating_errors_read_parquet_ids_as_bytes(spark, tmp_path, capsys, user):
    # one rating: predicted 3, true 4, so MAE = 1
    pred = pa.table({"user_id": strings(user), "item_id": ["i1"], "prediction": [3.0]})
    truth = pa.table({"user_id": strings(user), "item_id": ["i1"], "rating": [4.0]})
    pq.write_table(pred, tmp_path / "pred.parquet")
    pq.write_table(truth, tmp_path / "truth.parquet")
    argv = ["rating-errors", "--predictions", str(tmp_path / "pred.parquet")]
    argv += ["--truth", str(tmp_path / "truth.parquet"), "--measures", "MAE"]
    code, err = other_command(capsys, [*argv, "--out", str(tmp_path / "out")])
    if user == LATIN1:
        assert code == EXIT_INPUT, err
        assert f"column user_id value '{REPLACED}' {NOT_UTF8}" in err
        return
    assert code == 0, err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["measures"]["MAE"] == 1.0
