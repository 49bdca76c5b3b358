"""Paired significance tests for comparing two runs on the same queries (pure numpy).

Every function takes the vector of paired per-query differences
``d_i = x_i - y_i`` (run minus baseline, one entry per query that both runs
score) and works on it alone, so one call handles one (run, measure) pair.

* :func:`paired_ttest` — Student's paired t-test, two-sided.
* :func:`randomization_test` — Fisher's randomization (sign-flip) test, two-sided:
  exact over all ``2**n`` sign vectors when that many fit in the budget,
  otherwise Monte-Carlo with a seeded generator.
* :func:`bootstrap_ci` — percentile bootstrap confidence interval of the mean
  difference, resampling queries with replacement.
* :func:`holm` — Holm–Bonferroni step-down adjustment of a family of p-values.
* :func:`wins_ties_losses` — per-query outcome counts that respect the direction
  of the measure.

Example:
    >>> import numpy as np
    >>> d = np.array([0.1, 0.2, -0.05, 0.3])
    >>> round(randomization_test(d, permutations=1000).p_value, 4)  # exact: 2**4 <= 1000
    0.25
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: relative tolerance when comparing a resampled statistic with the observed one, so
#: that values equal in exact arithmetic but not in floating point count as ties
RELATIVE_TOLERANCE = 1e-12

#: absolute difference at or below which a query counts as a tie
TIE_TOLERANCE = 1e-12

#: cap on the number of float64 cells one resampling block may hold (about 32 MB)
_BLOCK_CELLS = 4_000_000


def _as_diffs(diffs: np.ndarray | list[float]) -> np.ndarray:
    d = np.asarray(diffs, dtype=np.float64).ravel()
    if not np.all(np.isfinite(d)):
        raise ValueError("paired differences must be finite (drop unpaired or undefined queries)")
    return d


def paired_ttest(diffs: np.ndarray | list[float]) -> tuple[float, float]:
    """Two-sided paired t-test of ``mean(d) = 0``.

    ``t = mean(d) / (s_d / sqrt(n))`` with ``s_d`` the sample standard deviation
    (``ddof=1``) and ``n - 1`` degrees of freedom; ``p = 2 * P(T_{n-1} >= |t|)``.
    Agrees with ``scipy.stats.ttest_rel(x, y)``.

    Args:
        diffs: paired differences, run minus baseline.

    Returns:
        ``(t, p)``; both NaN when ``n < 2`` or when every difference is zero.
        When the differences are a non-zero constant, ``t = ±inf`` and ``p = 0``.
    """
    from scipy.special import stdtr

    d = _as_diffs(diffs)
    n = d.size
    if n < 2:
        return math.nan, math.nan
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        if mean == 0.0:
            return math.nan, math.nan
        return math.copysign(math.inf, mean), 0.0
    t = mean / (sd / math.sqrt(n))
    p = 2.0 * float(stdtr(n - 1, -abs(t)))
    return t, min(p, 1.0)


@dataclass(frozen=True)
class RandomizationResult:
    """Outcome of :func:`randomization_test`."""

    statistic: float
    p_value: float
    exact: bool
    resamples: int


def randomization_test(
    diffs: np.ndarray | list[float],
    permutations: int = 10_000,
    seed: int | None = 0,
) -> RandomizationResult:
    """Fisher's two-sided randomization test for paired data (sign flips).

    Under the null hypothesis the two runs are exchangeable on every query, so
    each difference keeps its size and takes either sign with probability 1/2.
    The statistic is the mean difference ``T = mean(d)``.

    * **Exact** when ``2**n <= permutations``: all ``2**n`` sign vectors are
      enumerated and ``p = #{s : |T_s| >= |T|} / 2**n``.
    * **Monte-Carlo** otherwise: ``permutations`` sign vectors are drawn with
      ``numpy.random.default_rng(seed)`` and
      ``p = (1 + #{|T_s| >= |T|}) / (permutations + 1)`` (the observed
      arrangement counts as one of the resamples, so ``p > 0``).

    Because the sign-flip null distribution is symmetric, the exact ``p`` equals
    ``scipy.stats.permutation_test(..., permutation_type='samples')``'s two-sided
    value, ``2 * min(P(T_s <= T), P(T_s >= T))`` clipped at 1.

    Args:
        diffs: paired differences, run minus baseline.
        permutations: budget of sign vectors (>= 1).
        seed: seed of the Monte-Carlo generator.

    Returns:
        the observed mean, the p-value (NaN when ``n = 0``), whether it is exact
        and how many sign vectors were evaluated.
    """
    if permutations < 1:
        raise ValueError(f"permutations must be >= 1, got {permutations}")
    d = _as_diffs(diffs)
    n = d.size
    if n == 0:
        return RandomizationResult(math.nan, math.nan, True, 0)
    observed = float(d.mean())
    threshold = abs(observed) - RELATIVE_TOLERANCE * abs(observed)
    if n < 63 and 2**n <= permutations:
        total = 2**n
        hits = 0
        rows = max(1, _BLOCK_CELLS // n)
        bits = np.arange(n, dtype=np.int64)
        for start in range(0, total, rows):
            codes = np.arange(start, min(total, start + rows), dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, None] >> bits) & 1)
            stats = (signs * d).mean(axis=1)
            hits += int(np.count_nonzero(np.abs(stats) >= threshold))
        return RandomizationResult(observed, hits / total, True, total)
    rng = np.random.default_rng(seed)
    hits = 0
    rows = max(1, _BLOCK_CELLS // n)
    for start in range(0, permutations, rows):
        block = min(rows, permutations - start)
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(block, n))
        stats = (signs * d).mean(axis=1)
        hits += int(np.count_nonzero(np.abs(stats) >= threshold))
    return RandomizationResult(observed, (hits + 1) / (permutations + 1), False, permutations)


def bootstrap_ci(
    diffs: np.ndarray | list[float],
    resamples: int = 10_000,
    alpha: float = 0.05,
    seed: int | None = 0,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean paired difference.

    Draws ``resamples`` index vectors of length ``n`` uniformly with replacement
    (``default_rng(seed).integers(0, n, (resamples, n))``), takes the mean of the
    differences of each, and returns the ``alpha/2`` and ``1 - alpha/2`` quantiles
    (linear interpolation) of those means. With the same generator this is the
    interval of ``scipy.stats.bootstrap((x, y), lambda x, y, axis: (x - y).mean(axis),
    paired=True, method='percentile', confidence_level=1 - alpha)``.

    Args:
        diffs: paired differences, run minus baseline.
        resamples: number of bootstrap resamples (>= 1).
        alpha: 1 - confidence level, in (0, 1).
        seed: seed of the generator.

    Returns:
        ``(low, high)``; NaN when ``n = 0``. A single query gives a zero-width interval.
    """
    if resamples < 1:
        raise ValueError(f"bootstrap resamples must be >= 1, got {resamples}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    d = _as_diffs(diffs)
    n = d.size
    if n == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = np.empty(resamples, dtype=np.float64)
    rows = max(1, _BLOCK_CELLS // n)
    for start in range(0, resamples, rows):
        block = min(rows, resamples - start)
        idx = rng.integers(0, n, (block, n))
        means[start : start + block] = d[idx].mean(axis=-1)
    low, high = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(low), float(high)


def holm(p_values: np.ndarray | list[float]) -> np.ndarray:
    """Holm–Bonferroni step-down adjusted p-values.

    With the ``m`` defined p-values sorted ascending, ``p_(1) <= ... <= p_(m)``:
    ``adj_(i) = min(1, max_{j <= i} (m - j + 1) * p_(j))``. Rejecting where
    ``adj <= alpha`` controls the family-wise error rate at ``alpha`` under any
    dependence. NaN entries stay NaN and do not count in ``m``.

    Example:
        >>> holm([0.01, 0.04, 0.03]).round(4).tolist()
        [0.03, 0.06, 0.06]
    """
    p = np.asarray(p_values, dtype=np.float64).ravel()
    out = np.full(p.shape, np.nan)
    defined = np.flatnonzero(~np.isnan(p))
    m = defined.size
    if m == 0:
        return out
    order = defined[np.argsort(p[defined], kind="stable")]
    scaled = p[order] * (m - np.arange(m))
    out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out


def wins_ties_losses(
    diffs: np.ndarray | list[float],
    higher_is_better: bool = True,
    tolerance: float = TIE_TOLERANCE,
) -> tuple[int, int, int]:
    """Count queries on which the run beats, ties or loses to the baseline.

    A difference ``d = run - baseline`` with ``|d| <= tolerance`` is a tie; otherwise
    it is a win when ``d > 0`` for a higher-is-better measure (``d < 0`` for a
    lower-is-better one, such as a loss or error).

    Example:
        >>> wins_ties_losses([0.2, 0.0, -0.1, 0.3], higher_is_better=False)
        (1, 1, 2)
    """
    d = _as_diffs(diffs)
    tie = np.abs(d) <= tolerance
    up = (d > 0) & ~tie
    down = (d < 0) & ~tie
    wins, losses = (up, down) if higher_is_better else (down, up)
    return int(wins.sum()), int(tie.sum()), int(losses.sum())
