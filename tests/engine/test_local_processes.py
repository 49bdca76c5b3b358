"""The local engine on several processes (``--engine local --local-workers N``).

Every output is compared with the single-process engine's (``--local-workers 1``),
byte for byte (``summary.parquet`` by its rows without ``evaluated_at``), with stdout
and the exit code; errors are compared line for line. No JVM starts in this module.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from sparkeval.engine.local_processes import PARALLEL_BYTES, cores, worker_count
from sparkeval.errors import EXIT_INPUT
from tests.conftest import shared_file
from tests.jobs import CLI, job_env, tree

MEASURES = "AP,nDCG@10,P@5,RR,Rprec,bpref,ERR@20,R@100"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """Three runs in two Parquet files of several row groups each (a query's rows spread
    over row groups), and qrels as TREC text: 600 queries, 40 docs each, ties included."""
    directory = tmp_path_factory.mktemp("local-processes")
    rng = np.random.default_rng(11)
    queries = [f"q{i}" for i in range(600)]
    rows: dict[str, list] = {"run_id": [], "query_id": [], "doc_id": [], "score": []}
    for run in ("bm25", "dense", "hybrid"):
        for query in queries[: 560 if run == "dense" else 600]:  # dense misses 40 queries
            docs = rng.choice(200, size=40, replace=False)
            rows["run_id"] += [run] * 40
            rows["query_id"] += [query] * 40
            rows["doc_id"] += [f"d{d}" for d in docs]
            rows["score"] += list(np.round(rng.random(40), 1))  # tenths: many ties
    table = pa.table(rows)
    order = rng.permutation(table.num_rows)  # a query's rows in several row groups
    shuffled = table.take(pa.array(order))
    hybrid = pc.equal(shuffled.column("run_id"), "hybrid")
    two = shuffled.filter(pc.invert(hybrid))
    pq.write_table(two, directory / "runs-1.parquet", row_group_size=9000)
    pq.write_table(shuffled.filter(hybrid), directory / "runs-2.parquet", row_group_size=7000)
    lines = []
    for query in queries[20:]:  # 20 queries without judgements
        for doc in rng.choice(200, size=30, replace=False):
            lines.append(f"{query} 0 d{doc} {rng.integers(0, 4)}")
    (directory / "qrels.txt").write_text("\n".join(lines) + "\n")
    return directory


def _evaluate(
    directory: Path, out: str, workers: int, *options: str
) -> subprocess.CompletedProcess:
    argv = [*CLI, "evaluate", "--out", out, "--engine", "local", "--local-workers", str(workers)]
    return subprocess.run(
        [*argv, *options], cwd=directory, env=job_env(), capture_output=True, text=True, timeout=600
    )


def _same_as_one_process(directory: Path, name: str, workers: int, *options: str) -> str:
    """Run with 1 and with ``workers`` processes; the outputs, stdout and exit codes are
    the same. Returns the several-process run's stderr."""
    one = _evaluate(directory, f"{name}-1", 1, *options)
    several = _evaluate(directory, f"{name}-{workers}", workers, *options)
    assert one.returncode == several.returncode == 0, one.stderr[-2000:] + several.stderr[-2000:]
    assert f"in {workers} processes" in several.stderr
    assert " processes" not in one.stderr
    assert several.stdout == one.stdout
    assert tree(directory / f"{name}-{workers}") == tree(directory / f"{name}-1")
    return several.stderr


CASES = {
    "three-runs": ["--run", "runs-1.parquet", "runs-2.parquet"],
    "union-per-query": ["--run", "runs-1.parquet", "runs-2.parquet", "--queries", "union"],
    "depth-level-trec-names": [
        "--run",
        "runs-2.parquet",
        "runs-1.parquet",
        "--depth",
        "10",
        "--rel-level",
        "2",
        "--names",
        "trec",
    ],
    "queries-both": ["--run", "runs-1.parquet", "runs-2.parquet", "--queries", "both"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_several_processes_write_the_bytes_one_process_writes(inputs: Path, case: str) -> None:
    options = [*CASES[case], "--qrels", "qrels.txt", "--measures", MEASURES, "--per-query"]
    # 5 processes: 20 buckets, cut from rows sorted by bucket (3: 12, filtered one by one)
    _same_as_one_process(inputs, case, 5 if case == "three-runs" else 3, *options)


def test_trec_evals_own_test_files_in_two_processes(tmp_path: Path) -> None:
    run = shared_file("conformance", "trec_eval", "results.test")
    qrels = shared_file("conformance", "trec_eval", "qrels.test")
    options = ["--run", str(run), "--qrels", str(qrels)]
    _same_as_one_process(tmp_path, "trec", 2, *options, "--trec-eval", "--measures", "all_trec")


@pytest.mark.parametrize(
    ("run", "qrels", "message"),
    [
        ("q1 Q0 d1 1 2.0 r\nq1 Q0 d1 2 1.0 r\nq2 Q0 d3 1 1.0 r\n", "q1 0 d1 1\nq2 0 d3 1\n",
         "run r: query q1: duplicate doc d1 (each doc may appear once per query)"),
        ("q1 Q0 d1 1 2.0 r\nq2 Q0 d3 1 1.0 r\n", "q2 0 d3 1\nq1 0 d1 1\nq1 0 d1 0\n",
         "qrels: query q1: duplicate doc d1 (each doc may be judged once per query)"),
        ("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 one r\n", "q1 0 d1 1\n",
         "--engine local: bad_run.txt: a value that is not a plain decimal number, which "
         "Spark's readers judge; use --engine spark (or auto)"),
    ],
    ids=["duplicate-doc", "duplicate-judgement", "for-spark-readers"],
)  # fmt: skip
def test_an_error_is_named_as_one_process_names_it(
    tmp_path: Path, run: str, qrels: str, message: str
) -> None:
    (tmp_path / "bad_run.txt").write_text(run)
    (tmp_path / "qrels.txt").write_text(qrels)
    options = ["--run", "bad_run.txt", "--qrels", "qrels.txt", "--measures", "AP"]
    results = [_evaluate(tmp_path, f"out-{w}", w, *options) for w in (1, 2)]
    for result in results:
        assert result.returncode == EXIT_INPUT, result.stderr
        errors = [line for line in result.stderr.splitlines() if ": error: " in line]
        assert errors == [f"sparkeval evaluate: error: {message}"]
        assert "Traceback" not in result.stderr
    assert not list(tmp_path.glob("out-*"))


def test_the_workers_scratch_files_are_removed(inputs: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    argv = [*CLI, "evaluate", "--run", "runs-1.parquet", "--qrels", "qrels.txt", "--measures",
            "AP", "--out", str(tmp_path / "out"), "--engine", "local"]  # fmt: skip
    argv += ["--local-workers", "2"]
    done = subprocess.run(
        argv, cwd=inputs, env=job_env(TMPDIR=str(scratch)), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "in 2 processes" in done.stderr
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("value", ["-1", "257", "two"])
def test_a_worker_count_out_of_range_is_refused(inputs: Path, value: str) -> None:
    argv = [*CLI, "evaluate", "--run", "runs-1.parquet", "--qrels", "qrels.txt", "--measures",
            "AP", "--out", "never", "--engine", "local", "--local-workers", value]  # fmt: skip
    done = subprocess.run(argv, cwd=inputs, env=job_env(), capture_output=True, text=True)
    assert done.returncode == EXIT_INPUT
    assert "local_workers" in done.stderr or "--local-workers" in done.stderr, done.stderr
    assert not (inputs / "never").exists()


def test_the_default_is_one_process_per_core_from_the_size_up() -> None:
    assert worker_count(0, PARALLEL_BYTES - 1) == 1
    assert worker_count(0, PARALLEL_BYTES) == cores() >= 1
    assert worker_count(5, 0) == 5


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        (["--run", "runs-1.parquet", "--run-id-column", "team"],
         "runs-1.parquet: columns the direct readers do not find or do not read"),
        (["--run", "runs-2.parquet", "runs-2.parquet"],
         "runs-2.parquet: run id 'hybrid' also in another run input"),
    ],
    ids=["missing-run-id-column", "run-id-in-two-inputs"],
)  # fmt: skip
def test_engine_local_names_the_input_it_leaves_to_spark(
    inputs: Path, options: list[str], reason: str
) -> None:
    argv = [*CLI, "evaluate", *options, "--qrels", "qrels.txt", "--measures", "AP", "--out",
            "never", "--engine", "local"]  # fmt: skip
    done = subprocess.run(argv, cwd=inputs, env=job_env(), capture_output=True, text=True)
    assert done.returncode == EXIT_INPUT
    assert done.stderr.splitlines() == [
        f"sparkeval evaluate: error: --engine local: {reason}, which Spark's readers judge; "
        "use --engine spark (or auto)"
    ]
    assert not (inputs / "never").exists()


def test_a_killed_worker_fails_the_run_at_once_and_writes_nothing(
    inputs: Path, tmp_path: Path
) -> None:
    marks, scratch = tmp_path / "marks", tmp_path / "tmp"
    marks.mkdir()
    scratch.mkdir()
    argv = [*CLI, "evaluate", "--run", "runs-1.parquet", "--qrels", "qrels.txt", "--measures",
            "AP", "--out", str(tmp_path / "out"), "--engine", "local"]  # fmt: skip
    env = job_env(TMPDIR=str(scratch), SPARKEVAL_FAULT=f"kill-worker-once:{marks}")
    done = subprocess.run(
        [*argv, "--local-workers", "2"], cwd=inputs, env=env, capture_output=True, text=True,
        timeout=120,  # a lost worker must not leave the run waiting for its part
    )  # fmt: skip
    assert (marks / "killed").is_file()  # the fault fired
    assert done.returncode == 1, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if ": error: " in line]
    assert errors == [
        "sparkeval evaluate: error: a worker process of the local engine ended without "
        "finishing its part (killed, or out of memory?); nothing was written: try fewer "
        "--local-workers, or --engine spark"
    ]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()
    assert list(scratch.iterdir()) == []
