"""End to end as users run it: the console script, spark-submit and the demo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import ROOT, shared_file
from tests.trec_output import parse_table

pytestmark = [pytest.mark.spark, pytest.mark.slow]

BIN = Path(sys.executable).parent


def env() -> dict[str, str]:
    out = dict(os.environ)
    out["PYSPARK_PYTHON"] = sys.executable
    out["PYSPARK_DRIVER_PYTHON"] = sys.executable
    return out


def run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env(), capture_output=True, text=True, timeout=600)


def test_console_script_matches_trec_eval(tmp_path) -> None:
    qrels = shared_file("conformance", "trec_eval", "qrels.test")
    results = shared_file("conformance", "trec_eval", "results.test")
    expected = parse_table(shared_file("conformance", "trec_eval", "out.test").read_text())
    proc = run(
        [
            str(BIN / "sparkeval"),
            "evaluate",
            "--run",
            str(results),
            "--qrels",
            str(qrels),
            "--measures",
            "map,P_10,ndcg_cut_10,recip_rank,num_rel_ret",
            "--names",
            "trec",
            "--master",
            "local[2]",
            "--out",
            str(tmp_path / "out"),
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    ours = parse_table(proc.stdout)
    for key in (("map", "all"), ("P_10", "all"), ("num_rel_ret", "all"), ("num_q", "all")):
        assert ours[key] == expected[key]
    assert ours[("ndcg_cut_10", "all")] == "0.3016" and ours[("recip_rank", "all")] == "0.4064"
    per_query = pd.read_parquet(tmp_path / "out" / "per_query.parquet")
    assert list(per_query.columns) == ["run_id", "query_id", "measure", "value"]
    assert len(per_query) == 3 * 5
    assert "results in" in proc.stderr


def test_bad_input_exit_code_from_the_shell(tmp_path) -> None:
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 x r\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    proc = run(
        [
            str(BIN / "sparkeval"),
            "evaluate",
            "--run",
            "run.txt",
            "--qrels",
            "qrels.txt",
            "--measures",
            "AP",
            "--out",
            "out",
            "--master",
            "local[1]",
        ],
        tmp_path,
    )
    assert proc.returncode == 2
    assert "run.txt:1: malformed line 'q1 Q0 d1 1 x r'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_spark_submit_with_config_equals_cli(tmp_path) -> None:
    data = tmp_path / "data"
    demo = run(
        [str(BIN / "sparkeval"), "demo", "--out", str(tmp_path), "--data-only", "--queries", "40"],
        tmp_path,
    )
    assert demo.returncode == 0, demo.stderr
    conf = tmp_path / "job.yaml"
    conf.write_text(
        "run: [data/run_strong.txt, data/run_weak.txt]\n"
        "qrels: data/qrels.txt\n"
        "measures: [official, nDCG@10]\n"
        "out: submitted\n"
        "spark: {spark.sql.shuffle.partitions: '3'}\n"
    )
    submitted = run(
        [
            str(BIN / "spark-submit"),
            "--master",
            "local[2]",
            str(ROOT / "jobs" / "evaluate.py"),
            "--config",
            str(conf),
        ],
        tmp_path,
    )
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    direct = run(
        [
            str(BIN / "sparkeval"),
            "evaluate",
            "--run",
            str(data / "run_strong.txt"),
            "--run",
            str(data / "run_weak.txt"),
            "--qrels",
            str(data / "qrels.txt"),
            "--measures",
            "official,nDCG@10",
            "--out",
            str(tmp_path / "direct"),
        ],
        tmp_path,
    )
    assert direct.returncode == 0, direct.stderr[-3000:]
    a = json.loads((tmp_path / "submitted" / "summary.json").read_text())
    b = json.loads((tmp_path / "direct" / "summary.json").read_text())
    assert a["runs"] == b["runs"]
    assert set(a["runs"]) == {"strong", "weak"}
    assert a["runs"]["strong"]["measures"]["nDCG@10"] > a["runs"]["weak"]["measures"]["nDCG@10"]
