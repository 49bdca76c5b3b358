"""Sound failures, as a shell sees them: real ``sparkeval`` processes, real files.

* inputs the JVM cannot open by name (process substitution, FIFOs, ``/dev/stdin``)
  are read once by the driver and evaluated right;
* ``--out`` is claimed: a second writer fails at once naming the holder, or with
  ``--overwrite`` waits its turn;
* a writer killed at each step of the output swap, then a rerun that fails, never
  loses the last complete output;
* ``--out`` may be a mount point;
* a reader that closes stdout early (``| head``) after the outputs were written
  leaves exit 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from sparkeval.errors import EXIT_INPUT
from tests.jobs import CLI, assert_complete, job_env, leftovers, run_job

pytestmark = [pytest.mark.spark, pytest.mark.slow]

RUN = "q1 Q0 d1 1 3.0 r\nq1 Q0 d3 2 2.0 r\nq2 Q0 d2 1 1.0 r\n"
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d2 2\n"
#: by hand: q1 ranks d1 (relevant) then d3 (unjudged): P@1 1, P@2 1/2; q2 retrieves d2
#: alone (relevant): P@1 1, P@2 1/2 (P@k divides by k); NumRet sums over queries: 3
EXPECTED = {"P@1": 1.0, "P@2": 0.5, "NumRet": 3.0}


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "qrels.txt").write_text(QRELS)
    return tmp_path


def evaluate_argv(
    run: str, qrels: str, out: Path, *extra: str, measures: str = "P@1,P@2,NumRet"
) -> list[str]:
    return [
        *CLI,
        "evaluate",
        "--run",
        run,
        "--qrels",
        qrels,
        "--measures",
        measures,
        "--out",
        str(out),
        "--master",
        "local[1]",
        *extra,
    ]


def measures(out: Path) -> dict[str, float]:
    summary = json.loads((out / "summary.json").read_text())
    (run,) = summary["runs"].values()
    return run["measures"]


def first_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("sparkeval evaluate:")]
    return lines[0] if lines else stderr[:500]


# --- inputs that are not regular files ---------------------------------------------------


def test_process_substitution_and_stdin_are_read_once_by_the_driver(files: Path) -> None:
    argv = " ".join(evaluate_argv("<(cat run.txt)", "/dev/stdin", files / "out")).replace("'", "")
    result = subprocess.run(
        ["bash", "-c", f"{argv} < qrels.txt"],
        cwd=files,
        env=job_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "not a regular file" in result.stderr
    assert measures(files / "out") == EXPECTED


def test_a_fifo_is_read_once_by_the_driver(files: Path) -> None:
    fifo = files / "run.fifo"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "w") as pipe:
            pipe.write(RUN)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    result = run_job(evaluate_argv(str(fifo), "qrels.txt", files / "out"), files)
    writer.join(timeout=10)
    assert result.returncode == 0, result.stderr[-3000:]
    assert measures(files / "out") == EXPECTED


# --- the writer lock ---------------------------------------------------------------------


def _slow_writer(files: Path, out: Path, marks: Path) -> subprocess.Popen[str]:
    """A writer of ``out`` on Spark (its JVM is what some tests kill), its tasks slowed."""
    marks.mkdir()
    env = job_env(SPARKEVAL_FAULT=f"slow-task:8:{marks}")
    process = subprocess.Popen(
        [*evaluate_argv("run.txt", "qrels.txt", out), "--engine", "spark"],
        cwd=files,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not any(marks.iterdir()):
        assert process.poll() is None, process.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the slow writer never started a task"
        time.sleep(0.2)
    return process


def test_a_second_writer_fails_at_once_naming_the_holder(files: Path) -> None:
    out = files / "out"
    first = _slow_writer(files, out, files / "marks")
    try:
        started = time.monotonic()
        second = run_job(evaluate_argv("run.txt", "qrels.txt", out), files)
        waited = time.monotonic() - started
        assert second.returncode == EXIT_INPUT, second.stderr[-3000:]
        line = first_line(second.stderr)
        assert f"is being written by process {first.pid}" in line, line
        assert first.poll() is None, "the check must not wait for the first writer"
        assert waited < 60
    finally:
        _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err[-3000:]
    assert measures(out) == EXPECTED
    assert leftovers(out) == []


def test_writers_with_overwrite_take_turns(files: Path) -> None:
    out = files / "out"
    first = _slow_writer(files, out, files / "marks")
    try:
        second = run_job(
            evaluate_argv("run.txt", "qrels.txt", out, "--overwrite", measures="AP"), files
        )
    finally:
        _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err[-3000:]
    assert second.returncode == 0, second.stderr[-3000:]
    assert "waiting for process" in second.stderr
    # The order is in the outputs, not in process exits: the first writer releases its
    # lock when its output is in place, then waits for its JVM to exit, which may take
    # longer than the whole second job. The first writer has no --overwrite, so its exit 0
    # says the second had not written yet; the AP-only output says the second came last.
    assert_complete(out)
    assert set(measures(out)) == {"AP"}  # the second writer's output, whole
    assert leftovers(out) == []


# --- a kill at each step of the output swap, then a failing rerun ------------------------


@pytest.mark.parametrize(
    ("step", "survivor"), [("staged", "P@1"), ("retired", "AP"), ("placed", "AP")]
)
def test_a_kill_during_the_swap_then_a_failing_rerun_keeps_a_complete_output(
    files: Path, step: str, survivor: str
) -> None:
    out = files / "out"
    first = run_job(evaluate_argv("run.txt", "qrels.txt", out, measures="P@1"), files)
    assert first.returncode == 0, first.stderr[-3000:]
    killed = run_job(
        evaluate_argv("run.txt", "qrels.txt", out, "--overwrite", measures="AP"),
        files,
        SPARKEVAL_FAULT=f"kill-at-swap:{step}",
    )
    assert killed.returncode == 137, killed.stderr[-3000:]
    (files / "bad.txt").write_text("q1 Q0 d1 1 not-a-score r\n")
    failing = run_job(evaluate_argv("bad.txt", "qrels.txt", out, "--overwrite"), files)
    assert failing.returncode == EXIT_INPUT, failing.stderr[-3000:]
    assert_complete(out)
    assert set(measures(out)) == {survivor}
    assert leftovers(out) == []


# --- a mount point as --out --------------------------------------------------------------


@pytest.fixture
def mount_point(tmp_path: Path):
    target = tmp_path / "volume"
    target.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(target)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield target
    finally:
        subprocess.run(["umount", str(target)], check=False)


def test_out_may_be_a_mount_point(files: Path, mount_point: Path) -> None:
    first = run_job(evaluate_argv("run.txt", "qrels.txt", mount_point), files)
    assert first.returncode == 0, first.stderr[-3000:]
    assert measures(mount_point) == EXPECTED
    again = run_job(evaluate_argv("run.txt", "qrels.txt", mount_point), files)
    assert again.returncode == EXIT_INPUT
    assert "pass --overwrite" in first_line(again.stderr)
    replaced = run_job(
        evaluate_argv("run.txt", "qrels.txt", mount_point, "--overwrite", measures="AP"),
        files,
    )
    assert replaced.returncode == 0, replaced.stderr[-3000:]
    assert_complete(mount_point)
    assert set(measures(mount_point)) == {"AP"}
    assert sorted(p.name for p in mount_point.iterdir()) == [
        "_SUCCESS",
        "per_query.parquet",
        "summary.json",
        "summary.parquet",
    ]


def test_a_read_only_output_is_refused_before_the_work(files: Path, mount_point: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(mount_point)], check=True)
    result = run_job(evaluate_argv("run.txt", "qrels.txt", mount_point / "out"), files)
    assert result.returncode == EXIT_INPUT, result.stderr[-3000:]
    assert "read-only or permission denied" in first_line(result.stderr)
    assert "Setting default log level" not in result.stderr  # Spark never started


# --- stdout closed early -------------------------------------------------------------------


def test_a_closed_stdout_after_a_complete_write_is_success(files: Path) -> None:
    process = subprocess.Popen(
        evaluate_argv("run.txt", "qrels.txt", files / "out"),
        cwd=files,
        env=job_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    process.stdout.close()  # as `| head -0` would
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err.decode()[-3000:]
    assert measures(files / "out") == EXPECTED


# --- failures of the machine: exit 1 with a first line that says which ---------------------


def _java_children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == pid and b"java" in cmdline:
            found.append(int(entry.name))
    return found


def test_a_killed_jvm_is_exit_1_saying_so(files: Path) -> None:
    import signal

    process = _slow_writer(files, files / "out", files / "marks")
    for java in _java_children(process.pid):
        os.kill(java, signal.SIGKILL)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 1, err[-3000:]
    line = first_line(err)
    assert "Spark JVM" in line, line
    assert not line.startswith("Traceback") and "o0" not in line
    # nothing else speaks first: pyspark's accumulator thread printed a traceback here
    assert "Traceback" not in err, err[-3000:]
    assert not (files / "out").exists()


def test_a_full_disk_is_exit_1_saying_so(files: Path, mount_point: Path) -> None:
    subprocess.run(["mount", "-o", "remount,size=64k", str(mount_point)], check=True)
    import hashlib

    # 20,000 queries with incompressible ids: per_query.parquet far beyond 64 KiB
    queries = [hashlib.sha256(str(q).encode()).hexdigest() for q in range(20_000)]
    lines = [f"{q} Q0 d{d} {d + 1} {100 - d} r" for q in queries for d in range(3)]
    (files / "big.txt").write_text("\n".join(lines) + "\n")
    argv = evaluate_argv("big.txt", "qrels.txt", mount_point / "out", "--queries", "run")
    result = run_job(argv, files)
    assert result.returncode == 1, result.stderr[-3000:]
    assert "disk full" in first_line(result.stderr)
    assert not (mount_point / "out").exists()
