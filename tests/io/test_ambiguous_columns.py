"""Columns whose names differ only in case (``qid`` and ``QID``) are refused: Spark
reads them as one name, and picking either would evaluate the wrong ids silently."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest

from sparkeval.errors import EXIT_INPUT, InputError
from sparkeval.io.columns import resolve_columns
from tests.jobs import CLI, job_env


def test_column_resolution_refuses_names_differing_only_in_case() -> None:
    with pytest.raises(InputError, match=r"run\.csv: columns 'qid' and 'QID' differ only in case"):
        resolve_columns(["qid", "QID", "docno", "score"], "run", {}, "run.csv")


@pytest.mark.slow
def test_both_readers_refuse_a_parquet_file_with_such_columns(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {"qid": ["q1", "q2"], "QID": ["x", "y"], "doc_id": ["d1", "d1"], "score": [1.0, 2.0]}
    )
    frame.to_parquet(tmp_path / "run.parquet")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    for reader in ("auto", "spark"):
        argv = [*CLI, "evaluate", "--run", "run.parquet", "--qrels", "qrels.txt",
                "--measures", "AP", "--out", f"out-{reader}", "--reader", reader]  # fmt: skip
        result = subprocess.run(argv, cwd=tmp_path, env=job_env(), capture_output=True, text=True)
        assert result.returncode == EXIT_INPUT, (reader, result.stderr[-2000:])
        last = result.stderr.strip().splitlines()[-1]
        assert last.startswith("sparkeval evaluate: error: run.parquet: "), last
        assert not (tmp_path / f"out-{reader}").exists()
