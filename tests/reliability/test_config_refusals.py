"""Values the commands cannot use are exit 2 with one line naming the option, before
Spark starts (no JVM, nothing written)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT

CASES = {
    "compare negative seed": (
        ["compare", "--per-query", "eval", "--baseline", "b", "--seed", "-1"],
        "--seed must be a whole number from 0 to 2^63-1, got -1",
    ),
    "compare zero bootstrap": (
        ["compare", "--per-query", "eval", "--baseline", "b", "--bootstrap", "0"],
        "--bootstrap must be >= 1, got 0",
    ),
    "compare alpha of one": (
        ["compare", "--per-query", "eval", "--baseline", "b", "--alpha", "1"],
        "--alpha must lie in (0, 1), got 1.0",
    ),
    "diversity negative seed": (
        ["diversity", "--run", "lists.parquet", "--seed", "-3"],
        "--seed must be a whole number from 0 to 2^32-1, got -3",
    ),
    "similar-users seed beyond MinHash's": (
        ["similar-users", "--run", "lists.parquet", "--threshold", "0.5", "--seed", "4294967296"],
        "--seed must be a whole number from 0 to 2^32-1, got 4294967296",
    ),
    "near-duplicates negative seed": (
        ["near-duplicates", "--docs", "docs.parquet", "--threshold", "0.5", "--seed", "-1"],
        "--seed must be a whole number from 0 to 2^32-1, got -1",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_value_the_command_cannot_use_is_one_exit_2_line(
    case: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    argv, message = CASES[case]
    monkeypatch.chdir(tmp_path)
    code = main([*argv, "--out", "out"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == EXIT_INPUT
    assert len(err) == 1 and err[0].endswith(message), err
    assert list(tmp_path.iterdir()) == []
