"""Information measures against scipy / scikit-learn and hand derivations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from scipy.spatial.distance import jensenshannon
from sklearn.metrics import mutual_info_score

from sparkeval.information import (
    conditional_entropy,
    cross_entropy,
    dunning_llr,
    entropy,
    exposure_distribution,
    joint_entropy,
    js_divergence,
    kl_divergence,
    mutual_information,
)

RNG = np.random.default_rng(11)
CASES = [RNG.dirichlet(np.ones(k)) for k in (2, 5, 40)] + [np.array([0.0, 3.0, 1.0, 0.0])]


@pytest.mark.parametrize("p", CASES)
def test_entropy_matches_scipy(p: np.ndarray) -> None:
    assert entropy(p) == pytest.approx(sps.entropy(p, base=2))
    assert entropy(p, base=math.e) == pytest.approx(sps.entropy(p))


def test_entropy_hand_values() -> None:
    assert entropy([1, 1, 1, 1]) == 2.0
    assert entropy([5]) == 0.0
    with pytest.raises(ValueError):
        entropy([0, 0])
    with pytest.raises(ValueError):
        entropy([-1, 2])


@pytest.mark.parametrize("i", range(len(CASES) - 1))
def test_kl_js_cross_match_scipy(i: int) -> None:
    p = CASES[i]
    q = RNG.dirichlet(np.ones(p.size))
    assert kl_divergence(p, q) == pytest.approx(sps.entropy(p, q, base=2))
    assert js_divergence(p, q) == pytest.approx(jensenshannon(p, q, base=2) ** 2)
    assert cross_entropy(p, q) == pytest.approx(sps.entropy(p, base=2) + sps.entropy(p, q, base=2))
    assert 0.0 <= js_divergence(p, q) <= 1.0


def test_divergence_edge_cases() -> None:
    assert kl_divergence([0.5, 0.5], [1.0, 0.0]) == math.inf
    assert cross_entropy([0.5, 0.5], [1.0, 0.0]) == math.inf
    assert kl_divergence([1.0, 0.0], [0.5, 0.5]) == pytest.approx(1.0)  # log2(1/0.5)
    assert js_divergence([1, 0, 0], [0, 0, 1]) == 1.0
    assert js_divergence([0.2, 0.8], [0.2, 0.8]) == 0.0
    with pytest.raises(ValueError):
        kl_divergence([1, 0], [1, 0, 0])


def test_joint_conditional_mutual_information() -> None:
    counts = np.array([[10, 2, 0], [3, 7, 5]])
    pxy = counts / counts.sum()
    hx = sps.entropy(pxy.sum(axis=1), base=2)
    hy = sps.entropy(pxy.sum(axis=0), base=2)
    hxy = sps.entropy(pxy.ravel(), base=2)
    assert joint_entropy(counts) == pytest.approx(hxy)
    assert conditional_entropy(counts) == pytest.approx(hxy - hx)
    # scikit-learn's mutual information (natural log) from the contingency table
    ref = mutual_info_score(None, None, contingency=counts) / math.log(2)
    assert mutual_information(counts) == pytest.approx(ref)
    assert mutual_information(counts) == pytest.approx(hx + hy - hxy)
    # independence: zero information
    assert mutual_information(np.outer([1, 3], [2, 2, 4])) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(
    "table", [(10, 5, 3, 100), (1, 0, 0, 1), (50, 50, 50, 50), (7, 120, 31, 9000)]
)
def test_llr_is_scipy_g_statistic(table: tuple[int, int, int, int]) -> None:
    k = np.array(table, dtype=float).reshape(2, 2)
    if (k.sum(axis=0) > 0).all() and (k.sum(axis=1) > 0).all():
        g = sps.chi2_contingency(k, correction=False, lambda_="log-likelihood").statistic
    else:
        g = 0.0
    assert dunning_llr(*table) == pytest.approx(g, abs=1e-9)


def test_llr_hand_value() -> None:
    # perfectly associated 10/0/0/10: 2 * sum k log(k N / (r c)) = 2 * 2 * 10 * ln(20*10/100)
    assert dunning_llr(10, 0, 0, 10) == pytest.approx(40 * math.log(2))
    assert dunning_llr(0, 0, 0, 0) == 0.0


def test_exposure_distribution() -> None:
    assert exposure_distribution("abca") == {"a": 0.5, "b": 0.25, "c": 0.25}
    with pytest.raises(ValueError):
        exposure_distribution([])
