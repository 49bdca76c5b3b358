"""Two writers of the same ``--out s3://...`` at once: the lease lock on the store.

The second writer is refused at once, naming the first (without ``--overwrite``), or
waits for it and then replaces its output whole (with ``--overwrite``); nothing is
lost: the final output is complete and its manifest lists exactly its files. The
first writer spells the output ``s3a://``, the second ``s3://``: one output, one lock.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from sparkeval.errors import EXIT_INPUT
from tests.jobs import CLI
from tests.storage.outputs import (
    QRELS,
    RUN,
    complete_output,
    evaluate,
    leftovers,
    measures,
)

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture
def bucket(s3) -> str:
    name = s3.bucket("writers")
    s3.put(f"s3://{name}/data/run.txt", RUN.encode())
    s3.put(f"s3://{name}/data/qrels.txt", QRELS.encode())
    return name


def _slow_writer(s3, bucket: str, cwd: Path) -> subprocess.Popen[str]:
    """An ``evaluate --measures P@1`` of ``s3a://BUCKET/out`` whose tasks sleep 15 s,
    returned once a task has started (the writer holds the lock by then). The other
    writers name the output ``s3://BUCKET/out``: the same one, and the same lock."""
    marks = cwd / "marks"
    marks.mkdir()
    argv = [
        *CLI,
        "evaluate",
        "--run",
        f"s3://{bucket}/data/run.txt",
        "--qrels",
        f"s3://{bucket}/data/qrels.txt",
        "--measures",
        "P@1",
        "--out",
        f"s3a://{bucket}/out",
        "--master",
        "local[1]",
    ]
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=s3.env(SPARKEVAL_FAULT=f"slow-task:15:{marks}"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while not any(marks.iterdir()):
        assert process.poll() is None, process.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the slow writer never started a task"
        time.sleep(0.2)
    return process


def test_a_second_writer_is_refused_at_once_naming_the_holder(s3, bucket, tmp_path) -> None:
    first = _slow_writer(s3, bucket, tmp_path)
    try:
        second = evaluate(s3, bucket, "out", "AP", tmp_path)
        assert first.poll() is None, "the refusal must not wait for the first writer"
    finally:
        _, err = first.communicate(timeout=600)
    assert second.returncode == EXIT_INPUT, second.stderr[-3000:]
    (line,) = [x for x in second.stderr.splitlines() if x.startswith("sparkeval evaluate:")]
    assert f"output directory s3://{bucket}/out is being written by process {first.pid}" in line
    assert "Traceback" not in second.stderr
    assert first.returncode == 0, err[-3000:]
    assert measures(complete_output(s3, f"s3://{bucket}/out")) == {"P@1"}
    assert leftovers(s3, bucket, "out") == []


def test_a_second_writer_with_overwrite_waits_then_replaces_the_output_whole(
    s3, bucket, tmp_path
) -> None:
    first = _slow_writer(s3, bucket, tmp_path)
    try:
        second = evaluate(s3, bucket, "out", "AP", tmp_path, "--overwrite")
        assert first.poll() is not None, "the second writer must wait for the first"
    finally:
        _, err = first.communicate(timeout=600)
    assert first.returncode == 0, err[-3000:]
    assert second.returncode == 0, second.stderr[-3000:]
    assert f"waiting for process {first.pid}" in second.stderr
    # the manifest lists exactly what is there: the second writer's output, whole
    assert measures(complete_output(s3, f"s3://{bucket}/out")) == {"AP"}
    assert leftovers(s3, bucket, "out") == []
