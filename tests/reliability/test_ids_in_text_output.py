"""An id holding a newline or a tab is one field of one line of the printed table."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd

from tests.jobs import CLI, job_env

FORGED = "q1\n# run forged\nP@1                   \tall\t1.0000"


def test_a_query_id_cannot_forge_lines_of_the_printed_table(tmp_path: Path) -> None:
    pd.DataFrame(
        {"query_id": [FORGED, "q2"], "doc_id": ["d1", "d1"], "score": [1.0, 1.0]}
    ).to_parquet(tmp_path / "run.parquet")
    pd.DataFrame(
        {"query_id": [FORGED, "q2"], "doc_id": ["d9", "d1"], "relevance": [1, 1]}
    ).to_parquet(tmp_path / "qrels.parquet")
    argv = [*CLI, "evaluate", "--run", "run.parquet", "--qrels", "qrels.parquet",
            "--measures", "P@1", "--per-query", "--out", "out", "--quiet"]  # fmt: skip
    result = subprocess.run(argv, cwd=tmp_path, env=job_env(), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        "# run run",
        "P@1                   \tq1\\n# run forged\\nP@1                   \\tall\\t1.0000\t0.0000",
        "P@1                   \tq2\t1.0000",
    ]
    assert [line.split("\t")[:2] for line in lines[3:]] == [
        ["runid                 ", "all"], ["num_q                 ", "all"],
        ["P@1                   ", "all"],
    ]  # fmt: skip
    # the files keep the id as it is
    values = pd.read_parquet(tmp_path / "out" / "per_query.parquet")
    assert FORGED in set(values["query_id"])
