"""A store sparkeval cannot open is refused before any work, on every path option.

Every path option of every command (the options whose spec says ``path``, found
from each command's config class, and ``--append-to``) is given a URI of a scheme
with no filesystem (``foo://``), of HDFS without a Hadoop client, of Google Cloud
Storage and Azure without credentials, and of S3 without credentials; each is a real
``sparkeval`` process with no store's settings or credentials in its environment and
an empty home directory. Each must end with exit 2 and one line naming the URI and
what to install or set, no traceback, before Spark starts, and must not create a
local directory named after the scheme (``gs:``, ...) below its working directory.
"""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

from sparkeval.cli import load_command
from sparkeval.commands import COMMAND_MODULES
from sparkeval.errors import EXIT_INPUT
from tests.jobs import CLI
from tests.storage.conftest import empty_home, storeless_env

#: each URI, and words its refusal must contain (what to install or set)
UNUSABLE = {
    "foo": ("foo://x/y", ["no filesystem for the scheme foo://", "fsspec"]),
    "hdfs": ("hdfs://namenode:9000/eval", ["Hadoop client", "HADOOP_HOME", "CLASSPATH"]),
    "gs": ("gs://bucket/x", ["no credentials", "GOOGLE_APPLICATION_CREDENTIALS"]),
    "abfss": (
        "abfss://c@acct.dfs.core.windows.net/x",
        ["no credentials", "AZURE_STORAGE_ACCOUNT_KEY"],
    ),
}
MISSING_S3_CREDENTIALS = ("s3a://bucket/x", ["no credentials", "AWS_ACCESS_KEY_ID"])
#: names no run may create as a local directory
SCHEME_DIRECTORIES = {"foo:", "hdfs:", "gs:", "abfss:", "s3a:", "s3:"}

#: the other options of each command, on local files (``--out out`` is added); a
#: required option missing here would be refused first, failing the tests below
BASE: dict[str, dict[str, str]] = {
    "evaluate": {"--run": "run.txt", "--qrels": "qrels.txt", "--measures": "AP"},
    "compare": {"--per-query": "eval", "--baseline": "base"},
    "rank-distance": {"--runs": "runs.parquet", "--baseline": "base"},
    "rating-errors": {"--predictions": "pred.csv", "--truth": "truth.csv"},
    "similar-users": {"--run": "lists.parquet", "--threshold": "0.8"},
    "near-duplicates": {"--docs": "docs.parquet", "--threshold": "0.8"},
    "diversity": {"--run": "lists.parquet", "--train": "lists.parquet"},
}

#: options an input is refused without: the measure that reads it
READER: dict[tuple[str, str], dict[str, str]] = {
    ("evaluate", "--item-categories"): {"--measures": "AP,CategoricalDiversity@10"},
}


#: commands whose only path is a local file they build, refusing every URI
LOCAL_ONLY = {
    "pack": "the archive is built as a local file",
    "demo": "the demo writes its data and results into a local directory",
}


def path_options() -> list[tuple[str, str]]:
    """(command, flag) of every path option of every command but the local-only ones,
    and ``--append-to``."""
    found = []
    for module in COMMAND_MODULES:
        command = load_command(module)
        if command.name in LOCAL_ONLY:
            continue
        for spec in command.config.options():
            if spec.meta.cli and (spec.meta.path or spec.key == "append_to"):
                found.append((command.name, spec.flag))
    return found


OPTIONS = path_options()


def test_every_command_with_a_path_option_has_its_other_options() -> None:
    assert {command for command, _ in OPTIONS} == set(BASE)
    assert ("evaluate", "--qrels") in OPTIONS and ("compare", "--append-to") in OPTIONS


@pytest.mark.parametrize("uri", ["s3a://bucket/env.tar.gz", "hdfs://namenode:9000/env.tgz"])
def test_a_local_only_command_refuses_a_store_naming_why(uri: str, tmp_path: Path) -> None:
    for command, why in LOCAL_ONLY.items():
        result = subprocess.run(
            [*CLI, command, "--out", uri], cwd=tmp_path, capture_output=True, text=True
        )
        assert result.returncode == EXIT_INPUT, result.stderr
        assert result.stderr.startswith(f"sparkeval {command}: error: {uri}: {why}")
        assert os.listdir(tmp_path) == []


def test_every_option_naming_a_file_or_directory_is_a_path_option() -> None:
    unchecked = []
    for module in COMMAND_MODULES:
        command = load_command(module)
        for spec in command.config.options():
            names_a_path = spec.flag == "--out" or spec.meta.metavar in ("PATH", "DIR", "FILE")
            if spec.meta.cli and names_a_path and not spec.meta.path:
                unchecked.append((command.name, spec.flag))
    assert unchecked == []


def _inputs(directory: Path) -> Path:
    directory.mkdir()
    (directory / "run.txt").write_text("q1 Q0 d1 1 3.0 r\n")
    (directory / "qrels.txt").write_text("q1 0 d1 1\n")
    (directory / "eval").mkdir()
    pd.DataFrame(
        {"run_id": ["base"], "query_id": ["q1"], "measure": ["AP"], "value": [1.0]}
    ).to_parquet(directory / "eval" / "per_query.parquet")
    pd.DataFrame(
        {"run_id": ["base"], "query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]}
    ).to_parquet(directory / "runs.parquet")
    (directory / "pred.csv").write_text("user,item,prediction\n1,1,2.0\n")
    (directory / "truth.csv").write_text("user,item,rating\n1,1,3.0\n")
    pd.DataFrame({"user_id": ["u1"], "item_id": ["i1"], "score": [1.0]}).to_parquet(
        directory / "lists.parquet"
    )
    pd.DataFrame({"doc_id": [1], "text": ["a b c d"]}).to_parquet(directory / "docs.parquet")
    return directory


def _argv(command: str, flag: str, uri: str) -> list[str]:
    options = {**BASE[command], **READER.get((command, flag), {}), "--out": "out", flag: uri}
    return [*CLI, command, *(item for pair in options.items() for item in pair)]


def _refusals(uri: str, words: list[str], cwd: Path, env: dict[str, str]) -> tuple[list[str], int]:
    """Run every path option with ``uri``; returns (problems found, runs)."""

    def one(command: str, flag: str) -> str | None:
        result = subprocess.run(
            _argv(command, flag, uri), cwd=cwd, env=env, capture_output=True, text=True, timeout=300
        )
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        where = f"{command} {flag} {uri}"
        if result.returncode != EXIT_INPUT:
            return f"{where}: exit {result.returncode}: {result.stderr[-1500:]}"
        if len(lines) != 1 or result.stdout:
            return f"{where}: not one line: {result.stdout[-500:]!r} {result.stderr[-1500:]!r}"
        line = lines[0]
        if not line.startswith(f"sparkeval {command}: error: {uri}"):
            return f"{where}: the line does not name the URI first: {line}"
        missing = [w for w in words if w not in line]
        if missing:
            return f"{where}: the line lacks {missing}: {line}"
        return None

    with ThreadPoolExecutor(2) as pool:
        problems = list(pool.map(lambda option: one(*option), OPTIONS))
    return [p for p in problems if p], len(problems)


def _scheme_directories(cwd: Path) -> list[str]:
    return [
        os.path.join(root, name)
        for root, directories, _ in os.walk(cwd)
        for name in directories
        if name in SCHEME_DIRECTORIES
    ]


def _entries(cwd: Path) -> list[str]:
    return sorted(str(p.relative_to(cwd)) for p in cwd.rglob("*"))


@pytest.mark.slow
@pytest.mark.parametrize("scheme", sorted(UNUSABLE))
def test_a_store_sparkeval_cannot_open_is_refused_on_every_path_option(
    scheme: str, tmp_path: Path
) -> None:
    cwd = _inputs(tmp_path / "work")
    env = storeless_env(**empty_home(tmp_path / "home"))
    credentials = ("AWS_", "GOOGLE_", "AZURE_", "HADOOP_", "ARROW_LIBHDFS", "CLASSPATH")
    assert [k for k in env if k.startswith(credentials)] == ["AWS_EC2_METADATA_DISABLED"]
    uri, words = UNUSABLE[scheme]
    before = _entries(cwd)
    problems, runs = _refusals(uri, words, cwd, env)
    assert problems == []
    assert runs == len(OPTIONS) >= 28  # every command but the local-only ones
    assert _scheme_directories(cwd) == []
    assert _entries(cwd) == before  # nothing written: no output, no lock, no staging


@pytest.mark.slow
def test_s3_without_credentials_is_refused_on_every_path_option(tmp_path: Path) -> None:
    cwd = _inputs(tmp_path / "work")
    # no AWS_* keys, no config keys, no profile in an empty home, no instance metadata
    env = storeless_env(**empty_home(tmp_path / "home"))
    assert not [k for k in env if k.startswith("AWS_") and k != "AWS_EC2_METADATA_DISABLED"]
    uri, words = MISSING_S3_CREDENTIALS
    before = _entries(cwd)
    problems, _ = _refusals(uri, words, cwd, env)
    assert problems == []
    assert _scheme_directories(cwd) == []
    assert _entries(cwd) == before
