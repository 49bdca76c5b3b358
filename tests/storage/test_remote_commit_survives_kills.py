"""A writer killed during the commit of a store output never loses a complete output.

An object store has no rename: the output is staged under ``.NAME.staging-TOKEN``,
an intent ``.NAME.swap`` names it, ``_SUCCESS`` is removed, the files are copied into
place and the new manifest comes last. The driver is killed (``os._exit``, as
``kill -9``) at ``staged`` (the staging is complete, no intent yet) or ``retired``
(the old ``_SUCCESS`` is gone) towards an existing complete output; what a reader
finds then, and after the next run or claim, is checked on a real S3-protocol server.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sparkeval.errors import EXIT_INPUT
from sparkeval.scratch import OUTPUTS_PREFIX
from tests.jobs import CLI
from tests.storage.outputs import (
    KILLED,
    QRELS,
    RUN,
    complete_output,
    evaluate,
    leftovers,
    measures,
)

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def previous(tmp_path_factory, s3):
    """A complete output of ``evaluate --measures P@1`` (the output a killed writer
    replaces); returns (bucket, its URI, work directory)."""
    work = tmp_path_factory.mktemp("store-kills")
    bucket = s3.bucket("kills")
    s3.put(f"s3://{bucket}/data/run.txt", RUN.encode())
    s3.put(f"s3://{bucket}/data/qrels.txt", QRELS.encode())
    s3.put(f"s3://{bucket}/data/bad.txt", b"q1 Q0 d1 1 not-a-score r\n")
    first = evaluate(s3, bucket, "previous", "P@1", work)
    assert first.returncode == 0, first.stderr[-3000:]
    return bucket, f"s3://{bucket}/previous", work


def _copy_of(s3, previous, out: str) -> str:
    """A copy of the previous output at ``s3://BUCKET/out`` (server-side copies)."""
    bucket, uri, _ = previous
    for key in s3.files(uri):
        s3.filesystem.copy_file(f"{bucket}/previous/{key}", f"{bucket}/{out}/{key}")
    return f"s3://{bucket}/{out}"


def _local_staging(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.startswith(OUTPUTS_PREFIX)]


def test_a_kill_after_staging_leaves_the_previous_output_then_the_next_run_cleans_up(
    previous, s3, tmp_path: Path
) -> None:
    bucket, _, work = previous
    target = _copy_of(s3, previous, "staged")
    before = complete_output(s3, target)
    # the jobs' own temporary directory: where the driver stages the files it uploads
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    killed = evaluate(
        s3,
        bucket,
        "staged",
        "AP",
        work,
        "--overwrite",
        SPARKEVAL_FAULT="kill-at-swap:staged",
        TMPDIR=str(temporary),
    )
    assert killed.returncode == KILLED, killed.stderr[-3000:]
    assert complete_output(s3, target) == before  # untouched, and readable as complete
    staging = [n for n in leftovers(s3, bucket, "staged") if ".staging-" in n]
    assert len(staging) == 1  # the dead writer's, complete but never swapped in
    assert s3.exists(f"s3://{bucket}/{staging[0]}/_SUCCESS")
    assert len(_local_staging(temporary)) == 1

    rerun = evaluate(s3, bucket, "staged", "NumRet", work, "--overwrite", TMPDIR=str(temporary))
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert measures(complete_output(s3, target)) == {"NumRet"}
    assert leftovers(s3, bucket, "staged") == []
    assert _local_staging(temporary) == []


def test_a_kill_after_retiring_is_rolled_forward_by_the_next_claim(previous, s3) -> None:
    bucket, _, work = previous
    target = _copy_of(s3, previous, "retired")
    killed = evaluate(
        s3, bucket, "retired", "AP", work, "--overwrite", SPARKEVAL_FAULT="kill-at-swap:retired"
    )
    assert killed.returncode == KILLED, killed.stderr[-3000:]
    # the old manifest is gone: no reader takes what is there for a complete output
    assert not s3.exists(f"{target}/_SUCCESS")
    assert s3.exists(f"s3://{bucket}/.retired.swap")

    # the next writer claims the output, finishes the dead writer's swap, then fails
    # on its own bad input: the killed run's output is in place, complete
    failing = subprocess.run(
        [
            *CLI,
            "evaluate",
            "--run",
            f"s3://{bucket}/data/bad.txt",
            "--qrels",
            f"s3://{bucket}/data/qrels.txt",
            "--measures",
            "P@2",
            "--out",
            target,
            "--overwrite",
            "--master",
            "local[1]",
        ],
        cwd=work,
        env=s3.env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert failing.returncode == EXIT_INPUT, failing.stderr[-3000:]
    assert measures(complete_output(s3, target)) == {"AP"}
    assert leftovers(s3, bucket, "retired") == []
