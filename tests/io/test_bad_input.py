"""Bad input: a non-zero exit, a message naming the file and line (or key), no output."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT

pytestmark = pytest.mark.spark

GOOD_RUN = "q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\nq2 Q0 d1 1 1.0 r\n"
GOOD_QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"


def write(tmp: Path, name: str, text: str) -> str:
    path = tmp / name
    path.write_text(text)
    return str(path)


def run_cli(capsys, tmp: Path, run: str, qrels: str, *extra: str) -> tuple[int, str]:
    code = main(
        [
            "evaluate",
            "--run",
            run,
            "--qrels",
            qrels,
            "--measures",
            "P@5,AP",
            "--out",
            str(tmp / "out"),
            *extra,
        ]
    )
    return code, capsys.readouterr().err


def assert_no_output(tmp: Path) -> None:
    assert not (tmp / "out").exists()
    assert not [p for p in tmp.iterdir() if p.name.startswith(".out")], "staging left behind"


@pytest.mark.parametrize(
    ("run_text", "qrels_text", "fragments"),
    [
        (
            "q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2\n",
            GOOD_QRELS,
            ["run.txt:2", "malformed line", "'q1 Q0 d2 2'"],
        ),
        (
            "q1 Q0 d1 1 3.0 r\n# note\nq1 Q0 d2 2 high r\n",
            GOOD_QRELS,
            ["run.txt:3", "numeric score"],
        ),
        (
            "q1 Q0 d1 1 3.0 r\nq1 Q0 d1 2 2.0 r\n",
            GOOD_QRELS,
            ["run r", "query q1", "duplicate doc d1"],
        ),
        (GOOD_RUN, "q1 0 d1 1\nq1 0 d1 0\n", ["qrels", "query q1", "duplicate doc d1"]),
        (GOOD_RUN, "q1 0 d1 1\nq1 0 d2 yes\n", ["qrels.txt:2", "integer relevance"]),
        (GOOD_RUN, "q1 0 d1 1\nq1 0 d2 1.5\n", ["qrels.txt:2", "integer relevance"]),
        ("q1 Q0 d1 1 nan r\n", GOOD_QRELS, ["query q1 doc d1", "NaN"]),
        ("", GOOD_QRELS, ["run.txt", "no run lines"]),
        ("# only a comment\n", GOOD_QRELS, ["run.txt", "no run lines"]),
        (GOOD_RUN, "", ["qrels.txt", "no qrels lines"]),
    ],
)
def test_bad_trec_input(spark, tmp_path, capsys, run_text, qrels_text, fragments) -> None:
    code, err = run_cli(
        capsys,
        tmp_path,
        write(tmp_path, "run.txt", run_text),
        write(tmp_path, "qrels.txt", qrels_text),
    )
    assert code == EXIT_INPUT, err
    for fragment in fragments:
        assert fragment in err, err
    assert_no_output(tmp_path)


def test_missing_column_in_csv(spark, tmp_path, capsys) -> None:
    run = write(tmp_path, "run.csv", "qid,docno,weight\nq1,d1,1\n")
    code, err = run_cli(capsys, tmp_path, run, write(tmp_path, "qrels.txt", GOOD_QRELS))
    assert code == EXIT_INPUT
    assert "run.csv: missing column 'score'" in err and "columns are: qid, docno, weight" in err
    assert_no_output(tmp_path)


def test_non_numeric_score_in_csv_names_key(spark, tmp_path, capsys) -> None:
    run = write(tmp_path, "run.csv", "qid,docno,score\nq1,d1,0.5\nq1,d2,abc\n")
    code, err = run_cli(capsys, tmp_path, run, write(tmp_path, "qrels.txt", GOOD_QRELS))
    assert code == EXIT_INPUT
    assert "run.csv: query q1 doc d2: column score value 'abc' is not a number" in err


def test_missing_path(spark, tmp_path, capsys) -> None:
    code, err = run_cli(
        capsys, tmp_path, str(tmp_path / "nope.txt"), write(tmp_path, "q.txt", GOOD_QRELS)
    )
    assert code == EXIT_INPUT
    assert "nope.txt: no such file or directory" in err


@pytest.mark.parametrize(
    ("measures", "fragment"),
    [
        (
            "nDGC@10",
            "unknown measure 'nDGC@10'; did you mean nDCG@10, RnDCG or DCG@10? "
            "('sparkeval measures' lists every measure)",
        ),
        ("P@0", "cutoff must be >= 1"),
        ("P@x", "not a whole number"),
        ("P", "needs a cutoff"),
    ],
)
def test_bad_measures_fail_before_spark_work(tmp_path, capsys, measures, fragment) -> None:
    code = main(
        [
            "evaluate",
            "--run",
            write(tmp_path, "run.txt", GOOD_RUN),
            "--qrels",
            write(tmp_path, "qrels.txt", GOOD_QRELS),
            "--measures",
            measures,
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert code == EXIT_INPUT
    assert "key 'measures'" in err and fragment in err
    assert len(err.strip().splitlines()) == 1 and len(err) < 200  # one short line
    assert_no_output(tmp_path)


def test_existing_output_needs_overwrite(spark, tmp_path, capsys) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("previous results")
    code, err = run_cli(
        capsys,
        tmp_path,
        write(tmp_path, "run.txt", GOOD_RUN),
        write(tmp_path, "qrels.txt", GOOD_QRELS),
    )
    assert code == EXIT_INPUT and "--overwrite" in err
    assert (tmp_path / "out" / "keep.txt").read_text() == "previous results"


def test_failed_rerun_keeps_previous_output(spark, tmp_path, capsys) -> None:
    qrels = write(tmp_path, "qrels.txt", GOOD_QRELS)
    code, _ = run_cli(capsys, tmp_path, write(tmp_path, "run.txt", GOOD_RUN), qrels)
    assert code == 0
    before = (tmp_path / "out" / "summary.json").read_text()
    bad = write(tmp_path, "run.txt", GOOD_RUN + "q3 Q0 d9 1 oops r\n")
    code, err = run_cli(capsys, tmp_path, bad, qrels, "--overwrite")
    assert code == EXIT_INPUT and "run.txt:4" in err
    assert (tmp_path / "out" / "summary.json").read_text() == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


def test_output_over_input_is_refused(tmp_path, capsys) -> None:
    data = tmp_path / "data"
    data.mkdir()
    run = write(data, "run.txt", GOOD_RUN)
    code = main(
        [
            "evaluate",
            "--run",
            run,
            "--qrels",
            write(data, "q.txt", GOOD_QRELS),
            "--measures",
            "AP",
            "--out",
            str(data),
            "--overwrite",
        ]
    )
    assert code == EXIT_INPUT
    assert "overlaps the input" in capsys.readouterr().err
