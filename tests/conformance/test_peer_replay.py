"""RePlay (sb-ai-lab/RePlay): the expectations of its published tests under
``compat="replay"``, with RePlay's names (HitRate@k, MRR@k, Precision@k, Recall@k, MAP@k,
NDCG@k).

Sources, named in each case: tests/metrics/conftest.py (the recommendations and ground
truth), tests/metrics/test_metrics.py (test_metric, test_recall, test_precision,
test_offline_metrics, test_metric_value_by_user, test_descriptors) and the docstring
examples of replay/metrics/{precision,recall,hitrate,mrr,map,ndcg,rocauc}.py, which use
the same data. RePlay's tests compare with ``approx(abs=1e-5)``; its docstrings print
full precision (compared within 1e-12).
"""

from __future__ import annotations

import pandas as pd
import pytest

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
