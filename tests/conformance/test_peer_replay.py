"""RePlay (sb-ai-lab/RePlay): the expectations of its published tests under
``compat="replay"``, with RePlay's names (HitRate@k, MRR@k, Precision@k, Recall@k, MAP@k,
NDCG@k).

Sources, named in each case: tests/metrics/conftest.py (the recommendations and ground
truth), tests/metrics/test_metrics.py (test_metric, test_recall, test_precision,
test_offline_metrics, test_metric_value_by_user, test_descriptors, test_surprisal) and
the docstring examples of
replay/metrics/{precision,recall,hitrate,mrr,map,ndcg,rocauc,surprisal}.py, which use the
same data (their means and their PerUser, Median and ConfidenceInterval modes). RePlay's
tests compare with ``approx(abs=1e-5)``; its docstrings print
full precision (compared within 1e-12).
"""

from __future__ import annotations

import pandas as pd
import pytest

import sparkeval
from sparkeval.errors import ConfigError
from tests.conformance.peer_cases import close, rec_values

ABS = 1e-5  # test_metrics.py's ABS
#: conftest.py: recs_data (user, item, score) and gt_data (user, item)
RECS = [
    (1, 3, 0.6), (1, 7, 0.5), (1, 10, 0.4), (1, 11, 0.3), (1, 2, 0.2),
    (2, 5, 0.6), (2, 8, 0.5), (2, 11, 0.4), (2, 1, 0.3), (2, 3, 0.2),
    (3, 4, 1.0), (3, 9, 0.5), (3, 2, 0.1),
]  # fmt: skip
GT = [(1, 5), (1, 6), (1, 7), (1, 8), (1, 9), (1, 10), (2, 6), (2, 7), (2, 4), (2, 10),
      (2, 11), (3, 1), (3, 2), (3, 3), (3, 4), (3, 5)]  # fmt: skip


def _recs(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["user_id", "item_id", "score"])


def _truth(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["user_id", "item_id"])


def _replay(recs, truth, names):
    return rec_values(recs, truth, names, compat="replay")


def _replay_set_means(recs, truth, names, train) -> dict[str, float]:
    """The means of the measures of the recommendation set (``train=``) under the
    replay profile (:func:`sparkeval.evaluate_recommendations` in this process, which
    asks for a ranking measure beside them)."""
    ev = sparkeval.evaluate_recommendations(
        None, recs, truth, ["Precision@1", *names], train=train, compat="replay"
    )
    return ev.report["runs"]["run"]["measures"]


# --- test_metrics.py::test_metric (and test_recall, test_precision, test_offline_metrics)
TEST_METRIC = {  # metric: (topk, answer)
    "Precision": ([3, 5, 10], [0.55555, 0.333333, 0.166666]),
    "HitRate": ([3, 5, 10], [1.0, 1.0, 1.0]),
    "MRR": ([3, 5, 10], [0.61111, 0.61111, 0.61111]),
    "MAP": ([3, 5, 10], [0.35185, 0.21111, 0.198148]),
    "NDCG": ([3, 5, 10], [0.48975, 0.35396, 0.34018]),
}
MEANS = [
    pytest.param(f"{metric}@{k}", want, id=f"test_metric[{metric}@{k}]")
    for metric, (ks, answers) in TEST_METRIC.items()
    for k, want in zip(ks, answers, strict=True)
] + [
    pytest.param("Recall@5", 0.31111, id="test_recall[Recall@5]"),
    pytest.param("Recall@10", 0.31111, id="test_recall[Recall@10]"),
    pytest.param("Precision@5", 0.333333, id="test_precision[Precision@5]"),
    pytest.param("Recall@5", 0.311111, id="test_offline_metrics[Recall@5]"),
    pytest.param("Precision@5", 0.333333, id="test_offline_metrics[Precision@5]"),
]


@pytest.mark.parametrize(("name", "want"), MEANS)
def test_metric_means(name: str, want: float) -> None:
    _, means = _replay(_recs(RECS), _truth(GT), [name])
    close(means[name], want, ABS)


# --- the docstring examples: k = 2, the mean and PerUser ------------------------------
DOCSTRINGS = {  # file: (name, mean, per user 1, 2, 3)
    "precision.py": ("Precision@2", 0.3333333333333333, [0.5, 0.0, 0.5]),
    "recall.py": ("Recall@2", 0.12222222222222223, [0.16666666666666666, 0.0, 0.2]),
    "hitrate.py": ("HitRate@2", 0.6666666666666666, [1.0, 0.0, 1.0]),
    "mrr.py": ("MRR@2", 0.5, [0.5, 0.0, 1.0]),
    "map.py": ("MAP@2", 0.25, [0.25, 0.0, 0.5]),
    "ndcg.py": ("NDCG@2", 0.3333333333333333, [0.38685280723454163, 0.0, 0.6131471927654584]),
}


@pytest.mark.parametrize("file", list(DOCSTRINGS))
def test_docstring_examples(file: str) -> None:
    name, mean, per_user = DOCSTRINGS[file]
    by_user, means = _replay(_recs(RECS), _truth(GT), [name])
    close(means[name], mean, 1e-12)
    for user, want in zip(["1", "2", "3"], per_user, strict=True):
        close(by_user[name][user], want, 1e-12)


# --- test_metrics.py::test_metric_value_by_user: one user, ks [1, 5] ------------------
#: metric: (answer_inter: pred [1, 3] against ground truth [1, 2],
#:          answer_non_inter: pred [3, 4] against the same)
BY_USER = {
    "HitRate": ([1.0, 1.0], [0.0, 0.0]),
    "MAP": ([1.0, 0.5], [0.0, 0.0]),
    "MRR": ([1.0, 1.0], [0.0, 0.0]),
    "NDCG": ([1.0, 0.6131471927654584], [0.0, 0.0]),
    "Precision": ([1.0, 0.2], [0.0, 0.0]),
    "Recall": ([0.5, 0.5], [0.0, 0.0]),
}


@pytest.mark.parametrize("metric", list(BY_USER))
@pytest.mark.parametrize(("pred", "case"), [([1, 3], 0), ([3, 4], 1)], ids=["inter", "non_inter"])
def test_metric_value_by_user(metric: str, pred: list[int], case: int) -> None:
    recs = _recs([(1, item, float(len(pred) - i)) for i, item in enumerate(pred)])
    names = [f"{metric}@1", f"{metric}@5"]
    by_user, _ = _replay(recs, _truth([(1, 1), (1, 2)]), names)
    for name, want in zip(names, BY_USER[metric][case], strict=True):
        assert by_user[name]["1"] == want, name  # the peer compares with ==


# --- test_metrics.py::test_descriptors: the recommendations as their own ground truth -
def test_descriptors_mean_and_per_user() -> None:
    by_user, means = _replay(_recs(RECS), _truth([(u, i) for u, i, _ in RECS]), ["Precision@5"])
    close(means["Precision@5"], 0.86666, ABS)  # Mean()
    for user, want in {"1": 1.0, "2": 1.0, "3": 0.6}.items():  # PerUser()
        close(by_user["Precision@5"][user], want, ABS)


# --- RocAuc -------------------------------------------------------------------------
# by hand, RocAuc@3: user 1's top 3 is miss, hit, hit (h = 2, m = 1, 2 misses above the
# hits): 1 - 2 / 2 = 0; user 2's miss, miss, hit: 1 - 2 / 2 = 0; user 3's hit, miss,
# hit: 1 - 1 / 2 = 1/2; the mean 1/6


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param("RocAuc@3", 0.16666, id="test_metric[RocAuc@3]"),
        pytest.param("RocAuc@5", 0.55555, id="test_metric[RocAuc@5]"),
        pytest.param("RocAuc@10", 0.55555, id="test_metric[RocAuc@10]"),
        pytest.param("RocAuc@2", 0.3333333333333333, id="rocauc.py docstring"),
    ],
)
def test_roc_auc(name: str, want: float) -> None:
    _, means = _replay(_recs(RECS), _truth(GT), [name])
    close(means[name], want, ABS)


@pytest.mark.parametrize(
    ("pred", "want"), [([1, 3], [1.0, 1.0]), ([3, 4], [0.0, 0.0])], ids=["inter", "non_inter"]
)
def test_roc_auc_value_by_user(pred: list[int], want: list[float]) -> None:
    # test_metrics.py::test_metric_value_by_user, RocAuc
    recs = _recs([(1, item, float(len(pred) - i)) for i, item in enumerate(pred)])
    by_user, _ = _replay(recs, _truth([(1, 1), (1, 2)]), ["RocAuc@1", "RocAuc@5"])
    assert [by_user["RocAuc@1"]["1"], by_user["RocAuc@5"]["1"]] == want


# --- Surprisal (computed with train=) ------------------------------------------------
#: conftest.py: recs_with_cold_items_data and recs_with_missing_users_data
COLD_ITEMS = [(1, 42, 0.5), (1, 5, 1.0), (2, 221, 0.2), (2, 7, 0.3), (3, 2, 0.4), (3, 934, 0.6)]
MISSING_USERS = [(1, 7, 0.5), (1, 5, 1.0), (3, 2, 0.4), (3, 6, 0.6)]
#: test_metrics.py::test_surprisal: (recommendations, train, topk, answer)
SURPRISAL = [
    pytest.param(RECS, [(u, i) for u, i, _ in RECS], [3, 5], [0.78969, 0.614294],
                 id="test_surprisal[predict_pd-predict_pd]"),
    pytest.param(RECS, GT, [3, 5], [0.719586, 0.698418], id="test_surprisal[predict_pd-gt_pd]"),
    pytest.param(COLD_ITEMS, GT, [5], [0.315876],
                 id="test_surprisal[recs_with_cold_items_pandas-gt_pd]"),
    pytest.param(MISSING_USERS, GT, [5], [0.210721],
                 id="test_surprisal[recs_with_missing_users_pandas-gt_pd]"),
]  # fmt: skip


@pytest.mark.parametrize(("recs", "train", "ks", "answers"), SURPRISAL)
def test_surprisal(recs, train, ks: list[int], answers: list[float]) -> None:
    names = [f"Surprisal@{k}" for k in ks]
    means = _replay_set_means(_recs(recs), _truth(GT), names, _truth(train))
    for name, want in zip(names, answers, strict=True):
        close(means[name], want, ABS)


def test_surprisal_docstring() -> None:
    """replay/metrics/surprisal.py: Surprisal(2) of the docstring's recommendations and
    train (conftest.py's recs_data; train is recs_data's users with other items)."""
    train = [(1, 5), (1, 6), (1, 8), (1, 9), (1, 2), (2, 5), (2, 8), (2, 11), (2, 1), (2, 3),
             (3, 4), (3, 9), (3, 2)]  # fmt: skip
    means = _replay_set_means(_recs(RECS), _truth(GT), ["Surprisal@2"], _truth(train))
    close(means["Surprisal@2"], 0.6845351232142715, 1e-12)


# --- the aggregation modes: replay/metrics/descriptors.py (Mean, PerUser, Median,
# ConfidenceInterval), named as RePlay's results name them (NDCG-Median@2) ------------
#: the docstring examples of replay/metrics/{ndcg,map,precision,recall,hitrate,mrr,
#: rocauc}.py: (Median(), ConfidenceInterval(alpha=0.95)) at k = 2
DOCSTRING_MODES = {
    "NDCG": (0.38685280723454163, 0.3508565839953337),
    "MAP": (0.25, 0.282896433519043),
    "Precision": (0.5, 0.32666066409000905),
    "Recall": (0.16666666666666666, 0.12125130695058273),
    "HitRate": (1.0, 0.6533213281800181),
    "MRR": (0.5, 0.565792867038086),
    "RocAuc": (0.0, 0.6533213281800181),
}


@pytest.mark.parametrize("metric", list(DOCSTRING_MODES))
def test_docstring_median_and_confidence_interval(metric: str) -> None:
    median, half_width = DOCSTRING_MODES[metric]
    names = [f"{metric}-Median@2", f"{metric}-ConfidenceInterval@2"]
    ev = sparkeval.evaluate_recommendations(
        None, _recs(RECS), _truth(GT), names, compat="replay", names="requested"
    )
    measures = ev.report["runs"]["run"]["measures"]
    close(measures[names[0]], median, 1e-12)
    close(measures[names[1]], half_width, 1e-12)


def test_descriptors_median() -> None:
    """test_metrics.py::test_descriptors: Precision(5, mode=Median()) of the
    recommendations as their own ground truth, 1.0 (per user 1.0, 1.0, 0.6); its
    ConfidenceInterval(alpha=0.05), 0.00836, is an alpha RePlay's names do not carry
    (tests/engine/test_aggregation_modes.py checks the half-width at that alpha)."""
    truth = _truth([(u, i) for u, i, _ in RECS])
    ev = sparkeval.evaluate_recommendations(
        None, _recs(RECS), truth, ["Precision-Median@5"], compat="replay"
    )
    close(ev.report["runs"]["run"]["measures"]["Precision-Median@5"], 1.0, ABS)


MODES = [
    ("NDCG-Mean@2", "default mode"),
    ("NDCG-PerUser@2", "per_query.parquet"),
    ("Surprisal-PerUser@2", "reports its mean only"),
    ("Surprisal-Median@2", r"Median\(\) of Surprisal is not computed"),
    ("Coverage-ConfidenceInterval@2", "reports its mean only"),
]


@pytest.mark.parametrize(("name", "reason"), MODES)
def test_aggregation_modes_are_refused_naming_where_the_value_is(name: str, reason: str):
    with pytest.raises(ConfigError, match=reason):
        _replay_set_means(_recs(RECS), _truth(GT), [name], _truth(GT))


def test_the_mean_mode_of_surprisal_is_its_plain_name() -> None:
    """Surprisal(2, mode=Mean()) is RePlay's Surprisal@2; the docstring's other modes
    (Median 0.6845351232142713, ConfidenceInterval(alpha=0.95) 0.3569755541728279) are
    refused above: a measure of the recommendation set reports its mean only."""
    with pytest.raises(ConfigError, match=r"ask for Surprisal@2"):
        _replay_set_means(_recs(RECS), _truth(GT), ["Surprisal-Mean@2"], _truth(GT))
