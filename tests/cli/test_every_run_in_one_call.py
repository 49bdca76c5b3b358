"""``diversity`` and ``similar-users`` on a file of three runs: one call evaluates every
run (one Spark session, one read) with the values of three ``--run-id`` calls.

The call on every run runs as users run it (a subprocess, a JVM of its own); the calls
with ``--run-id`` run in this process, on the tests' session.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sparkeval.cli import main

pytestmark = pytest.mark.spark

RUNS = ("A", "B", "C")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """Three runs in one table (run C has other users), training data, item features."""
    directory = tmp_path_factory.mktemp("runs")
    rng = np.random.default_rng(7)
    rows = []
    for run in RUNS:
        users = [f"u{i}" for i in (range(14) if run != "C" else range(5, 16))]
        for user in users:
            items = rng.choice(25, size=rng.integers(2, 7), replace=False)
            for item in items:  # scores with ties, which the top-k cut breaks by item
                rows.append((run, user, f"i{item}", float(rng.choice([1.0, 2.0, 3.0]))))
    columns = ["run_id", "user_id", "item_id", "score"]
    pd.DataFrame(rows, columns=columns).to_parquet(directory / "runs.parquet")
    pairs = {(f"u{rng.integers(16)}", f"i{rng.integers(25)}") for _ in range(90)}
    train = pd.DataFrame(sorted(pairs), columns=["user_id", "item_id"])
    train.to_parquet(directory / "train.parquet")
    vectors = [rng.integers(0, 2, 6).astype(float) for _ in range(25)]
    features = pd.DataFrame({"item_id": [f"i{i}" for i in range(25)], "features": vectors})
    features.to_parquet(directory / "features.parquet")
    return directory


def _call(directory: Path, argv: list[str], out: str, monkeypatch, capsys) -> tuple[dict, str]:
    """Run the CLI in this process (the tests' session); returns the summary written and
    stdout."""
    monkeypatch.chdir(directory)
    capsys.readouterr()
    assert main([*argv, "--out", out]) == 0
    return json.loads((directory / out / "summary.json").read_text()), capsys.readouterr().out


def _summary_rows(directory: Path, out: str, run: str) -> list[tuple[str, float]]:
    table = pd.read_parquet(directory / out / "summary.parquet")
    return sorted(
        zip(*(table[table["run_id"] == run][c] for c in ("measure", "value")), strict=True)
    )


def _call_here(directory: Path, argv: list[str], out: str, monkeypatch) -> dict:
    """Run the command in this process (the tests' session); returns its summary."""
    monkeypatch.chdir(directory)
    assert main([*argv, "--out", out]) == 0
    return json.loads((directory / out / "summary.json").read_text())


def _every_run_then_each(
    directory: Path, argv: list[str], name: str, monkeypatch, capsys
) -> tuple[dict, str, dict]:
    """The call on every run (``OUT`` = ``name``), then one per run (``name_X``)."""
    every, stdout = _call(directory, argv, name, monkeypatch, capsys)
    each = {
        run: _call_here(directory, [*argv, "--run-id", run], f"{name}_{run}", monkeypatch)
        for run in RUNS
    }
    return every, stdout, each


def _same_run_entries(every: dict, each: dict) -> None:
    """Each run's entry of the three-run summary is the one-run call's, which has its
    entries at the top too; each one-run call is an evaluation of its own."""
    assert list(every["runs"]) == list(RUNS) and every["run_id"] is None
    for run, alone in each.items():
        assert list(alone["runs"]) == [run] and alone["run_id"] == run
        assert every["runs"][run] == alone["runs"][run]
        assert {key: alone[key] for key in alone["runs"][run]} == alone["runs"][run]
    assert not set(every["runs"]["A"]) & set(every)  # several runs: no copy at the top


def _same_summary_rows(directory: Path, name: str) -> None:
    ids = set()
    for run in RUNS:
        rows = _summary_rows(directory, name, run)
        assert rows and rows == _summary_rows(directory, f"{name}_{run}", run)
        ids.add(
            pd.read_parquet(directory / f"{name}_{run}" / "summary.parquet")["evaluation_id"][0]
        )
    assert len(ids) == len(RUNS)  # one run of the input is an evaluation of its own


def test_diversity_measures_every_run_as_three_single_run_calls(inputs, spark, monkeypatch, capsys):
    argv = ["diversity", "--run", "runs.parquet", "--train", "train.parquet", "--k", "4"]
    argv += ["--item-features", "features.parquet"]
    every, stdout, each = _every_run_then_each(inputs, argv, "div", monkeypatch, capsys)
    _same_run_entries(every, each)
    _same_summary_rows(inputs, "div")
    assert every["runs"]["C"]["inter_user"]["users"] == 11
    assert all(value is not None for value in every["runs"]["B"]["serendipity"].values())
    table = pd.read_parquet(inputs / "div" / "per_user.parquet")
    assert list(table.columns)[:2] == ["run_id", "query_id"]
    assert table[["run_id", "query_id"]].equals(
        table[["run_id", "query_id"]].sort_values(["run_id", "query_id"])
    )
    for run in RUNS:
        alone = pd.read_parquet(inputs / f"div_{run}" / "per_user.parquet")
        assert set(alone["run_id"]) == {run}
        ours = table[table["run_id"] == run].reset_index(drop=True)
        pd.testing.assert_frame_equal(ours, alone, check_exact=True)
    lines = stdout.splitlines()
    assert lines[0] == f"diversity: 3 runs; wrote {inputs / 'div'}"  # absolute, given as div
    assert [line.split(":")[0] for line in lines[1:4]] == [f"  run {run}" for run in RUNS]


def test_similar_users_searches_every_run_as_three_single_run_calls(
    inputs, spark, monkeypatch, capsys
):
    argv = ["similar-users", "--run", "runs.parquet", "--threshold", "0.3", "--k", "4"]
    every, stdout, each = _every_run_then_each(inputs, argv, "su", monkeypatch, capsys)
    _same_run_entries(every, each)
    _same_summary_rows(inputs, "su")
    assert every["runs"]["C"]["counts"]["users"] == 11
    pairs = pd.read_parquet(inputs / "su" / "pairs.parquet")
    assert list(pairs.columns) == ["run_id", "user_a", "user_b", "jaccard"]
    assert pairs["run_id"].is_monotonic_increasing
    for run in RUNS:
        alone = pd.read_parquet(inputs / f"su_{run}" / "pairs.parquet")
        ours = pairs[pairs["run_id"] == run].reset_index(drop=True)
        assert len(ours) == every["runs"][run]["counts"]["pairs"] > 0
        pd.testing.assert_frame_equal(ours, alone, check_exact=True)
    lines = stdout.splitlines()
    assert lines[0].startswith("similar-users: 3 runs, Jaccard >= 0.3")
    assert [line.split(":")[0] for line in lines[1:4]] == [f"  run {run}" for run in RUNS]
