"""Small inputs cost little: one Spark job of one task (the rows are evaluated in the
driver), or none for frames of local data, whatever the shuffle partitions and however
many runs; the per-query frame is built only when it is asked for; and the values equal
the distributed plan's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import sparkeval
from sparkeval.engine.plans import driver_plan
from sparkeval.engine.plans.spark_engine import BYTES_PER_BUCKET, default_buckets
from sparkeval.errors import InputError

pytestmark = pytest.mark.spark


def _frames(spark, runs: int = 1):
    rows = [
        (f"r{r}", f"q{q}", f"d{d}", float(10 - d)) for r in range(runs) for q in range(5)
        for d in range(10)
    ]  # fmt: skip
    run = pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"])
    if runs == 1:
        run = run.drop(columns="run_id")
    qrels = pd.DataFrame(
        [(f"q{q}", f"d{d}", 1) for q in range(5) for d in (1, 4)],
        columns=["query_id", "doc_id", "relevance"],
    )
    return spark.createDataFrame(run), spark.createDataFrame(qrels)


def _counted(spark, group: str, call):
    """``(call's result, Spark jobs it ran, tasks of their stages)``."""
    tracker = spark.sparkContext.statusTracker()
    spark.sparkContext.setJobGroup(group, group)
    try:
        result = call()
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    jobs = sorted(tracker.getJobIdsForGroup(group))
    stages = [s for job in jobs for s in (getattr(tracker.getJobInfo(job), "stageIds", ()) or ())]
    tasks = [getattr(tracker.getStageInfo(s), "numTasks", 0) for s in sorted(stages)]
    return result, len(jobs), tasks


def _evaluated(spark, group: str, run, qrels, measures: str):
    return _counted(spark, group, lambda: sparkeval.evaluate(spark, run, qrels, measures))


def test_a_tiny_input_is_one_bucket_whatever_the_shuffle_partitions(spark) -> None:
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "200")
    try:
        assert spark.sparkContext.defaultParallelism == 2  # local[2]
        assert default_buckets(spark, 1_000) == 1
        assert default_buckets(spark, 3 * BYTES_PER_BUCKET + 1) == 4
        # 200 shuffle partitions, but no more than 4 buckets per core: 8
        assert default_buckets(spark, 10**12) == 8
        assert default_buckets(spark, None) == 8
        spark.conf.set("spark.sql.shuffle.partitions", "3")
        assert default_buckets(spark, 10**12) == 3
        spark.conf.set("spark.sql.shuffle.partitions", "200")
        run, qrels = (frame.cache() for frame in _frames(spark))
        ev, jobs, tasks = _evaluated(spark, "tiny", run, qrels, "AP,P@5")
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", previous)
    try:
        # by hand: every query ranks its relevant docs d1, d4 at ranks 2 and 5
        assert ev.report["runs"]["run"]["measures"] == {"AP": (1 / 2 + 2 / 5) / 2, "P@5": 0.4}
    finally:
        ev.unpersist()
        run.unpersist()
        qrels.unpersist()
    # one job of one stage, the cached rows collected for the driver: a task for each
    # input, and one for each marker after it (it was 200 buckets)
    assert (jobs, tasks) == (1, [4])


def test_frames_of_local_data_are_evaluated_without_a_job(spark) -> None:
    ev, jobs, _ = _evaluated(spark, "local", *_frames(spark), "AP,P@5")
    try:
        # by hand, as above
        assert ev.report["runs"]["run"]["measures"] == {"AP": (1 / 2 + 2 / 5) / 2, "P@5": 0.4}
    finally:
        ev.unpersist()
    assert jobs == 0  # the rows were in the driver already


def test_runs_are_found_without_a_job_and_the_per_query_frame_waits(spark) -> None:
    ev, one_run, _ = _evaluated(spark, "one-run", *_frames(spark), "AP")
    ev.unpersist()
    ev, three_runs, _ = _evaluated(spark, "three-runs", *_frames(spark, runs=3), "AP,P@5")
    try:
        assert sorted(ev.report["runs"]) == ["r0", "r1", "r2"]
        # the run ids of several runs come with the collected rows: no extra job (and
        # frames of local data need none to be collected)
        assert (one_run, three_runs) == (0, 0)
        assert "per_query" not in vars(ev)  # made when asked for, not before
        rows, asked, _ = _counted(spark, "per-query", lambda: ev.ordered_per_query.collect())
        # made of the rows the driver holds: local data, collected without a job
        assert asked == 0
        # by hand, as above: AP (1/2 + 2/5) / 2 and P@5 2/5 for every run and query
        assert [tuple(row) for row in rows] == [
            (f"r{r}", f"q{q}", measure, value)
            for r in range(3) for q in range(5)
            for measure, value in (("AP", (1 / 2 + 2 / 5) / 2), ("P@5", 0.4))
        ]  # fmt: skip
    finally:
        ev.unpersist()


def _random_collection(spark, seed: int = 3, rdd: bool = False):
    """Three runs with tied scores, graded qrels, a query no run answers and a run
    query without judgements: frames of lists of rows, or (``rdd``) of RDDs of them."""
    rng = np.random.default_rng(seed)
    run_rows = [
        (f"r{r}", f"q{q}", f"d{d}", float(rng.integers(0, 4)))
        for r in range(3) for q in range(12) for d in rng.choice(30, 15, replace=False)
    ]  # fmt: skip
    run_rows.append(("r1", "q-unjudged", "d1", 1.0))
    qrels_rows = [
        (f"q{q}", f"d{d}", int(rng.integers(0, 4))) for q in range(13) for d in range(0, 30, 3)
    ]
    if rdd:
        run_rows = spark.sparkContext.parallelize(run_rows)
        qrels_rows = spark.sparkContext.parallelize(qrels_rows)
    run = spark.createDataFrame(
        run_rows, "run_id string, query_id string, doc_id string, score double"
    )
    qrels = spark.createDataFrame(qrels_rows, "query_id string, doc_id string, relevance int")
    return run, qrels


@pytest.mark.parametrize("queries", ["qrels", "both"])
def test_the_driver_gives_the_distributed_values_to_the_bit(spark, monkeypatch, queries) -> None:
    run, qrels = _random_collection(spark)
    measures = "AP,nDCG@10,P@5,R@10,RR,bpref,ERR@10,iP@0.1,NumRet,Rprec"
    small = sparkeval.evaluate(spark, run, qrels, measures, queries=queries)
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1)  # the same inputs, distributed
    large = sparkeval.evaluate(spark, run, qrels, measures, queries=queries, buckets=3)
    try:
        assert small.report == large.report
        rows = [
            ev.ordered_per_query.toPandas().fillna(-1.0).to_dict("list") for ev in (small, large)
        ]
        assert rows[0] == rows[1]
        assert small.summary.collect() == large.summary.collect()
        for frame in ("per_query", "ordered_per_query", "summary"):
            assert getattr(small, frame).schema == getattr(large, frame).schema, frame
        assert small.per_query.columns == ["run_id", "query_id", "measure", "value"]
        # the same rows (collect() tells a null from NaN, which fillna above does not)
        key = lambda row: (row.run_id, row.query_id, row.measure)  # noqa: E731
        assert sorted(small.per_query.collect(), key=key) == sorted(
            large.per_query.collect(), key=key
        )
    finally:
        small.unpersist()
        large.unpersist()


def test_a_bad_row_fails_the_driver_job_with_its_key(spark) -> None:
    run = spark.createDataFrame(
        [("q1", "d1", "2.5"), ("q1", "d2", "high")], "query_id string, doc_id string, score string"
    )
    qrels = spark.createDataFrame(
        [("q1", "d1", 1)], "query_id string, doc_id string, relevance int"
    )
    with pytest.raises(InputError, match="query q1 doc d2: column score value 'high'"):
        sparkeval.evaluate(spark, run, qrels, "AP")


def _typed_collection(spark):
    """Three runs with integer run ids, int64 query ids, int32 doc ids, float scores
    with ties and tinyint grades: plain columns of every kind."""
    rng = np.random.default_rng(5)
    run_rows = [
        (r, q, int(d), float(rng.integers(0, 4)))
        for r in range(3) for q in range(12) for d in rng.choice(30, 15, replace=False)
    ]  # fmt: skip
    qrels_rows = [(q, d, int(rng.integers(0, 4))) for q in range(13) for d in range(0, 30, 3)]
    run = spark.createDataFrame(run_rows, "run_id int, query_id bigint, doc_id int, score float")
    qrels = spark.createDataFrame(qrels_rows, "query_id bigint, doc_id int, relevance tinyint")
    return run, qrels


def _forced(monkeypatch, path: str) -> None:
    """Evaluate small inputs in the driver by the ``plain`` or the ``checked`` plan
    only (the other one fails the test if it is used), or ``distributed``."""
    from sparkeval.engine.plans import spark_engine

    def unused(*args, **kwargs):
        raise AssertionError(f"only the {path} plan may be used")

    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1 if path == "distributed" else 1 << 40)
    if path == "plain":
        monkeypatch.setattr(spark_engine, "evaluate_in_driver", unused)
    elif path == "checked":
        monkeypatch.setattr(spark_engine, "evaluate_plain_in_driver", lambda *a, **k: None)


@pytest.mark.parametrize(
    ("collection", "run_ids"), [(_random_collection, "r"), (_typed_collection, "")]
)
def test_plain_frames_skip_the_row_checks_and_give_the_same_values(
    spark, monkeypatch, collection, run_ids
) -> None:
    run, qrels = collection(spark)
    measures = "AP,nDCG@10,P@5,R@10,RR,bpref,ERR@10,NumRet,Rprec"
    results = {}
    for path in ("plain", "checked", "distributed"):
        with monkeypatch.context() as patched:
            _forced(patched, path)
            ev = sparkeval.evaluate(spark, run, qrels, measures, queries="both", buckets=3)
            rows = ev.ordered_per_query.toPandas().fillna(-1.0).to_dict("list")
            results[path] = (ev.report, rows, ev.summary.collect())
            ev.unpersist()
    assert results["plain"] == results["checked"] == results["distributed"]
    # integer run ids are their text
    assert sorted(results["plain"][0]["runs"]) == [f"{run_ids}{r}" for r in range(3)]


_GOOD_RUN = [("r", "q1", "d1", 1.0)]
_GOOD_QRELS = [("q1", "d1", 1)]
_RUN_TYPES = "run_id string, query_id string, doc_id string, score double"


@pytest.mark.parametrize(
    ("run_rows", "qrels_rows", "qrels_types", "message"),
    [
        ([("r", "q1", None, 1.0)], _GOOD_QRELS, "int", "run row with empty doc_id"),
        ([("r", None, "d1", 1.0)], _GOOD_QRELS, "int", "run row with empty query_id"),
        ([(None, "q1", "d1", 1.0)], _GOOD_QRELS, "int", "run row with empty run_id"),
        ([("r", "q1", "d1", None)], _GOOD_QRELS, "int", "column score value '' is not a number"),
        ([("r", "q1", "d1", float("nan"))], _GOOD_QRELS, "int", "score is missing or NaN"),
        (_GOOD_RUN, [("q1", None, 1)], "int", "qrels row with empty doc_id"),
        (_GOOD_RUN, [("q1", "d1", None)], "int", "column relevance value '' is not an integer"),
        (_GOOD_RUN, [("q1", "d1", 2.5)], "double", "value '2.5' is not an integer between"),
        (_GOOD_RUN, [("q1", "d1", float("nan"))], "double", "value 'NaN' is not an integer"),
        (_GOOD_RUN, [("q1", "d1", -2e9)], "double", "value '-2.0E9' is not an integer between"),
        (_GOOD_RUN, [("q1", "d1", 2 * 10**9)], "bigint", "value '2000000000' is not an integer"),
    ],
)
@pytest.mark.parametrize("path", ["plain", "distributed"])
def test_a_bad_value_in_plain_columns_gets_the_checked_error(
    spark, monkeypatch, run_rows, qrels_rows, qrels_types, message, path
) -> None:
    run = spark.createDataFrame(run_rows, _RUN_TYPES)
    types = f"query_id string, doc_id string, relevance {qrels_types}"
    qrels = spark.createDataFrame(qrels_rows, types)
    if path == "plain":
        # the plain plan finds the bad row and leaves its message to the checked plan
        monkeypatch.setattr(driver_plan, "DRIVER_BYTES", 1 << 40)
    else:
        _forced(monkeypatch, path)
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        sparkeval.evaluate(spark, run, qrels, "AP")


@pytest.mark.parametrize("kind", ["list", "rdd"])
def test_rows_of_unknown_size_are_read_in_the_driver_while_few(spark, monkeypatch, kind) -> None:
    """A DataFrame of a list of rows, or of an RDD, is of unknown size: the rows of a
    list are read back from the driver (no job), an RDD's by one job collecting at most
    PROBE_ROWS + 1 rows of each input; either way, while few, the driver evaluates them
    (no distributed plan); with more rows than that, they go to the distributed plan."""
    from sparkeval.engine.plans import spark_engine

    run, qrels = _random_collection(spark, rdd=kind == "rdd")
    assert driver_plan.probed(spark_engine.plan_bytes(run, qrels))
    measures = "AP,nDCG@10,P@5,R@10,RR,bpref,ERR@10,NumRet,Rprec"

    def evaluated(group: str):
        call = lambda: sparkeval.evaluate(spark, run, qrels, measures, queries="both")  # noqa: E731
        ev, jobs, _ = _counted(spark, group, call)
        rows = ev.ordered_per_query.toPandas().fillna(-1.0).to_dict("list")
        ev.unpersist()
        return (ev.report, rows), jobs

    def distributed_plan(*args, **kwargs):
        raise AssertionError("the probed inputs go to the distributed plan")

    with monkeypatch.context() as patched:
        for plan in ("_evaluate_through_files", "_evaluate_shipped", "_evaluate_with_read_qrels"):
            patched.setattr(spark_engine, plan, distributed_plan)
        probed, probe_jobs = evaluated("probed")
    with monkeypatch.context() as patched:
        patched.setattr(spark_engine, "PROBE_ROWS", 100)  # the run has 541 rows
        too_many, too_many_jobs = evaluated("too-many")
    with monkeypatch.context() as patched:
        patched.setattr(driver_plan, "DRIVER_BYTES", -1)  # not probed: distributed
        distributed, distributed_jobs = evaluated("distributed")
    assert probed == too_many == distributed
    assert (probe_jobs == 0) == (kind == "list")
    # the probe's job (with Spark's adaptive execution, a job for each limit's
    # exchange too), then the distributed plan's
    assert too_many_jobs == distributed_jobs + probe_jobs


def test_lists_of_rows_in_many_partitions_are_still_read_in_the_driver(spark, monkeypatch) -> None:
    """The probing job reads at most PROBE_PARTITIONS partitions in its one task; a list
    of rows is read back without a job, however many slices it was cut into."""
    from sparkeval.engine.plans import spark_engine

    monkeypatch.setattr(driver_plan, "PROBE_PARTITIONS", 1)  # each frame has 2 here
    measures = "AP,nDCG@10,P@5"
    results = {}
    for kind in ("list", "rdd"):
        run, qrels = _random_collection(spark, rdd=kind == "rdd")
        assert not driver_plan.few_partitions(run, qrels)
        call = lambda run=run, qrels=qrels: sparkeval.evaluate(spark, run, qrels, measures)  # noqa: E731
        with monkeypatch.context() as patched:
            if kind == "list":

                def distributed_plan(*args, **kwargs):
                    raise AssertionError("a list of rows goes to the driver")

                for plan in ("_evaluate_through_files", "_evaluate_shipped"):
                    patched.setattr(spark_engine, plan, distributed_plan)
            ev, jobs, _ = _counted(spark, f"many partitions: {kind}", call)
        results[kind] = (ev.report, jobs)
        ev.unpersist()
    assert results["list"][1] == 0
    assert results["rdd"][1] >= 1  # the distributed plan
    assert results["list"][0] == results["rdd"][0]
