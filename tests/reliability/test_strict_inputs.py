"""Nothing read wrong: every input that would give a plausible wrong number is an error
naming the file and line (exit 2, no output), and valid but unusual inputs read right.

Expected values are derived by hand from the few lines each test writes.
"""

from __future__ import annotations

import bz2
import gzip
import json
import os
import shutil
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT

pytestmark = pytest.mark.spark

QRELS = "q1 0 d1 1\nq1 0 d2 0\n"


def evaluate(capsys, tmp: Path, run: Path, qrels: Path, *extra: str) -> tuple[int, str, dict]:
    """Run ``sparkeval evaluate`` (P@1, P@2, num_ret); exit code, stderr, summary."""
    code = main(
        [
            "evaluate",
            "--run",
            str(run),
            "--qrels",
            str(qrels),
            "--measures",
            "P@1,P@2,num_ret",
            "--out",
            str(tmp / "out"),
            *extra,
        ]
    )
    err = capsys.readouterr().err
    summary_file = tmp / "out" / "summary.json"
    summary = json.loads(summary_file.read_text()) if code == 0 else {}
    return code, err, summary


def measures(summary: dict) -> dict[str, float]:
    (run,) = summary["runs"].values()
    return run["measures"]


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("sparkeval evaluate: error:")]
    assert lines, err
    return lines[0]


def assert_refused(capsys, tmp: Path, run: Path, qrels: Path, *fragments: str) -> None:
    code, err, _ = evaluate(capsys, tmp, run, qrels)
    assert code == EXIT_INPUT, err
    line = error_line(err)
    for fragment in fragments:
        assert fragment in line, line
    assert "Traceback" not in err
    assert not (tmp / "out").exists()
    assert not [p for p in tmp.iterdir() if p.name.startswith(".out")], "leftovers"


def write(tmp: Path, name: str, data: str | bytes) -> Path:
    path = tmp / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


# --- ids are UTF-8 text ---------------------------------------------------------------


def test_latin1_ids_in_a_trec_run_are_an_error_naming_file_and_line(spark, tmp_path, capsys):
    # caf\xe9 and caf\xe8 would both decode to "caf\ufffd" and match: P@1 = 1, wrongly
    run = write(tmp_path, "run.txt", b"q1 Q0 d1 1 3.0 r\nq1 Q0 caf\xe8 2 2.0 r\n")
    qrels = write(tmp_path, "qrels.txt", "q1 0 caf\ufffd 1\n")  # what a decoder makes of it
    assert_refused(capsys, tmp_path, run, qrels, "run.txt:2", "not valid UTF-8")


def test_latin1_ids_in_trec_qrels_are_an_error(spark, tmp_path, capsys):
    run = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\n")
    qrels = write(tmp_path, "qrels.txt", b"q1 0 d1 1\nq1 0 caf\xe9 1\n")
    assert_refused(capsys, tmp_path, run, qrels, "qrels.txt:2", "not valid UTF-8")


def test_latin1_ids_in_csv_are_an_error_naming_the_column(spark, tmp_path, capsys):
    run = write(tmp_path, "run.csv", b"qid,docno,score\nq1,caf\xe9,2.0\n")
    qrels = write(tmp_path, "qrels.txt", QRELS)
    assert_refused(capsys, tmp_path, run, qrels, "run.csv", "column docno", "not valid UTF-8")


def test_utf8_ids_compare_byte_for_byte(spark, tmp_path, capsys):
    # "café" precomposed (NFC) in the qrels, decomposed (NFD, e + U+0301) in the run:
    # different bytes, so the run's first doc is unjudged. Judged relevant: 東京 and café.
    run = write(tmp_path, "run.txt", "q1 Q0 cafe\u0301 1 3.0 r\nq1 Q0 東京 2 2.0 r\n")
    qrels = write(tmp_path, "qrels.txt", "q1 0 caf\u00e9 1\nq1 0 東京 1\n")
    code, err, summary = evaluate(capsys, tmp_path, run, qrels)
    assert code == 0, err
    assert measures(summary) == {"P@1": 0.0, "P@2": 0.5, "NumRet": 2.0}


# --- strict CSV -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "line_number"),
    [
        ("q1,d1,3.0\nq1,d2,2,2.0\n", 3),  # an extra field (PERMISSIVE would drop it)
        ("q1,d1,3.0\nq1,d2\n", 3),  # a missing field (PERMISSIVE would make it null)
        ('q1,"d1,3.0\nq1,d2,2.0\n', 2),  # a quote that never closes
    ],
)
def test_malformed_csv_rows_are_errors_with_their_line(spark, tmp_path, capsys, lines, line_number):
    run = write(tmp_path, "run.csv", "qid,docno,score\n" + lines)
    qrels = write(tmp_path, "qrels.txt", QRELS)
    why = "never closed" if '"' in lines else "expected 3 comma separated"
    assert_refused(capsys, tmp_path, run, qrels, f"run.csv:{line_number}", why)


def test_an_unclosed_quote_in_the_last_column_does_not_swallow_the_rest(spark, tmp_path, capsys):
    # read leniently, the quote would make d2 and d3 part of d1's text: 3 lists become 1
    run = write(tmp_path, "recs.csv", 'user_id,item_id,score\nu1,"a,0.9\nu2,b,0.8\nu3,c,0.7\n')
    code = main(
        ["similar-users", "--run", str(run), "--threshold", "0.5", "--out", str(tmp_path / "out")]
    )
    line = capsys.readouterr().err.splitlines()[-1]
    assert code == EXIT_INPUT
    assert "recs.csv:2: a quote opened on this line is never closed" in line, line


@pytest.mark.parametrize("command", ["similar-users", "diversity"])
def test_list_commands_read_csv_as_strictly(spark, tmp_path, capsys, command):
    run = write(tmp_path, "recs.csv", "user_id,item_id,score\nu1,a,0.9\nu1,b,0.8,7\n")
    options = ["--threshold", "0.5"] if command == "similar-users" else ["--k", "2"]
    code = main([command, "--run", str(run), *options, "--out", str(tmp_path / "out")])
    line = capsys.readouterr().err.splitlines()[-1]
    assert code == EXIT_INPUT
    assert "recs.csv:3: malformed line 'u1,b,0.8,7'" in line, line
    latin1 = write(tmp_path, "latin1.csv", b"user_id,item_id,score\nu1,caf\xe9,0.9\n")
    code = main([command, "--run", str(latin1), *options, "--out", str(tmp_path / "out")])
    line = capsys.readouterr().err.splitlines()[-1]
    assert code == EXIT_INPUT
    assert "latin1.csv: column item_id value" in line and "not valid UTF-8" in line, line


def test_a_quoted_field_may_hold_a_line_break(spark, tmp_path, capsys):
    # valid CSV (RFC 4180): the second doc id is "x<newline>y"; d1 is relevant
    run = write(tmp_path, "run.csv", 'qid,docno,score\nq1,d1,1.0\nq1,"x\ny",2.0\n')
    qrels = write(tmp_path, "qrels.txt", QRELS)
    code, err, summary = evaluate(capsys, tmp_path, run, qrels)
    assert code == 0, err
    # ranked: x\ny (2.0), d1 (1.0) -> P@1 = 0, P@2 = 1/2, two docs retrieved
    assert measures(summary) == {"P@1": 0.0, "P@2": 0.5, "NumRet": 2.0}


# --- compression by name and by content ------------------------------------------------

RUN_CSV = "qid,docno,score\nq1,d1,2.0\nq1,d3,1.0\n"  # P@1 = 1, P@2 = 1/2


@pytest.mark.parametrize("suffix", [".csv.gz", ".csv.bz2", ".csv.zst"])
def test_compressed_csv_is_read_as_csv(spark, tmp_path, capsys, suffix):
    plain = write(tmp_path, "plain.csv", RUN_CSV)
    run = tmp_path / f"run{suffix}"
    if suffix.endswith(".gz"):
        run.write_bytes(gzip.compress(RUN_CSV.encode()))
    elif suffix.endswith(".bz2"):
        run.write_bytes(bz2.compress(RUN_CSV.encode()))
    else:
        if shutil.which("zstd") is None:
            pytest.skip("the zstd tool is not installed to write a .zst file")
        subprocess.run(["zstd", "-q", str(plain), "-o", str(run)], check=True)
    qrels = write(tmp_path, "qrels.txt", QRELS)
    code, err, summary = evaluate(capsys, tmp_path, run, qrels)
    assert code == 0, err
    assert measures(summary) == {"P@1": 1.0, "P@2": 0.5, "NumRet": 2.0}


def test_gzip_content_under_a_plain_name_is_refused(spark, tmp_path, capsys):
    run = write(tmp_path, "run.txt", gzip.compress(b"q1 Q0 d1 1 3.0 r\n"))
    qrels = write(tmp_path, "qrels.txt", QRELS)
    assert_refused(capsys, tmp_path, run, qrels, "run.txt", "gz-compressed", "rename")


def test_a_truncated_gzip_file_is_an_input_error(spark, tmp_path, capsys):
    whole = gzip.compress(("q1 Q0 d1 1 3.0 r\n" * 2000).encode())
    run = write(tmp_path, "run.txt.gz", whole[: len(whole) // 2])
    qrels = write(tmp_path, "qrels.txt", QRELS)
    assert_refused(capsys, tmp_path, run, qrels, "run.txt.gz", "cannot be read", "truncated")


def test_a_malformed_line_inside_gzip_has_its_line_number(spark, tmp_path, capsys):
    run = write(tmp_path, "run.txt.gz", gzip.compress(b"q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 high r\n"))
    qrels = write(tmp_path, "qrels.txt", QRELS)
    assert_refused(capsys, tmp_path, run, qrels, "run.txt.gz:2", "numeric score")


# --- files that are not what they claim ---------------------------------------------------


def test_a_stray_file_in_a_parquet_directory_is_named(spark, tmp_path, capsys):
    directory = tmp_path / "run"
    directory.mkdir()
    table = pa.table({"qid": ["q1"], "docno": ["d1"], "score": [1.0]})
    pq.write_table(table, directory / "part-0.parquet")
    (directory / "notes.txt").write_text("written by hand\n")
    qrels = write(tmp_path, "qrels.txt", QRELS)
    assert_refused(capsys, tmp_path, directory, qrels, "notes.txt: not a Parquet file")


def test_a_symlink_loop_is_an_input_error(spark, tmp_path, capsys):
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    qrels = write(tmp_path, "qrels.txt", QRELS)
    assert_refused(capsys, tmp_path, tmp_path / "a", qrels, "symbolic link loop")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_an_input_error(spark, tmp_path, capsys):
    run = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\n")
    run.chmod(0)
    qrels = write(tmp_path, "qrels.txt", QRELS)
    assert_refused(capsys, tmp_path, run, qrels, "run.txt", "ermission denied")


def test_grades_beyond_the_integer_range_are_input_errors(spark, tmp_path, capsys):
    run = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\n")
    csv = write(tmp_path, "qrels.csv", "qid,docno,rel\nq1,d1,1e20\n")
    assert_refused(capsys, tmp_path, run, csv, "qrels.csv", "'1e20'", "integer")
    parquet = tmp_path / "qrels.parquet"
    pq.write_table(
        pa.table({"qid": ["q1"], "docno": ["d1"], "rel": pa.array([2**64 - 1], pa.uint64())}),
        parquet,
    )
    assert_refused(capsys, tmp_path, run, parquet, "qrels.parquet", "18446744073709551615")


# --- outputs checked before the work ------------------------------------------------------


def test_an_output_under_a_file_is_refused_before_spark_runs(spark, tmp_path, capsys):
    run = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\n")
    qrels = write(tmp_path, "qrels.txt", QRELS)
    blocker = write(tmp_path, "results", "a file where a directory is expected\n")
    code = main(
        [
            *("evaluate", "--run", str(run), "--qrels", str(qrels), "--measures", "P@1"),
            *("--out", str(blocker / "out")),
        ]
    )
    line = capsys.readouterr().err.splitlines()[0]
    assert code == EXIT_INPUT
    assert "results is a file, not a directory" in line, line


def test_too_many_buckets_are_lowered_and_said(spark, tmp_path, capsys):
    run = write(tmp_path, "run.txt", "q1 Q0 d1 1 3.0 r\nq1 Q0 d3 2 1.0 r\n")
    qrels = write(tmp_path, "qrels.txt", QRELS)
    code, err, summary = evaluate(capsys, tmp_path, run, qrels, "--buckets", "100000")
    assert code == 0, err
    assert "buckets lowered from 100000 to 1" in err
    assert measures(summary) == {"P@1": 1.0, "P@2": 0.5, "NumRet": 2.0}
