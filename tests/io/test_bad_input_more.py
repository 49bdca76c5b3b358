"""More bad input: every case exits with its code, names the file, line or key and
what was expected, and leaves no output directory; odd but valid ids are evaluated.

The NaN policy is tested here too: a NaN score is an error naming run, query and doc,
while +inf and -inf are valid scores that rank first and last.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT, EXIT_OK

pytestmark = pytest.mark.spark

RUN = "q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\nq2 Q0 d1 1 1.0 r\n"
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"


def write(tmp: Path, name: str, text: str) -> str:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def parquet(tmp: Path, name: str, columns: dict[str, pa.Array | list]) -> str:
    path = tmp / name
    pq.write_table(pa.table(columns), path)
    return str(path)


def evaluate(capsys, tmp: Path, run: str, qrels: str, *extra: str, measures: str = "P@5,AP"):
    code = main(
        [
            "evaluate",
            "--run",
            run,
            "--qrels",
            qrels,
            "--measures",
            measures,
            "--out",
            str(tmp / "out"),
            *extra,
        ]
    )
    captured = capsys.readouterr()
    return code, captured.err, captured.out


def assert_fails(capsys, tmp: Path, run: str, qrels: str, fragments: list[str], *extra: str):
    code, err, _ = evaluate(capsys, tmp, run, qrels, *extra)
    assert code == EXIT_INPUT, err
    for fragment in fragments:
        assert fragment in err, err
    assert "Traceback" not in err, err
    assert_no_output(tmp)


def assert_no_output(tmp: Path) -> None:
    assert not (tmp / "out").exists()
    assert not [p for p in tmp.iterdir() if p.name.startswith(".out")], "staging left behind"


def per_query(tmp: Path) -> dict[tuple[str, str], float]:
    table = pd.read_parquet(tmp / "out" / "per_query.parquet")
    return {(q, m): v for q, m, v in zip(table.query_id, table.measure, table.value, strict=True)}


# --- runs ------------------------------------------------------------------------------


def test_first_trec_line_with_too_few_fields(spark, tmp_path, capsys) -> None:
    run = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0\n")
    qrels = write(tmp_path, "qrels.txt", QRELS)
    assert_fails(capsys, tmp_path, run, qrels, ["run.txt:1", "'q1 Q0 d1 1 3.0'", "expected 6"])


@pytest.mark.parametrize(
    ("score", "shown"),
    [
        (pa.array([{"a": 1.0}]), "'{1.0}'"),
        (pa.array([[1.0, 2.0]]), "'[1.0, 2.0]'"),
    ],
    ids=["struct", "array"],
)
def test_nested_score_column_in_parquet(spark, tmp_path, capsys, score, shown) -> None:
    run = parquet(tmp_path, "run.parquet", {"query_id": ["q1"], "doc_id": ["d1"], "score": score})
    assert_fails(
        capsys,
        tmp_path,
        run,
        write(tmp_path, "qrels.txt", QRELS),
        [f"run.parquet: query q1 doc d1: column score value {shown} is not a number"],
    )


def test_missing_score_column_in_parquet(spark, tmp_path, capsys) -> None:
    run = parquet(tmp_path, "run.parquet", {"qid": ["q1"], "docno": ["d1"]})
    assert_fails(
        capsys,
        tmp_path,
        run,
        write(tmp_path, "qrels.txt", QRELS),
        ["run.parquet: missing column 'score'", "accepted names: score", "columns are: qid, docno"],
    )


def test_nan_score_in_parquet_is_an_error(spark, tmp_path, capsys) -> None:
    run = parquet(
        tmp_path,
        "run.parquet",
        {"run_id": ["A", "A"], "qid": ["q1", "q1"], "docno": ["d1", "d2"], "score": [1.0, None]},
    )
    # a null read from Parquet is reported with the key; NaN with run, query and doc
    assert_fails(
        capsys,
        tmp_path,
        run,
        write(tmp_path, "qrels.txt", QRELS),
        ["run.parquet: query q1 doc d2: column score value '' is not a number"],
    )
    run = parquet(
        tmp_path, "nan.parquet", {"qid": ["q1"], "docno": ["d1"], "score": [float("nan")]}
    )
    assert_fails(
        capsys,
        tmp_path,
        run,
        write(tmp_path, "qrels.txt", QRELS),
        ["run nan: query q1 doc d1", "NaN", "infinite scores are allowed"],
    )


def test_infinite_scores_are_valid_and_rank_first_and_last(spark, tmp_path, capsys) -> None:
    run = write(tmp_path, "run.txt", "q1 Q0 d1 1 -inf r\nq1 Q0 d2 2 inf r\nq1 Q0 d3 3 0 r\n")
    code, err, _ = evaluate(capsys, tmp_path, run, write(tmp_path, "qrels.txt", "q1 0 d1 1\n"))
    assert code == EXIT_OK, err
    assert per_query(tmp_path)[("q1", "AP")] == pytest.approx(1 / 3)  # d1 ranked third


def test_duplicate_doc_within_one_run_of_a_parquet_table(spark, tmp_path, capsys) -> None:
    run = parquet(
        tmp_path,
        "runs.parquet",
        {
            "run_id": ["A", "B", "B"],
            "query_id": ["q1", "q1", "q1"],
            "doc_id": ["d1", "d1", "d1"],
            "score": [1.0, 1.0, 0.5],
        },
    )
    # the same doc in two runs is fine; twice in run B is not
    assert_fails(
        capsys,
        tmp_path,
        run,
        write(tmp_path, "qrels.txt", QRELS),
        ["run B: query q1: duplicate doc d1"],
    )


#: both readers: the workers' (an input they find empty goes to Spark's readers; one
#: that a condition empties is found so by the evaluation) and Spark's
READERS = pytest.mark.parametrize("reader", ["auto", "spark"])


def empty_parquet_run(tmp: Path, name: str = "empty.parquet") -> str:
    return parquet(
        tmp,
        name,
        {
            "query_id": pa.array([], pa.string()),
            "doc_id": pa.array([], pa.string()),
            "score": pa.array([], pa.float64()),
        },
    )


@READERS
def test_empty_parquet_run_with_schema(spark, tmp_path, capsys, reader) -> None:
    assert_fails(
        capsys,
        tmp_path,
        empty_parquet_run(tmp_path),
        write(tmp_path, "qrels.txt", QRELS),
        ["empty.parquet: no run rows (the input is empty)"],
        "--reader",
        reader,
    )


@READERS
def test_header_only_csv_run(spark, tmp_path, capsys, reader) -> None:
    run = write(tmp_path, "run.csv", "qid,docno,score\n")
    assert_fails(
        capsys,
        tmp_path,
        run,
        write(tmp_path, "qrels.txt", QRELS),
        ["run.csv: no run rows (the input is empty)"],
        "--reader",
        reader,
    )


@READERS
def test_empty_second_run_is_named(spark, tmp_path, capsys, reader) -> None:
    full = parquet(
        tmp_path,
        "full.parquet",
        {"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]},
    )
    code, err, _ = evaluate(
        capsys,
        tmp_path,
        full,
        write(tmp_path, "qrels.txt", QRELS),
        "--run",
        empty_parquet_run(tmp_path, "second.parquet"),
        "--reader",
        reader,
    )
    assert code == EXIT_INPUT, err
    assert "second.parquet: no run rows (the input is empty)" in err, err
    assert "full.parquet: no run rows" not in err, err
    assert_no_output(tmp_path)


@READERS
def test_where_that_keeps_no_run_row(spark, tmp_path, capsys, reader) -> None:
    run = parquet(
        tmp_path,
        "run.parquet",
        {"query_id": ["q1", "q2"], "doc_id": ["d1", "d1"], "score": [2.0, 1.0]},
    )
    assert_fails(
        capsys,
        tmp_path,
        run,
        write(tmp_path, "qrels.txt", QRELS),
        ["run.parquet: no run rows where score > 100"],
        "--where",
        "score > 100",
        "--reader",
        reader,
    )


def test_corrupt_parquet(spark, tmp_path, capsys) -> None:
    (tmp_path / "run.parquet").write_bytes(b"PAR1 not really parquet PAR1")
    assert_fails(
        capsys,
        tmp_path,
        str(tmp_path / "run.parquet"),
        write(tmp_path, "qrels.txt", QRELS),
        ["run.parquet: not a Parquet file", "could not read its footer"],
    )


def test_empty_directory_as_parquet_input(spark, tmp_path, capsys) -> None:
    (tmp_path / "run_dir").mkdir()
    assert_fails(
        capsys,
        tmp_path,
        str(tmp_path / "run_dir"),
        write(tmp_path, "qrels.txt", QRELS),
        ["run_dir: cannot read as Parquet", "Unable to infer schema"],
    )


def test_malformed_json_lines(spark, tmp_path, capsys) -> None:
    run = write(tmp_path, "run.jsonl", '{"qid": "q1", "docno": "d1", "score": 1}\n{"qid": "q1",\n')
    assert_fails(
        capsys,
        tmp_path,
        run,
        write(tmp_path, "qrels.txt", QRELS),
        ['run.jsonl:2: malformed line \'{"qid": "q1",\'', "one JSON object per line"],
    )


def test_null_query_id_in_parquet(spark, tmp_path, capsys) -> None:
    run = parquet(
        tmp_path, "run.parquet", {"qid": ["q1", None], "docno": ["d1", "d2"], "score": [1.0, 2.0]}
    )
    assert_fails(
        capsys,
        tmp_path,
        run,
        write(tmp_path, "qrels.txt", QRELS),
        ["run row with empty query_id", "'doc_id': 'd2'"],
    )


# --- qrels -----------------------------------------------------------------------------


def test_out_of_range_relevance_in_trec_qrels(spark, tmp_path, capsys) -> None:
    assert_fails(
        capsys,
        tmp_path,
        write(tmp_path, "run.txt", RUN),
        write(tmp_path, "qrels.txt", "q1 0 d1 1\nq1 0 d2 1e12\n"),
        ["qrels.txt:2", "'q1 0 d2 1e12'", "integer relevance"],
    )


def test_out_of_range_relevance_in_parquet_qrels(spark, tmp_path, capsys) -> None:
    qrels = parquet(
        tmp_path, "qrels.parquet", {"qid": ["q1"], "docno": ["d1"], "rel": pa.array([10**12])}
    )
    assert_fails(
        capsys,
        tmp_path,
        write(tmp_path, "run.txt", RUN),
        qrels,
        ["qrels.parquet: query q1 doc d1: column rel value '1000000000000' is not an integer"],
    )


def test_fractional_relevance_in_csv_qrels(spark, tmp_path, capsys) -> None:
    assert_fails(
        capsys,
        tmp_path,
        write(tmp_path, "run.txt", RUN),
        write(tmp_path, "qrels.csv", "query,doc,grade\nq1,d1,2\nq1,d2,0.5\n"),
        ["qrels.csv: query q1 doc d2: column grade value '0.5' is not an integer"],
    )


def test_duplicate_doc_in_parquet_qrels(spark, tmp_path, capsys) -> None:
    qrels = parquet(
        tmp_path,
        "qrels.parquet",
        {"query_id": ["q1", "q1"], "doc_id": ["d1", "d1"], "relevance": [1, 0]},
    )
    assert_fails(
        capsys,
        tmp_path,
        write(tmp_path, "run.txt", RUN),
        qrels,
        ["qrels: query q1: duplicate doc d1"],
    )


@READERS
def test_qrels_where_that_keeps_no_row(spark, tmp_path, capsys, reader) -> None:
    qrels = parquet(
        tmp_path,
        "qrels.parquet",
        {"query_id": ["q1", "q2"], "doc_id": ["d1", "d3"], "relevance": [1, 2]},
    )
    assert_fails(
        capsys,
        tmp_path,
        write(tmp_path, "run.txt", RUN),
        qrels,
        ["qrels.parquet: no qrels rows where relevance > 5"],
        "--qrels-where",
        "relevance > 5",
        "--reader",
        reader,
    )


@READERS
def test_empty_parquet_qrels_with_schema(spark, tmp_path, capsys, reader) -> None:
    qrels = parquet(
        tmp_path,
        "qrels.parquet",
        {
            "query_id": pa.array([], pa.string()),
            "doc_id": pa.array([], pa.string()),
            "relevance": pa.array([], pa.int64()),
        },
    )
    assert_fails(
        capsys,
        tmp_path,
        write(tmp_path, "run.txt", RUN),
        qrels,
        ["qrels.parquet: no qrels rows (the input is empty)"],
        "--reader",
        reader,
    )


def test_missing_qrels_path(spark, tmp_path, capsys) -> None:
    assert_fails(
        capsys,
        tmp_path,
        write(tmp_path, "run.txt", RUN),
        str(tmp_path / "missing" / "qrels.txt"),
        ["missing/qrels.txt: no such file or directory"],
    )


# --- ids -------------------------------------------------------------------------------


def test_integer_ids_in_parquet_join_string_ids_in_trec(spark, tmp_path, capsys) -> None:
    run = parquet(
        tmp_path,
        "run.parquet",
        {"query_id": pa.array([7, 7, 8]), "doc_id": pa.array([1, 2, 3]), "score": [2.0, 1.0, 1.0]},
    )
    # 7 is "7" and joins the qrels' "7"; "007" is another query (judged, not retrieved)
    qrels = write(tmp_path, "qrels.txt", "7 0 2 1\n007 0 1 1\n8 0 3 1\n")
    code, err, _ = evaluate(capsys, tmp_path, run, qrels)
    assert code == EXIT_OK, err
    values = per_query(tmp_path)
    assert values[("7", "AP")] == 0.5
    assert values[("8", "AP")] == 1.0
    assert values[("007", "AP")] == 0.0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["runs"]["run"]["queries"] == {
        "evaluated": 3,
        "in_both": 2,
        "in_qrels_only": 1,
        "in_run_only": 0,
    }


def test_ids_with_whitespace_unicode_and_hash(spark, tmp_path, capsys) -> None:
    run = parquet(
        tmp_path,
        "run.parquet",
        {
            "query_id": ["q 1", "q 1", "查询#2", "查询#2"],
            "doc_id": ["doc é", "doc e", "d#1", " d#1"],
            "score": [1.0, 2.0, 2.0, 1.0],
        },
    )
    qrels = parquet(
        tmp_path,
        "qrels.parquet",
        {"query_id": ["q 1", "查询#2"], "doc_id": ["doc é", " d#1"], "relevance": [1, 1]},
    )
    code, err, _ = evaluate(capsys, tmp_path, run, qrels)
    assert code == EXIT_OK, err
    values = per_query(tmp_path)
    assert values[("q 1", "AP")] == 0.5  # "doc é" second; "doc e" is another doc
    assert values[("查询#2", "AP")] == 0.5  # " d#1" (leading space) differs from "d#1"


def test_tab_indented_and_crlf_trec_lines(spark, tmp_path, capsys) -> None:
    run = write(tmp_path, "run.txt", "\tq#1 Q0 d1 1 1.0 tagged\r\nq#1\tQ0\td2\t2\t2.0\ttagged\r\n")
    qrels = write(tmp_path, "qrels.txt", "  q#1 0 d1 1\r\n")
    code, err, out = evaluate(capsys, tmp_path, run, qrels)
    assert code == EXIT_OK, err
    assert "runid" in out and "tagged" in out
    assert per_query(tmp_path) == {("q#1", "P@5"): 0.2, ("q#1", "AP"): 0.5}


def test_query_longer_than_depth_is_counted(spark, tmp_path, capsys) -> None:
    lines = "".join(f"q1 Q0 d{i} {i} {10 - i} r\n" for i in range(8))
    code, err, _ = evaluate(
        capsys,
        tmp_path,
        write(tmp_path, "run.txt", lines),
        write(tmp_path, "qrels.txt", "q1 0 d6 1\n"),
        "--depth",
        "3",
    )
    assert code == EXIT_OK, err
    rows = json.loads((tmp_path / "out" / "summary.json").read_text())["runs"]["r"]["rows"]
    assert rows == {"read": 8, "beyond_depth": 5, "rejected": 0, "in_unevaluated_queries": 0}
    assert per_query(tmp_path)[("q1", "AP")] == 0.0  # d6 lies beyond the cut


# --- measures, parameters and options ---------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["--measures", "nDCG@10(foo=1)"], ["key 'measures'", "unknown measure 'nDCG@10(foo=1)'"]),
        (["--measures", "AP(rel=x)"], ["key 'measures'", "parameter rel='x' is not a valid int"]),
        (["--measures", "RBP(p=2)"], ["key 'measures'", "parameter p=2 must be <= 1.0"]),
        (["--measures", "map_cut_0"], ["key 'measures'", "cutoff must be >= 1, got 0"]),
        (["--measures", "P@-1"], ["key 'measures'", "cutoff must be >= 1, got -1"]),
        (["--measures", "AP", "--depth", "0"], ["key 'depth'", "whole number >= 1, got 0"]),
        (["--measures", "AP", "--buckets", "0"], ["key 'buckets'", "whole number >= 1, got 0"]),
        (["--measures", "AP", "--rel-level", "-1"], ["key 'rel_level'", ">= 0, got -1"]),
        (
            ["--measures", "AP", "--run-columns", "quid=user"],
            ["key 'run_columns'", "unknown column(s) quid", "query_id"],
        ),
        (
            ["--measures", "AP", "--qrels-columns", "relevance"],
            ["key 'qrels_columns'", "'relevance' is not canonical=source"],
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_bad_options_fail_before_spark_work(tmp_path, capsys, argv, fragments) -> None:
    code = main(
        [
            "evaluate",
            "--run",
            write(tmp_path, "run.txt", RUN),
            "--qrels",
            write(tmp_path, "qrels.txt", QRELS),
            "--out",
            str(tmp_path / "out"),
            *argv,
        ]
    )
    err = capsys.readouterr().err
    assert code == EXIT_INPUT, err
    for fragment in fragments:
        assert fragment in err, err
    assert_no_output(tmp_path)


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("buckts: 4\n", ["job.yaml: unknown key 'buckts' (did you mean 'buckets'?)"]),
        ("measures: 5\n", ["job.yaml: key 'measures' expects list or str, got 5"]),
        ("overwrite: 'yes'\n", ["job.yaml: key 'overwrite' expects bool, got 'yes'"]),
        ("spark: [a, b]\n", ["job.yaml: key 'spark' expects dict"]),
        ("run_columns: {score: pred, rank: r}\n", ["key 'run_columns'", "unknown column(s) rank"]),
        ("format: xml\n", ["key 'format': 'xml' is not one of trec, parquet, csv, tsv, jsonl"]),
        ("names: both\n", ["key 'names': 'both' is not one of canonical, trec"]),
    ],
)
def test_bad_config_keys_through_the_cli(tmp_path, capsys, text, fragments) -> None:
    write(tmp_path, "run.txt", RUN)
    write(tmp_path, "qrels.txt", QRELS)
    measures = "" if text.startswith("measures:") else "measures: AP\n"  # each key once
    config = write(
        tmp_path, "job.yaml", "run: run.txt\nqrels: qrels.txt\nout: out\n" + measures + text
    )
    code = main(["evaluate", "--config", config])
    err = capsys.readouterr().err
    assert code == EXIT_INPUT, err
    for fragment in fragments:
        assert fragment in err, err
    assert_no_output(tmp_path)


def test_rank_distance_invalid_k_and_missing_column(spark, tmp_path, capsys) -> None:
    runs = parquet(
        tmp_path,
        "runs.parquet",
        {"run_id": ["a", "b"], "query_id": ["q1", "q1"], "doc_id": ["d1", "d1"]},
    )
    args = ["rank-distance", "--runs", runs, "--baseline", "a", "--out", str(tmp_path / "out")]
    assert main([*args, "--k", "0"]) == EXIT_INPUT
    assert "--k must be >= 1, got 0" in capsys.readouterr().err
    assert main(args) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "runs.parquet: missing column 'score'" in err, err
    assert_no_output(tmp_path)


# --- output paths ------------------------------------------------------------------------


def test_output_that_is_the_input_through_a_symlink_is_refused(tmp_path, capsys) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write(data, "run.txt", RUN)
    qrels = write(tmp_path, "qrels.txt", QRELS)
    (tmp_path / "link").symlink_to(data, target_is_directory=True)
    code = main(
        [
            "evaluate",
            "--run",
            str(tmp_path / "link" / "run.txt"),
            "--qrels",
            qrels,
            "--measures",
            "AP",
            "--out",
            str(tmp_path / "data"),
            "--overwrite",
        ]
    )
    assert code == EXIT_INPUT
    assert "overlaps the input" in capsys.readouterr().err
    assert sorted(p.name for p in data.iterdir()) == ["run.txt"]


def test_output_that_is_a_parent_of_the_input_or_a_file_is_refused(tmp_path, capsys) -> None:
    data = tmp_path / "data" / "inputs"
    data.mkdir(parents=True)
    run = write(data, "run.txt", RUN)
    qrels = write(data, "qrels.txt", QRELS)
    base = ["evaluate", "--run", run, "--qrels", qrels, "--measures", "AP", "--overwrite"]
    assert main([*base, "--out", str(tmp_path / "data")]) == EXIT_INPUT
    assert "overlaps the input" in capsys.readouterr().err
    (tmp_path / "file.txt").write_text("not a directory")
    assert main([*base, "--out", str(tmp_path / "file.txt")]) == EXIT_INPUT
    assert "exists and is not a directory" in capsys.readouterr().err
    assert (tmp_path / "file.txt").read_text() == "not a directory"
