"""RecTools (MobileTeleSystems/RecTools): the expectations of its published tests under
``compat="rectools"`` (ranks are positions), with RecTools' names.

Sources, named in each case: tests/metrics/test_classification.py (TestPrecision,
TestRecall, TestF1Beta, TestHitRate: ``test_calc`` and ``test_when_no_interactions``) and
tests/metrics/test_ranking.py (TestNDCG.test_calc with ``divide_by_achievable=True``,
the ``test_when_no_interactions`` and ``test_when_duplicates_in_interactions`` tests).
The cases with ``divide_by_achievable=False``, MAP, MRR, PartialAUC, PAP, Accuracy and MCC
are in test_recsys_compat.py and test_peer_auc_measures.py. RecTools compares with
``pandas.testing.assert_series_equal`` (relative 1e-5 at most); these use 1e-8.

RecTools' spellings: ``Precision(k, r_precision=True)`` is ``RelP@k`` (hits / min(k,
interactions)), ``F1Beta(k, beta)`` is ``F1Beta(beta=b)@k`` and ``NDCG(k,
divide_by_achievable=True)`` is ``nDCG(ideal=qrels)@k``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sparkeval.errors import InputError
from tests.conformance.peer_cases import close, rec_values

TOL = 1e-8


def _rectools(reco: dict, interactions: dict, names: list[str]):
    return rec_values(pd.DataFrame(reco), pd.DataFrame(interactions), names, compat="rectools")


def _check(by_user, means, name: str, users: list[int], expected: list[float]) -> None:
    assert sorted(by_user[name], key=int) == [str(u) for u in users], name
    for user, want in zip(users, expected, strict=True):
        close(by_user[name][str(user)], want, TOL)
    close(means[name], float(np.mean(expected)), TOL)


# --- test_classification.py: RECO and INTERACTIONS (users 1, 3, 4, 5 evaluated) -------
RECO = {
    "user": [1, 1, 1, 2, 2, 3, 4],
    "item": [1, 2, 3, 1, 2, 1, 1],
    "rank": [1, 2, 3, 1, 2, 1, 1],
}
INTERACTIONS = {"user": [1, 1, 1, 3, 4, 5], "item": [4, 2, 3, 1, 2, 2]}
EMPTY = {"user": pd.Series([], dtype=int), "item": pd.Series([], dtype=int)}
CLASSIFICATION = {
    "TestPrecision (Precision(k=2))": ("Precision@2", [0.5, 0.5, 0.0, 0.0]),
    "TestPrecision (Precision(k=2, r_precision=True))": ("RelP@2", [0.5, 1, 0.0, 0.0]),
    "TestRecall": ("Recall@2", [1 / 3, 1, 0, 0]),
    "TestF1Beta (F1Beta(k=2, beta=2 ** (1 / 2)))": (
        f"F1Beta(beta={2 ** (1 / 2)!r})@2", [0.375, 0.75, 0, 0],
    ),
    "TestHitRate": ("HitRate@2", [1, 1, 0, 0]),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CLASSIFICATION))
def test_classification_test_calc(case: str) -> None:
    name, expected = CLASSIFICATION[case]
    by_user, means = _rectools(RECO, INTERACTIONS, [name])
    _check(by_user, means, name, [1, 3, 4, 5], expected)


@pytest.mark.parametrize("case", list(CLASSIFICATION))
def test_classification_when_no_interactions(case: str) -> None:
    # an empty per-user series and a mean of NaN
    name, _ = CLASSIFICATION[case]
    by_user, means = _rectools(RECO, EMPTY, [name])
    assert by_user == {}
    assert math.isnan(means[name])


# --- test_ranking.py: TestNDCG.test_calc, divide_by_achievable=True -------------------
NDCG_RECO = {
    "user": [1, 2, 3, 3, 3, 4, 5, 5, 5, 5, 6],
    "item": [1, 2, 1, 2, 3, 1, 1, 2, 3, 5, 1],
    "rank": [9, 1, 1, 2, 3, 1, 3, 7, 9, 1, 1],
}
NDCG_INTERACTIONS = {"user": [1, 2, 3, 3, 3, 4, 5], "item": [1, 1, 1, 2, 3, 1, 1]}


@pytest.mark.parametrize(
    ("k", "expected"),
    [(1, [0, 0, 1, 1, 0]), (3, [0, 0, 1, 1, (1 / np.log2(4)) / (1 / np.log2(2))])],
)
def test_ndcg_divide_by_achievable(k: int, expected: list[float]) -> None:
    name = f"nDCG(ideal=qrels)@{k}"
    by_user, means = _rectools(NDCG_RECO, NDCG_INTERACTIONS, [name])
    _check(by_user, means, name, [1, 2, 3, 4, 5], expected)


@pytest.mark.parametrize(
    "name", ["MAP@3", "AP(denom=k)@3", "NDCG@3", "MRR@3"],
    ids=["TestMAP", "TestMAP (divide_by_k=True)", "TestNDCG", "TestMRR"],
)  # fmt: skip
def test_ranking_when_no_interactions(name: str) -> None:
    by_user, means = _rectools({"user": [1, 2], "item": [1, 1], "rank": [1, 1]}, EMPTY, [name])
    assert by_user == {}
    assert math.isnan(means[name])


# --- test_ranking.py: test_when_duplicates_in_interactions ----------------------------
# A pinned difference: RecTools reads a repeated interaction (user 1's item 1 twice);
# sparkeval refuses an item judged twice for a user. RecTools' MRR@3 gives [1, 0] and
# its MAP@3 [3.5 / 3, 3 / 3]: MAP counts the repeat (user 1's AP exceeds 1), MRR does not.
DUP_RECO = {"user": [1, 1, 1, 2, 2, 2], "item": [1, 2, 3, 1, 2, 3], "rank": [1, 2, 3, 4, 5, 6]}
DUP_INTERACTIONS = {"user": [1, 1, 1, 2, 2, 2], "item": [1, 2, 1, 1, 2, 3]}


@pytest.mark.parametrize("name", ["MAP@3", "MRR@3"], ids=["TestMAP", "TestMRR"])
def test_duplicated_interactions_are_refused(name: str) -> None:
    with pytest.raises(InputError, match="duplicate doc 1"):
        _rectools(DUP_RECO, DUP_INTERACTIONS, [name])


def test_mrr_with_the_duplicate_given_once() -> None:
    # TestMRR.test_when_duplicates_in_interactions: RecTools' [1, 0] is the value of the
    # interactions without the repeat (user 2's items sit at positions 4-6, outside k)
    interactions = {"user": [1, 1, 2, 2, 2], "item": [1, 2, 1, 2, 3]}
    by_user, _ = _rectools(DUP_RECO, interactions, ["MRR@3"])
    assert by_user["MRR@3"] == {"1": 1.0, "2": 0.0}
