"""Local masters hand the read rows to the evaluation as files instead of an exchange,
and keep the evaluated wide rows in files instead of Spark's cache.

Both ways must give the same files bit for bit, and the handoff and results
directories must be gone after the job, whether it succeeded or failed.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import sparkeval
from sparkeval.cli import main
from sparkeval.engine.plans import driver_plan
from sparkeval.engine.transport import local_handoff
from sparkeval.engine.transport.local_handoff import (
    HANDOFF_KEY,
    handoff_enabled,
    hands_files_over,
    settings_parent,
)
from sparkeval.errors import EXIT_INPUT, EXIT_OK
from sparkeval.scratch import SHARED_DIRECTORY_KEY
from tests.engine.test_direct_read import MEASURES, evaluate_argv, results, write_collection
from tests.random_collection import random_collection

pytestmark = pytest.mark.spark


def _sparkeval_dirs(spark) -> set[Path]:
    local = Path(spark.conf.get("spark.local.dir"))
    return {*local.glob("sparkeval-handoff-*"), *local.glob("sparkeval-results-*")}


#: the directories there before the running test (an earlier test's evaluation that
#: was never unpersisted keeps its results until the end of the process)
_before: set[Path] = set()


@pytest.fixture(autouse=True)
def _existing_dirs(spark):
    _before.clear()
    _before.update(_sparkeval_dirs(spark))
    yield


def handoff_dirs(spark) -> list[Path]:
    """The handoff and results directories the running test left in the session's
    local directory."""
    return sorted(_sparkeval_dirs(spark) - _before)


def one_run_argv(directory: Path) -> list[str]:
    return [
        "evaluate",
        "--run", str(directory / "run.parquet"),
        "--qrels", str(directory / "qrels.parquet"),
        "--measures", "AP",
        "--out", str(directory / "out"),
    ]  # fmt: skip


@pytest.fixture
def exchange(spark):
    """The session with the handoff turned off, for one test."""
    spark.conf.set(HANDOFF_KEY, "false")
    yield spark
    spark.conf.unset(HANDOFF_KEY)


def test_the_local_session_hands_over_files(spark) -> None:
    assert spark.sparkContext.master.startswith("local")
    assert handoff_enabled(spark)


def test_the_setting_turns_the_handoff_off(exchange) -> None:
    assert not handoff_enabled(exchange)


@pytest.mark.parametrize(
    "master,switch,shared,hands_over",
    [
        ("local[2]", None, None, True),
        ("local[2]", "false", None, False),
        ("spark://node:7077", None, None, False),
        ("spark://node:7077", None, "  ", False),
        ("spark://node:7077", None, "/shared/scratch", True),
        ("yarn", "true", "/shared/scratch", True),
        ("spark://node:7077", "false", "/shared/scratch", False),
    ],
)
def test_other_masters_hand_files_over_only_into_a_shared_directory(
    master, switch, shared, hands_over
) -> None:
    assert hands_files_over(master, switch, shared) is hands_over


@pytest.mark.parametrize(
    "settings,parent",
    [
        ({SHARED_DIRECTORY_KEY: "/shared/scratch", "spark.local.dir": "/a"}, "/shared/scratch"),
        ({SHARED_DIRECTORY_KEY: " ", "spark.local.dir": "/a, /b"}, "/a"),
        ({"spark.local.dir": "/a"}, "/a"),
    ],
)
def test_the_files_go_to_the_shared_directory_when_there_is_one(settings, parent) -> None:
    # the CLI's early read takes its place from the config's settings this way
    assert settings_parent(settings) == parent


@pytest.fixture
def shared_directory(spark, tmp_path):
    """The session with a handoff directory of its own, for one test."""
    directory = tmp_path / "shared"
    directory.mkdir()
    spark.conf.set(SHARED_DIRECTORY_KEY, str(directory))
    yield directory
    spark.conf.unset(SHARED_DIRECTORY_KEY)


def test_a_shared_directory_holds_the_files_until_unpersist(
    spark, tmp_path, monkeypatch, shared_directory
) -> None:
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1)  # not the driver's small-input path
    data = write_collection(tmp_path / "data", 5, 53, 2)
    run_df = spark.read.parquet(str(data / "runs.parquet"))
    qrels_df = spark.read.parquet(str(data / "qrels.parquet")).toDF(
        "query_id", "doc_id", "relevance"
    )
    ev = sparkeval.evaluate(spark, run_df, qrels_df, "AP,nDCG@10", buckets=3)
    try:
        (results_dir,) = shared_directory.iterdir()  # the handoff's files are gone already
        assert results_dir.name.startswith("sparkeval-results-")
        assert sorted(p.name for p in results_dir.iterdir())[0] == "wide-00000.arrow"
        assert handoff_dirs(spark) == []  # nothing under spark.local.dir
        shared = ev.ordered_per_query.toPandas()
    finally:
        ev.unpersist()
    assert list(shared_directory.iterdir()) == []
    spark.conf.unset(SHARED_DIRECTORY_KEY)
    ev = sparkeval.evaluate(spark, run_df, qrels_df, "AP,nDCG@10", buckets=3)
    try:
        local = ev.ordered_per_query.toPandas()
    finally:
        ev.unpersist()
    assert len(local) > 200
    pd.testing.assert_frame_equal(shared, local, check_exact=True)


def test_a_missing_shared_directory_is_a_configuration_error(
    spark, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1)  # not the driver's small-input path
    run, qrels = random_collection(6, queries=10, runs=1)
    run.drop(columns="run_id").to_parquet(tmp_path / "run.parquet", index=False)
    qrels.to_parquet(tmp_path / "qrels.parquet", index=False)
    missing = tmp_path / "not-there"
    spark.conf.set(SHARED_DIRECTORY_KEY, str(missing))
    try:
        assert main(one_run_argv(tmp_path)) == EXIT_INPUT
    finally:
        spark.conf.unset(SHARED_DIRECTORY_KEY)
    error = capsys.readouterr().err
    assert SHARED_DIRECTORY_KEY in error and str(missing) in error
    assert not (tmp_path / "out").exists()
    assert not missing.exists()


@pytest.mark.parametrize("buckets,row_group,shuffle", [(1, 10_000, None), (5, 41, 3)])
def test_files_and_exchange_give_the_same_output(
    spark, tmp_path, buckets, row_group, shuffle
) -> None:
    data = write_collection(tmp_path / "data", 8, row_group, shuffle)
    argv = ("--buckets", str(buckets))
    assert main(evaluate_argv(data, tmp_path / "files", *argv)) == EXIT_OK
    assert handoff_dirs(spark) == []
    spark.conf.set(HANDOFF_KEY, "false")
    try:
        assert main(evaluate_argv(data, tmp_path / "exchange", *argv)) == EXIT_OK
    finally:
        spark.conf.unset(HANDOFF_KEY)

    file_rows, file_summary = results(tmp_path / "files")
    exchange_rows, exchange_summary = results(tmp_path / "exchange")
    assert len(file_rows) > 1000
    pd.testing.assert_frame_equal(file_rows, exchange_rows, check_exact=True)
    assert file_summary == exchange_summary
    files, exchanged = (
        [p.read_bytes() for p in sorted((tmp_path / name / "per_query.parquet").iterdir())]
        for name in ("files", "exchange")
    )
    assert files and files == exchanged  # the same files, byte for byte


def test_a_command_on_directly_read_files_runs_spark_jobs_but_no_query(
    spark, tmp_path, monkeypatch
) -> None:
    # the evaluation of the handed-over buckets and the per-query writer are plain
    # Python jobs: no query for the JVM to plan (their values are the exchange's: above)
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1)  # not the driver's small-input path
    run, qrels = random_collection(9, queries=40, runs=1)
    run.drop(columns="run_id").to_parquet(tmp_path / "run.parquet", index=False)
    qrels.to_parquet(tmp_path / "qrels.parquet", index=False)
    queries = spark._jsparkSession.sharedState().statusStore()
    jobs = spark.sparkContext.statusTracker()
    queries_before, jobs_before = queries.executionsCount(), len(jobs.getJobIdsForGroup())
    assert main([*one_run_argv(tmp_path), "--buckets", "3"]) == EXIT_OK
    assert len(jobs.getJobIdsForGroup()) >= jobs_before + 2  # evaluation, per-query file
    assert queries.executionsCount() == queries_before
    assert len(pd.read_parquet(tmp_path / "out" / "per_query.parquet")) == 40


def test_no_files_are_left_when_a_read_value_needs_the_spark_readers(spark, tmp_path) -> None:
    run, qrels = random_collection(6, queries=10)
    run.loc[5, "score"] = None  # the workers leave it to the Spark readers, which reject it
    run.to_parquet(tmp_path / "run.parquet", index=False)
    qrels.to_parquet(tmp_path / "qrels.parquet", index=False)
    assert main(one_run_argv(tmp_path)) == EXIT_INPUT
    assert handoff_dirs(spark) == []


def test_no_files_are_left_when_the_evaluation_fails(spark, tmp_path) -> None:
    run, qrels = random_collection(6, queries=10)
    qrels = pd.concat([qrels, qrels.iloc[[0]]], ignore_index=True)  # a judgement twice
    run.to_parquet(tmp_path / "run.parquet", index=False)
    qrels.to_parquet(tmp_path / "qrels.parquet", index=False)
    assert main(one_run_argv(tmp_path)) == EXIT_INPUT
    assert not (tmp_path / "out").exists()
    assert handoff_dirs(spark) == []


def test_the_wide_rows_stay_in_local_files_until_unpersist(
    spark, tmp_path, monkeypatch, exchange
) -> None:
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1)  # not the driver's small-input path
    data = write_collection(tmp_path / "data", 5, 53, 2)
    run_df = spark.read.parquet(str(data / "runs.parquet"))  # a scan: the workers read it
    qrels_df = spark.read.parquet(str(data / "qrels.parquet")).toDF(
        "query_id", "doc_id", "relevance"
    )
    measures = "AP,nDCG@10,P@5,RR"
    evaluated = {}
    for handoff in ("false", "true"):
        exchange.conf.set(HANDOFF_KEY, handoff)
        ev = sparkeval.evaluate(spark, run_df, qrels_df, measures, buckets=3)
        kinds = sorted(r.kind for r in ev._blob_frame.select("kind").collect())
        evaluated[handoff] = (ev.report, ev.ordered_per_query.toPandas(), kinds)
        if handoff == "true":
            (directory,) = handoff_dirs(spark)
            assert directory.name.startswith("sparkeval-results-")
            names = sorted(p.name for p in directory.iterdir())
            assert names == [f"wide-{i:05d}.arrow" for i in range(len(names))]
            ev.unpersist()
            assert handoff_dirs(spark) == []
        else:
            ev.unpersist()
    # per partition: its wide rows inline (kind 0) or in a file (kind 2), its partial sums (1)
    partitions = len(names)
    assert partitions > 1
    assert evaluated["false"][2] == [0] * partitions + [1] * partitions
    assert evaluated["true"][2] == [1] * partitions + [2] * partitions
    assert evaluated["true"][0] == evaluated["false"][0]
    assert len(evaluated["true"][1]) > 400  # 2 runs x 62 queries x 4 measures
    pd.testing.assert_frame_equal(evaluated["true"][1], evaluated["false"][1], check_exact=True)


def _counted_frame_writes(monkeypatch) -> list[int]:
    """A list whose one number counts the calls of the frame handoff's writing job."""
    calls = [0]
    write = local_handoff.write_frame_pieces

    def counted(*args, **kwargs):
        calls[0] += 1
        return write(*args, **kwargs)

    monkeypatch.setattr(local_handoff, "write_frame_pieces", counted)
    return calls


@pytest.mark.parametrize("buckets,flush_rows", [(1, 1 << 20), (4, 37)])
def test_rows_spark_reads_are_handed_over_with_the_exchanges_output(
    spark, tmp_path, monkeypatch, buckets, flush_rows
) -> None:
    # Spark's readers: their rows reach the workers as Arrow, written out by bucket in
    # writes of flush_rows rows (several per partition when it is small)
    monkeypatch.setattr(local_handoff, "FRAME_FLUSH_ROWS", flush_rows)
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1)  # not the driver's small-input path
    writes = _counted_frame_writes(monkeypatch)
    data = write_collection(tmp_path / "data", 9, 50, 3)
    argv = ("--buckets", str(buckets), "--reader", "spark")
    assert main(evaluate_argv(data, tmp_path / "files", *argv)) == EXIT_OK
    assert handoff_dirs(spark) == [] and writes == [1]
    spark.conf.set(HANDOFF_KEY, "false")
    try:
        assert main(evaluate_argv(data, tmp_path / "exchange", *argv)) == EXIT_OK
    finally:
        spark.conf.unset(HANDOFF_KEY)
    assert writes == [1]  # the exchange
    file_rows, file_summary = results(tmp_path / "files")
    exchange_rows, exchange_summary = results(tmp_path / "exchange")
    assert len(file_rows) > 1000
    pd.testing.assert_frame_equal(file_rows, exchange_rows, check_exact=True)
    assert file_summary == exchange_summary


@pytest.mark.parametrize("run_files", [1, 2])
def test_runs_named_after_their_files_are_handed_over_with_the_exchanges_output(
    spark, tmp_path, monkeypatch, run_files
) -> None:
    # files without a run id column: each run's code is a literal Spark folds, so the
    # run rows travel without it (one file) or with a column Spark knows is never null
    # (two files), beside qrels rows whose code the writing tasks add
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1)  # not the driver's small-input path
    run, qrels = random_collection(12, queries=50, runs=run_files, edge_queries=True)
    argv = ["evaluate", "--qrels", str(tmp_path / "qrels.parquet"), "--measures", MEASURES,
            "--reader", "spark", "--buckets", "3"]  # fmt: skip
    for run_id, rows in run.groupby("run_id"):
        path = tmp_path / f"{run_id}.parquet"
        rows.drop(columns="run_id").to_parquet(path, index=False, row_group_size=200)
        argv += ["--run", str(path)]
    qrels.to_parquet(tmp_path / "qrels.parquet", index=False)
    writes = _counted_frame_writes(monkeypatch)
    assert main([*argv, "--out", str(tmp_path / "files")]) == EXIT_OK
    assert writes == [1]
    spark.conf.set(HANDOFF_KEY, "false")
    try:
        assert main([*argv, "--out", str(tmp_path / "exchange")]) == EXIT_OK
    finally:
        spark.conf.unset(HANDOFF_KEY)
    assert writes == [1]  # the exchange
    file_rows, file_summary = results(tmp_path / "files")
    exchange_rows, exchange_summary = results(tmp_path / "exchange")
    assert sorted(file_summary["runs"]) == sorted(set(run.run_id))
    assert len(file_rows) > 500
    pd.testing.assert_frame_equal(file_rows, exchange_rows, check_exact=True)
    assert file_summary == exchange_summary
    assert handoff_dirs(spark) == []


def test_a_computed_dataframe_is_handed_over_with_the_exchanges_values(
    spark, monkeypatch, exchange
) -> None:
    run, qrels = random_collection(10, queries=60, runs=2)
    run_df = spark.createDataFrame(run).where("score > -1e300")  # computed: not a bare scan
    qrels_df = spark.createDataFrame(qrels)
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1)  # not the driver's small-input path
    writes = _counted_frame_writes(monkeypatch)
    results = {}
    for handoff in ("false", "true"):
        spark.conf.set(HANDOFF_KEY, handoff)
        ev = sparkeval.evaluate(spark, run_df, qrels_df, "AP,nDCG@10,P@5,RR", buckets=3)
        results[handoff] = (ev.report, ev.ordered_per_query.toPandas(), ev.summary.collect())
        ev.unpersist()
    assert results["true"][0] == results["false"][0]
    pd.testing.assert_frame_equal(results["true"][1], results["false"][1], check_exact=True)
    assert results["true"][2] == results["false"][2]
    assert handoff_dirs(spark) == [] and writes == [1]


def test_no_files_are_left_when_spark_reads_a_bad_row(spark, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1)  # not the driver's small-input path
    writes = _counted_frame_writes(monkeypatch)
    run, qrels = random_collection(6, queries=10)
    run["score"] = run["score"].astype(object)
    run.loc[5, "score"] = "high"  # a score Spark's readers reject, naming the row
    run.to_csv(tmp_path / "run.csv", index=False)
    qrels.to_csv(tmp_path / "qrels.csv", index=False)
    argv = ["evaluate", "--run", str(tmp_path / "run.csv"), "--qrels", str(tmp_path / "qrels.csv"),
            "--measures", "AP", "--out", str(tmp_path / "out"), "--reader", "spark"]  # fmt: skip
    assert main(argv) == EXIT_INPUT
    assert "column score value 'high' is not a number" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    assert handoff_dirs(spark) == [] and writes == [1]


def test_the_parts_of_a_frame_handoff_never_share_a_unit() -> None:
    # a union of two parts may number their partitions from 0 each (children partitioned
    # alike are read together): the part decides the units, and units sort by part,
    # partition and write, as the bucket's files are concatenated
    units = [
        local_handoff.frame_unit(part, partition, write)
        for part in (0, 1, 2)
        for partition in (0, 1, (1 << 31) - 1)
        for write in (0, 1, local_handoff.UNITS_PER_PARTITION - 1)
    ]
    assert units == sorted(set(units))
    assert local_handoff.frame_unit(0, 3, 1) == 3 * 65536 + 1
    assert local_handoff.frame_unit(1, 0) == 1 << 47
    assert max(units) < 1 << 63  # the job's unit column is a long


def test_with_constant_puts_the_column_first_and_every_field_nullable() -> None:
    import pyarrow as pa

    schema = pa.schema(
        [pa.field("query_id", pa.string(), nullable=False), ("_value", pa.float64())]
    )
    rows = pa.table({"query_id": ["q1", "q2"], "_value": [1.5, 2.0]}, schema=schema)
    zeros = local_handoff.with_constant(rows, ("_run", 0))
    assert zeros.column_names == ["_run", "query_id", "_value"]
    assert (
        zeros.column("_run").to_pylist() == [0, 0] and zeros.schema.field("_run").type == pa.int32()
    )
    assert all(field.nullable for field in zeros.schema)
    nulls = local_handoff.with_constant(rows, ("_run", None))
    assert nulls.column("_run").to_pylist() == [None, None]
    assert local_handoff.with_constant(rows, None).column_names == ["query_id", "_value"]
    assert local_handoff.with_constant(rows, None).schema.field("query_id").nullable


def test_the_exchange_of_the_workers_rows_is_one_job(spark, tmp_path, monkeypatch, exchange):
    """Without the handoff, the workers' rows reach their buckets through one exchange,
    and the evaluation is one Spark job: the session's adaptive execution (on here)
    would add one for the exchange's map stage and one for the scan of the cached
    results, with nothing to adapt. The session's setting is left as it was."""
    from tests.job_groups import jobs_run

    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1)  # not the driver's small-input path
    data = write_collection(tmp_path / "data", 5, 53, 2)
    run_df = spark.read.parquet(str(data / "runs.parquet"))  # a scan: the workers read it
    qrels_df = spark.read.parquet(str(data / "qrels.parquet")).toDF(
        "query_id", "doc_id", "relevance"
    )
    assert spark.conf.get("spark.sql.adaptive.enabled") == "true"
    evaluations = []

    def evaluate() -> None:
        evaluations.append(sparkeval.evaluate(spark, run_df, qrels_df, "AP,RR", buckets=3))

    assert jobs_run(spark, "exchange-evaluation", evaluate) == 1
    assert spark.conf.get("spark.sql.adaptive.enabled") == "true"
    (evaluation,) = evaluations
    exchange.conf.set(HANDOFF_KEY, "true")
    handed_over = sparkeval.evaluate(spark, run_df, qrels_df, "AP,RR", buckets=3)
    assert evaluation.report == handed_over.report
    pd.testing.assert_frame_equal(
        evaluation.ordered_per_query.toPandas(),
        handed_over.ordered_per_query.toPandas(),
        check_exact=True,
    )
    evaluation.unpersist()
    handed_over.unpersist()
