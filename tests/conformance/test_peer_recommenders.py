"""Microsoft Recommenders (recommenders-team/recommenders): the expectations of
tests/unit/recommenders/evaluation/test_python_evaluation.py (its pure-Python
``python_evaluation``, default ``relevancy_method="top_k"``) on the fixtures of
tests/unit/recommenders/evaluation/conftest.py, under ``compat="recommenders"`` (users
in both tables, every truth row relevant, the top k by score) with Recommenders' names.

``SparkRankingEvaluation``'s fixture (test_spark_evaluation.py) is in
test_recsys_compat.py through Spark. The peer's tolerance is ``TOL = 0.0001``
(``pytest.approx(x, TOL)``, relative); its exact comparisons (``== 1``, ``== 0.6``) are
kept within 1e-12.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from sparkeval.errors import ConfigError, InputError
from tests.conformance.peer_cases import rec_values

TOL = 0.0001
EXACT = 1e-12

#: conftest.py: rating_true and rating_pred
USERS = [1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 1]
TRUE_ITEMS = [3, 1, 4, 5, 6, 7, 2, 5, 6, 8, 9, 10, 11, 12, 13, 14, 1, 2]
RATINGS = [3, 5, 5, 3, 3, 1, 5, 5, 5, 4, 4, 3, 3, 3, 2, 1, 5, 4]
PRED_ITEMS = [12, 10, 3, 5, 11, 13, 4, 10, 7, 13, 1, 3, 5, 2, 11, 14, 3, 10]
PREDICTIONS = [12, 14, 13, 12, 11, 10, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 14, 13]


def rating_true() -> pd.DataFrame:
    return pd.DataFrame({"userID": USERS, "itemID": TRUE_ITEMS, "rating": RATINGS})


def rating_pred() -> pd.DataFrame:
    return pd.DataFrame({"userID": USERS, "itemID": PRED_ITEMS, "prediction": PREDICTIONS})


def true_as_pred() -> pd.DataFrame:
    """The truth scored by its own ratings (``rating_pred=rating_true,
    col_prediction=DEFAULT_RATING_COL``)."""
    return rating_true().rename(columns={"rating": "prediction"})


def rating_nohit() -> pd.DataFrame:
    """conftest.py's rating_nohit predicts item 100 for every row, so each user holds it
    several times; sparkeval refuses a repeated item (test_nohit_as_written_is_refused),
    so here each user predicts it once."""
    return pd.DataFrame({"userID": [1, 2, 3], "itemID": [100] * 3, "prediction": [14, 14, 14]})


def _mean(recs: pd.DataFrame, truth: pd.DataFrame, name: str, **keywords) -> float:
    keywords.setdefault("compat", "recommenders")
    return rec_values(recs, truth, [name], **keywords)[1][name]


CASES = [
    # (test function, recs, Recommenders' function and k, sparkeval name, expected, tol)
    ("test_python_ndcg_at_k", true_as_pred, "ndcg_at_k k=10", "nDCG@10", 1.0, TOL),
    ("test_python_ndcg_at_k", rating_nohit, "ndcg_at_k k=10", "nDCG@10", 0.0, EXACT),
    ("test_python_ndcg_at_k", rating_pred, "ndcg_at_k k=10", "nDCG@10", 0.38172, TOL),
    ("test_python_map", true_as_pred, "map k=10", "MAP", 1.0, EXACT),
    ("test_python_map", rating_nohit, "map k=10", "MAP", 0.0, EXACT),
    ("test_python_map", rating_pred, "map k=10", "MAP", 0.23613, TOL),
    ("test_python_map_at_k", true_as_pred, "map_at_k k=10", "MAP@10", 1.0, EXACT),
    ("test_python_map_at_k", rating_nohit, "map_at_k k=10", "MAP@10", 0.0, EXACT),
    ("test_python_map_at_k", rating_pred, "map_at_k k=10", "MAP@10", 0.23613, TOL),
    ("test_python_precision_at_k", true_as_pred, "precision_at_k k=10", "P@10", 0.6, EXACT),
    ("test_python_precision_at_k", rating_nohit, "precision_at_k k=10", "P@10", 0.0, EXACT),
    ("test_python_precision_at_k", rating_pred, "precision_at_k k=10", "P@10", 0.26666, TOL),
    ("test_python_recall_at_k", true_as_pred, "recall_at_k k=10", "R@10", 1.0, TOL),
    ("test_python_recall_at_k", rating_nohit, "recall_at_k k=10", "R@10", 0.0, EXACT),
    ("test_python_recall_at_k", rating_pred, "recall_at_k k=10", "R@10", 0.37777, TOL),
]  # fmt: skip


@pytest.mark.parametrize(
    ("recs", "name", "want", "tol"),
    [pytest.param(c[1], c[3], c[4], c[5], id=f"{c[0]}[{c[1].__name__}, {c[2]}]") for c in CASES],
)
def test_python_evaluation(recs, name: str, want: float, tol: float) -> None:
    # Recommenders' map is taken over the top k: MAP is asked for with k = 10 beside it
    names = [name, "P@10"] if name == "MAP" else [name]
    got = rec_values(recs(), rating_true(), names, compat="recommenders")[1][name]
    assert got == pytest.approx(want, rel=tol if tol == TOL else None, abs=EXACT)


def test_nohit_as_written_is_refused() -> None:
    # a pinned difference: Recommenders reads rating_nohit's repeated item 100 as one
    # recommendation per row; sparkeval refuses an item recommended twice to a user
    nohit = pd.DataFrame({"userID": USERS, "itemID": [100] * 18, "prediction": PREDICTIONS})
    with pytest.raises(InputError, match="duplicate"):
        _mean(nohit, rating_true(), "P@10")


# --- test_python_precision_at_k: normalisation ----------------------------------------
SINGLE_USER = {"userID": [1, 1, 1], "itemID": [1, 2, 3], "rating": [5, 4, 3]}
SAME_ITEMS = {"userID": [1, 1, 1, 2, 2, 2], "itemID": [1, 2, 3, 1, 2, 3],
              "rating": [5, 4, 3, 5, 5, 3]}  # fmt: skip


@pytest.mark.parametrize(
    ("table", "k", "want"),
    [
        pytest.param(SINGLE_USER, 3, 1.0, id="single_user k=3"),
        pytest.param(SAME_ITEMS, 3, 1.0, id="same_items k=3"),
        # fewer items than k: at most 3/5
        pytest.param(SAME_ITEMS, 5, 0.6, id="same_items k=5"),
    ],
)
def test_precision_normalisation(table: dict, k: int, want: float) -> None:
    truth = pd.DataFrame(table)
    recs = truth.rename(columns={"rating": "prediction"})
    assert _mean(recs, truth, f"P@{k}") == pytest.approx(want, abs=EXACT)


# --- test_python_ndcg_at_k: the raw-relevance example (score_type="raw") --------------
def test_ndcg_raw_relevance_wikipedia_example() -> None:
    # ndcg_at_k(score_type="raw", discfun_type="log2"): gains are the ratings themselves,
    # which trec_eval's nDCG@k computes (linear gain, ideal from all of the user's
    # ratings); the recommenders profile is binary and refuses graded relevance
    truth = pd.DataFrame({"userID": [0] * 8, "itemID": list(range(8)),
                          "rating": [3, 2, 3, 0, 1, 2, 3, 2]})  # fmt: skip
    recs = pd.DataFrame({"userID": [0] * 6, "itemID": list(range(6)),
                         "prediction": [6, 5, 4, 3, 2, 1]})  # fmt: skip
    got = _mean(recs, truth, "nDCG@6", compat="trec", relevance="grade", queries="both")
    assert got == pytest.approx(0.785, rel=TOL)
    with pytest.raises(ConfigError, match="binary relevance"):
        _mean(recs, truth, "nDCG@6", relevance="grade")


# --- test_python_r_precision: r_precision_at_k ----------------------------------------
# r_precision_at_k counts the hits in the top min(k, R) ranks and divides by R (the
# user's truth rows): R-precision of the ranking cut at k, sparkeval's Rprec with
# depth k (trec_eval -M k). The recommenders profile does not offer it; it is computed
# under trec with the profile's users (both) and relevance (every truth row).
@pytest.mark.parametrize(
    ("recs", "k", "want", "tol"),
    [
        pytest.param(true_as_pred, 10, 1.0, TOL, id="rating_true k=10"),
        pytest.param(rating_nohit, 5, 0.0, EXACT, id="rating_nohit k=5"),
        pytest.param(rating_pred, 3, 0.21111, TOL, id="rating_pred k=3"),
        pytest.param(rating_pred, 5, 0.24444, TOL, id="rating_pred k=5"),
        pytest.param(rating_pred, 10, 0.37777, TOL, id="rating_pred k=10"),
    ],
)
def test_python_r_precision(recs, k: int, want: float, tol: float) -> None:
    got = _mean(recs(), rating_true(), "Rprec", compat="trec", relevance="all",
                queries="both", depth=k)  # fmt: skip
    assert not math.isnan(got)
    assert got == pytest.approx(want, rel=tol if tol == TOL else None, abs=EXACT)
