"""The Spark path against pytrec_eval (trec_eval) on random data with score ties.

The kernels alone are compared measure by measure in ``test_pytrec_eval.py``.
"""

from __future__ import annotations

import pytest

from tests.random_collection import random_collection, to_pytrec

pytrec_eval = pytest.importorskip("pytrec_eval")

# our name -> pytrec_eval measure key
PAIRS = {
    "P@1": "P_1",
    "P@3": "P_3",
    "P@10": "P_10",
    "P@100": "P_100",
    "R@3": "recall_3",
    "R@10": "recall_10",
    "R@100": "recall_100",
    "AP": "map",
    "AP@5": "map_cut_5",
    "AP@20": "map_cut_20",
    "RR": "recip_rank",
    "Rprec": "Rprec",
    "nDCG": "ndcg",
    "nDCG@3": "ndcg_cut_3",
    "nDCG@10": "ndcg_cut_10",
    "Success@1": "success_1",
    "Success@5": "success_5",
    "NumRet": "num_ret",
    "NumRel": "num_rel",
    "NumRelRet": "num_rel_ret",
}
PYTREC_MEASURES = {
    "P.1,3,10,100",
    "recall.3,10,100",
    "map",
    "map_cut.5,20",
    "recip_rank",
    "Rprec",
    "ndcg",
    "ndcg_cut.3,10",
    "success.1,5",
    "num_ret",
    "num_rel",
    "num_rel_ret",
}


@pytest.mark.spark
def test_spark_path_matches_pytrec_eval(spark) -> None:
    from sparkeval import evaluate

    run, qrels = random_collection(11, runs=2, edge_queries=True)
    ev = evaluate(
        spark,
        spark.createDataFrame(run),
        spark.createDataFrame(qrels),
        list(PAIRS),
        queries="both",
    )
    got = {(r.run_id, r.query_id, r.measure): r.value for r in ev.per_query.collect()}
    q, _ = to_pytrec(run, qrels, "run0")
    for run_id in ("run0", "run1"):
        _, r = to_pytrec(run, qrels, run_id)
        expected = pytrec_eval.RelevanceEvaluator(q, PYTREC_MEASURES).evaluate(r)
        for qid, values in expected.items():
            for name, key in PAIRS.items():
                assert got[(run_id, qid, name)] == pytest.approx(values[key], abs=1e-9)
    ev.unpersist()
