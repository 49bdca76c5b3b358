"""Ctrl-C at any moment: one line, exit 130, no traceback, and no JVM left running.

pyspark starts the driver JVM with SIGINT ignored, so a Ctrl-C alone would leave it
running, holding the terminal (and ``| tee log`` open) until it finished by itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from sparkeval.demo_data import generate
from tests.jobs import CLI, job_env

pytestmark = pytest.mark.slow


def _processes_holding(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads running processes from /proc")
@pytest.mark.parametrize("delay", [1.0, 3.0, 6.0])
def test_ctrl_c_stops_the_jvm_and_says_one_line(tmp_path: Path, delay: float) -> None:
    generate(tmp_path, queries=200, pool=200, depth=100)
    marker = uuid.uuid4().hex
    argv = [
        *CLI, "evaluate", "--run", "run_strong.txt", "--qrels", "qrels.txt", "--measures",
        "AP", "--out", "out", "--engine", "spark", "--master", "local[1]",
        "--conf", f"spark.sparkeval.testMarker={marker}",
    ]  # fmt: skip
    proc = subprocess.Popen(
        argv, cwd=tmp_path, env=job_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    # stdout (a pipe, as in `sparkeval ... | tee log`) ends when sparkeval does
    _, err = proc.communicate(timeout=60)
    text = err.decode()
    if proc.returncode == 0:  # finished before the signal arrived: nothing to check
        pytest.skip(f"the run ended within {delay} s")
    assert proc.returncode == 130, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
    assert text.strip().splitlines()[-1] in (
        "sparkeval: interrupted",
        "sparkeval evaluate: interrupted",
    )
    deadline = time.monotonic() + 10
    while _processes_holding(marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_holding(marker) == []
    assert not (tmp_path / "out").exists()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".out.")]


@pytest.mark.spark
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads running processes from /proc")
@pytest.mark.parametrize(
    ("qrels", "code"),
    [("qrels.txt", 0), ("bad_qrels.txt", 2)],
    ids=["a run to its end", "an input error found by spark"],
)
def test_the_jvm_has_exited_when_the_program_does(tmp_path: Path, qrels: str, code: int) -> None:
    """The driver JVM ends with the program, not after it: nothing it started is
    still running the moment ``sparkeval`` has exited (the JVM's own shutdown, which
    removes its temporary directories, is waited for)."""
    generate(tmp_path, queries=5, pool=10, depth=5)
    (tmp_path / "bad_qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 high\n")
    marker = uuid.uuid4().hex
    argv = [
        *CLI, "evaluate", "--run", "run_strong.txt", "--qrels", qrels, "--measures", "AP",
        "--out", "out", "--engine", "spark", "--conf", f"spark.sparkeval.testMarker={marker}",
    ]  # fmt: skip
    # files, not pipes: a pipe's reader would wait for the JVM too (it shares stderr)
    with open(tmp_path / "stdout", "wb") as out, open(tmp_path / "stderr", "wb") as err:
        done = subprocess.run(argv, cwd=tmp_path, env=job_env(), stdout=out, stderr=err)
    left = _processes_holding(marker)
    assert done.returncode == code, (tmp_path / "stderr").read_text()[-3000:]
    assert left == []
