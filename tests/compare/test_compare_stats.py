"""Paired statistics against scipy (independent implementations) and hand derivations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from sparkeval.compare.stats import (
    bootstrap_ci,
    holm,
    paired_ttest,
    randomization_test,
    wins_ties_losses,
)


def _pairs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n).round(3)
    y = np.clip(x + rng.normal(0.03, 0.1, n), 0, 1).round(3)
    return x, y


@pytest.mark.parametrize("n,seed", [(2, 1), (5, 2), (30, 3), (200, 4)])
def test_ttest_matches_scipy(n: int, seed: int) -> None:
    x, y = _pairs(n, seed)
    t, p = paired_ttest(y - x)
    ref = sps.ttest_rel(y, x)
    assert t == pytest.approx(ref.statistic, rel=1e-10)
    assert p == pytest.approx(ref.pvalue, rel=1e-10)


def test_ttest_degenerate() -> None:
    assert all(math.isnan(v) for v in paired_ttest([0.3]))
    assert all(math.isnan(v) for v in paired_ttest([0.0, 0.0, 0.0]))
    t, p = paired_ttest([0.5, 0.5, 0.5])
    assert t == math.inf and p == 0.0
    with pytest.raises(ValueError):
        paired_ttest([0.1, math.nan])


def _scipy_randomization(x: np.ndarray, y: np.ndarray, n_resamples: int) -> object:
    return sps.permutation_test(
        (y, x),
        lambda a, b, axis: np.mean(a - b, axis=axis),
        permutation_type="samples",
        alternative="two-sided",
        n_resamples=n_resamples,
        vectorized=True,
        rng=np.random.default_rng(12345),
    )


@pytest.mark.parametrize("n,seed", [(2, 0), (4, 5), (9, 6), (12, 7)])
def test_randomization_exact_matches_scipy_exact(n: int, seed: int) -> None:
    x, y = _pairs(n, seed)
    ours = randomization_test(y - x, permutations=2**n)
    ref = _scipy_randomization(x, y, n_resamples=2**n)  # scipy goes exact too
    assert ours.exact
    assert ours.resamples == 2**n
    assert ours.p_value == pytest.approx(ref.pvalue, abs=1e-12)


def test_randomization_hand_derived() -> None:
    # d = (1, 2, 3): 8 sign vectors, sums ±6, ±4, ±2, ±0 ... |sum| >= 6 only for
    # (+,+,+) and (-,-,-): p = 2/8.
    assert randomization_test([1.0, 2.0, 3.0], permutations=8).p_value == 0.25
    # zero differences: every arrangement is as extreme: p = 1
    assert randomization_test([0.0, 0.0], permutations=100).p_value == 1.0
    # a zero difference doubles the arrangements without changing which are extreme
    assert randomization_test([1.0, 2.0, 3.0, 0.0], permutations=16).p_value == 0.25


def test_randomization_monte_carlo_close_to_exact() -> None:
    x, y = _pairs(16, 8)
    exact = _scipy_randomization(x, y, n_resamples=2**16).pvalue
    ours = randomization_test(y - x, permutations=20_000, seed=3)
    assert not ours.exact and ours.resamples == 20_000
    # binomial standard error of a Monte-Carlo p with 20k draws, 5 sigma
    se = math.sqrt(exact * (1 - exact) / 20_000)
    assert abs(ours.p_value - exact) <= 5 * se + 1 / 20_001


def test_randomization_monte_carlo_against_scipy_monte_carlo() -> None:
    x, y = _pairs(60, 9)
    ref = _scipy_randomization(x, y, n_resamples=20_000).pvalue
    ours = randomization_test(y - x, permutations=20_000, seed=1).p_value
    se = math.sqrt(max(ref * (1 - ref), 1e-4) / 20_000)
    assert abs(ours - ref) <= 7 * se  # two independent estimates of the same p
    again = randomization_test(y - x, permutations=20_000, seed=1).p_value
    assert again == ours  # seeded: reproducible


@pytest.mark.parametrize("n,seed,alpha", [(2, 1, 0.05), (7, 2, 0.05), (40, 3, 0.1)])
def test_bootstrap_matches_scipy_same_seed(n: int, seed: int, alpha: float) -> None:
    x, y = _pairs(n, seed)
    low, high = bootstrap_ci(y - x, resamples=3000, alpha=alpha, seed=seed)
    ref = sps.bootstrap(
        (y, x),
        lambda a, b, axis=-1: np.mean(a - b, axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        confidence_level=1 - alpha,
        n_resamples=3000,
        rng=np.random.default_rng(seed),
    ).confidence_interval
    assert low == pytest.approx(ref.low, abs=1e-12)
    assert high == pytest.approx(ref.high, abs=1e-12)


def test_bootstrap_blocks_do_not_change_the_result() -> None:
    import sparkeval.compare.stats as st

    d = _pairs(50, 4)[1] - _pairs(50, 4)[0]
    whole = bootstrap_ci(d, resamples=999, seed=2)
    cells = st._BLOCK_CELLS
    try:
        st._BLOCK_CELLS = 50 * 7  # 7 resamples per block
        assert bootstrap_ci(d, resamples=999, seed=2) == whole
    finally:
        st._BLOCK_CELLS = cells


def test_holm_hand_derived() -> None:
    # sorted p = 0.01, 0.03, 0.04 with m = 3 -> 0.03, 0.06, max(0.06, 0.04) = 0.06
    assert holm([0.01, 0.04, 0.03]).tolist() == pytest.approx([0.03, 0.06, 0.06])
    # NaN stays NaN and does not count: m = 2
    out = holm([0.02, math.nan, 0.5])
    assert out[0] == pytest.approx(0.04) and math.isnan(out[1]) and out[2] == pytest.approx(0.5)
    assert holm([0.6, 0.7]).tolist() == [1.0, 1.0]
    assert holm([]).size == 0


def test_wins_ties_losses_direction() -> None:
    d = [0.1, 0.0, -0.2, 0.3, 1e-15]
    assert wins_ties_losses(d) == (2, 2, 1)
    assert wins_ties_losses(d, higher_is_better=False) == (1, 2, 2)
