"""``--append-to`` targets are checked before any work: nothing is replaced or lost when
one cannot take the summary rows."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT
from tests.reliability.test_metrics_over_time import QRELS, RUN, evaluate

pytestmark = pytest.mark.spark


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "qrels.txt").write_text(QRELS)
    return tmp_path


def _error(capsys) -> str:
    lines = [line for line in capsys.readouterr().err.splitlines() if ": error:" in line]
    assert lines
    return lines[0]


def test_an_append_target_inside_out_is_refused_before_the_output_is_replaced(
    spark, files: Path, capsys
) -> None:
    assert evaluate(files, "out", "AP") == 0
    before = (files / "out" / "summary.json").read_bytes()
    history = str(files / "out" / "history")
    assert evaluate(files, "out", "AP,P@1", "--overwrite", "--append-to", history) == EXIT_INPUT
    line = _error(capsys)
    assert "--append-to" in line and "overlaps --out" in line
    assert (files / "out" / "summary.json").read_bytes() == before
    assert not (files / "out" / "history").exists()


def test_an_append_target_that_is_an_input_is_refused(spark, files: Path, capsys) -> None:
    run = str(files / "run.txt")
    argv = ["evaluate", "--run", run, "--qrels", str(files / "qrels.txt"), "--measures", "AP"]
    assert main([*argv, "--out", str(files / "o"), "--append-to", run]) == EXIT_INPUT
    assert "overlaps the input" in _error(capsys)
    assert not (files / "o").exists()


def test_a_plain_file_as_append_target_is_refused_before_the_output_is_replaced(
    spark, files: Path, capsys
) -> None:
    assert evaluate(files, "out", "AP") == 0
    before = (files / "out" / "summary.json").read_bytes()
    (files / "history.txt").write_text("not a dataset\n")
    target = str(files / "history.txt")
    assert evaluate(files, "out", "P@1", "--overwrite", "--append-to", target) == EXIT_INPUT
    assert "a file, not a Parquet dataset" in _error(capsys)
    assert (files / "out" / "summary.json").read_bytes() == before
    assert (files / "history.txt").read_text() == "not a dataset\n"


def test_a_dataset_of_other_rows_is_refused_and_left_as_it_was(spark, files: Path, capsys) -> None:
    other = files / "other"
    other.mkdir()
    pq.write_table(pa.table({"day": ["2026-11-01"], "clicks": [3]}), other / "part-0.parquet")
    assert evaluate(files, "out", "AP", "--append-to", str(other)) == EXIT_INPUT
    assert "other columns than sparkeval's summary rows" in _error(capsys)
    assert sorted(p.name for p in other.iterdir()) == ["part-0.parquet"]
    assert not (files / "out").exists()
