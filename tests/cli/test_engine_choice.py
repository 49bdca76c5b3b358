"""Where a command with a local engine runs when its summary rows go to a catalog table.

``--append-to db.tbl`` writes through a Spark session, whatever the command: on small
local files ``auto`` must run the command on Spark (not fail after the work), and
``--engine local`` must refuse it by name before reading anything. An ``--append-to``
directory stays local. No JVM starts here: the choice is made from the config.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from sparkeval.commands import COMMAND_MODULES
from sparkeval.errors import ConfigError

#: each command with a local engine, and the options of a small local run of it
SMALL_RUNS = {
    "evaluate": {"run": ["run.txt"], "qrels": "qrels.txt", "measures": ["AP"]},
    "rating-errors": {"predictions": "pred.csv", "truth": "truth.csv"},
    "rank-distance": {"runs": ["run.txt"], "baseline": "a"},
    "compare": {"per_query": "pq.parquet", "baseline": "a"},
    "similar-users": {"run": "run.parquet", "threshold": 0.5},
    "near-duplicates": {"docs": "docs.parquet", "threshold": 0.5},
    "diversity": {"run": "run.parquet"},
}


def _commands_with_a_local_engine() -> dict:
    found = {}
    for module in COMMAND_MODULES:
        command = importlib.import_module(module).COMMAND
        if command.local is not None:
            found[command.name] = command
    return found


def test_every_command_with_a_local_engine_is_checked_here() -> None:
    assert set(_commands_with_a_local_engine()) == set(SMALL_RUNS)


def _config(command, tmp_path: Path, engine: str, append_to: str):
    for name in ("run.txt", "qrels.txt", "pred.csv", "truth.csv"):
        (tmp_path / name).write_text("x\n")
    for name in ("pq.parquet", "run.parquet", "docs.parquet"):
        (tmp_path / name).write_bytes(b"PAR1")
    values = {key: _under(tmp_path, key, value) for key, value in SMALL_RUNS[command.name].items()}
    return command.config.load(
        **values, out=str(tmp_path / "out"), engine=engine, append_to=append_to
    )


#: the options that name input files
PATH_KEYS = frozenset({"run", "runs", "qrels", "predictions", "truth", "per_query", "docs"})


def _under(directory: Path, key: str, value):
    if key not in PATH_KEYS:
        return value
    if isinstance(value, list):
        return [str(directory / v) for v in value]
    return str(directory / value)


@pytest.mark.parametrize("name", sorted(SMALL_RUNS))
def test_append_to_a_catalog_table_runs_on_spark(name: str, tmp_path: Path) -> None:
    command = _commands_with_a_local_engine()[name]
    auto = _config(command, tmp_path, "auto", "db.metrics")
    assert command.local.applies(auto) is False
    local = _config(command, tmp_path, "local", "db.metrics")
    with pytest.raises(ConfigError, match="--append-to a catalog table needs Spark"):
        command.local.applies(local)


@pytest.mark.parametrize("name", sorted(SMALL_RUNS))
def test_append_to_a_directory_stays_local(name: str, tmp_path: Path) -> None:
    """(``--engine local``: whether ``auto`` runs here also depends on whether this
    process already runs a Spark session, as a test worker may.)"""
    command = _commands_with_a_local_engine()[name]
    config = _config(command, tmp_path, "local", str(tmp_path / "history"))
    assert command.local.applies(config) is True
