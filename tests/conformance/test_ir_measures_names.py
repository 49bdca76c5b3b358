"""The names people type: ir_measures spellings, any case, recommender aliases.

Each ir_measures name is parsed by ir_measures itself and computed by its pytrec_eval
provider (trec_eval 9.x), and by sparkeval in-process (no Spark) under the same name;
the values must agree. Scores are distinct, so that no tie order is involved (the
pure-Python providers of ir_measures break ties otherwise than trec_eval).
"""

from __future__ import annotations

import random

import pandas as pd
import pytest

import sparkeval
from sparkeval.measures.names import parse_measure

ir_measures = pytest.importorskip("ir_measures", reason="the test extra installs ir_measures")

#: ir_measures name -> the canonical sparkeval measure it maps to (the table of docs/measures.md)
NAMES = {
    "AP": "AP",
    "AP(rel=2)": "AP(rel=2)",
    "AP@100": "AP@100",
    "P@10": "P@10",
    "P(rel=2)@10": "P(rel=2)@10",
    "R@100": "R@100",
    "R(rel=2)@10": "R(rel=2)@10",
    "RR": "RR",
    "RR@10": "RR@10",
    "nDCG": "nDCG",
    "nDCG@10": "nDCG@10",
    "nDCG(gains={0:0,1:1,2:3,3:7})@10": "nDCG(gains=0:0;1:1;2:3;3:7)@10",
    "nDCG(judged_only=False)@10": "nDCG@10",
    "nDCG(judged_only=True)@10": "nDCG(judged_only=True)@10",
    "P(rel=2,judged_only=True)@10": "P(rel=2,judged_only=True)@10",
    "AP(judged_only=True)": "AP(judged_only=True)",
    "IPrec@0.5": "IPrec(recall=0.5)",
    "Rprec": "Rprec",
    "Bpref": "Bpref",
    "infAP": "infAP",
    "Success@10": "Success@10",
    "Success(rel=2)@5": "Success(rel=2)@5",
    "Judged@10": "Judged@10",
    "Judged(cutoff=10)": "Judged@10",
    "Judged(cutoff=5)": "Judged@5",
    "Judged": "Judged",
    "NumQ": "NumQ",
    "NumRet": "NumRet",
    "NumRel": "NumRel",
    "NumRelRet": "NumRelRet",
    # ir_measures prints NumRelRet as NumRet(rel=1): the retrieved docs with grade >= rel
    "NumRet(rel=1)": "NumRelRet(rel=1)",
    "NumRet(rel=2)": "NumRelRet(rel=2)",
    "SetP": "SetP",
    "SetR": "SetR",
    "SetF": "SetF",
    # ir_measures' beta is trec_eval's set_F parameter: (1+beta) P R / (beta P + R)
    "SetF(beta=0.25)": "SetF(beta=0.25)",
    "SetF(beta=0.5)": "SetF(beta=0.5)",
    "SetF(rel=1,beta=0.5)": "SetF(beta=0.5,rel=1)",
    "SetF(beta=1.0)": "SetF",
    "SetF(beta=2.0)": "SetF(beta=2)",
    "SetF(rel=2,beta=0.5)": "SetF(beta=0.5,rel=2)",
    "SetAP": "SetAP",
    # ir_measures' SetP(relative=True) is trec_eval's set_relative_P
    "SetP(relative=True)": "SetRelP",
    "SetP(rel=2,relative=True)": "SetRelP(rel=2)",
}


@pytest.fixture(scope="module")
def collection() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = random.Random(5)
    qrels, run = [], []
    for q in range(20):
        docs = [f"d{d}" for d in range(30)]
        qrels += [(f"q{q}", d, rng.choice([0, 0, 1, 2, 3])) for d in rng.sample(docs, 15)]
        run += [(f"q{q}", d, float(20 - i)) for i, d in enumerate(rng.sample(docs, 20))]
    return (
        pd.DataFrame(run, columns=["query_id", "doc_id", "score"]),
        pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
    )


def ours(collection, name: str) -> float:
    run, qrels = collection
    return float(sparkeval.evaluate(None, run, qrels, [name], queries="both").summary["value"][0])


@pytest.mark.parametrize(("name", "canonical"), NAMES.items())
def test_ir_measures_names_map_and_agree(collection, name: str, canonical: str) -> None:
    assert parse_measure(name).name == canonical
    run, qrels = collection
    measure = ir_measures.parse_measure(name)
    expected = ir_measures.calc_aggregate([measure], qrels, run)[measure]
    assert ours(collection, name) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("trec", ["set_F.0.25", "set_F.0.5", "set_F.1", "set_F.2"])
def test_trec_eval_set_f_spelling_agrees(collection, trec: str) -> None:
    # ir_measures reads trec_eval's spelling too: set_F.0.5 is its SetF(beta=0.5)
    (measure,) = ir_measures.parse_trec_measure(trec)
    run, qrels = collection
    expected = ir_measures.calc_aggregate([measure], qrels, run)[measure]
    assert ours(collection, trec) == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert ours(collection, str(measure)) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("RBP(p=0.8,rel=2)", "RBP(p=0.8,rel=2)"),
        ("RBP(rel=1,p=0.5)", "RBP(p=0.5,rel=1)"),
        ("RBP(p=0.9,rel=3)", "RBP(p=0.9,rel=3)"),
    ],
)
def test_rbp_with_rel_is_ir_measures_binary_rbp(collection, name: str, canonical: str) -> None:
    # ir_measures computes RBP(rel=…) with its cwl_eval provider only
    pytest.importorskip("cwl", reason="ir_measures computes RBP(rel=…) through cwl_eval")
    assert parse_measure(name).name == canonical
    run, qrels = collection
    measure = ir_measures.parse_measure(name)
    expected = ir_measures.calc_aggregate([measure], qrels, run)[measure]
    assert ours(collection, name) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_dcg_exp_log2_is_the_exponential_gain(collection) -> None:
    # ir_measures computes dcg=exp-log2 through a gdeval script; the same gains as a map
    # (2^g - 1) go through its pytrec_eval provider
    measure = ir_measures.parse_measure("nDCG(gains={0:0,1:1,2:3,3:7})@10")
    run, qrels = collection
    expected = ir_measures.calc_aggregate([measure], qrels, run)[measure]
    assert parse_measure('nDCG(dcg="exp-log2")@10').name == "nDCG(gain=exp)@10"
    assert ours(collection, "nDCG(dcg=exp-log2)@10") == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        ("ndcg@10", "nDCG@10"),
        ("NDCG@10", "nDCG@10"),
        ("map@10", "AP@10"),
        ("MAP", "AP"),
        ("recall@10", "R@10"),
        ("Recall@10", "R@10"),
        ("Precision@10", "P@10"),
        ("precision@10", "P@10"),
        ("HitRate@10", "Success@10"),
        ("HR@10", "Success@10"),
        ("hitrate@10", "Success@10"),
        ("MRR@10", "RR@10"),
        ("mrr", "RR"),
        ("iP@0.1", "IPrec(recall=0.1)"),
        ("IPrec@0.1", "IPrec(recall=0.1)"),
        ("err@20", "ERR@20"),
        ("bpref", "Bpref"),
        ("hit_rate@10", "Success@10"),  # ranx
        ("HitRatio@10", "Success@10"),
        ("hit@10", "Success@10"),  # RecBole
        ("hit_rate(rel=2)@10", "Success(rel=2)@10"),
        ("f1@10", "F@10"),  # ranx: F1 at k, F with beta = 1
        ("F1@10", "F@10"),
        ("nDCG(cutoff=10)", "nDCG@10"),  # ir_measures' cutoff parameter is @k
        ("P(rel=2,cutoff=5)", "P(rel=2)@5"),
    ],
)
def test_names_in_any_case_and_recommender_aliases(typed: str, canonical: str) -> None:
    assert parse_measure(typed).name == canonical


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("Bpref(judged_only=True)", "judged_only=True .* is not offered for Bpref"),
        ("RBP(rel=2)", "rel=… needs p=… given too"),  # ir_measures' default p is 0.8
        ("nDCG(dcg=log10)@10", "expected log2 or exp-log2"),
        ("F1(beta=2)@10", "F1 fixes beta=1"),
        ("Judged(cutoff=10)@5", "cutoff=10 contradicts @5"),
        ("NumQ(cutoff=10)", "NumQ takes no cutoff"),
    ],
)
def test_spellings_of_measures_sparkeval_lacks_are_refused(typed: str, why: str) -> None:
    with pytest.raises(ValueError, match=why.replace("(", r"\(").replace(")", r"\)")):
        parse_measure(typed)


def test_outputs_keyed_by_the_names_asked_for_with_canonical_names_beside(collection) -> None:
    run, qrels = collection
    asked = ["MAP@10", "ndcg@10", "HitRate@5", "P.5,10"]
    ev = sparkeval.evaluate(None, run, qrels, asked, names="requested", queries="both")
    assert list(ev.summary["measure"]) == ["MAP@10", "ndcg@10", "HitRate@5", "P_5", "P_10"]
    assert ev.report["measure_names"] == {
        "MAP@10": "AP@10",
        "ndcg@10": "nDCG@10",
        "HitRate@5": "Success@5",
        "P_5": "P@5",
        "P_10": "P@10",
    }
    canonical = sparkeval.evaluate(None, run, qrels, asked, queries="both")
    assert list(ev.summary["value"]) == list(canonical.summary["value"])
    assert "measure_names" not in canonical.report  # canonical names need no key
