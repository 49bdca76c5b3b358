"""Paths in log lines and printed results are absolute, whatever the working directory
(a scheduler's log read later must say where things went)."""

from __future__ import annotations

from sparkeval.cli import main


def test_relative_out_and_append_to_are_logged_absolute(tmp_path, monkeypatch, capsys) -> None:
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 2 bm25\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    monkeypatch.chdir(tmp_path)
    argv = ["evaluate", "--run", "run.txt", "--qrels", "qrels.txt", "--measures", "AP"]
    assert main([*argv, "--out", "out", "--append-to", "./history"]) == 0
    err = capsys.readouterr().err
    assert f"results in {tmp_path / 'out'} (" in err, err
    assert f"summary rows in {tmp_path / 'history'}/evaluation_id=" in err, err
