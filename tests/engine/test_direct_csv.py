"""CSV and TSV read by the Python workers: the same values as Spark's CSV reader, bit
for bit, across splits, compression, column aliases and run id columns; every file
whose reading depends on Spark's CSV options is left to Spark and gets its error."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest

from sparkeval.errors import EXIT_OK
from sparkeval.io import direct_text
from sparkeval.io.direct_csv import (
    csv_unit_table,
    plain_text_problem,
    plan_direct_csv,
    read_fields,
    read_header,
    run_ids_in,
)
from sparkeval.io.direct_input import QRELS_SCHEMA, RUN_SCHEMA, NotDirect
from sparkeval.io.direct_plan import plan_direct_inputs
from tests.engine.test_direct_text import _evaluate, _results, error_lines_of_both_readers
from tests.random_collection import random_collection


def _score_text(i: int, score: float) -> str:
    """Scores spelled the ways a CSV writer may spell them (all plain decimals)."""
    return [f"{score}", f"{score:+.3e}", f"{score:.6f}", f"{score:g}"][i % 4]


def write_csv_collection(directory: Path, seed: int, gz: bool = False) -> dict:
    """Two runs in one CSV with a run id column (aliases ``tag, qid, docno, sim``), a third
    run in its own CSV without one, and TSV qrels (gzip when ``gz``)."""
    directory.mkdir(parents=True, exist_ok=True)
    run, qrels = random_collection(seed, queries=50, runs=3, edge_queries=True)
    shared = run[run.run_id != "run2"]
    lines = ["tag,qid,docno,sim,comment"]
    for i, row in enumerate(shared.itertuples(index=False)):
        lines.append(f"{row.run_id},{row.query_id},{row.doc_id},{_score_text(i, row.score)},c{i}")
        if i % 97 == 0:
            lines.append("")  # empty lines, which both readers skip
    both = directory / "both.csv"
    both.write_text("\n".join(lines) + "\n\n")
    alone = run[run.run_id == "run2"]
    single = directory / "run2.csv"
    rows = [f"{q},{d},{_score_text(i, s)}" for i, (q, d, s) in
            enumerate(zip(alone.query_id, alone.doc_id, alone.score, strict=True))]  # fmt: skip
    # a header quoted as pyarrow writes it, and no final line end
    single.write_text('"query_id","doc_id","score"\n' + "\n".join(rows))
    text = "query\titer\tdoc\trel\n" + "".join(
        f"{q}\t0\t{d}\t{g if i % 5 else f'{g}.0'}\n"
        for i, (q, d, g) in enumerate(qrels.itertuples(index=False))
    )
    if gz:
        qrels_path = directory / "qrels.tsv.gz"
        qrels_path.write_bytes(gzip.compress(text.encode()))
    else:
        qrels_path = directory / "qrels.tsv"
        qrels_path.write_text(text)
    return {"runs": [both, single], "qrels": qrels_path}


def test_plain_text_has_no_quoting_escaping_or_odd_bytes() -> None:
    assert plain_text_problem(b"q1,d1,1.5\nq2,d2,-3\n") is None
    assert plain_text_problem(b'q1,"d1",1\n') == "a double quote"
    assert plain_text_problem(b"q1,d\\1,1\n") == "a backslash"
    assert plain_text_problem(b"q1,d1,1\r\n") == "a carriage return"
    assert plain_text_problem("q1,caf\N{REPLACEMENT CHARACTER},1\n".encode()) is not None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("query_id,doc_id,score\nq1,d1,1\n", ["query_id", "doc_id", "score"]),
        ("query_id,doc_id,score\n", None),  # no data line: Spark reports the empty input
        ("query_id,,score\nq1,d1,1\n", None),  # Spark names an empty column _c1
        ("query_id,Query_ID,score\nq1,q1,1\n", None),  # Spark renames duplicates
        ("query_id, doc_id,score\nq1,d1,1\n", None),  # a padded name
        ('"query_id",doc_id,"score"\nq1,d1,1\n', ["query_id", "doc_id", "score"]),
        ('"query_id","do""c",score\nq1,d1,1\n', None),  # more quoting than a name in quotes
        ('" query_id",doc_id,score\nq1,d1,1\n', None),  # a padded name in quotes
    ],
)
def test_a_header_is_plain_or_left_to_spark(tmp_path, text: str, expected) -> None:
    path = tmp_path / "run.csv"
    path.write_text(text)
    assert read_header(str(path), ",") == expected


def test_plans_only_local_plain_or_gzip_files_with_resolvable_columns(tmp_path) -> None:
    (tmp_path / "r.csv").write_text("qid,docno,score\nq1,d1,1\n")
    plan = plan_direct_csv(str(tmp_path / "r.csv"), "run", "csv", {}, "r")
    assert plan is not None and plan.run_id == "r" and plan.header == ("qid", "docno", "score")
    assert dict(plan.columns) == {"query_id": "qid", "doc_id": "docno", "score": "score"}
    (tmp_path / "t.csv").write_text("run_id,query_id,doc_id,score\nA,q1,d1,1\n")
    plan = plan_direct_csv(str(tmp_path / "t.csv"), "run", "csv", {}, "t")
    assert plan is not None and plan.run_id is None  # the ids come from the column
    (tmp_path / "g.csv.gz").write_bytes(gzip.compress(b"qid,docno,score\nq1,d1,1\n"))
    assert plan_direct_csv(str(tmp_path / "g.csv.gz"), "run", "csv", {}, "g") is not None
    (tmp_path / "b.csv.bz2").write_bytes(b"")
    assert plan_direct_csv(str(tmp_path / "b.csv.bz2"), "run", "csv", {}, "b") is None
    (tmp_path / "ranked.csv").write_text("qid,docno,rank\nq1,d1,1\n")  # score from rank
    assert plan_direct_csv(str(tmp_path / "ranked.csv"), "run", "csv", {}, "ranked") is None
    assert plan_direct_csv("s3://bucket/r.csv", "run", "csv", {}, "r") is None


def test_rows_are_the_fields_between_separators() -> None:
    # by hand; an empty line is skipped, as Spark's CSV reader skips it
    fields = read_fields(b"q1,d 1,2.5,x\n\nq2,d2,-1e-3,\n\n", ["q", "d", "s", "c"], ",",
                         ["q", "d", "s"], "r.csv")  # fmt: skip
    assert {k: v.to_pylist() for k, v in fields.items()} == {
        "q": ["q1", "q2"], "d": ["d 1", "d2"], "s": ["2.5", "-1e-3"]}  # fmt: skip


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"q1,d1,1.5\nq2,d2\n", "Expected 3 columns"),  # a short row
        (b"q1,d1,1.5,x\n", "Expected 3 columns"),  # a long row
        (b"q1,d1,1.5\n \nq2,d2,1\n", "Expected 3 columns"),  # a line of a space
        (b"q1,,1.5\n", "empty value"),  # null to Spark
        (b"q1, d1,1.5\n", "surrounding whitespace"),
        (b"q1,d1,NaN\n", "not a plain decimal"),
        (b"q1,d1, 1.5\n", "not a plain decimal"),
        (b"q1,caf\xe9,1\n", "UTF8"),
        (b'q1,"d1",1\n', "double quote"),
    ],
)
def test_doubtful_rows_are_left_to_spark(data: bytes, why: str, tmp_path) -> None:
    path = tmp_path / "r.csv"
    path.write_bytes(b"qid,docno,score\n" + data)
    plan = plan_direct_csv(str(path), "run", "csv", {}, "r")
    assert plan is not None
    with pytest.raises(NotDirect, match=why):
        csv_unit_table(plan, 0, ["r"], RUN_SCHEMA)


def test_grades_are_whole_numbers_within_bounds(tmp_path) -> None:
    path = tmp_path / "q.tsv"
    path.write_bytes(b"qid\tdocno\trel\nq1\td1\t2.0\nq1\td2\t-1\n")
    plan = plan_direct_csv(str(path), "qrels", "tsv", {}, None)
    assert plan is not None
    assert csv_unit_table(plan, 0, [], QRELS_SCHEMA).column("relevance").to_pylist() == [2, -1]
    path.write_bytes(b"qid\tdocno\trel\nq1\td1\t1.5\n")
    with pytest.raises(NotDirect, match="whole number"):
        csv_unit_table(plan_direct_csv(str(path), "qrels", "tsv", {}, None), 0, [], QRELS_SCHEMA)


def test_csv_qrels_no_longer_send_everything_to_spark(tmp_path) -> None:
    run, qrels = random_collection(4)
    run.drop(columns="run_id").to_parquet(tmp_path / "run.parquet", index=False)
    qrels.to_csv(tmp_path / "qrels.csv", index=False)
    plan = plan_direct_inputs(None, [str(tmp_path / "run.parquet")], str(tmp_path / "qrels.csv"),
                              None, None, None, None)  # fmt: skip
    assert plan is not None and plan.qrels.fmt == "csv"


@pytest.mark.spark
@pytest.mark.parametrize(("seed", "chunk", "gz"), [(1, None, False), (2, 1024, True)])
def test_workers_read_csv_as_spark_does(spark, tmp_path, capsys, monkeypatch, seed, chunk, gz):
    if chunk:  # many byte ranges: the header is only in the first
        monkeypatch.setattr(direct_text, "TEXT_CHUNK_BYTES", chunk)
    paths = write_csv_collection(tmp_path / "data", seed, gz=gz)
    assert _evaluate(paths, tmp_path / "direct", "auto") == EXIT_OK
    assert "inputs read by the driver's threads" in capsys.readouterr().err
    assert _evaluate(paths, tmp_path / "spark", "spark") == EXIT_OK
    assert "inputs read by Spark's readers" in capsys.readouterr().err
    direct_rows, direct_summary = _results(tmp_path / "direct")
    spark_rows, spark_summary = _results(tmp_path / "spark")
    assert len(direct_rows) > 1000
    assert sorted(direct_summary["runs"]) == ["run0", "run1", "run2"]
    pd.testing.assert_frame_equal(direct_rows, spark_rows, check_exact=True)
    assert direct_summary == spark_summary


@pytest.mark.spark
@pytest.mark.parametrize(
    "bad_line", [b"run0,q007,dX,not-a-number,cX", b"run0,q007,dX,1,cX,extra-field"]
)
def test_a_bad_row_gets_the_spark_readers_error(spark, tmp_path, capsys, bad_line) -> None:
    paths = write_csv_collection(tmp_path / "data", 3)
    run = paths["runs"][0]
    lines = run.read_bytes().split(b"\n")
    lines.insert(40, bad_line)
    run.write_bytes(b"\n".join(lines))
    messages = error_lines_of_both_readers(paths, tmp_path, capsys, "dX")
    assert messages[0] and messages[0] == messages[1]


def test_a_gzip_run_is_read_in_parts_and_its_run_ids_found(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(direct_text, "TEXT_CHUNK_BYTES", 64)  # two parts
    lines = [f"{'AB'[i % 2]},q{i // 10},d{i},{i / 8}" for i in range(500)]
    path = tmp_path / "runs.csv.gz"
    path.write_bytes(gzip.compress(("run_id,query_id,doc_id,score\n" + "\n".join(lines)).encode()))
    plan = plan_direct_csv(str(path), "run", "csv", {}, "runs")
    assert plan is not None and len(plan.units) == direct_text.GZIP_PARTS
    assert run_ids_in(plan) == ["A", "B"]
    tables = [csv_unit_table(plan, unit, ["A", "B"], RUN_SCHEMA) for unit in range(2)]
    assert all(t.num_rows for t in tables)
    docs = [d for t in tables for d in t.column("doc_id").to_pylist()]
    assert docs == [f"d{i}" for i in range(500)]
