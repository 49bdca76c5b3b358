"""ranx (AmenRa/ranx): the expectations of its published tests, through sparkeval's name
for each measure (trec profile, queries of the qrels).

Sources, named in each case: tests/unit/ranx/metrics_test.py, tests/unit/ranx/meta/
evaluate_test.py, tests/unit/ranx/metrics/{bpref,f1,rank_biased_precision,
zero_division_error}_test.py and the example of ``ranx.evaluate``'s docstring
(ranx/meta/evaluate.py).

ranx's metric functions read ``y_pred`` as an already ranked list (its scores of 1 are
placeholders): the cases give each doc its position as the order. ranx names and
sparkeval's: ``hit_rate@k`` = ``Success@k``, ``precision@k`` = ``P@k``, ``recall@k`` =
``R@k``, ``f1@k`` = ``F@k``, ``r-precision`` = ``Rprec``, ``mrr@k`` = ``RR@k``, ``map@k``
= ``AP@k`` (divided by the relevant docs), ``ndcg@k`` / ``dcg@k`` = ``nDCG@k`` /
``DCG@k`` (linear gain, which ranx calls Järvelin's), ``ndcg_burges@k`` /
``dcg_burges@k`` = ``nDCG(gain=exp)@k`` / ``DCG(gain=exp)@k``, ``bpref`` = ``Bpref``,
``rbp.p`` = ``RBP(p=0.p)`` (binary grades here: ranx's gain is the grade itself,
sparkeval's the grade over the query's largest); ranx's ``precision``, ``recall`` and
``f1`` without a cutoff read the whole list: ``SetP``, ``SetR``, ``SetF``.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from sparkeval.errors import MeasureError
from sparkeval.measures.names import parse_measures
from tests.conformance.peer_cases import close, judged, ranking, relevant, scored, values

# --- metrics_test.py and meta/evaluate_test.py: binary relevance ----------------------
#: test_precision, test_average_precision (metrics_test.py) and their *_parallel
#: versions in evaluate_test.py: one ranking, three truths
SEVEN = [4, 5, 6, 2, 1, 7, 3]
THREE_TRUTHS = {"q1": [1, 2, 3], "q2": [4, 5, 6, 7], "q3": [8, 9]}
#: test_hits / test_precision_single / test_average_precision (evaluate_test.py)
HITS_RUN = {"q1": [1, 2, 3, 4, 5, 7], "q2": [1, 2, 4, 3, 5, 7]}
HITS_TRUTH = {"q1": [1, 4, 5, 6], "q2": [1, 4, 6]}
#: test_r_precision / test_recall (both files)
R_RUN = [2, 4, 3, 1, 5, 6, 7]

BINARY = [
    # (source, run, truth, ranx's name, mean)
    # hand-derived: ranx asserts the mean equals the mean of its own per-query values;
    # top 5 of SEVEN hold 2, 3 and 0 relevant docs
    ("metrics_test.py::test_precision", {q: SEVEN for q in THREE_TRUTHS}, THREE_TRUTHS,
     "precision@5", (2 / 5 + 3 / 5 + 0) / 3),
    ("evaluate_test.py::test_precision_parallel", {q: SEVEN for q in THREE_TRUTHS},
     THREE_TRUTHS, "precision@5", (2 / 5 + 3 / 5 + 0) / 3),
    ("evaluate_test.py::test_precision_single", {"q1": HITS_RUN["q1"]},
     {"q1": HITS_TRUTH["q1"]}, "precision@5", 3 / 5),
    # hand-derived as above: q1's hits at ranks 4, 5, 7; q2's at 1, 2, 3, 6; / R
    ("metrics_test.py::test_average_precision", {q: SEVEN for q in THREE_TRUTHS},
     THREE_TRUTHS, "map@7",
     ((1 / 4 + 2 / 5 + 3 / 7) / 3 + (1 + 1 + 1 + 4 / 6) / 4 + 0) / 3),
    ("evaluate_test.py::test_average_precision_parallel", {q: SEVEN for q in THREE_TRUTHS},
     THREE_TRUTHS, "map@7",
     ((1 / 4 + 2 / 5 + 3 / 7) / 3 + (1 + 1 + 1 + 4 / 6) / 4 + 0) / 3),
    ("evaluate_test.py::test_average_precision", {"q1": HITS_RUN["q1"]},
     {"q1": HITS_TRUTH["q1"]}, "map@6", 0.525),
    ("metrics_test.py::test_hit_rate", HITS_RUN,
     # q1's truth lists item 6 twice in ranx's test; sparkeval refuses a doc judged
     # twice, so it is given once (ranx's sets do the same)
     {"q1": [9, 6, 8], "q2": [1, 2, 4]}, "hit_rate@5", 0.5),
    ("evaluate_test.py::test_hit_rate_parallel", HITS_RUN,
     {"q1": [9, 6, 8], "q2": [1, 2, 4]}, "hit_rate@5", 0.5),
    ("evaluate_test.py::test_hit_rate_single", {"q1": HITS_RUN["q2"]}, {"q1": [1, 2, 4]},
     "hit_rate@5", 1.0),
    ("metrics_test.py::test_reciprocal_rank_single", {"q1": [2, 3, 1, 4, 5]}, {"q1": [3]},
     "mrr@5", 0.5),
    ("metrics_test.py::test_reciprocal_rank_single_no_match", {"q1": [2, 1, 4, 5]},
     {"q1": [3]}, "mrr@5", 0.0),
    # q3's ranking repeats item 1 three times in ranx's test; given once (no hit either way)
    ("metrics_test.py::test_reciprocal_rank",
     {"q1": [2, 3, 1, 4, 5], "q2": [1, 2, 3, 4, 5], "q3": [1, 4, 5]},
     {"q1": [3], "q2": [1], "q3": [3]}, "mrr@5", 0.5),
    ("metrics_test.py::test_r_precision_single", {"q1": R_RUN}, {"q1": [1, 2, 3]},
     "Rprec", 2 / 3),
    ("metrics_test.py::test_r_precision", {"q1": R_RUN, "q2": R_RUN},
     {"q1": [1, 2, 3], "q2": [1, 2]}, "Rprec", (2 / 3 + 1 / 2) / 2),
    ("metrics_test.py::test_recall_single", {"q1": R_RUN}, {"q1": [1, 2, 3]},
     "recall@2", 1 / 3),
    ("metrics_test.py::test_recall", {"q1": R_RUN, "q2": R_RUN},
     {"q1": [1, 2, 3], "q2": [1, 2]}, "recall@2", (1 / 3 + 1 / 2) / 2),
]  # fmt: skip


@pytest.mark.parametrize(
    ("run", "truth", "name", "mean"),
    [pytest.param(*case[1:], id=case[0]) for case in BINARY],
)
def test_binary_relevance(run, truth, name, mean) -> None:
    _, means = values(ranking(run), relevant(truth), [name])
    close(means[name], mean)


# --- graded relevance: test_dcg_jarvelin, test_ndcg_jarvelin, test_dcg_burges,
# test_ndcg_burges (metrics_test.py and evaluate_test.py) ------------------------------
GRADES = {"q": {2: 5, 4: 4, 5: 3, 10: 2}}
PRED = {
    "y_pred_1": [1, 2, 3, 4, 5],  # grades 0, 5, 0, 4, 3
    "y_pred_2": [10, 5, 2, 4, 3],  # grades 2, 3, 5, 4, 0
    "y_pred_3": [1, 3, 6, 7, 8],  # grades 0, 0, 0, 0, 0
}
L2 = math.log2
LINEAR = {
    "y_pred_1": 5 / L2(3) + 4 / L2(5) + 3 / L2(6),
    "y_pred_2": 2 / L2(2) + 3 / L2(3) + 5 / L2(4) + 4 / L2(5),
    "y_pred_3": 0.0,
}
BURGES = {
    "y_pred_1": (2**5 - 1) / L2(3) + (2**4 - 1) / L2(5) + (2**3 - 1) / L2(6),
    "y_pred_2": (2**2 - 1) / L2(2) + (2**3 - 1) / L2(3) + (2**5 - 1) / L2(4) + (2**4 - 1) / L2(5),
    "y_pred_3": 0.0,
}
IDCG_LINEAR = 5 / L2(2) + 4 / L2(3) + 3 / L2(4) + 2 / L2(5)
IDCG_BURGES = (2**5 - 1) / L2(2) + (2**4 - 1) / L2(3) + (2**3 - 1) / L2(4) + (2**2 - 1) / L2(5)

GRADED = [
    (f"{test}[{pred}]", pred, name, want)
    for pred in PRED
    for test, name, want in [
        ("test_dcg_jarvelin", "dcg@10", LINEAR[pred]),
        ("test_ndcg_jarvelin", "ndcg@10", LINEAR[pred] / IDCG_LINEAR),
        ("test_dcg_burges", "dcg_burges@10", BURGES[pred]),
        ("test_ndcg_burges", "ndcg_burges@10", BURGES[pred] / IDCG_BURGES),
    ]
]


@pytest.mark.parametrize("file", ["metrics_test.py", "evaluate_test.py"])
@pytest.mark.parametrize(("pred", "name", "want"), [pytest.param(*c[1:], id=c[0]) for c in GRADED])
def test_graded_relevance(file: str, pred: str, name: str, want: float) -> None:
    _, means = values(ranking({"q": PRED[pred]}), judged(GRADES), [name])
    close(means[name], want)


def test_burges_spellings_are_the_exponential_gain() -> None:
    assert [m.name for m in parse_measures(["ndcg_burges@10", "dcg_burges@10", "ndcg_burges"])] == [
        "nDCG(gain=exp)@10", "DCG(gain=exp)@10", "nDCG(gain=exp)",
    ]  # fmt: skip
    with pytest.raises(MeasureError, match="gain"):
        parse_measures(["ndcg_burges(gain=linear)@10"])


# --- metrics/bpref_test.py, f1_test.py: the same qrels, two runs ----------------------
QRELS_BF = {
    "q1": {"d2": 1, "d5": 1, "d1": 0, "d4": 0},
    "q2": {"d2": 1, "d5": 1, "d1": 0, "d6": 0},
    "q3": {"d2": 1, "d5": 1, "d7": 1, "d1": 0, "d6": 0, "d8": 0},
    "q4": {"d2": 1, "d4": 1, "d6": 1, "d9": 1, "d1": 0, "d3": 0, "d7": 0, "d8": 0},
}
RUN_BF = {
    "q1": {"d1": 10, "d2": 9, "d3": 8, "d4": 7},
    "q2": {"d1": 10, "d2": 9, "d3": 8, "d4": 7, "d5": 6, "d6": 5},
    "q3": {"d1": 10, "d2": 9, "d3": 8, "d4": 7, "d5": 6, "d6": 5, "d7": 4, "d8": 3},
}


def test_bpref() -> None:  # metrics/bpref_test.py::test_bpref
    run = {**RUN_BF, "q4": {"d1": 10, "d2": 9, "d3": 8, "d4": 7, "d6": 5, "d7": 4, "d8": 3}}
    per_query, _ = values(scored(run), judged(QRELS_BF), ["bpref"])
    expected = {
        "q1": 1 / 2 * (1 - (1 / 2)),
        "q2": 1 / 2 * ((1 - (1 / 2)) + (1 - (1 / 2))),
        "q3": 1 / 3 * ((1 - (1 / 3)) + (1 - (1 / 3)) + (1 - (2 / 3))),
        "q4": 1 / 4 * ((1 - (1 / 4)) + (1 - (2 / 4)) + (1 - (2 / 4))),
    }
    for q, want in expected.items():
        close(per_query["bpref"][q], want)


def test_f1() -> None:  # metrics/f1_test.py::test_f1 (ranx's f1: the whole list)
    run = {**RUN_BF, "q4": {"d1": 10, "d12": 9, "d3": 8, "d14": 7, "d16": 5, "d7": 4, "d8": 3}}
    per_query, _ = values(scored(run), judged(QRELS_BF), ["SetF"])
    # by hand from ranx's precision and recall of the whole list: q1 1/4 and 1/2, q2 2/6
    # and 1, q3 3/8 and 1; q4 retrieves nothing relevant
    for q, (p, r) in {"q1": (1 / 4, 1 / 2), "q2": (2 / 6, 1.0), "q3": (3 / 8, 1.0)}.items():
        close(per_query["SetF"][q], 2 * p * r / (p + r))
    close(per_query["SetF"]["q4"], 0.0)


def test_ranx_set_names_without_a_cutoff_are_refused() -> None:
    # ranx's precision / recall / f1 without @k read the whole list (SetP, SetR, SetF);
    # sparkeval's P, R and F need a cutoff and say so rather than mean something else
    for name in ("precision", "recall", "f1"):
        with pytest.raises(MeasureError, match="needs a cutoff"):
            parse_measures([name])


# --- metrics/rank_biased_precision_test.py::test_rank_biased_precision ----------------
@pytest.mark.parametrize(("p", "want"), [(0.5, 0.7661), (0.8, 0.4526), (0.95, 0.1881)])
def test_rank_biased_precision(p: float, want: float) -> None:
    run = {"q1": {f"d{i}": 21 - i for i in range(1, 21)}}
    truth = {"q1": ["d1", "d2", "d6", "d11", "d17"]}
    name = f"RBP(p={p})"
    _, means = values(scored(run), relevant(truth), [name])
    assert round(means[name], 4) == want  # the peer rounds to 4 places


# --- metrics/zero_division_error_test.py: a query with an empty ranking ---------------
@pytest.mark.parametrize(
    ("test", "name"), [("test_precision", "SetP"), ("test_recall", "SetR"), ("test_f1", "SetF")]
)
def test_zero_division(test: str, name: str) -> None:
    truth = {"q_1": ["doc_a"], "q_2": ["doc_b"], "q_3": ["doc_c"], "q_4": ["doc_d"]}
    run = {"q_1": {"doc_a": 1.0}, "q_2": {"doc_b": 1.0}, "q_4": {"doc_d": 1.0}}  # q_3: {}
    _, means = values(scored(run), relevant(truth), [name])
    assert means[name] == 0.75


# --- ranx/meta/evaluate.py: the example of evaluate's docstring -----------------------
def test_evaluate_docstring_example() -> None:
    qrels = {"q_1": {"doc_12": 5, "doc_25": 3}, "q_2": {"doc_11": 6, "doc_2": 1}}
    run = {
        "q_1": {"doc_12": 0.9, "doc_23": 0.8, "doc_25": 0.7, "doc_36": 0.6, "doc_32": 0.5,
                "doc_35": 0.4},
        "q_2": {"doc_12": 0.9, "doc_11": 0.8, "doc_25": 0.7, "doc_36": 0.6, "doc_2": 0.5,
                "doc_35": 0.4},
    }  # fmt: skip
    per_query, means = values(scored(run), judged(qrels), ["ndcg@5", "map@5", "mrr"])
    expected = {
        "ndcg@5": ({"q_1": 0.9430, "q_2": 0.6292}, 0.7861),
        "map@5": ({"q_1": 0.8333, "q_2": 0.4500}, 0.6416),
        "mrr": ({"q_1": 1.0000, "q_2": 0.5000}, 0.75),
    }
    for name, (by_query, mean) in expected.items():
        for q, want in by_query.items():
            close(per_query[name][q], want, 1e-4)  # printed to 4 places (cut, not
        close(means[name], mean, 1e-4)  # rounded: map@5's 0.641666... is printed 0.6416)


# by hand: q1's relevant docs 1, 4, 5 are at ranks 1, 4, 5 (6 is not retrieved), 3 in
# the top 5; q2's 1 and 4 at ranks 1 and 3 (6 is not retrieved), 2: mean 2.5
@pytest.mark.parametrize(
    ("run", "truth", "mean"),
    [
        pytest.param(HITS_RUN, HITS_TRUTH, 2.5, id="metrics_test.py::test_hits"),
        pytest.param(HITS_RUN, HITS_TRUTH, 2.5, id="evaluate_test.py::test_hits_parallel"),
        pytest.param({"q1": HITS_RUN["q1"]}, {"q1": HITS_TRUTH["q1"]}, 3,
                     id="evaluate_test.py::test_hits_single"),
    ],
)  # fmt: skip
def test_hits(run, truth, mean) -> None:
    _, means = values(ranking(run), relevant(truth), ["hits@5"])
    assert means["hits@5"] == mean


# ranx keeps the input order of tied scores: with ties="input-order" (the table's row
# order) or ties="rank" (each doc's place in ranx's array as its rank) sparkeval reads
# these rankings, all scored 1, as ranx does
TIED_CASES = [
    pytest.param("precision@5", 3 / 5, id="evaluate_test.py::test_precision_single"),
    pytest.param("map@6", 0.525, id="evaluate_test.py::test_average_precision"),
]


def _tied_run() -> pd.DataFrame:
    """HITS_RUN's q1 as ranx's arrays are written: every score 1, the docs in order."""
    run = scored({"q1": dict.fromkeys(HITS_RUN["q1"], 1.0)})
    return run.assign(rank=range(1, len(run) + 1))


@pytest.mark.parametrize("ties", ["input-order", "rank"])
@pytest.mark.parametrize(("name", "want"), TIED_CASES)
def test_tied_scores_in_input_order(name: str, want: float, ties: str) -> None:
    _, means = values(_tied_run(), relevant({"q1": HITS_TRUTH["q1"]}), [name], ties=ties)
    close(means[name], want)


@pytest.mark.parametrize(
    ("name", "want"),
    [
        # by hand: the docs read 7, 5, 4, 3, 2, 1 (doc id descending); hits 5, 4, 1 at
        # ranks 2, 3 and 6 of the four relevant docs 1, 4, 5, 6
        pytest.param("precision@5", 2 / 5, id="precision@5"),
        pytest.param("map@6", (1 / 2 + 2 / 3 + 3 / 6) / 4, id="map@6"),
    ],
)
def test_tied_scores_by_default_in_doc_id_order(name: str, want: float) -> None:
    """The default tie rule is trec_eval's, not ranx's (a pinned difference)."""
    _, means = values(_tied_run(), relevant({"q1": HITS_TRUTH["q1"]}), [name])
    close(means[name], want)
