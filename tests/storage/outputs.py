"""Evaluations on the test server, and a store output read as a reader should."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.jobs import CLI

RUN = "q1 Q0 d1 1 3.0 r\nq1 Q0 d3 2 2.0 r\nq2 Q0 d2 1 1.0 r\n"
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d2 2\n"
#: by hand: q1 ranks d1 (relevant) then d3 (unjudged): P@1 1, P@2 1/2; q2 retrieves d2
#: alone (relevant): P@1 1, P@2 1/2 (P@k divides by k); NumRet sums over queries: 3
EXPECTED = {"P@1": 1.0, "P@2": 0.5, "NumRet": 3.0}
#: the killed process's exit status (faults.at_swap)
KILLED = 137


def evaluate(s3, bucket: str, out: str, measures: str, cwd: Path, *extra: str, **env: str):
    argv = [
        *CLI,
        "evaluate",
        "--run",
        f"s3://{bucket}/data/run.txt",
        "--qrels",
        f"s3://{bucket}/data/qrels.txt",
        "--measures",
        measures,
        "--out",
        f"s3://{bucket}/{out}",
        "--master",
        "local[1]",
        *extra,
    ]
    return subprocess.run(
        argv, cwd=cwd, env=s3.env(**env), capture_output=True, text=True, timeout=600
    )


def complete_output(s3, uri: str) -> dict[str, bytes]:
    """The files of a complete output, read as the commit's module docstring tells a
    reader to: the manifest, the files it lists (with their sizes), the manifest again."""
    manifest = s3.get(f"{uri}/_SUCCESS")
    listed = json.loads(manifest)["files"]
    found = {key: s3.get(f"{uri}/{key}") for key in listed}
    assert {k: len(v) for k, v in found.items()} == listed
    assert s3.get(f"{uri}/_SUCCESS") == manifest
    present = {k for k in s3.files(uri) if k != "_SUCCESS"}
    assert present == set(listed), "the output holds files its manifest does not list"
    return {**found, "_SUCCESS": manifest}


def measures(output: dict[str, bytes]) -> set[str]:
    (run,) = json.loads(output["summary.json"])["runs"].values()
    return set(run["measures"])


def leftovers(s3, bucket: str, out: str) -> list[str]:
    """Staging prefixes and intents of ``out`` beside it, and claims of its lock."""
    beside = [n for n in s3.names(f"s3://{bucket}") if n.startswith(f".{out}.")]
    claims = [f".{out}.lock/{k}" for k in s3.files(f"s3://{bucket}/.{out}.lock")]
    return sorted([n for n in beside if not n.endswith(".lock")] + claims)
