"""``--conf KEY=VALUE``: Spark settings on the command line, as spark-submit takes them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sparkeval.cli import load_command, parse
from sparkeval.commands import COMMAND_MODULES
from sparkeval.errors import EXIT_INPUT
from tests.jobs import CLI, job_env


def _load(argv: list[str]):
    command, config_file, values = parse(argv)
    return command.config.load(config_file, values)


def test_conf_settings_win_over_the_config_file_key_by_key(tmp_path: Path) -> None:
    config = tmp_path / "job.yaml"
    config.write_text(
        "run: run.txt\nqrels: qrels.txt\nmeasures: [AP]\nout: out\n"
        "spark:\n  spark.sql.shuffle.partitions: 4\n  spark.ui.enabled: 'false'\n"
    )
    loaded = _load(
        [
            "evaluate",
            "--config",
            str(config),
            "--conf",
            "spark.sql.shuffle.partitions=8",
            "--conf",
            "spark.driver.extraJavaOptions=-Da=b -Dc=d",
        ]
    )
    assert loaded.spark == {
        "spark.sql.shuffle.partitions": "8",
        "spark.ui.enabled": "false",
        "spark.driver.extraJavaOptions": "-Da=b -Dc=d",
    }


def test_every_spark_command_takes_conf() -> None:
    for module in COMMAND_MODULES:
        command = load_command(module)
        keys = {spec.key for spec in command.config.options()}
        if "spark" in keys:
            result = subprocess.run(
                [*CLI, command.name, "--help"], capture_output=True, text=True, check=True
            )
            assert "--conf KEY=VALUE" in result.stdout, command.name


@pytest.mark.parametrize("text", ["spark.ui.enabled", "=true", " =x"])
def test_a_conf_without_key_and_value_is_refused(text: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [*CLI, "evaluate", "--conf", text, "--run", "r", "--qrels", "q", "--out", "o"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == EXIT_INPUT
    assert "argument --conf" in result.stderr and "is not KEY=VALUE" in result.stderr


@pytest.mark.slow
def test_a_setting_spark_refuses_is_exit_2_naming_it(tmp_path: Path) -> None:
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 2.0 r\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    argv = [
        *CLI, "evaluate", "--run", "run.txt", "--qrels", "qrels.txt", "--measures", "AP",
        "--out", "out", "--engine", "spark", "--master", "local[1]", "--quiet",
        "--conf", "spark.sql.ansi.enabled=maybe",
    ]  # fmt: skip
    result = subprocess.run(argv, cwd=tmp_path, env=job_env(), capture_output=True, text=True)
    assert result.returncode == EXIT_INPUT, result.stderr
    assert result.stderr.splitlines() == [
        "sparkeval evaluate: error: Spark setting spark.sql.ansi.enabled=maybe: it should "
        "be a/an 'boolean' value (from --conf, the config file's spark: section or spark-submit)"
    ]
    assert not (tmp_path / "out").exists()
