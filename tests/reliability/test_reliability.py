"""Reliability promises of RELIABILITY.md, end to end in subprocesses.

Exit codes 0, 1 and 2 (3, a failed gate, is held by ``tests/compare/test_compare_cli.py``);
outputs are complete or absent whatever stage fails (reading, a Spark task, writing)
or when the process is killed; reruns give byte-identical files; a crashed Python
worker is retried by Spark with identical results; stale staging directories of
killed runs are removed by the next run.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT, EXIT_INTERNAL, EXIT_OK
from sparkeval.faults import FAULT_ENV
from sparkeval.output import atomic_output_dir, remove_stale_staging
from tests.jobs import (
    CLI,
    assert_complete,
    collection,
    dead_pid,
    evaluate_cmd,
    host_label,
    job_env,
    leftovers,
    run_job,
    tree,
)

RUN = "q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\nq2 Q0 d1 1 1.0 r\n"
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"


@dataclass(frozen=True)
class CleanRun:
    """A completed evaluate job: its working directory, config, output and duration."""

    base: Path
    config: Path
    out: Path
    seconds: float


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> CleanRun:
    """One clean evaluate job in a subprocess; the reference of the other tests."""
    base = tmp_path_factory.mktemp("reliability")
    config = collection(base / "data")
    started = time.monotonic()
    proc = run_job(evaluate_cmd(config, base / "clean"), base)
    seconds = time.monotonic() - started
    assert proc.returncode == EXIT_OK, proc.stderr[-3000:]
    return CleanRun(base, config, base / "clean", seconds)


# --- exit codes and idempotence -----------------------------------------------------------


@pytest.mark.spark
@pytest.mark.slow
def test_exit_0_and_a_rerun_writes_byte_identical_files(clean, tmp_path) -> None:
    summary = assert_complete(clean.out)
    assert "seconds" not in summary
    assert set(summary["runs"]) == {"strong", "medium", "weak"}
    files = tree(clean.out)
    assert not [f for f in files if f.endswith(".crc")]
    assert "per_query.parquet/_SUCCESS" not in files
    parts = sorted(f for f in files if f.startswith("per_query.parquet/"))
    assert parts == [f"per_query.parquet/part-{i:05d}.parquet" for i in range(len(parts))]

    proc = run_job(evaluate_cmd(clean.config, tmp_path / "again"), tmp_path)
    assert proc.returncode == EXIT_OK, proc.stderr[-3000:]
    assert tree(tmp_path / "again") == files


def test_exit_2_on_bad_configuration(tmp_path) -> None:
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "qrels.txt").write_text(QRELS)
    cmd = [*CLI, "evaluate", "--run", "run.txt", "--qrels", "qrels.txt"]
    proc = run_job([*cmd, "--measures", "nDCG@ten", "--out", "out"], tmp_path)
    assert proc.returncode == EXIT_INPUT
    assert "key 'measures'" in proc.stderr and "'nDCG@ten'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.spark
@pytest.mark.slow
def test_exit_1_on_a_failing_task_keeps_the_previous_output(clean, tmp_path) -> None:
    out = tmp_path / "out"
    shutil.copytree(clean.out, out)
    proc = run_job(
        evaluate_cmd(clean.config, out, "--overwrite"), tmp_path, **{FAULT_ENV: "fail-task"}
    )
    assert proc.returncode == EXIT_INTERNAL, proc.stderr[-3000:]
    assert "internal error" in proc.stderr and "injected task failure" in proc.stderr
    assert tree(out) == tree(clean.out)
    assert leftovers(out) == []


# --- failures at each stage, in process ---------------------------------------------------


def _evaluate(capsys, run: Path, qrels: Path, out: Path, *extra: str) -> tuple[int, str]:
    code = main(
        [
            "evaluate",
            "--run",
            str(run),
            "--qrels",
            str(qrels),
            "--measures",
            "AP,P@5",
            "--out",
            str(out),
            *extra,
        ]
    )
    return code, capsys.readouterr().err


@pytest.mark.spark
def test_failures_while_reading_or_writing_keep_the_previous_output(
    spark, tmp_path, capsys, monkeypatch
) -> None:
    run, qrels, out = tmp_path / "run.txt", tmp_path / "qrels.txt", tmp_path / "out"
    run.write_text(RUN)
    qrels.write_text(QRELS)

    monkeypatch.setenv(FAULT_ENV, "fail-write")  # read by the driver
    code, err = _evaluate(capsys, run, qrels, out)
    assert code == EXIT_INTERNAL and "injected failure while writing" in err
    assert not out.exists() and leftovers(out) == []

    monkeypatch.delenv(FAULT_ENV)
    code, err = _evaluate(capsys, run, qrels, out)
    assert code == EXIT_OK, err
    before = tree(out)

    monkeypatch.setenv(FAULT_ENV, "fail-write")
    code, err = _evaluate(capsys, run, qrels, out, "--overwrite")
    assert code == EXIT_INTERNAL and "injected failure while writing" in err
    assert tree(out) == before and leftovers(out) == []

    monkeypatch.delenv(FAULT_ENV)
    corrupt = tmp_path / "run.parquet"
    corrupt.write_bytes(b"PAR1 truncated PAR1")
    code, err = _evaluate(capsys, corrupt, qrels, out, "--overwrite")
    assert code == EXIT_INPUT and "run.parquet: not a Parquet file" in err
    assert tree(out) == before and leftovers(out) == []


# --- a crashed Python worker ------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize(
    ("fault", "marker"),
    [
        # a bucket evaluation dies
        ("kill-worker-once", "killed"),
        # a writer dies after writing its attempt's file, before renaming it: the output
        # must hold only the retry's file
        ("kill-writer-once", "killed-writer"),
    ],
)
def test_crashed_python_worker_is_retried_with_identical_results(
    clean, tmp_path, fault, marker
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    proc = run_job(
        # local[2,3]: two threads, a task may fail three times (spark.task.maxFailures)
        evaluate_cmd(clean.config, tmp_path / "out", master="local[2,3]"),
        tmp_path,
        **{FAULT_ENV: f"{fault}:{marks}"},
    )
    assert proc.returncode == EXIT_OK, proc.stderr[-3000:]
    assert (marks / marker).is_file(), "the fault did not fire"
    assert tree(tmp_path / "out") == tree(clean.out)


# --- SIGKILL at random moments -------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.slow
def test_kill_loop_never_leaves_a_partial_output(clean, tmp_path) -> None:
    out = tmp_path / "out"
    shutil.copytree(clean.out, out)
    expected = tree(clean.out)
    rng = random.Random(20240611)
    runtime = min(max(clean.seconds, 2.0), 90.0)
    local = tmp_path / "local"  # the jobs' spark.local.dir: where their scratch files go
    local.mkdir()
    for _ in range(5):
        delay = rng.uniform(0.5, runtime)
        proc = subprocess.Popen(
            evaluate_cmd(clean.config, out, "--overwrite"),
            cwd=tmp_path,
            env=job_env(SPARK_LOCAL_DIRS=str(local)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # the driver, its JVM and Python workers: one group
        )
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
        # absent (killed between the two renames) or complete, never partial
        if out.exists():
            assert_complete(out)
            assert tree(out) == expected
    # whatever the kills left, plus the staging directory of a writer known to be dead
    stale = tmp_path / f".out.staging-{host_label()}-{dead_pid()}-0a1b2c3d"
    (stale / "per_query.parquet").mkdir(parents=True)
    # and a scratch directory of an evaluation known to be dead
    (local / f"sparkeval-handoff-{host_label()}-{dead_pid()}-k3j_x9q1").mkdir()
    proc = run_job(
        evaluate_cmd(clean.config, out, "--overwrite"), tmp_path, SPARK_LOCAL_DIRS=str(local)
    )
    assert proc.returncode == EXIT_OK, proc.stderr[-3000:]
    assert tree(out) == expected
    assert leftovers(out) == [], "stale staging directories of killed runs remain"
    scratch = [p.name for p in local.iterdir() if p.name.startswith("sparkeval-")]
    assert scratch == [], "scratch directories of killed runs remain"


# --- stale staging directories ------------------------------------------------------------


def test_only_stale_staging_of_dead_local_writers_is_removed(tmp_path) -> None:
    host = host_label()
    dead, live = dead_pid(), os.getppid()
    names = {
        f".out.staging-{host}-{dead}-0a1b2c3d": False,  # killed writer on this host
        f".out.old-{host}-{dead}-0a1b2c3d": False,  # retired output of a killed writer
        f".out.staging-{host}-{live}-0a1b2c3d": True,  # a live writer
        f".out.staging-elsewhere-{dead}-0a1b2c3d": True,  # another host: cannot tell
        f".other.staging-{host}-{dead}-0a1b2c3d": True,  # another target
        ".out.staging-0a1b2c3d4e5f": True,  # not named by this version
    }
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / "part").write_text("partial")
    with atomic_output_dir(tmp_path / "out") as staging:
        (staging / "summary.json").write_text("{}")
    kept = {name for name, keep in names.items() if keep}
    assert {p.name for p in tmp_path.iterdir() if p.name.startswith(".")} == kept
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["_SUCCESS", "summary.json"]
    assert remove_stale_staging(tmp_path / "out") == []
