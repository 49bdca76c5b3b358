"""The peers' measures that have families of their own (ranx's ``hits@k``, RePlay's
``RocAuc@k``) and trec_eval's bare names, on the local engine and on Spark: the same
``per_query.parquet`` bytes and the same summary values, and the hand-derived values."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_OK

#: q1: d3 (relevant), d1, d2 (relevant), d4; q2: d5, d6 (relevant); q3 judged, not run
RUN = "".join(
    f"{q} Q0 {d} {rank} {score} r\n"
    for q, d, rank, score in [("q1", "d3", 1, 4), ("q1", "d1", 2, 3), ("q1", "d2", 3, 2),
                              ("q1", "d4", 4, 1), ("q2", "d5", 1, 2), ("q2", "d6", 2, 1)]
)  # fmt: skip
QRELS = "q1 0 d3 1\nq1 0 d2 2\nq1 0 d1 0\nq2 0 d6 1\nq3 0 d9 1\n"
MEASURES = "Hits@2,hits@3,RocAuc@3,success"
#: by hand, per query: Hits@2 (q1: d3; q2: d6), Hits@3 (q1: d3, d2), RocAuc@3 (q1: hit,
#: miss, hit: 1 - 1 / (2 * 1); q2: miss, hit: 1 - 1 / 1), success_1, _5, _10; q3 scores 0
EXPECTED = {
    "Hits@2": {"q1": 1.0, "q2": 1.0, "q3": 0.0},
    "Hits@3": {"q1": 2.0, "q2": 1.0, "q3": 0.0},
    "RocAuc@3": {"q1": 0.5, "q2": 0.0, "q3": 0.0},
    "Success@1": {"q1": 1.0, "q2": 0.0, "q3": 0.0},
    "Success@5": {"q1": 1.0, "q2": 1.0, "q3": 0.0},
    "Success@10": {"q1": 1.0, "q2": 1.0, "q3": 0.0},
}


def _evaluate(directory: Path, out: str, engine: str) -> Path:
    argv = [
        "evaluate", "--run", str(directory / "run.txt"), "--qrels", str(directory / "qrels.txt"),
        "--measures", MEASURES, "--per-query", "--out", str(directory / out), "--engine", engine,
    ]  # fmt: skip
    assert main(argv) == EXIT_OK
    return directory / out


def _summary_values(out: Path) -> dict:
    """The runs' values and the profile's definitions of ``summary.json``."""
    summary = json.loads((out / "summary.json").read_text())
    return {"runs": summary["runs"], "compat": summary["compat"]}


@pytest.mark.spark
def test_the_local_engine_writes_the_bytes_spark_writes(spark, tmp_path: Path) -> None:
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "qrels.txt").write_text(QRELS)
    local = _evaluate(tmp_path, "local", "local")
    on_spark = _evaluate(tmp_path, "spark", "spark")
    rows = pd.read_parquet(local / "per_query.parquet")
    got = {(r.measure, r.query_id): r.value for r in rows.itertuples(index=False)}
    assert got == {(m, q): v for m, by_query in EXPECTED.items() for q, v in by_query.items()}
    local_files = sorted(p.relative_to(local) for p in (local / "per_query.parquet").rglob("*"))
    spark_files = sorted(
        p.relative_to(on_spark) for p in (on_spark / "per_query.parquet").rglob("*")
    )
    assert local_files == spark_files
    for name in local_files:
        if (local / name).is_file():
            assert (local / name).read_bytes() == (on_spark / name).read_bytes(), name
    assert _summary_values(local) == _summary_values(on_spark)
