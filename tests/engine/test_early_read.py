"""The inputs read in the driver while Spark starts (``early_pieces``).

The driver's read must leave exactly the files the local handoff's read job writes,
a CLI process that reads early must write the same outputs as the workers' read,
and a read that cannot be used must leave nothing behind and change nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.engine.transport import local_handoff
from sparkeval.engine.transport.early_pieces import DRIVER_READ_KEY, EarlyPieces
from sparkeval.io.direct_plan import plan_direct_inputs
from sparkeval.spark import local_session_cores
from tests.engine.test_direct_read import MEASURES, write_collection
from tests.jobs import CLI, run_job
from tests.random_collection import random_collection


def _plan(data: Path):
    return plan_direct_inputs(
        None,
        [str(data / "runs.parquet"), str(data / "run2.parquet")],
        str(data / "qrels.parquet"),
        None,
        None,
        None,
        "query_id=topic,doc_id=docno,relevance=judgement",
    )


def _two_plain_runs(directory: Path) -> Path:
    """Two run files named after their runs (no run id column) and canonical qrels."""
    directory.mkdir(parents=True, exist_ok=True)
    run, qrels = random_collection(11, queries=50, runs=2, edge_queries=True)
    for run_id, rows in run.groupby("run_id"):
        table = pa.Table.from_pandas(rows.drop(columns="run_id"), preserve_index=False)
        pq.write_table(table, directory / f"{run_id}.parquet", row_group_size=150)
    pq.write_table(
        pa.Table.from_pandas(qrels, preserve_index=False),
        directory / "qrels.parquet",
        row_group_size=200,
    )
    return directory


def test_without_a_session_a_run_id_column_is_read_here_but_a_condition_is_not(
    tmp_path,
) -> None:
    # runs.parquet holds a run_id column (runs run0 and run1): its values are read from
    # the file, so a CLI process can read it while its JVM starts; a condition needs
    # Spark to apply it
    data = write_collection(tmp_path / "data", seed=5, row_group=40)
    plan = _plan(data)
    assert plan is not None and plan.run_ids == ("run0", "run1", "run2")
    assert plan_direct_inputs(
        None, [str(data / "run2.parquet")], str(data / "qrels.parquet"), None, None, None,
        "query_id=topic,doc_id=docno,relevance=judgement", run_where="score > 0",
    ) is None  # fmt: skip


@pytest.mark.spark
def test_the_driver_writes_the_files_the_read_job_writes(spark, tmp_path) -> None:
    data = _two_plain_runs(tmp_path / "data")
    plan = plan_direct_inputs(
        None,
        [str(data / "run0.parquet"), str(data / "run1.parquet")],
        str(data / "qrels.parquet"),
        None,
        None,
        None,
        None,
    )
    assert plan is not None and len(plan.row_groups) > 6
    parent = tmp_path / "early"
    parent.mkdir()
    ready = EarlyPieces.start(lambda: plan, lambda p: 5, threads=2, parent=str(parent)).result()
    assert ready is not None and ready.buckets == 5 and ready.directory.parent == parent

    by_job = tmp_path / "job"
    by_job.mkdir()
    units = local_handoff.write_pieces(spark, plan, list(plan.run_ids), 5, by_job)
    assert ready.units_by_bucket == units
    written = sorted(p.name for p in ready.directory.iterdir())
    assert written == sorted(p.name for p in by_job.iterdir())
    assert len(written) > 5
    for name in written:
        assert (ready.directory / name).read_bytes() == (by_job / name).read_bytes(), name


def test_a_read_that_fails_leaves_nothing(tmp_path) -> None:
    data = _two_plain_runs(tmp_path / "data")
    plan = plan_direct_inputs(
        None, [str(data / "run0.parquet")], str(data / "qrels.parquet"), None, None, None, None
    )
    (data / "run0.parquet").write_bytes(b"not parquet any more")
    parent = tmp_path / "early"
    parent.mkdir()
    early = EarlyPieces.start(lambda: plan, lambda p: 3, threads=2, parent=str(parent))
    assert early.result() is None
    assert list(parent.iterdir()) == []


def test_a_discarded_read_leaves_nothing(tmp_path) -> None:
    data = _two_plain_runs(tmp_path / "data")
    plan = plan_direct_inputs(
        None, [str(data / "run0.parquet")], str(data / "qrels.parquet"), None, None, None, None
    )
    parent = tmp_path / "early"
    parent.mkdir()
    early = EarlyPieces.start(lambda: plan, lambda p: 3, threads=1, parent=str(parent))
    early.discard()
    assert early.result() is None
    assert list(parent.iterdir()) == []


def test_local_session_cores(monkeypatch) -> None:
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    cores = os.cpu_count() or 1
    assert local_session_cores("local", None) == 1
    assert local_session_cores("local[1]", None) == 1
    assert local_session_cores("local[1,3]", None) == 1
    assert local_session_cores("local[*]", None) == cores
    assert local_session_cores(None, None) == cores
    assert local_session_cores(f"local[{cores + 5}]", None) == cores
    assert local_session_cores("spark://host:7077", None) is None
    assert local_session_cores("yarn", None) is None
    assert local_session_cores("local[2]", "sc://localhost:15002") is None
    monkeypatch.setenv("SPARK_REMOTE", "sc://localhost:15002")
    assert local_session_cores("local[2]", None) is None


def _evaluate_in_a_new_process(config: Path, out: Path):
    """``sparkeval evaluate`` of ``config`` in a new process on ``local[2]``; it succeeded."""
    argv = [*CLI, "evaluate", "--config", str(config), "--out", str(out), "--master", "local[2]"]
    argv += ["--engine", "spark"]  # the early read is a Spark session's
    done = run_job(argv, cwd=out.parent, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.spark
def test_a_new_cli_process_reads_early_and_writes_what_the_read_job_writes(tmp_path):
    data = _two_plain_runs(tmp_path / "data")
    local_dir = tmp_path / "local"
    local_dir.mkdir()
    config = tmp_path / "job.yaml"
    text = (
        f"run: [{data / 'run0.parquet'}, {data / 'run1.parquet'}]\n"
        f"qrels: {data / 'qrels.parquet'}\n"
        f"measures: [{MEASURES}]\n"
        "spark:\n"
        f"  spark.local.dir: {local_dir}\n"
    )
    config.write_text(text)
    early = _evaluate_in_a_new_process(config, tmp_path / "early")
    assert "inputs read by the driver's threads" in early.stderr
    assert not [p for p in local_dir.iterdir() if p.name.startswith("sparkeval-handoff-")]

    # the switch: the read job's tasks read the files, in the Python workers
    config.write_text(text + "  spark.sparkeval.driverRead: 'false'\n")
    job = _evaluate_in_a_new_process(config, tmp_path / "job")
    assert "inputs read by the Python workers" in job.stderr
    for name in ("per_query.parquet", "summary.parquet"):
        got = pd.read_parquet(tmp_path / "early" / name).drop(
            columns="evaluated_at", errors="ignore"
        )
        want = pd.read_parquet(tmp_path / "job" / name).drop(
            columns="evaluated_at", errors="ignore"
        )
        pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert len(pd.read_parquet(tmp_path / "job" / "per_query.parquet")) > 500


@pytest.mark.spark
def test_the_api_reads_scanned_frames_in_the_driver(spark, tmp_path, monkeypatch) -> None:
    from sparkeval.engine.plans import driver_plan, spark_engine

    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", 0)  # no input is collected whole
    data = _two_plain_runs(tmp_path / "data")
    runs = [pd.read_parquet(data / f"{r}.parquet").assign(run_id=r) for r in ("run0", "run1")]
    pd.concat(runs).to_parquet(tmp_path / "runs.parquet", index=False, row_group_size=300)
    run_df = spark.read.parquet(str(tmp_path / "runs.parquet"))
    qrels_df = spark.read.parquet(str(data / "qrels.parquet"))
    measures = MEASURES.split(",")
    driver = spark_engine.evaluate(spark, run_df, qrels_df, measures)
    spark.conf.set(DRIVER_READ_KEY, "false")
    try:
        workers = spark_engine.evaluate(spark, run_df, qrels_df, measures)
    finally:
        spark.conf.unset(DRIVER_READ_KEY)
    assert (driver.reader, workers.reader) == ("driver", "workers")
    got = driver.ordered_per_query.toPandas()
    want = workers.ordered_per_query.toPandas()
    assert len(got) > 500
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert driver.report["runs"] == workers.report["runs"]
    driver.unpersist()
    workers.unpersist()


def test_the_early_read_predicts_the_sessions_bucket_count(spark) -> None:
    from sparkeval.engine.plans.spark_engine import default_buckets, local_default_buckets
    from sparkeval.spark import local_shuffle_partitions

    # this session (its shuffle partitions as earlier tests left them): what the
    # engine will find
    shuffle = spark.conf.get("spark.sql.shuffle.partitions")
    cores = spark.sparkContext.defaultParallelism
    predicted = local_default_buckets({"spark.sql.shuffle.partitions": shuffle}, cores)
    assert predicted == default_buckets(spark, None) == min(int(shuffle), 4 * cores)
    # sessions sparkeval starts: 4 shuffle partitions per machine core, 4 buckets per
    # session core at most
    assert local_default_buckets({}, 1) == min(local_shuffle_partitions(), 4)
    assert local_default_buckets({"spark.default.parallelism": "1"}, 2) == 4
    assert local_default_buckets({"spark.sql.shuffle.partitions": "3"}, 2) == 3
    assert local_default_buckets({"spark.sql.shuffle.partitions": "200"}, 2) == 8
    assert local_default_buckets({"spark.default.parallelism": "two"}, 2) is None
    assert local_default_buckets({"spark.sql.shuffle.partitions": "many"}, 2) is None
