"""A command run in a process whose Spark session already runs (a notebook, a test suite).

The command uses that session, as ``getOrCreate`` does, but leaves its settings as the
caller made them: sparkeval's defaults are for the sessions it starts itself. Only the
settings the command is given (a config file's ``spark:`` section) are applied.
"""

from __future__ import annotations

import json

import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_OK

#: settings a notebook might have chosen, each unlike sparkeval's local default
CALLERS = {
    "spark.sql.shuffle.partitions": "3",
    "spark.sql.session.timeZone": "America/New_York",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "777",
}


@pytest.fixture
def callers_settings(spark):
    """The shared session with :data:`CALLERS` set; its own values are put back after."""
    saved = {key: spark.conf.get(key, None) for key in [*CALLERS, "spark.sql.adaptive.enabled"]}
    for key, value in CALLERS.items():
        spark.conf.set(key, value)
    yield spark
    for key, value in saved.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


def _trec_inputs(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\nq2 Q0 d3 1 1.0 r\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d2 1\nq2 0 d3 1\nq2 0 d4 1\n")
    return run, qrels


def test_a_command_keeps_the_running_sessions_settings(callers_settings, tmp_path, capsys):
    spark = callers_settings
    run, qrels = _trec_inputs(tmp_path)
    code = main(
        ["evaluate", "--run", str(run), "--qrels", str(qrels), "--measures", "P@2,RR",
         "--out", str(tmp_path / "out"), "--master", "local[1]"]
    )  # fmt: skip
    assert code == EXIT_OK
    for key, value in CALLERS.items():
        assert spark.conf.get(key) == value, key
    # the running session is used, and the status line says so, since --master differs
    assert "already running" in capsys.readouterr().err
    # hand derivation: q1 P@2 = 1/2, RR = 1/2; q2 P@2 = 1/2, RR = 1
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    values = summary["runs"]["r"]["measures"]
    assert values["P@2"] == pytest.approx(0.5)
    assert values["RR"] == pytest.approx(0.75)


def test_a_commands_own_settings_are_applied(callers_settings, tmp_path):
    spark = callers_settings
    run, qrels = _trec_inputs(tmp_path)
    config = tmp_path / "job.yaml"
    config.write_text(
        f"run: [{run}]\nqrels: {qrels}\nmeasures: [P@2]\nout: {tmp_path / 'out'}\n"
        "spark: {spark.sql.adaptive.enabled: 'false'}\n"
    )
    assert main(["evaluate", "--config", str(config)]) == EXIT_OK
    assert spark.conf.get("spark.sql.adaptive.enabled") == "false"
    assert spark.conf.get("spark.sql.shuffle.partitions") == CALLERS["spark.sql.shuffle.partitions"]
