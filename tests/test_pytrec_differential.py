"""Differential tests against pytrec_eval (trec_eval) on random data with score ties."""

from __future__ import annotations

import pytest

from sparkeval.engine.assemble import EvalOptions, evaluate_frames
from sparkeval.measures.names import parse_measures
from tests.differential import random_collection, to_pytrec

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


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("rel_level", [1, 2])
def test_kernels_match_pytrec_eval(seed: int, rel_level: int) -> None:
    run, qrels = random_collection(seed)
    measures = parse_measures(list(PAIRS))
    wide = evaluate_frames(run, qrels, measures, EvalOptions(queries="both", rel_level=rel_level))
    q, _ = to_pytrec(run, qrels, "A")
    checked = 0
    for run_id in ("A", "B"):
        _, r = to_pytrec(run, qrels, run_id)
        expected = pytrec_eval.RelevanceEvaluator(
            q, PYTREC_MEASURES, relevance_level=rel_level
        ).evaluate(r)
        ours = wide[(wide.run_id == run_id) & wide.evaluated]
        assert set(ours.query_id) == set(expected)
        for row in ours.itertuples(index=False):
            values = row._asdict()
            for i, name in enumerate(PAIRS):
                want = expected[row.query_id][PAIRS[name]]
                assert values[f"m{i}"] == pytest.approx(want, abs=1e-9), (
                    run_id,
                    row.query_id,
                    name,
                )
                checked += 1
    assert checked > 500


@pytest.mark.spark
def test_spark_path_matches_pytrec_eval(spark) -> None:
    from sparkeval import evaluate

    run, qrels = random_collection(11)
    ev = evaluate(
        spark,
        spark.createDataFrame(run),
        spark.createDataFrame(qrels),
        list(PAIRS),
        queries="both",
    )
    got = {(r.run_id, r.query_id, r.measure): r.value for r in ev.per_query.collect()}
    q, _ = to_pytrec(run, qrels, "A")
    for run_id in ("A", "B"):
        _, r = to_pytrec(run, qrels, run_id)
        expected = pytrec_eval.RelevanceEvaluator(q, PYTREC_MEASURES).evaluate(r)
        for qid, values in expected.items():
            for name, key in PAIRS.items():
                assert got[(run_id, qid, name)] == pytest.approx(values[key], abs=1e-9)
    ev.unpersist()
