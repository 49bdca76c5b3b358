"""Rating errors against plain numpy loops and the Microsoft Recommenders fixture."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sparkeval.measures.rating import RATING_ERRORS, rating_errors


def _reference(errors: np.ndarray, truth: np.ndarray, kind: str, param: float | None) -> float:
    a = np.abs(errors)
    if kind == "RMSE":
        return float(np.sqrt(np.mean(errors**2)))
    if kind == "MAE":
        return float(np.mean(a))
    if kind == "MaxAE":
        return float(np.max(a))
    if kind == "TopL_AE":
        return float(np.sort(a)[::-1][: int(param)].sum())
    if kind == "Lp":
        return float(np.linalg.norm(errors, ord=param))
    if kind == "ExpVar":
        var_truth = float(np.var(truth))
        return float("nan") if var_truth == 0 else 1.0 - float(np.var(errors)) / var_truth
    ss_tot = float(np.sum((truth - truth.mean()) ** 2))
    return float("nan") if ss_tot == 0 else 1.0 - float(np.sum(errors**2)) / ss_tot


@pytest.mark.parametrize("name", sorted(RATING_ERRORS))
@pytest.mark.parametrize("seed", [0, 1])
def test_against_numpy(name: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 300
    user = rng.integers(0, 25, size=n) * 7  # arbitrary, unsorted user codes
    truth = rng.integers(1, 6, size=n).astype(float)
    pred = truth + rng.normal(0, 1.2, size=n)
    err = RATING_ERRORS[name]
    params = [None] if err.param is None else [None, 3.0]
    for value in params:
        param = err.default if value is None else value
        got = err.compute(user, truth, pred, value)
        if err.per_user:
            per = [
                _reference(truth[user == u] - pred[user == u], truth[user == u], err.kind, param)
                for u in np.unique(user)
            ]
            per = [v for v in per if not math.isnan(v)]
            want = float(np.mean(per))
        else:
            want = _reference(truth - pred, truth, err.kind, param)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12), (name, value)


def test_microsoft_recommenders_fixture() -> None:
    # PEERS.md: rating_true and rating_pred joined on (user, item)
    true = pd.DataFrame(
        {
            "u": [1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 1],
            "i": [3, 1, 4, 5, 6, 7, 2, 5, 6, 8, 9, 10, 11, 12, 13, 14, 1, 2],
            "r": [3, 5, 5, 3, 3, 1, 5, 5, 5, 4, 4, 3, 3, 3, 2, 1, 5, 4],
        }
    )
    pred = pd.DataFrame(
        {
            "u": [1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 1],
            "i": [12, 10, 3, 5, 11, 13, 4, 10, 7, 13, 1, 3, 5, 2, 11, 14, 3, 10],
            "q": [12, 14, 13, 12, 11, 10, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 14, 13],
        }
    )
    j = true.merge(pred, on=["u", "i"])
    got = rating_errors(
        j["u"].to_numpy(), j["r"].to_numpy(float), j["q"].to_numpy(float), ["RMSE", "MAE", "R2"]
    )
    assert got["RMSE"] == pytest.approx(7.254309, abs=5e-7)
    assert got["MAE"] == pytest.approx(6.375)
    assert got["R2"] == pytest.approx(-31.699029, abs=5e-7)


def test_hand_values_and_edge_cases() -> None:
    user = np.array([5, 5, 9])
    truth = np.array([3.0, 4.0, 5.0])
    pred = np.array([2.0, 4.0, 3.0])  # residuals 1, 0 (user 5) and 2 (user 9)
    assert RATING_ERRORS["MaxAE"].compute(user, truth, pred) == 2.0
    assert RATING_ERRORS["MaxAE_per_user"].compute(user, truth, pred) == 1.5
    assert RATING_ERRORS["TopL_AE"].compute(user, truth, pred, 2) == 3.0
    assert RATING_ERRORS["Lp"].compute(user, truth, pred, 1) == 3.0
    assert RATING_ERRORS["Lp"].compute(user, truth, pred, math.inf) == 2.0
    # user 9 has one rating: its R2 is undefined and left out of the per-user mean
    assert RATING_ERRORS["R2_per_user"].compute(user, truth, pred) == pytest.approx(1 - 1 / 0.5)
    assert math.isnan(RATING_ERRORS["RMSE"].compute(np.array([]), np.array([]), np.array([])))
    with pytest.raises(ValueError):
        RATING_ERRORS["MAE"].compute(user, truth, pred[:2])
    with pytest.raises(ValueError):
        RATING_ERRORS["TopL_AE"].compute(user, truth, pred, 0)
    with pytest.raises(ValueError):
        rating_errors(user, truth, pred, ["MSE"])
