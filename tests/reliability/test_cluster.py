"""The evaluate job on a Spark standalone cluster (master + two workers on loopback),
submitted as the user guide's "Running on a cluster" says: the package zipped into
``--py-files``, ``PYSPARK_PYTHON`` naming the interpreter.  Results equal local mode's,
also when a worker machine is lost in the middle of the job.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_OK
from sparkeval.faults import FAULT_ENV
from sparkeval.scratch import SHARED_DIRECTORY_KEY
from tests.cluster import build_zip, cluster_env, spark_submit
from tests.conftest import ROOT
from tests.jobs import MEASURES, assert_same_results, collection

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> dict[str, Path]:
    """The collection, its config and the package zip shipped with the job."""
    base = tmp_path_factory.mktemp("cluster-job")
    config = collection(base / "data")
    return {
        "base": base,
        "config": config,
        "zip": build_zip(ROOT, base / "sparkeval.zip"),
    }


@pytest.fixture(scope="module")
def local_result(job, spark, tmp_path_factory) -> Path:
    """The same evaluation in local mode (in process)."""
    out = tmp_path_factory.mktemp("local") / "out"
    data = job["config"].parent
    runs = [str(data / f"run_{name}.txt") for name in ("strong", "medium", "weak")]
    argv = ["evaluate", *(a for r in runs for a in ("--run", r))]
    argv += ["--qrels", str(data / "qrels.txt"), "--measures", MEASURES, "--out", str(out)]
    assert main([*argv, "--buckets", "4"]) == EXIT_OK
    return out


def submit(cluster, job, out: Path, *conf: str) -> list[str]:
    return [
        *spark_submit(cluster.url, job["zip"], *(item for c in conf for item in ("--conf", c))),
        str(ROOT / "jobs" / "evaluate.py"),
        "--config",
        str(job["config"]),
        "--out",
        str(out),
    ]


def submitted(cluster, job, out: Path, *conf: str) -> subprocess.CompletedProcess[str]:
    """Submit the job to the cluster (with ``conf`` settings) and wait for it to succeed."""
    proc = subprocess.run(
        submit(cluster, job, out, *conf),
        cwd=out.parent,
        env=cluster_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == EXIT_OK, proc.stderr[-4000:]
    return proc


def test_submitted_to_the_cluster_equals_local_mode(
    standalone_cluster, job, local_result, tmp_path
) -> None:
    out = tmp_path / "out"
    submitted(standalone_cluster, job, out)
    assert_same_results(out, local_result)
    apps = standalone_cluster.status().get("completedapps", [])
    assert any(app.get("name") == "sparkeval-evaluate" for app in apps), "ran elsewhere"


def test_executors_with_sparkeval_installed_can_run_its_worker_daemon(
    standalone_cluster, parquet_job, local_result, tmp_path
) -> None:
    """The user guide's setting for executors whose Python has sparkeval installed (here the
    test interpreter): their Python workers are forked by sparkeval's daemon (a module
    they could not import would fail every task), and the results are the same."""
    out = tmp_path / "out"
    setting = "spark.python.daemon.module=sparkeval.worker_daemon"
    submitted(standalone_cluster, parquet_job, out, setting)
    assert_same_results(out, local_result)


@pytest.fixture(scope="module")
def parquet_job(job) -> dict[str, Path]:
    """The same collection as Parquet: one runs file with a run_id column, and the qrels.

    Parquet inputs are read by the Python workers themselves (row group by row group)
    and reach the evaluation as Arrow payloads: a different data path from TREC text.
    """
    data = job["config"].parent
    runs = pd.concat(
        pd.read_csv(
            data / f"run_{name}.txt",
            sep=r"\s+",
            header=None,
            comment="#",
            names=["query_id", "iter", "doc_id", "rank", "score", "run_id"],
            dtype={"query_id": str, "doc_id": str, "run_id": str, "score": float},
        )
        for name in ("strong", "medium", "weak")
    )
    runs = runs[["run_id", "query_id", "doc_id", "score"]].sample(frac=1.0, random_state=1)
    runs.to_parquet(data / "runs.parquet", index=False, row_group_size=400)
    qrels = pd.read_csv(
        data / "qrels.txt",
        sep=r"\s+",
        header=None,
        comment="#",
        names=["query_id", "iter", "doc_id", "relevance"],
        dtype={"query_id": str, "doc_id": str, "relevance": "int64"},
    )
    qrels.drop(columns="iter").to_parquet(data / "qrels.parquet", index=False)
    config = data / "job-parquet.yaml"
    text = job["config"].read_text().splitlines()
    body = [line for line in text if not line.startswith(("run:", "qrels:"))]
    config.write_text("\n".join(["run: [runs.parquet]", "qrels: qrels.parquet", *body]) + "\n")
    return {**job, "config": config}


def event_log(directory: Path) -> tuple[str, ...]:
    """Settings that write the application's event log, uncompressed, to ``directory``."""
    directory.mkdir()
    return (
        "spark.eventLog.enabled=true",
        f"spark.eventLog.dir={directory}",
        "spark.eventLog.compress=false",
    )


def shuffle_written(directory: Path) -> tuple[int, int]:
    """(finished tasks, shuffle bytes they wrote) in the event logs under ``directory``."""
    tasks = written = 0
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        if path.name.startswith((".", "appstatus")):  # checksums, the status marker
            continue
        for line in path.read_text().splitlines():
            event = json.loads(line)
            if event.get("Event") == "SparkListenerTaskEnd":
                tasks += 1
                metrics = event.get("Task Metrics") or {}
                written += (metrics.get("Shuffle Write Metrics") or {}).get(
                    "Shuffle Bytes Written", 0
                )
    return tasks, written


def test_parquet_read_by_cluster_workers_equals_local_mode(
    standalone_cluster, parquet_job, local_result, tmp_path
) -> None:
    out = tmp_path / "out"
    events = event_log(tmp_path / "events")
    proc = submitted(standalone_cluster, parquet_job, out, *events)
    # spark-submit merges the driver's stderr into its stdout
    output = (proc.stdout + proc.stderr).splitlines()
    logged = [line for line in output if "sparkeval:" in line]  # via the JVM log
    assert "sparkeval: inputs read by the Python workers" in "\n".join(logged), logged
    assert_same_results(out, local_result)
    tasks, shuffled = shuffle_written(tmp_path / "events")
    assert tasks > 0 and shuffled > 0  # the rows reached their buckets through the exchange


def test_a_shared_handoff_directory_replaces_the_exchange(
    standalone_cluster, parquet_job, local_result, tmp_path
) -> None:
    """The user guide's ``spark.sparkeval.handoffDirectory``: the executors hand the rows
    over as files in a directory they share with the driver (here, the one machine's),
    no row goes through Spark's shuffle, the results are the same, and the directory is
    left empty."""
    shared = tmp_path / "shared"
    shared.mkdir()
    out = tmp_path / "out"
    events = event_log(tmp_path / "events")
    submitted(standalone_cluster, parquet_job, out, f"{SHARED_DIRECTORY_KEY}={shared}", *events)
    assert_same_results(out, local_result)
    tasks, shuffled = shuffle_written(tmp_path / "events")
    assert tasks > 0 and shuffled == 0
    assert list(shared.iterdir()) == []


def test_a_worker_lost_mid_job_is_survived(standalone_cluster, job, local_result, tmp_path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    out = tmp_path / "out"
    log = tmp_path / "submit.log"
    with log.open("w") as handle:
        proc = subprocess.Popen(
            # every bucket evaluation sleeps 3 s: the job is running when a worker dies
            submit(
                standalone_cluster, job, out, f"spark.executorEnv.{FAULT_ENV}=slow-task:3:{marks}"
            ),
            cwd=tmp_path,
            env=cluster_env(),
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
        try:
            victim = None
            deadline = time.monotonic() + 600
            while victim is None:
                assert proc.poll() is None, log.read_text()[-4000:]
                assert time.monotonic() < deadline, "no task started"
                for mark in sorted(marks.iterdir()):
                    victim = standalone_cluster.worker_of(int(mark.name.split("-")[1]))
                    if victim is not None:
                        break
                time.sleep(0.2)
            standalone_cluster.kill_worker(victim)
            code = proc.wait(timeout=900)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    try:
        text = log.read_text()
        assert code == EXIT_OK, text[-4000:]
        assert "Lost executor" in text, "the killed worker's executor was not lost"
        assert_same_results(out, local_result)
        summary = json.loads((out / "summary.json").read_text())
        assert summary["parameters"]["measures"] == MEASURES.split(",")
    finally:
        standalone_cluster.start_worker()  # leave two workers for later tests
        standalone_cluster.wait_for_workers(2, timeout=240)
