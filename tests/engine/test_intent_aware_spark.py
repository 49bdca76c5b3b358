"""The intent-aware measures on Spark give the local engine's bits: ``evaluate
--engine spark`` (the job body, with the session running) and ``sparkeval.evaluate``
with a session, against ``evaluate --engine local`` on the same files, two runs with
tied scores, queries of one input only and a query without a relevant doc."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import sparkeval
from sparkeval.cli import main

MEASURES = (
    "nDCG@10,alpha-nDCG@5,alpha_nDCG(alpha=0.3)@20,ERR-IA@10,nERR_IA@20,NRBP,"
    "nNRBP(beta=0.8),P_IA@10,StRecall@5,AP_IA,alpha-DCG@1"
)


def _inputs(directory: Path) -> None:
    rng = np.random.default_rng(3)
    run_lines, qrels_lines, sub_lines = [], [], []
    for query in range(12):
        for sub in range(int(rng.integers(1, 4))):
            for doc in rng.choice(30, size=6, replace=False):
                grade = 0 if query == 3 else int(rng.integers(0, 3))
                sub_lines.append(f"{query} {sub} d{doc} {grade}")
                qrels_lines.append(f"{query} 0 d{doc} {grade}")
        if query == 11:
            continue  # in the subtopic qrels only
        for run in ("a", "b"):
            docs = rng.choice(30, size=15, replace=False)
            for rank, doc in enumerate(docs, start=1):
                run_lines.append(f"{query} Q0 d{doc} {rank} {int(rng.integers(0, 4))} {run}")
    run_lines.append("99 Q0 d1 1 1 a")  # in the run only
    for run in ("a", "b"):
        mine = [line for line in run_lines if line.endswith(f" {run}")]
        (directory / f"{run}.txt").write_text("\n".join(mine) + "\n")
    # one grade per (query, doc) in the qrels: the largest
    qrels = {}
    for line in qrels_lines:
        q, _, d, g = line.split()
        qrels[(q, d)] = max(int(g), qrels.get((q, d), 0))
    (directory / "qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in qrels.items()))
    (directory / "subtopics.txt").write_text("\n".join(sub_lines) + "\n")


@pytest.mark.spark
def test_spark_gives_the_local_engines_bits(spark, tmp_path):
    _inputs(tmp_path)
    common = ["evaluate", "--run", str(tmp_path / "a.txt"), "--run", str(tmp_path / "b.txt"),
              "--qrels", str(tmp_path / "qrels.txt"), "--subtopic-qrels",
              str(tmp_path / "subtopics.txt"), "--measures", MEASURES, "--quiet"]  # fmt: skip
    summaries = {}
    for engine in ("local", "spark"):
        out = tmp_path / engine
        assert main([*common, "--engine", engine, "--out", str(out)]) == 0
        summaries[engine] = json.loads((out / "summary.json").read_text())
    local, on_spark = (summaries[e]["runs"] for e in ("local", "spark"))
    assert set(local) == set(on_spark) == {"a", "b"}
    for run in local:
        assert on_spark[run]["measures"] == local[run]["measures"]  # the same bits
        assert on_spark[run]["intent_aware"] == local[run]["intent_aware"]
    assert local["a"]["intent_aware"]["NRBP"] == {"queries": 11, "run_only": 1, "qrels_only": 1}
    per_query = [
        sorted((tmp_path / e / "per_query_intent_aware.parquet").iterdir())
        for e in ("local", "spark")
    ]
    assert [p.name for p in per_query[0]] == ["part-00000.parquet"]
    assert [p.read_bytes() for p in per_query[0]] == [p.read_bytes() for p in per_query[1]]

    subtopics = pd.read_csv(
        tmp_path / "subtopics.txt", sep=" ", names=["query_id", "subtopic_id", "doc_id", "rel"],
        dtype=str,
    ).astype({"rel": "int64"})  # fmt: skip
    rows = [
        line.split() for run_id in ("a", "b")
        for line in (tmp_path / f"{run_id}.txt").read_text().splitlines()
    ]  # fmt: skip
    run = pd.DataFrame(
        {"run_id": [r[5] for r in rows], "query_id": [r[0] for r in rows],
         "doc_id": [r[2] for r in rows], "score": [float(r[4]) for r in rows]}
    )  # fmt: skip
    qrels_rows = [line.split() for line in (tmp_path / "qrels.txt").read_text().splitlines()]
    qrels = pd.DataFrame(
        {"query_id": [r[0] for r in qrels_rows], "doc_id": [r[2] for r in qrels_rows],
         "relevance": [int(r[3]) for r in qrels_rows]}
    )  # fmt: skip
    held = sparkeval.evaluate(None, run, qrels, MEASURES, subtopic_qrels=subtopics)
    frames = sparkeval.evaluate(
        spark, spark.createDataFrame(run), spark.createDataFrame(qrels), MEASURES,
        subtopic_qrels=subtopics,
    )  # fmt: skip
    try:
        for run_id in ("a", "b"):
            expected = local[run_id]["measures"]
            assert held.report["runs"][run_id]["measures"] == expected
            assert frames.report["runs"][run_id]["measures"] == expected
    finally:
        frames.unpersist()
