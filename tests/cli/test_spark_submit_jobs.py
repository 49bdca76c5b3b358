"""Every command runs as a ``spark-submit`` job from its ``jobs/`` entry with ``--config``.

Each job is the real ``spark-submit`` of this environment on a local master, given a
YAML config file (relative paths in it are relative to the file), as a scheduled
pipeline step runs it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from sparkeval.commands import COMMAND_MODULES
from tests.conftest import ROOT
from tests.jobs import BIN, collection, run_job

pytestmark = [pytest.mark.spark, pytest.mark.slow]

#: what each command's config says (beyond ``out``), and the files it must write
JOBS: dict[str, tuple[str, tuple[str, ...]]] = {
    "evaluate": (
        "run: [run_strong.txt, run_weak.txt]\nqrels: qrels.txt\nmeasures: [AP, nDCG@10]\n",
        ("per_query.parquet", "summary.json"),
    ),
    "compare": (
        "per_query: evaluated\nbaseline: weak\nmeasures: [AP]\npermutations: 50\n"
        "bootstrap: 50\nno_plots: true\n",
        ("comparison.parquet", "summary.json", "report.md"),
    ),
    "rank-distance": (
        "runs: [run_strong.txt, run_weak.txt]\nbaseline: weak\n",
        ("summary.json",),
    ),
    "rating-errors": (
        "predictions: predictions.csv\ntruth: truth.csv\nmeasures: [RMSE, MAE]\n",
        ("per_user.parquet", "summary.json"),
    ),
    "similar-users": ("run: recs.csv\nthreshold: 0.5\n", ("pairs.parquet", "summary.json")),
    "near-duplicates": (
        "docs: docs.csv\nmethod: minhash\nthreshold: 0.5\n",
        ("pairs.parquet", "clusters.parquet", "summary.json"),
    ),
    "diversity": ("run: recs.csv\ntrain: recs.csv\nk: 2\n", ("per_user.parquet", "summary.json")),
    "demo": ("queries: 10\n", ("data/qrels.txt", "results/summary.json")),
    "measures": ("format: markdown\nnames: [AP]\n", ()),
    "jvm-archive": ("status: true\n", ()),
    "pack": ("requirements: true\n", ()),
}


def test_every_command_has_a_job_entry_and_is_listed_here() -> None:
    names = {module.rsplit(".", 1)[1] for module in COMMAND_MODULES}
    assert {p.stem for p in (ROOT / "jobs").glob("*.py")} == names
    assert {name.replace("-", "_") for name in JOBS} == names


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """A small collection and tables every command can read, and evaluate's results."""
    directory = tmp_path_factory.mktemp("inputs")
    collection(directory)
    pd.DataFrame(
        {"user": ["u1", "u1", "u2"], "item": ["a", "b", "a"], "prediction": [4.0, 2.5, 3.0]}
    ).to_csv(directory / "predictions.csv", index=False)
    pd.DataFrame(
        {"user": ["u1", "u1", "u2"], "item": ["a", "b", "a"], "rating": [5.0, 2.0, 3.0]}
    ).to_csv(directory / "truth.csv", index=False)
    pd.DataFrame(
        {
            "user_id": ["u1", "u1", "u2", "u2", "u3"],
            "item_id": ["a", "b", "a", "b", "c"],
            "score": [0.9, 0.8, 0.7, 0.6, 0.5],
        }
    ).to_csv(directory / "recs.csv", index=False)
    text = "the quick brown fox jumps over the lazy dog and runs far away from home"
    pd.DataFrame(
        {"doc_id": ["d1", "d2", "d3"], "text": [text, text + " today", "something else entirely"]}
    ).to_csv(directory / "docs.csv", index=False)
    evaluated = submit("evaluate", directory, "evaluated")
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    (directory / "evaluated.stdout").write_text(evaluated.stdout)
    (directory / "evaluated.stderr").write_text(evaluated.stderr)
    return directory


def submit(command: str, directory: Path, out: str):
    """``spark-submit jobs/NAME.py --config FILE`` with the command's config."""
    text, _ = JOBS[command]
    config = directory / f"{out}.yaml"
    if command not in ("measures", "jvm-archive", "pack"):
        text += f"out: {out}\n"
    config.write_text(text)
    entry = ROOT / "jobs" / f"{command.replace('-', '_')}.py"
    argv = [str(BIN / "spark-submit"), "--master", "local[2]", str(entry), "--config", str(config)]
    return run_job(argv, directory)


@pytest.mark.parametrize("command", [c for c in JOBS if c != "evaluate"])
def test_each_command_runs_under_spark_submit_with_a_config_file(inputs, command) -> None:
    result = submit(command, inputs, f"out-{command}")
    assert result.returncode == 0, result.stderr[-3000:]
    out = inputs / f"out-{command}"
    for name in JOBS[command][1]:
        assert (out / name).exists(), f"{command} wrote no {name}: {sorted(out.rglob('*'))}"
    if (out / "summary.json").exists():
        assert json.loads((out / "summary.json").read_text())
    if command == "measures":
        assert result.stdout.startswith("|"), result.stdout[:200]
    if command == "jvm-archive":
        assert "JVM archive" in result.stdout
    if command == "pack":
        assert any(line.startswith("numpy==") for line in result.stdout.splitlines())


def test_evaluate_under_spark_submit_wrote_both_runs(inputs) -> None:
    summary = json.loads((inputs / "evaluated" / "summary.json").read_text())
    assert set(summary["runs"]) == {"strong", "weak"}


def test_under_spark_submit_stdout_holds_the_results_alone(inputs) -> None:
    """Spark's launcher merges the Python driver's stderr into stdout: status lines go
    through the JVM's log instead, and Spark's INFO lines stop once the job runs (the
    evaluate job of the ``inputs`` fixture)."""
    stdout = (inputs / "evaluated.stdout").read_text()
    stderr = (inputs / "evaluated.stderr").read_text()
    lines = stdout.strip().splitlines()
    assert lines and all("\tall\t" in line or "\tq" in line for line in lines), lines[:5]
    assert "INFO sparkeval: results in" in stderr
    after_start = stderr.split("INFO sparkeval: evaluating", 1)[1]
    assert " INFO " not in after_start.replace("INFO sparkeval:", "")
