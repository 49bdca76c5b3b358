"""``evaluate --print-as table``: a run × measure table on stdout (values by hand)."""

from __future__ import annotations

from pathlib import Path

from sparkeval.cli import main


def _inputs(tmp_path: Path) -> list[str]:
    (tmp_path / "bm25.txt").write_text("q1 Q0 d1 1 2 bm25\nq1 Q0 d2 2 1 bm25\nq2 Q0 d3 1 1 bm25\n")
    (tmp_path / "dense.txt").write_text("q1 Q0 d2 1 2 dense\nq1 Q0 d1 2 1 dense\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d3 1\n")
    return [
        "evaluate", "--run", str(tmp_path / "bm25.txt"), "--run", str(tmp_path / "dense.txt"),
        "--qrels", str(tmp_path / "qrels.txt"), "--measures", "P@1,NumRet",
        "--out", str(tmp_path / "out"), "--quiet", "--print-as", "table",
    ]  # fmt: skip


def test_a_row_per_run_and_a_column_per_measure(tmp_path, capsys) -> None:
    assert main(_inputs(tmp_path)) == 0
    # bm25: q1 ranks d1 (relevant) first, q2 d3: P@1 1 and 1; 3 docs retrieved.
    # dense: q1 ranks d2 first (P@1 0); q2 retrieved nothing (P@1 0): mean 0
    assert capsys.readouterr().out.splitlines() == [
        "run_id\tquery_id\tnum_q\tP@1\tNumRet",
        "bm25\tall\t2\t1.0000\t3",
        "dense\tall\t2\t0.0000\t2",
    ]


def test_per_query_rows_come_before_each_runs_all_row(tmp_path, capsys) -> None:
    assert main([*_inputs(tmp_path), "--per-query"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "run_id\tquery_id\tnum_q\tP@1\tNumRet"
    assert lines[1:4] == [
        "bm25\tq1\t1\t1.0000\t2",
        "bm25\tq2\t1\t1.0000\t1",
        "bm25\tall\t2\t1.0000\t3",
    ]
    assert lines[-1] == "dense\tall\t2\t0.0000\t2"
    assert lines[4] == "dense\tq1\t1\t0.0000\t2"
