"""``sparkeval.evaluate(None, ...)``: pandas and Arrow inputs evaluated without Spark.

Expected values come from pytrec_eval (trec_eval in process) and hand derivations;
the Spark path is the second check: values and report must be identical to the bit.
"""

from __future__ import annotations

import math
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import sparkeval
from sparkeval.errors import InputError
from tests.random_collection import random_collection

ROOT = Path(__file__).resolve().parents[2]
MEASURES = ["AP", "nDCG", "nDCG@10", "P@5", "RR", "Rprec", "Bpref", "ERR@10", "AUC", "gm_map"]
#: pytrec_eval's name of each measure it has, with our per-query column name
PYTREC = {"map": "AP", "ndcg": "nDCG", "ndcg_cut_10": "nDCG@10", "P_5": "P@5"}
PYTREC |= {"recip_rank": "RR", "Rprec": "Rprec", "bpref": "Bpref"}


def test_values_match_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run, qrels = random_collection(11, queries=30)
    ev = sparkeval.evaluate(None, run, qrels, MEASURES, queries="both")
    qrel: dict = {}
    for q, d, g in qrels.itertuples(index=False):
        qrel.setdefault(q, {})[d] = int(g)
    ranking: dict = {}
    for _, q, d, s in run.itertuples(index=False):
        ranking.setdefault(q, {})[d] = float(s)
    expected = pytrec_eval.RelevanceEvaluator(
        qrel, {"map", "ndcg", "ndcg_cut", "P", "recip_rank", "Rprec", "bpref"}
    ).evaluate(ranking)
    got = ev.per_query.set_index(["query_id", "measure"])["value"]
    compared = 0
    for q, values in expected.items():
        for trec_name, ours in PYTREC.items():
            assert math.isclose(got[(q, ours)], values[trec_name], abs_tol=1e-12), (q, ours)
            compared += 1
    assert compared == 30 * len(PYTREC)


@pytest.mark.spark
@pytest.mark.parametrize("policy", ["qrels", "both", "run", "union"])
def test_identical_to_the_spark_path(spark, policy: str) -> None:
    run, qrels = random_collection(5, queries=25, runs=3, edge_queries=True)
    local = sparkeval.evaluate(None, run, qrels, MEASURES, queries=policy, depth=30)
    on_spark = sparkeval.evaluate(
        spark,
        spark.createDataFrame(run),
        spark.createDataFrame(qrels),
        MEASURES,
        queries=policy,
        depth=30,
    )
    try:
        assert local.report == on_spark.report
        spark_rows = on_spark.ordered_per_query.toPandas()
        spark_summary = on_spark.summary.toPandas()
    finally:
        on_spark.unpersist()
    mine = local.per_query
    assert list(mine.columns) == ["run_id", "query_id", "measure", "value"]
    assert mine[["run_id", "query_id", "measure"]].values.tolist() == (
        spark_rows[["run_id", "query_id", "measure"]].values.tolist()
    )
    # bit for bit, undefined values (null on Spark) as NaN
    assert [float(v).hex() for v in mine["value"]] == [
        float("nan").hex() if v is None or v != v else float(v).hex() for v in spark_rows["value"]
    ]
    assert local.summary.equals(spark_summary.astype(local.summary.dtypes.to_dict()))


def test_aliases_integer_ids_and_arrow_tables() -> None:
    # user 7 gets items 10 (score 0.9) and 3 (0.5); only item 3 is relevant (rating 4):
    # RR = 1/2, P@1 = 0; user 8's one item is relevant: RR = 1, P@1 = 1
    recs = pd.DataFrame({"userID": [7, 7, 8], "itemID": [10, 3, 5], "prediction": [0.9, 0.5, 0.1]})
    truth = pa.table({"userID": [7, 7, 8], "itemID": [3, 10, 5], "rating": [4, 0, 2]})
    ev = sparkeval.evaluate(None, recs, truth, "RR,P@1")
    assert ev.summary.set_index("measure")["value"].to_dict() == {"RR": 0.75, "P@1": 0.5}
    per_query = ev.per_query
    assert per_query["query_id"].tolist() == ["7", "7", "8", "8"]
    assert per_query["value"].tolist() == [0.5, 0.0, 1.0, 1.0]


def test_explicit_columns_and_trec_names() -> None:
    run = pd.DataFrame({"u": ["a", "a"], "i": ["x", "y"], "s": [1.0, 2.0]})
    qrels = pd.DataFrame({"u": ["a"], "i": ["x"], "g": [1]})
    ev = sparkeval.evaluate(
        None,
        run,
        qrels,
        ["AP"],
        names="trec",
        run_columns="query_id=u,doc_id=i,score=s",
        qrels_columns={"query_id": "u", "doc_id": "i", "relevance": "g"},
    )
    assert ev.report["runs"]["run"]["measures"] == {"map": 0.5}


@pytest.mark.parametrize(
    ("run", "qrels", "message"),
    [
        (
            pd.DataFrame({"query_id": ["q"], "doc_id": [1.5], "score": [1.0]}),
            pd.DataFrame({"query_id": ["q"], "doc_id": ["1.5"], "relevance": [1]}),
            "run table: id column doc_id has type double; ids must be strings or integers",
        ),
        (
            pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [1.0]}),
            pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["d", "e"], "relevance": [1, 1.5]}),
            "qrels table: row 2: column relevance value 1.5 is not a whole number",
        ),
        (
            pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [float("nan")]}),
            pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "relevance": [1]}),
            "run table: row 1: column score value nan is not a finite number",
        ),
        (
            pd.DataFrame({"query_id": ["q"], "title": ["d"], "score": [1.0]}),
            pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "relevance": [1]}),
            "doc_id",
        ),
    ],
)
def test_bad_inputs_name_the_table_row_and_column(run, qrels, message) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        sparkeval.evaluate(None, run, qrels, ["AP"])


def test_no_spark_is_imported_or_started() -> None:
    code = (
        "import sys, pandas as pd, sparkeval\n"
        "run = pd.DataFrame({'query_id': ['q'], 'doc_id': ['d'], 'score': [1.0]})\n"
        "qrels = pd.DataFrame({'query_id': ['q'], 'doc_id': ['d'], 'relevance': [1]})\n"
        "print(sparkeval.evaluate(None, run, qrels, 'AP').report['runs']['run']['measures'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.splitlines()
    assert out == ["{'AP': 1.0}", "[]"]


def test_the_readme_example_runs_as_written() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- no-spark example -->\n```python\n(.*?)```", readme, re.S)
    assert block, "README.md lost its no-Spark example"
    printed = subprocess.run(
        [sys.executable, "-c", block.group(1)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    # by hand: q1 ranks d2 (relevant) second, so AP = RR = 1/2 and P@1 = 0
    assert re.search(r"\bAP\s+0\.5\b", printed), printed
    assert re.search(r"\bRR\s+0\.5\b", printed), printed
    assert re.search(r"P@1\s+0\.0\b", printed), printed
