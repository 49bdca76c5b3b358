"""The direct read path: Python workers read Parquet row groups and exchange Arrow payloads.

Its results must equal those of Spark's readers, bit for bit, for any bucket count,
row-group split and row order; a value the Spark readers would reject must get
exactly their error; and inputs it cannot read faithfully must be left to Spark.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.cli import main
from sparkeval.engine.transport.arrow_exchange import (
    bucket_of_rows,
    partition_labels,
    spark_int_hash,
)
from sparkeval.errors import EXIT_INPUT, EXIT_OK, ConfigError
from sparkeval.evaluation.options import EvaluateConfig
from sparkeval.io.direct import plan_direct
from sparkeval.io.direct_plan import plan_direct_inputs
from tests.random_collection import random_collection

MEASURES = "nDCG@10,nDCG,AP,P@5,R@10,RR,ERR@10,Rprec,Bpref,NumRet,gm_map,Judged@10"


def write_collection(directory: Path, seed: int, row_group: int, shuffle: int | None = None):
    """Two run files (one with a run_id column, one named after its run) and mapped qrels."""
    directory.mkdir(parents=True, exist_ok=True)
    run, qrels = random_collection(seed, queries=60, runs=3, edge_queries=True)
    if shuffle is not None:
        run = run.sample(frac=1.0, random_state=shuffle)
        qrels = qrels.sample(frac=1.0, random_state=shuffle)
    multi = run[run.run_id != "run2"].reset_index(drop=True)
    plain = run[run.run_id == "run2"].drop(columns="run_id").reset_index(drop=True)
    pq.write_table(
        pa.Table.from_pandas(multi, preserve_index=False),
        directory / "runs.parquet",
        row_group_size=row_group,
    )
    pq.write_table(
        pa.Table.from_pandas(plain, preserve_index=False),
        directory / "run2.parquet",
        row_group_size=row_group,
    )
    mapped = qrels.rename(
        columns={"query_id": "topic", "doc_id": "docno", "relevance": "judgement"}
    )
    pq.write_table(
        pa.Table.from_pandas(mapped, preserve_index=False),
        directory / "qrels.parquet",
        row_group_size=max(1, row_group // 2),
    )
    return directory


def evaluate_argv(data: Path, out: Path, *extra: str) -> list[str]:
    return [
        "evaluate",
        "--run", str(data / "runs.parquet"),
        "--run", str(data / "run2.parquet"),
        "--qrels", str(data / "qrels.parquet"),
        "--qrels-columns", "query_id=topic,doc_id=docno,relevance=judgement",
        "--measures", MEASURES,
        "--out", str(out),
        *extra,
    ]  # fmt: skip


def results(out: Path) -> tuple[pd.DataFrame, dict]:
    summary = json.loads((out / "summary.json").read_text())
    summary.pop("inputs")
    return pd.read_parquet(out / "per_query.parquet"), summary


@pytest.mark.spark
def test_workers_read_what_spark_reads(spark, tmp_path, capsys) -> None:
    data = write_collection(tmp_path / "data", seed=3, row_group=97)
    assert main(evaluate_argv(data, tmp_path / "direct", "--buckets", "3")) == EXIT_OK
    assert "inputs read by the driver's threads" in capsys.readouterr().err
    assert main(evaluate_argv(data, tmp_path / "spark", "--reader", "spark")) == EXIT_OK
    assert "inputs read by Spark's readers" in capsys.readouterr().err

    direct_rows, direct_summary = results(tmp_path / "direct")
    spark_rows, spark_summary = results(tmp_path / "spark")
    assert len(direct_rows) > 1000
    assert sorted(direct_summary["runs"]) == ["run0", "run1", "run2"]
    pd.testing.assert_frame_equal(direct_rows, spark_rows, check_exact=True)
    assert direct_summary == spark_summary


@pytest.mark.spark
@pytest.mark.parametrize("id_type", ["int64", "int32", "uint64"])
def test_integer_ids_read_by_the_workers_equal_spark_readers(spark, tmp_path, capsys, id_type):
    # ids that sort differently as numbers and as text ("10" < "9"), negative ones, and
    # tied scores, so that the tie rule (doc id text descending) decides many ranks
    run, qrels = random_collection(8, queries=40)
    queries = {q: n for n, q in enumerate(sorted(set(run.query_id) | set(qrels.query_id)))}
    docs = {d: n * 7 for n, d in enumerate(sorted(set(run.doc_id) | set(qrels.doc_id)))}
    sign = 1 if id_type.startswith("u") else -1
    for frame in (run, qrels):
        frame["query_id"] = frame["query_id"].map(queries).astype(id_type)
        frame["doc_id"] = frame["doc_id"].map(lambda d: sign * docs[d] if docs[d] % 2 else docs[d])
        frame["doc_id"] = frame["doc_id"].astype(id_type)
    run.to_parquet(tmp_path / "run.parquet", index=False)
    qrels.to_parquet(tmp_path / "qrels.parquet", index=False)
    outputs = []
    for reader in ("auto", "spark"):
        out = tmp_path / reader
        argv = ["evaluate", "--run", str(tmp_path / "run.parquet"), "--qrels",
                str(tmp_path / "qrels.parquet"), "--measures", MEASURES, "--out", str(out),
                "--reader", reader, "--buckets", "3"]  # fmt: skip
        assert main(argv) == EXIT_OK
        outputs.append(results(out))
    assert "inputs read by the driver's threads" in capsys.readouterr().err
    (direct_rows, direct_summary), (spark_rows, spark_summary) = outputs
    assert len(direct_rows) > 400
    pd.testing.assert_frame_equal(direct_rows, spark_rows, check_exact=True)
    assert direct_summary == spark_summary


@pytest.mark.spark
def test_same_values_for_any_bucket_count_row_group_split_and_row_order(spark, tmp_path) -> None:
    outputs = []
    for buckets, row_group, shuffle in ((1, 10_000, None), (2, 50, 1), (7, 13, 2)):
        data = write_collection(tmp_path / f"data{buckets}", 4, row_group, shuffle)
        out = tmp_path / f"out{buckets}"
        assert main(evaluate_argv(data, out, "--buckets", str(buckets))) == EXIT_OK
        outputs.append(results(out))
    first_rows, first_summary = outputs[0]
    for rows, summary in outputs[1:]:
        pd.testing.assert_frame_equal(rows, first_rows, check_exact=True)  # sorted output
        assert summary == first_summary


@pytest.mark.spark
@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda run, qrels: run.__setitem__("score", run["score"].mask(run.index == 5)),
                     id="null-score"),
        pytest.param(lambda run, qrels: qrels.__setitem__("relevance", qrels["relevance"].where(
            qrels.index != 3, 2_000_000_000)), id="grade-out-of-bounds"),
        pytest.param(lambda run, qrels: run.__setitem__("doc_id", run["doc_id"].mask(
            run.index == 7)), id="null-doc"),
    ],
)  # fmt: skip
def test_a_bad_value_gets_the_spark_readers_error(spark, tmp_path, capsys, damage) -> None:
    run, qrels = random_collection(6, queries=10)
    damage(run, qrels)
    run.to_parquet(tmp_path / "run.parquet", index=False)
    qrels.to_parquet(tmp_path / "qrels.parquet", index=False)
    messages = []
    for reader in ("auto", "spark"):
        out = tmp_path / f"out-{reader}"
        argv = ["evaluate", "--run", str(tmp_path / "run.parquet"), "--qrels",
                str(tmp_path / "qrels.parquet"), "--measures", "AP", "--out", str(out),
                "--reader", reader]  # fmt: skip
        assert main(argv) == EXIT_INPUT
        assert not out.exists()  # no partial output
        err = capsys.readouterr().err
        messages.append([line for line in err.splitlines() if "error" in line.lower()])
    assert messages[0] and messages[0] == messages[1]


def test_only_plain_local_parquet_is_read_directly(tmp_path) -> None:
    run, qrels = random_collection(7, queries=5)
    run.to_parquet(tmp_path / "run.parquet", index=False)
    qrels.to_parquet(tmp_path / "qrels.parquet", index=False)
    plan = plan_direct(str(tmp_path / "run.parquet"), "run", {}, "run")
    assert plan is not None and plan.rows == len(run) and plan.size > 0
    assert plan_direct(f"file://{tmp_path / 'run.parquet'}", "run", {}) is not None

    # integer query and doc ids are read directly (as their decimal text); a run id is text
    run.assign(query_id=range(len(run))).to_parquet(tmp_path / "intq.parquet", index=False)
    assert plan_direct(str(tmp_path / "intq.parquet"), "run", {}, "r") is not None
    run.assign(run_id=1).to_parquet(tmp_path / "intrun.parquet", index=False)
    assert plan_direct(str(tmp_path / "intrun.parquet"), "run", {}, "r") is None
    run.assign(doc_id=1.5).to_parquet(tmp_path / "floatdoc.parquet", index=False)
    assert plan_direct(str(tmp_path / "floatdoc.parquet"), "run", {}, "r") is None
    # fractional grades are for the Spark readers to accept or reject
    qrels.assign(relevance=qrels.relevance * 1.0).to_parquet(tmp_path / "fq.parquet", index=False)
    assert plan_direct(str(tmp_path / "fq.parquet"), "qrels", {}) is None
    # an empty input, a partitioned directory, a glob and a remote path
    run.iloc[:0].to_parquet(tmp_path / "empty.parquet", index=False)
    assert plan_direct(str(tmp_path / "empty.parquet"), "run", {}, "r") is None
    (tmp_path / "parted" / "day=1").mkdir(parents=True)
    run.to_parquet(tmp_path / "parted" / "day=1" / "part.parquet", index=False)
    assert plan_direct(str(tmp_path / "parted"), "run", {}, "r") is None
    assert plan_direct(str(tmp_path / "*.parquet"), "run", {}, "r") is None
    assert plan_direct("hdfs://namenode/run.parquet", "run", {}, "r") is None
    # a directory of Parquet files is fine; hidden and underscore files are skipped
    (tmp_path / "dir").mkdir()
    run.iloc[:20].to_parquet(tmp_path / "dir" / "a.parquet", index=False)
    run.iloc[20:].to_parquet(tmp_path / "dir" / "b.parquet", index=False)
    (tmp_path / "dir" / "_SUCCESS").write_text("")
    found = plan_direct(str(tmp_path / "dir"), "run", {}, "dir")
    assert found is not None and found.rows == len(run) and len(found.units) == 2
    # a JSON Lines input anywhere sends everything to Spark
    qrels.to_json(tmp_path / "qrels.jsonl", orient="records", lines=True)
    args = (None, None, None, None)
    assert plan_direct_inputs(None, [str(tmp_path / "run.parquet")], str(tmp_path / "qrels.jsonl"),
                              *args) is None  # fmt: skip


@pytest.mark.spark
@pytest.mark.parametrize("buckets", [1, 3, 8, 200])
def test_every_bucket_label_lands_in_its_own_partition(spark, buckets) -> None:
    from pyspark.sql import functions as F

    labels = partition_labels(buckets)
    frame = spark.createDataFrame([(b, label) for b, label in enumerate(labels)], "b int, l int")
    placed = frame.repartition(buckets, "l").select("b", F.spark_partition_id().alias("p"))
    assert {row.b: row.p for row in placed.collect()} == dict(enumerate(range(buckets)))


@pytest.mark.spark
def test_int_hash_is_sparks(spark) -> None:
    values = [0, 1, -1, 7, 42, 2**31 - 1, -(2**31), 123456789]
    expected = spark.sql(f"select {', '.join(f'hash({v})' for v in values)}").first()
    assert [spark_int_hash(v) for v in values] == list(expected)


def test_a_query_gets_one_bucket_whatever_batch_it_is_in() -> None:
    ids = ["q1", "q2", "q1", "q3", "zürich"]
    buckets = bucket_of_rows(pa.chunked_array([ids[:2], ids[2:]]), 5)
    expected = [zlib.crc32(q.encode("utf-8")) % 5 for q in ids]
    assert buckets.tolist() == expected
    assert bucket_of_rows(pa.array(["q3"]), 5).tolist() == [expected[3]]


def test_reader_key_is_checked() -> None:
    base = {"run": ["r"], "qrels": "q", "measures": ["AP"], "out": "o"}
    assert EvaluateConfig.load(**base, reader="spark").reader == "spark"
    assert EvaluateConfig.load(**base).reader == "auto"
    with pytest.raises(ConfigError, match="key 'reader'"):
        EvaluateConfig.load(**base, reader="arrow")


def test_buckets_grow_with_the_input_so_that_each_stays_bounded() -> None:
    from sparkeval.engine.transport.arrow_exchange import BUCKET_BYTES, buckets_for
    from sparkeval.io.direct_input import DirectInput, DirectPlan

    def plan_of(size: int) -> DirectPlan:
        run = DirectInput("run", "r", (), (), "run", size=size, rows=0)
        qrels = DirectInput("qrels", "q", (), (), None, size=0, rows=0)
        return DirectPlan((run,), qrels, ("run",))

    assert buckets_for(plan_of(100 << 20), 8) == 8  # 10M rows: the session's default
    assert buckets_for(plan_of(3 << 30), 8) == 48  # 100M rows: 64 MiB each
    assert buckets_for(plan_of(BUCKET_BYTES + 1), 1) == 2


@pytest.mark.spark
def test_where_filters_on_parquet_are_applied_by_the_workers(spark, tmp_path, capsys) -> None:
    data = write_collection(tmp_path / "data", seed=5, row_group=89)
    # (the condition applies to each run file: both have these columns) the runs lose
    # low scores and some queries, the qrels every grade-0 judgement
    where = "score > 0.3 AND query_id NOT IN ('q1', 'q2')"
    filters = ["--where", where, "--qrels-where", "judgement > 0"]
    argv = evaluate_argv(data, tmp_path / "direct", *filters, "--buckets", "3")
    assert main(argv) == EXIT_OK
    assert "inputs read by the driver's threads" in capsys.readouterr().err
    argv = evaluate_argv(data, tmp_path / "spark", *filters, "--reader", "spark")
    assert main(argv) == EXIT_OK
    assert "inputs read by Spark's readers" in capsys.readouterr().err

    direct_rows, direct_summary = results(tmp_path / "direct")
    spark_rows, spark_summary = results(tmp_path / "spark")
    assert sorted(direct_summary["runs"]) == ["run0", "run1", "run2"]
    # by hand: the rows read are those the conditions keep
    run = pd.concat(
        [pd.read_parquet(data / "runs.parquet"), pd.read_parquet(data / "run2.parquet")]
    )
    kept = run[(run.score > 0.3) & ~run.query_id.isin(["q1", "q2"])]
    assert 0 < len(kept) < len(run)
    assert sum(r["rows"]["read"] for r in direct_summary["runs"].values()) == len(kept)
    pd.testing.assert_frame_equal(direct_rows, spark_rows, check_exact=True)
    assert direct_summary == spark_summary


@pytest.mark.spark
def test_a_where_the_workers_cannot_apply_is_left_to_spark(spark, tmp_path, capsys) -> None:
    data = write_collection(tmp_path / "data", seed=6, row_group=89)
    argv = evaluate_argv(data, tmp_path / "out", "--where", "upper(query_id) <> 'Q1'")
    assert main(argv) == EXIT_OK
    assert "inputs read by Spark's readers" in capsys.readouterr().err


def test_text_query_ids_are_read_dictionary_encoded_and_checked_once_each(tmp_path) -> None:
    """read_unit hands text query ids on dictionary-encoded (bucket_slices decodes them),
    the same values as the file's; integer ids come as decimal text; a query id that is
    not UTF-8 is left to Spark's readers (NotDirect), as a doc id is."""
    from sparkeval.io.direct import read_unit
    from sparkeval.io.direct_input import NotDirect

    run, _ = random_collection(8, queries=12)
    run = run.drop(columns="run_id")
    run.to_parquet(tmp_path / "run.parquet", index=False)
    plan = plan_direct(str(tmp_path / "run.parquet"), "run", {}, "r")
    rows = read_unit(plan, 0, ["r"])
    assert pa.types.is_dictionary(rows.schema.field("query_id").type)
    assert rows.column("query_id").cast(pa.string()).to_pylist() == run.query_id.tolist()
    assert rows.column("doc_id").to_pylist() == run.doc_id.tolist()

    run.assign(query_id=range(len(run))).to_parquet(tmp_path / "intq.parquet", index=False)
    plan = plan_direct(str(tmp_path / "intq.parquet"), "run", {}, "r")
    rows = read_unit(plan, 0, ["r"])
    assert rows.schema.field("query_id").type == pa.string()
    assert rows.column("query_id").to_pylist() == [str(i) for i in range(len(run))]

    latin1 = pa.array([b"q1", b"caf\xe9"], pa.binary()).cast(pa.string(), safe=False)
    bad = pa.table({"query_id": latin1, "doc_id": ["d1", "d2"], "score": [2.0, 1.0]})
    pq.write_table(bad, tmp_path / "bad.parquet")
    plan = plan_direct(str(tmp_path / "bad.parquet"), "run", {}, "r")
    with pytest.raises(NotDirect, match="query_id holds text that is not valid UTF-8"):
        read_unit(plan, 0, ["r"])


def test_run_ids_are_read_from_the_parquet_files(tmp_path) -> None:
    """The distinct run ids of a run id column, sorted, nulls left out, across files,
    row groups (each with its own dictionary) and plain-encoded pages; None where
    Spark must judge: a filtered scan, or a value that is not UTF-8."""
    from dataclasses import replace

    from sparkeval.io.direct import parquet_run_ids, plan_direct_files

    def write(name: str, run_ids: list, **options) -> Path:
        n = len(run_ids)
        table = pa.table(
            {
                "query_id": [f"q{i}" for i in range(n)],
                "doc_id": [f"d{i}" for i in range(n)],
                "score": [float(i) for i in range(n)],
                "system": pa.array(run_ids, pa.string()),
            }
        )
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, path, row_group_size=3, **options)
        return path

    write("runs/part-0.parquet", ["dense", "bm25", None, "bm25", "zeta", "dense", "bm25"])
    write("runs/part-1.parquet", ["alpha", None, "bm25"], use_dictionary=False)
    mapping = {"run_id": "system"}
    files = sorted(str(p) for p in (tmp_path / "runs").iterdir())
    source = plan_direct_files(files, "runs", "run", mapping, None)
    assert source is not None
    assert parquet_run_ids(source) == ["alpha", "bm25", "dense", "zeta"]
    assert parquet_run_ids(replace(source, where=("ge", "score", 0.0))) is None

    bad = tmp_path / "bad.parquet"
    latin1 = pa.array([b"caf\xe9", b"bm25"], pa.binary()).view(pa.string())
    pq.write_table(
        pa.table({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, 2.0],
                  "system": latin1}),
        bad,
    )  # fmt: skip
    bad_source = plan_direct_files([str(bad)], "bad", "run", mapping, None)
    assert bad_source is not None and parquet_run_ids(bad_source) is None
