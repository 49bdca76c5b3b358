"""Run sparkeval as users do (a subprocess on loopback) and inspect its output trees."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from sparkeval.demo_data import generate
from sparkeval.output import SUCCESS_MARKER
from tests.conftest import ROOT

BIN = Path(sys.executable).parent
#: the CLI of this checkout, run by the interpreter that runs the tests
CLI = [sys.executable, "-m", "sparkeval.cli"]
MEASURES = "AP,nDCG@10,P@5,RR"


def host_label() -> str:
    """This host's name as sparkeval writes it into directory names (letters and
    digits; anything else ``_``)."""
    return "".join(c if c.isalnum() else "_" for c in socket.gethostname())


def dead_pid() -> int:
    """The id of a process that has ended."""
    proc = subprocess.Popen([sys.executable, "-c", ""])
    proc.wait()
    return proc.pid


def job_env(**extra: str) -> dict[str, str]:
    """The environment of a job: this checkout first on the path, Spark on loopback."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env.pop("SPARKEVAL_FAULT", None)
    env.update(extra)
    return env


def run_job(
    cmd: list[str], cwd: Path, timeout: float = 600, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    """Run a command to completion with :func:`job_env`."""
    return subprocess.run(
        cmd, cwd=cwd, env=job_env(**extra_env), capture_output=True, text=True, timeout=timeout
    )


def collection(directory: Path) -> Path:
    """A tiny graded collection (30 queries, 3 runs) and a job config; returns the config."""
    generate(directory, queries=30, pool=60, depth=20)
    config = directory / "job.yaml"
    config.write_text(
        "run: [run_strong.txt, run_medium.txt, run_weak.txt]\n"
        "qrels: qrels.txt\n"
        f"measures: [{MEASURES}]\n"
        "buckets: 4\n"
        "spark:\n"
        "  spark.ui.enabled: 'false'\n"
        "  spark.sql.shuffle.partitions: '4'\n"
    )
    return config


def evaluate_cmd(
    config: Path, out: Path, *extra: str, master: str = "local[2]", engine: str = "spark"
) -> list[str]:
    """``sparkeval evaluate`` of ``config`` into ``out``, on Spark unless ``engine`` says
    otherwise (these jobs test Spark's behaviour: tasks, faults, kills)."""
    return [
        *CLI,
        "evaluate",
        "--engine",
        engine,
        "--config",
        str(config),
        "--out",
        str(out),
        "--master",
        master,
        *extra,
    ]


def tree(directory: Path) -> dict[str, str]:
    """{relative path: sha256} of every file below ``directory``.

    ``summary.parquet`` is hashed by its rows without ``evaluated_at`` and
    ``timings.json`` not at all: RELIABILITY.md documents those two as varying.
    """
    return {
        str(p.relative_to(directory)): _digest(p)
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != "timings.json"
    }


def _digest(path: Path) -> str:
    if path.name != "summary.parquet":
        return hashlib.sha256(path.read_bytes()).hexdigest()
    rows = pq.read_table(path).drop(["evaluated_at"]).to_pylist()
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def assert_complete(out: Path) -> dict:
    """``out`` is a complete evaluate output; returns its summary."""
    assert (out / SUCCESS_MARKER).is_file(), f"{out} has no {SUCCESS_MARKER}"
    table = pq.read_table(out / "per_query.parquet")
    assert table.column_names == ["run_id", "query_id", "measure", "value"]
    assert table.num_rows > 0
    return json.loads((out / "summary.json").read_text())


def assert_same_results(out: Path, expected: Path) -> None:
    """Both evaluate outputs are complete, with the same summary values per run and the
    same per-query rows (exactly)."""
    ours, theirs = assert_complete(out), assert_complete(expected)
    assert ours["runs"] == theirs["runs"]
    key = ["run_id", "query_id", "measure"]
    a = pd.read_parquet(out / "per_query.parquet").sort_values(key, ignore_index=True)
    b = pd.read_parquet(expected / "per_query.parquet").sort_values(key, ignore_index=True)
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def leftovers(out: Path) -> list[str]:
    """Hidden staging or retired directories of ``out`` beside it."""
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def without_java(home: Path) -> dict[str, str]:
    """The job environment with no Java to find (``JAVA_HOME`` below ``home``, and no
    ``java`` on the path): Spark could not start."""
    import shutil

    java = shutil.which("java")
    hidden = {str(Path(java).resolve().parent), str(Path(java).parent)} if java else set()
    path = [p for p in os.environ["PATH"].split(os.pathsep) if p not in hidden]
    return job_env(JAVA_HOME=str(home / "no-java"), PATH=os.pathsep.join(path))


def run_on_engine(
    command: str,
    directory: Path,
    out: str,
    engine: str,
    *options: str,
    env: dict[str, str] | None = None,
    timeout: int = 900,
) -> subprocess.CompletedProcess[str]:
    """``sparkeval COMMAND OPTIONS --out OUT --engine ENGINE`` run in ``directory`` on a
    local master of 2 cores (used when the engine is Spark), as a user runs it."""
    argv = [*CLI, command, *options, "--out", out, "--engine", engine, "--master", "local[2]"]
    return subprocess.run(
        argv, cwd=directory, env=env or job_env(), capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip


#: a program that runs the CLI, then says on its last stderr line whether pyspark was
#: imported (``no pyspark`` or ``pyspark imported``)
_PYSPARK_PROBE = (
    "import sys; from sparkeval.cli import main; code = main(sys.argv[1:]); "
    "print('pyspark imported' if 'pyspark' in sys.modules else 'no pyspark', "
    "file=sys.stderr); sys.exit(code)"
)


def run_without_java(
    command: str, directory: Path, home: Path, *options: str
) -> subprocess.CompletedProcess[str]:
    """``sparkeval COMMAND OPTIONS`` run in ``directory`` where no Java can be found
    (:func:`without_java` below ``home``); its last stderr line says whether pyspark was
    imported (``no pyspark`` when the command kept out of Spark altogether)."""
    return subprocess.run(
        [sys.executable, "-c", _PYSPARK_PROBE, command, *options],
        cwd=directory, env=without_java(home), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
