"""A machine Spark cannot start on is one exit-2 line naming the variable or setting,
found before the JVM starts (no launcher exit code, no minute's wait, no Py4J name)."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from sparkeval.errors import EXIT_INPUT
from tests.jobs import CLI, job_env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


CASES = {
    "JAVA_HOME without java": (
        {"JAVA_HOME": "/nonexistent/jdk"},
        [],
        "JAVA_HOME=/nonexistent/jdk holds no bin/java",
    ),
    "SPARK_HOME without Spark": (
        {"SPARK_HOME": "/nonexistent/spark"},
        [],
        "SPARK_HOME=/nonexistent/spark holds no bin/spark-submit",
    ),
    "PYSPARK_PYTHON nowhere": (
        {"PYSPARK_PYTHON": "/nonexistent/python3"},
        [],
        "PYSPARK_PYTHON=/nonexistent/python3 is not an executable Python",
    ),
    "a bogus master": ({}, ["--master", "bogus://x"], "--master bogus://x: not a Spark master URL"),
    "negative partitions": (
        {},
        ["--conf", "spark.sql.shuffle.partitions=-5"],
        "spark.sql.shuffle.partitions=-5: expected a whole number >= 1",
    ),
}


def _run(tmp_path: Path, env: dict[str, str], extra: list[str]) -> subprocess.CompletedProcess:
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 2.0 r\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    argv = [*CLI, "evaluate", "--run", "run.txt", "--qrels", "qrels.txt", "--measures", "AP",
            "--out", "out", "--engine", "spark", *extra]  # fmt: skip
    return subprocess.run(
        argv, cwd=tmp_path, env=job_env(**env), capture_output=True, text=True, timeout=120
    )


def _assert_refused(result: subprocess.CompletedProcess, message: str, tmp_path: Path) -> None:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == EXIT_INPUT, result.stderr[-2000:]
    assert len(lines) == 1 and message in lines[0], lines
    assert lines[0].startswith("sparkeval evaluate: error: ")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_machine_spark_cannot_start_on_is_one_line(case: str, tmp_path: Path) -> None:
    env, extra, message = CASES[case]
    _assert_refused(_run(tmp_path, env, extra), message, tmp_path)


def test_an_unreachable_master_is_refused_at_once(tmp_path: Path) -> None:
    master = f"spark://127.0.0.1:{_free_port()}"  # nothing listens there
    result = _run(tmp_path, {}, ["--master", master])
    _assert_refused(result, f"--master {master}: cannot reach 127.0.0.1:", tmp_path)


def test_a_local_dir_under_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    result = _run(tmp_path, {}, ["--conf", f"spark.local.dir={tmp_path / 'a-file' / 'scratch'}"])
    _assert_refused(result, f"{tmp_path / 'a-file'} is a file, not a directory", tmp_path)
