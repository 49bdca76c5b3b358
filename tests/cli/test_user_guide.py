"""The README and the user guide in ``docs/``: the site builds with warnings as errors,
every relative link resolves, and every example runs as written.

An example is a fenced block of a page:

* ``python``: run in this process, the page's blocks in order in one namespace (as a
  reader runs them one after the other), in the page's own directory;
* ``bash``: each command (continuation lines joined, comments dropped) must be a
  ``sparkeval`` command, and is run by :func:`sparkeval.cli.main` in this process, in
  the page's directory; it must exit 0. Run here, a command uses the suite's Spark
  session instead of starting a JVM of its own;
* ``text``: a synopsis or an output, nothing to run.

A comment just before the fence changes that: ``<!-- not run: REASON -->`` marks a block
that cannot run here (a cluster, an object store, an install), and ``<!-- file: NAME -->``
writes the block to ``NAME`` for the blocks after it (a config file). Any other block
must be marked. Each page runs in a directory of its own holding the files the examples
name (:func:`example_data`), which Spark's JVM takes as its working directory too.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sparkeval.cli import main
from tests.conftest import ROOT

DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]

#: the README's quick start installs into a virtual environment: it cannot run here, CI
#: runs its second command, and ``test_docs.py`` checks its shape; it stays as it is
QUICK_START = "## Quick start"

FENCE = re.compile(r"^```(\S*)\s*$")
MARK = re.compile(r"^<!-- (not run|file): (.+?) -->$")
RUNNABLE = {"python", "bash"}


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    mark: str | None  # "not run" or "file"
    argument: str | None  # the reason, or the file name

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page`` (fences at the start of a line), with their marks."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        mark = MARK.match(before.strip())
        found.append(
            Block(
                page,
                i + 1,
                opening.group(1),
                "\n".join(lines[i + 1 : end]) + "\n",
                mark.group(1) if mark else None,
                mark.group(2) if mark else None,
            )
        )
        i = end + 1
    return found


def quick_start(page: Path) -> int | None:
    """The line of the README's quick-start block."""
    if page.name != "README.md":
        return None
    lines = page.read_text(encoding="utf-8").splitlines()
    start = lines.index(QUICK_START)
    return next(i + 1 for i in range(start, len(lines)) if lines[i].startswith("```"))


def commands(code: str) -> list[list[str]]:
    """The commands of a shell block: continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", code)
    return [words for line in joined.splitlines() if (words := shlex.split(line, comments=True))]


def problems(block: Block) -> list[str]:
    """Why ``block`` can neither run nor be skipped (empty when it is fine)."""
    if block.mark == "not run" or block.language == "text":
        return []
    if block.mark == "file":
        return [] if block.language else [f"{block.where}: a file block needs a language"]
    if block.language not in RUNNABLE:
        return [f"{block.where}: a '{block.language}' block must be marked not run"]
    if block.language == "bash":
        return [
            f"{block.where}: {shlex.join(words)!r} is not a sparkeval command; "
            "mark the block <!-- not run: REASON -->"
            for words in commands(block.code)
            if words[0] != "sparkeval"
        ]
    return []


def to_run(page: Path) -> list[Block]:
    """The blocks of ``page`` to run or write, in order."""
    skip = quick_start(page)
    return [
        b
        for b in blocks(page)
        if b.line != skip and b.mark != "not run" and (b.mark == "file" or b.language in RUNNABLE)
    ]


def needs_spark(page: Path) -> bool:
    return any(b.language == "bash" or "SparkSession" in b.code for b in to_run(page) if not b.mark)


def test_every_block_is_run_or_marked() -> None:
    found = [
        problem
        for page in PAGES
        for block in blocks(page)
        if block.line != quick_start(page)
        for problem in problems(block)
    ]
    assert not found, "\n".join(found)
    ran = sum(len(to_run(page)) for page in PAGES)
    assert ran >= 20, f"only {ran} examples run: did the parser lose its blocks?"


LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_relative_links_resolve() -> None:
    """Links between the README, the guide and the files beside them (the site's own
    links are checked again by the strict build, anchors included)."""
    missing = []
    for page in PAGES:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in LINK.findall(text):
            path = target.split("#")[0]
            if not path or "://" in path:
                continue
            if not (page.parent / path).exists():
                missing.append(f"{page.relative_to(ROOT)}: {target}")
    assert not missing, missing


@pytest.mark.slow
def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (it comes with the test and docs extras)")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "site" / "api" / "index.html").read_text().count("sparkeval.evaluate") > 1
    assert (tmp_path / "site" / "bench" / "RESULTS" / "index.html").exists()


# ---------------------------------------------------------------------------- examples


@pytest.fixture(scope="module")
def example_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files the examples name: the demo collection in ``demo/``, ``run.txt`` and
    ``qrels.txt`` (its strong run and its qrels, also as ``qrels.parquet``),
    ``runs.parquet`` (two days × two models), recommendations (``recs.parquet``,
    ``recs.csv`` with its own column names), ``test_ratings.parquet``,
    ``train.parquet``, ``docs.parquet`` (with near-duplicate texts),
    ``predictions.parquet`` and ``ratings.parquet``."""
    data = tmp_path_factory.mktemp("examples")
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["demo", "--data-only", "--out", str(data / "demo")]) == 0
    shutil.copy(data / "demo/data/run_strong.txt", data / "run.txt")
    shutil.copy(data / "demo/data/qrels.txt", data / "qrels.txt")
    qrels = pd.read_csv(
        data / "qrels.txt", sep=" ", names=["query_id", "iter", "doc_id", "relevance"], dtype=str
    ).astype({"relevance": "int64"})
    qrels.drop(columns="iter").to_parquet(data / "qrels.parquet", index=False)

    columns = ["query_id", "q0", "doc_id", "rank", "score", "tag"]
    rng = np.random.default_rng(7)
    days = []
    for model, name in (("bm25", "run_strong.txt"), ("dense", "run_weak.txt")):
        run = pd.read_csv(data / "demo/data" / name, sep=" ", names=columns, dtype=str)
        for dt in ("2026-10-31", "2026-11-01"):
            score = run["score"].astype(float) + rng.normal(0, 0.1, len(run))
            days.append(run[["query_id", "doc_id"]].assign(dt=dt, model=model, score=score))
    pd.concat(days).to_parquet(data / "runs.parquet", index=False)

    users = [f"u{u:02d}" for u in range(60)]
    items = [f"i{i:03d}" for i in range(100)]
    lists = {}
    for n, user in enumerate(users):
        base = list(rng.permutation(items)[:12]) if n % 3 == 0 else list(lists[users[n - 1]])
        if n % 3 == 2:  # the third user of a group changes one item of the list
            base[-1] = next(item for item in items if item not in base)
        lists[user] = base
    recs = pd.DataFrame(
        [(u, item, 12.0 - rank) for u, row in lists.items() for rank, item in enumerate(row)],
        columns=["user_id", "item_id", "score"],
    )
    recs.to_parquet(data / "recs.parquet", index=False)
    recs.rename(columns={"user_id": "user", "item_id": "item", "score": "pred"}).assign(
        pred=lambda f: f["pred"] - 2.0
    ).to_csv(data / "recs.csv", index=False)

    truth = [
        (u, item, float(rng.choice([1.0, 2.5, 3.5, 4.0, 5.0])))
        for u in users
        for item in [*lists[u][:3], *rng.permutation(items)[:5]]
    ]
    truth_df = pd.DataFrame(truth, columns=["user_id", "item_id", "rating"])
    truth_df = truth_df.drop_duplicates(["user_id", "item_id"])
    truth_df.to_parquet(data / "test_ratings.parquet", index=False)
    pd.DataFrame(
        [(u, item) for u in users for item in rng.permutation(items)[:15]],
        columns=["user_id", "item_id"],
    ).to_parquet(data / "train.parquet", index=False)

    ratings = truth_df.iloc[:-5]  # five predictions without a true rating
    ratings.to_parquet(data / "ratings.parquet", index=False)
    truth_df.assign(prediction=truth_df["rating"] + rng.normal(0, 0.8, len(truth_df))).drop(
        columns="rating"
    ).to_parquet(data / "predictions.parquet", index=False)

    words = [f"w{i}" for i in range(400)]
    texts = []
    for n in range(120):
        if n % 10 == 9:  # a near copy of the previous document: one word changed
            copy = texts[-1].split()
            copy[30] = "changed"
            texts.append(" ".join(copy))
        else:
            texts.append(" ".join(rng.choice(words, 60)))
    pd.DataFrame({"doc_id": [f"doc-{n:05d}" for n in range(120)], "text": texts}).to_parquet(
        data / "docs.parquet", index=False
    )
    return data


def _run_command(words: list[str], where: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(words[1:])
    assert code == 0, f"{where}: {shlex.join(words)} exited {code}\n{err.getvalue()}"


@contextlib.contextmanager
def _spark_working_directory(spark, directory: Path) -> Iterator[None]:
    """Spark's JVM resolves a relative path against its own working directory, which a
    ``chdir`` of this process does not move: point its local file system at
    ``directory``, as for a reader whose session started there, and back after."""
    jvm = spark._jvm
    local = jvm.org.apache.hadoop.fs.FileSystem.getLocal(spark._jsc.hadoopConfiguration())
    before = local.getWorkingDirectory()
    local.setWorkingDirectory(jvm.org.apache.hadoop.fs.Path(str(directory)))
    try:
        yield
    finally:
        local.setWorkingDirectory(before)


def _outputs(examples: list[Block]) -> set[str]:
    """The ``--out`` directories of a page's commands."""
    return {
        words[i + 1]
        for block in examples
        if block.language == "bash" and not block.mark
        for words in commands(block.code)
        for i, word in enumerate(words[:-1])
        if word == "--out"
    }


def _page_param(page: Path):
    marks = [pytest.mark.spark, pytest.mark.slow] if needs_spark(page) else []
    return pytest.param(page, marks=marks, id=str(page.relative_to(ROOT)))


@pytest.mark.parametrize("page", [_page_param(page) for page in PAGES])
def test_the_examples_run(
    page: Path, example_data: Path, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch
) -> None:
    examples = to_run(page)
    if not examples:
        return
    work = tmp_path / "work"
    shutil.copytree(example_data, work)
    for out in _outputs(examples):  # a page that makes the demo collection makes its own
        shutil.rmtree(work / out, ignore_errors=True)
    monkeypatch.chdir(work)
    with contextlib.ExitStack() as stack:
        if needs_spark(page):  # the suite's session: no example starts a JVM of its own
            stack.enter_context(_spark_working_directory(request.getfixturevalue("spark"), work))
        namespace: dict[str, object] = {"__name__": "__example__"}
        for block in examples:
            if block.mark == "file":
                Path(block.argument or "").write_text(block.code, encoding="utf-8")
            elif block.language == "python":
                exec(compile(block.code, block.where, "exec"), namespace)
            else:
                for words in commands(block.code):
                    _run_command(words, block.where)
