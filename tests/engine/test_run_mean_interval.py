"""Each run's mean of each measure comes with its 95% confidence interval in
``summary.json`` (``runs.RUN.ci95``): Student's t interval over the queries where the
measure is defined, as scipy computes it from the per-query values the same output
holds; null for a total (``NumRet``) and for fewer than two defined values. The
interval comes from exact sums, so every engine gives the same bits.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sparkeval.cli import main
from sparkeval.errors import EXIT_OK

RUN = """\
q1 Q0 a 1 3.0 r
q1 Q0 b 2 2.0 r
q1 Q0 c 3 1.0 r
q2 Q0 a 1 3.0 r
q2 Q0 d 2 2.0 r
q3 Q0 e 1 1.0 r
q4 Q0 f 1 1.0 r
"""
# q4 has no relevant doc: AP and RR are defined there (0), P@2 too; q5 is in the
# qrels only, so its values are 0 as well
QRELS = """\
q1 0 a 1
q1 0 c 2
q2 0 d 1
q3 0 e 1
q3 0 x 1
q4 0 f 0
q5 0 y 1
"""
MEASURES = "AP,P@2,RR,nDCG@3,NumRet"


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "qrels.txt").write_text(QRELS)
    return tmp_path / "run.txt", tmp_path / "qrels.txt"


def evaluated(inputs: tuple[Path, Path], out: Path, *extra: str) -> dict:
    run, qrels = inputs
    argv = ["evaluate", "--run", str(run), "--qrels", str(qrels), "--measures", MEASURES]
    assert main([*argv, "--out", str(out), *extra]) == EXIT_OK
    return json.loads((out / "summary.json").read_text())


def test_the_interval_is_students_t_over_the_defined_queries(inputs, tmp_path) -> None:
    summary = evaluated(inputs, tmp_path / "out", "--engine", "local")
    block = summary["runs"]["r"]
    values = pd.read_parquet(tmp_path / "out" / "per_query.parquet")
    for measure in ("AP", "P@2", "RR", "nDCG@3"):
        x = values.loc[values["measure"] == measure, "value"].dropna().to_numpy()
        assert len(x) == 5
        low, high = stats.t.interval(0.95, len(x) - 1, loc=np.mean(x), scale=stats.sem(x))
        assert block["ci95"][measure] == pytest.approx([low, high], abs=1e-12)
        assert low < block["measures"][measure] < high
    assert block["ci95"]["NumRet"] is None  # a total, not a mean


def test_fewer_than_two_defined_values_have_no_interval(tmp_path) -> None:
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 1.0 r\n")
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\n")
    summary = evaluated((tmp_path / "run.txt", tmp_path / "qrels.txt"), tmp_path / "out")
    assert summary["runs"]["r"]["ci95"]["AP"] is None


def test_equal_values_have_an_interval_of_width_zero(tmp_path) -> None:
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 1.0 r\nq2 Q0 b 1 1.0 r\nq3 Q0 c 1 1.0 r\n")
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq2 0 b 1\nq3 0 c 1\n")
    summary = evaluated((tmp_path / "run.txt", tmp_path / "qrels.txt"), tmp_path / "out")
    low, high = summary["runs"]["r"]["ci95"]["AP"]
    assert low == high == 1.0 and not math.isnan(low)


@pytest.mark.spark
def test_spark_gives_the_local_engines_interval_to_the_bit(inputs, tmp_path, spark) -> None:
    local = evaluated(inputs, tmp_path / "local", "--engine", "local")
    on_spark = evaluated(inputs, tmp_path / "spark", "--engine", "spark")
    assert on_spark["runs"]["r"]["ci95"] == local["runs"]["r"]["ci95"]
