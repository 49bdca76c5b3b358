"""The intent-aware kernels and names (:mod:`sparkeval.measures.intent_aware`,
:mod:`sparkeval.measures.intent_aware_names`) on a small example derived by hand.

The example (pyndeval's documented one): subtopics a: {A}, b: {B, D}, c: {C} (m = 3);
the run ranks A (9.3), D (8.4), E (8.1, unjudged), B (7.6). Gains, alpha = 0.5:
A covers a (1), D covers b (1), E nothing (0), B covers b again ((1 - 0.5)^1 = 0.5):
g = 1, 1, 0, 0.5. The greedy ideal: every doc gains 1 first, the tie to the largest
id, D; then A and C gain 1 and B 0.5: C (largest of A, C), then A, then B: 1, 1, 1, 0.5.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from sparkeval.errors import MeasureError
from sparkeval.evaluation.intent_aware import rank_queries, values_by_run
from sparkeval.measures.intent_aware_names import intent_aware_measure, split_intent_aware

QRELS = pd.DataFrame(
    {
        "query_id": ["0"] * 4,
        "subtopic_id": ["a", "b", "b", "c"],
        "doc_id": ["A", "B", "D", "C"],
        "relevance": [1, 1, 1, 1],
    }
)
RUN = pd.DataFrame(
    {"query_id": ["0"] * 4, "doc_id": ["A", "D", "E", "B"], "score": [9.3, 8.4, 8.1, 7.6]}
)
L3, L5, L6 = math.log2(3), math.log2(5), math.log2(6)


def _values(names: str, run: pd.DataFrame = RUN, qrels: pd.DataFrame = QRELS) -> dict:
    measures = split_intent_aware([names])[1]
    block = values_by_run({"r": run}, qrels, measures, None)["r"]
    return {name: value["value"] for name, value in block.items()}


def test_hand_derived_values():
    v = _values(
        "alpha-DCG@5,alpha-nDCG@5,ERR-IA@5,nERR-IA@5,NRBP,nNRBP,MAP-IA,P-IA@5,strec@5,"
        "alpha-DCG@1,ERR-IA@1,alpha-nDCG@1,P-IA@2,strec@1"
    )
    dcg = 1 + 1 / L3 + 0.5 / L5  # ranks 1, 2 and 4
    ideal_ideal = 3 * (1 + 0.5 / L3 + 0.25 / 2 + 0.125 / L5 + 0.0625 / L6)
    assert v["alpha-DCG@5"] == pytest.approx(dcg / ideal_ideal, rel=1e-12)
    assert v["alpha-nDCG@5"] == pytest.approx(dcg / (1 + 1 / L3 + 1 / 2 + 0.5 / L5), rel=1e-12)
    err = 1 + 1 / 2 + 0.5 / 4
    err_ideal_ideal = 3 * (1 + 0.5 / 2 + 0.25 / 3 + 0.125 / 4 + 0.0625 / 5)
    assert v["ERR-IA@5"] == pytest.approx(err / err_ideal_ideal, rel=1e-12)
    assert v["nERR-IA@5"] == pytest.approx(err / (1 + 1 / 2 + 1 / 3 + 0.5 / 4), rel=1e-12)
    # NRBP: (1 - (1 - alpha) beta) / m * sum g_j beta^{j-1} = 0.75 / 3 * (1 + 0.5 + 0.5/8)
    assert v["NRBP"] == pytest.approx(0.25 * 1.5625, rel=1e-12)
    assert v["nNRBP"] == pytest.approx(1.5625 / (1 + 0.5 + 0.25 + 0.0625), rel=1e-12)
    # MAP-IA: a: 1/1; b: (1/2 + 2/4) / 2; c: 0; over 3
    assert v["MAP-IA"] == pytest.approx((1 + 0.5) / 3, rel=1e-12)
    assert v["P-IA@5"] == pytest.approx(3 / 15, rel=1e-12)
    assert v["P-IA@2"] == pytest.approx(2 / 6, rel=1e-12)
    assert v["strec@5"] == pytest.approx(2 / 3, rel=1e-12)
    assert v["strec@1"] == pytest.approx(1 / 3, rel=1e-12)
    # ndeval leaves rank 1 undivided: alpha-DCG@1 = ERR-IA@1 = g_1 = 1
    assert v["alpha-DCG@1"] == 1.0
    assert v["ERR-IA@1"] == 1.0
    assert v["alpha-nDCG@1"] == 1.0


def test_alpha_and_rel_parameters():
    """alpha = 0: no redundancy penalty, B gains 1 (g = 1, 1, 0, 1); rel=2 judges no doc
    relevant here (grades 1), so every value is 0."""
    v = _values("alpha-nDCG(alpha=0)@5,NRBP(alpha=0,beta=1),P-IA(rel=2)@5,nNRBP(rel=2)")
    # ideal at alpha 0: every doc gains 1; D, C, B, A by the id tie rule: 1, 1, 1, 1
    expected = (1 + 1 / L3 + 1 / L5) / (1 + 1 / L3 + 1 / 2 + 1 / L5)
    assert v["alpha-nDCG(alpha=0)@5"] == pytest.approx(expected, rel=1e-12)
    assert v["NRBP(alpha=0,beta=1)"] == 0.0  # (1 - 1 * 1) / m * ... = 0
    assert v["P-IA(rel=2)@5"] == 0.0
    assert v["nNRBP(rel=2)"] == 0.0


def test_query_without_relevant_docs_scores_zero():
    qrels = QRELS.assign(relevance=0)
    v = _values("alpha-nDCG@5,nERR-IA@5,nNRBP,MAP-IA,strec@5,P-IA@5", qrels=qrels)
    assert set(v.values()) == {0.0}


def test_only_queries_of_both_inputs_are_averaged():
    """Query 1 is in the run only, query 2 in the qrels only: neither is scored."""
    run = pd.concat([RUN, pd.DataFrame({"query_id": ["1"], "doc_id": ["A"], "score": [1.0]})])
    qrels = pd.concat(
        [QRELS, pd.DataFrame({"query_id": ["2"], "subtopic_id": ["a"], "doc_id": ["A"],
                              "relevance": [1]})]
    )  # fmt: skip
    measures = split_intent_aware(["strec@5"])[1]
    block = values_by_run({"r": run}, qrels, measures, None)["r"]["strec@5"]
    assert block == {"value": 2 / 3, "queries": 1, "run_only": 1, "qrels_only": 1}
    empty = values_by_run({"r": run.iloc[:0]}, qrels, measures, None)["r"]["strec@5"]
    assert empty == {"value": 0.0, "queries": 0, "run_only": 0, "qrels_only": 2}


def test_ranking_is_score_then_doc_id_ascending_and_depth_cuts():
    run = pd.DataFrame({"query_id": ["0"] * 4, "doc_id": ["b", "a", "10", "9"],
                        "score": [1.0, 1.0, 2.0, 2.0]})  # fmt: skip
    assert rank_queries(run, None) == {"0": ["10", "9", "a", "b"]}
    assert rank_queries(run, 2) == {"0": ["10", "9"]}


def test_names_and_refusals():
    m = intent_aware_measure("alpha_nDCG(alpha=0.5, judged_only=False)@20")
    assert m is not None and (m.name, m.kind, m.k) == ("alpha-nDCG@20", "alpha_ndcg", 20)
    spellings = {
        "ERR_IA@20": "ERR-IA@20", "nERR_IA@20": "nERR-IA@20", "P_IA@10": "P-IA@10",
        "StRecall@20": "strec@20", "AP_IA": "MAP-IA", "NRBP(alpha=0.5,beta=0.5)": "NRBP",
        "nNRBP": "nNRBP", "alpha-DCG@5": "alpha-DCG@5", "NRBP(beta=0.8)": "NRBP(beta=0.8)",
    }  # fmt: skip
    for typed, name in spellings.items():
        found = intent_aware_measure(typed)
        assert found is not None and found.name == name, typed
    assert intent_aware_measure("nDCG@10") is None
    with pytest.raises(MeasureError, match="judged_only=True"):
        intent_aware_measure("alpha_nDCG(judged_only=True)@20")
    with pytest.raises(MeasureError, match="needs a cutoff"):
        intent_aware_measure("alpha-nDCG")
    with pytest.raises(MeasureError, match="takes no cutoff"):
        intent_aware_measure("NRBP@10")
    with pytest.raises(MeasureError, match=r"in \[0, 1\]"):
        intent_aware_measure("alpha-nDCG(alpha=2)@10")
    with pytest.raises(MeasureError, match="no parameter 'beta'"):
        intent_aware_measure("alpha-nDCG(beta=0.3)@10")
