"""Per-query values do not depend on partitioning, buckets, file splits or row order."""

from __future__ import annotations

import pandas as pd
import pytest

from sparkeval import evaluate
from sparkeval.engine.worker.assemble import EvalOptions, evaluate_frames
from sparkeval.io import read_qrels, read_runs
from sparkeval.measures.names import parse_measures
from tests.random_collection import random_collection

pytestmark = pytest.mark.spark

MEASURES = ["nDCG@10", "nDCG", "AP", "P@5", "RR", "ERR@10", "Rprec", "Bpref", "NumRet", "gm_map"]


def per_query(ev) -> dict[tuple[str, str, str], float | None]:
    return {(r.run_id, r.query_id, r.measure): r.value for r in ev.per_query.collect()}


def test_same_values_for_any_partitioning_and_row_order(spark, tmp_path) -> None:
    run, qrels = random_collection(21, queries=40, runs=2, edge_queries=True)
    results = []
    previous = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        for partitions, buckets, seed in ((1, 1, 0), (2, None, 1), (7, 13, 2), (200, None, 3)):
            spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
            shuffled = run.sample(frac=1.0, random_state=seed)
            run_path = tmp_path / f"run{seed}"
            # several input files, split differently every time
            spark.createDataFrame(shuffled).repartition(seed + 1).write.parquet(str(run_path))
            qrels_path = tmp_path / f"qrels{seed}.csv"
            qrels.sample(frac=1.0, random_state=seed).to_csv(qrels_path, index=False)
            run_df, run_ids = read_runs(spark, [str(run_path)])
            ev = evaluate(
                spark,
                run_df,
                read_qrels(spark, str(qrels_path)),
                MEASURES,
                run_ids=run_ids,
                buckets=buckets,
            )
            results.append((per_query(ev), ev.report["runs"]))
            ev.unpersist()
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", previous)
    first_values, first_summary = results[0]
    assert len(first_values) > 500
    for values, summary in results[1:]:
        assert values == first_values  # bit-identical, not approximately equal
        assert summary == first_summary


def test_spark_path_equals_single_process_kernels(spark) -> None:
    run, qrels = random_collection(5, queries=25, runs=2, edge_queries=True)
    measures = parse_measures(MEASURES)
    ev = evaluate(spark, spark.createDataFrame(run), spark.createDataFrame(qrels), measures)
    got = per_query(ev)
    ev.unpersist()
    wide = evaluate_frames(run, qrels, measures, EvalOptions())
    wide = wide[wide.evaluated]
    expected = {}
    for row in wide.itertuples(index=False):
        for i, m in enumerate(measures):
            if m.spec.per_query:
                value = getattr(row, f"m{i}")
                expected[(row.run_id, row.query_id, m.name)] = None if pd.isna(value) else value
    assert got == expected


def test_skewed_query_among_normal_ones(spark) -> None:
    """One query with 60k retrieved docs evaluates exactly like on its own."""
    import numpy as np

    rng = np.random.default_rng(9)
    rows = [
        ("r", f"q{q}", f"d{d}", float(rng.integers(0, 50))) for q in range(50) for d in range(20)
    ]
    big = 60_000
    rows += [("r", "huge", f"d{d}", float(s)) for d, s in enumerate(rng.integers(0, 1000, big))]
    run = pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"])
    judged = rng.choice(big, size=3000, replace=False)
    qrels = pd.DataFrame(
        [("huge", f"d{d}", int(rng.integers(0, 3))) for d in judged]
        + [(f"q{q}", f"d{d}", 1) for q in range(50) for d in range(0, 20, 3)],
        columns=["query_id", "doc_id", "relevance"],
    )
    ev = evaluate(
        spark, spark.createDataFrame(run), spark.createDataFrame(qrels), ["AP", "nDCG@10", "NumRet"]
    )
    got = per_query(ev)
    ev.unpersist()
    alone = evaluate_frames(
        run[run.query_id == "huge"],
        qrels[qrels.query_id == "huge"],
        parse_measures(["AP", "nDCG@10", "NumRet"]),
    )
    assert got[("r", "huge", "NumRet")] == big
    assert got[("r", "huge", "AP")] == alone["m0"].iloc[0]
    assert got[("r", "huge", "nDCG@10")] == alone["m1"].iloc[0]
