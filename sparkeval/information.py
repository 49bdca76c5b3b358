"""Information measures of discrete distributions: the one home of their formulas.

The numpy functions take whole distributions; the ``spark_*`` functions are the same
formulas as Spark column expressions, for distributions too large to collect (item
exposure in ``compare``/``rank-distance`` and ``diversity``).

Distributions are non-negative arrays; they are normalised to sum 1 here, so
counts can be passed as they are. ``0 · log 0 = 0`` throughout. Logarithms are
base 2 (bits) unless ``base`` says otherwise.

* :func:`entropy` ``H(P) = -sum p log p``
* :func:`joint_entropy` ``H(X, Y)`` of a joint table
* :func:`conditional_entropy` ``H(Y | X) = H(X, Y) - H(X)`` (rows are X)
* :func:`cross_entropy` ``H(P, Q) = -sum p log q``
* :func:`kl_divergence` ``D(P || Q) = sum p log(p / q)``
* :func:`js_divergence` ``JS(P, Q) = (D(P||M) + D(Q||M)) / 2``, ``M = (P + Q) / 2``;
  in [0, 1] in base 2
* :func:`mutual_information` ``I(X; Y) = H(X) + H(Y) - H(X, Y)``
* :func:`dunning_llr` Dunning's log-likelihood ratio of a 2×2 co-occurrence table
* :func:`exposure_distribution` share of slots per item, from item ids
* :func:`plogp_terms` and :func:`plogratio_terms`: the ``p log2 p`` terms of entropy
  and the ``p log2(p / q)`` terms of KL and JS with numpy, the same bits in Spark's
  Python workers and in process (their callers add the terms exactly);
  :func:`spark_plogp`, the entropy's terms as a Spark expression
* :func:`strict_log2` ``log2 x`` as Spark's ``log2`` computes it (Java's
  ``StrictMath.log(x) / StrictMath.log(2)``), for an engine that must give Spark's bits

Example:
    >>> round(entropy([1, 1, 2]), 4)  # p = (1/4, 1/4, 1/2)
    1.5
    >>> js_divergence([1, 0], [0, 1])
    1.0
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from pyspark.sql import Column


def _distribution(
    p: np.ndarray | Iterable[float] | Iterable[Iterable[float]], name: str = "distribution"
) -> np.ndarray:
    arr = np.asarray(p, dtype=np.float64)
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must hold finite non-negative weights")
    total = arr.sum()
    if total <= 0:
        raise ValueError(f"{name} sums to zero")
    return arr / total


def _log(x: np.ndarray, base: float) -> np.ndarray:
    if base <= 0 or base == 1:
        raise ValueError(f"logarithm base must be positive and not 1, got {base}")
    return np.log(x) / math.log(base)


def _plogp_sum(p: np.ndarray, base: float) -> float:
    nz = p[p > 0]
    return float((nz * _log(nz, base)).sum())


def entropy(p: np.ndarray | Iterable[float], base: float = 2.0) -> float:
    """Shannon entropy ``H(P) = -sum_i p_i log p_i`` (``scipy.stats.entropy(p, base=2)``).

    Example:
        >>> entropy([0.5, 0.5])
        1.0
    """
    return max(0.0, -_plogp_sum(_distribution(p), base))


def joint_entropy(pxy: np.ndarray | Iterable[Iterable[float]], base: float = 2.0) -> float:
    """Joint entropy ``H(X, Y) = -sum_{x,y} p(x,y) log p(x,y)`` of a 2-D table."""
    table = np.asarray(pxy, dtype=np.float64)
    if table.ndim != 2:
        raise ValueError("a joint distribution must be a 2-D table (rows X, columns Y)")
    return entropy(table.ravel(), base)


def conditional_entropy(pxy: np.ndarray | Iterable[Iterable[float]], base: float = 2.0) -> float:
    """Conditional entropy ``H(Y | X) = H(X, Y) - H(X)``; rows of the table are X.

    Example:
        >>> conditional_entropy([[1, 1], [0, 2]])  # H(X,Y) = 1.5, H(X) = 1
        0.5
    """
    table = _distribution(pxy, "joint distribution")
    if table.ndim != 2:
        raise ValueError("a joint distribution must be a 2-D table (rows X, columns Y)")
    return max(0.0, joint_entropy(table, base) - entropy(table.sum(axis=1), base))


def cross_entropy(
    p: np.ndarray | Iterable[float], q: np.ndarray | Iterable[float], base: float = 2.0
) -> float:
    """Cross entropy ``H(P, Q) = -sum_i p_i log q_i = H(P) + D(P || Q)``.

    Infinite when some ``q_i = 0`` with ``p_i > 0``.
    """
    pp, qq = _pair(p, q)
    support = pp > 0
    if np.any(qq[support] == 0):
        return math.inf
    return float(-(pp[support] * _log(qq[support], base)).sum())


def kl_divergence(
    p: np.ndarray | Iterable[float], q: np.ndarray | Iterable[float], base: float = 2.0
) -> float:
    """Kullback–Leibler divergence ``D(P || Q) = sum_i p_i log(p_i / q_i)``.

    Matches ``scipy.stats.entropy(p, q, base=base)``; infinite when ``Q`` misses
    part of ``P``'s support. Not symmetric.
    """
    pp, qq = _pair(p, q)
    support = pp > 0
    if np.any(qq[support] == 0):
        return math.inf
    return max(0.0, float((pp[support] * _log(pp[support] / qq[support], base)).sum()))


def js_divergence(
    p: np.ndarray | Iterable[float], q: np.ndarray | Iterable[float], base: float = 2.0
) -> float:
    """Jensen–Shannon divergence ``(D(P||M) + D(Q||M)) / 2`` with ``M = (P + Q) / 2``.

    Symmetric, always finite, in [0, 1] in base 2 (1 for disjoint supports). It is
    the square of ``scipy.spatial.distance.jensenshannon(p, q, base=2)``.
    """
    pp, qq = _pair(p, q)
    m = (pp + qq) / 2.0
    value = (kl_divergence(pp, m, base) + kl_divergence(qq, m, base)) / 2.0
    return min(value, math.log(2.0) / math.log(base))


def mutual_information(pxy: np.ndarray | Iterable[Iterable[float]], base: float = 2.0) -> float:
    """Mutual information ``I(X; Y) = H(X) + H(Y) - H(X, Y)`` of a joint table.

    Example:
        >>> mutual_information([[1, 0], [0, 1]])  # Y determines X: one bit
        1.0
    """
    table = _distribution(pxy, "joint distribution")
    if table.ndim != 2:
        raise ValueError("a joint distribution must be a 2-D table (rows X, columns Y)")
    value = (
        entropy(table.sum(axis=1), base)
        + entropy(table.sum(axis=0), base)
        - joint_entropy(table, base)
    )
    return max(0.0, value)


def dunning_llr(k11: float, k12: float, k21: float, k22: float) -> float:
    """Dunning's log-likelihood ratio (G statistic) of a 2×2 co-occurrence table.

    For users U, V: ``k11`` items both liked, ``k12`` liked by U only, ``k21`` by V
    only, ``k22`` by neither. With ``N`` the total, ``r_i`` row sums and ``c_j``
    column sums (natural logs)::

        LLR = 2 sum_ij k_ij log(k_ij N / (r_i c_j))
            = 2 (H~(r) + H~(c) - H~(k)),  H~(x) = (sum x) log(sum x) - sum x log x

    where ``H~`` is the unnormalised entropy of counts (the matrix/row/column
    entropy form). 0 for independent counts; large when U and V co-occur more
    (or less) than chance. Equals scipy's ``chi2_contingency(table,
    lambda_="log-likelihood", correction=False)`` statistic.

    Example:
        >>> round(dunning_llr(10, 0, 0, 10), 4)  # 2 * 2 * 10 * ln 2 = 40 ln 2
        27.7259
    """
    k = np.array([[k11, k12], [k21, k22]], dtype=np.float64)
    if not np.all(np.isfinite(k)) or np.any(k < 0):
        raise ValueError("LLR counts must be finite and non-negative")
    n = k.sum()
    if n == 0:
        return 0.0

    def unnormalised(x: np.ndarray) -> float:
        total = x.sum()
        nz = x[x > 0]
        return float(total * math.log(total) - (nz * np.log(nz)).sum()) if total > 0 else 0.0

    value = 2.0 * (unnormalised(k.sum(axis=1)) + unnormalised(k.sum(axis=0)) - unnormalised(k))
    return max(0.0, value)


def exposure_distribution(items: Iterable[str]) -> dict[str, float]:
    """Share of slots per item: ``count(item) / number of slots``.

    Pass the item ids of every top-k slot of a run (one entry per query and rank).

    Example:
        >>> exposure_distribution(["a", "b", "a", "c"])
        {'a': 0.5, 'b': 0.25, 'c': 0.25}
    """
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    total = sum(counts.values())
    if total == 0:
        raise ValueError("no slots: the exposure distribution is empty")
    return {item: c / total for item, c in sorted(counts.items())}


def aligned(p: dict[str, float], q: dict[str, float]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Two item→weight maps as arrays over the union of their items (missing = 0)."""
    keys = sorted(set(p) | set(q))
    return (
        keys,
        np.array([p.get(k, 0.0) for k in keys], dtype=np.float64),
        np.array([q.get(k, 0.0) for k in keys], dtype=np.float64),
    )


def _pair(
    p: np.ndarray | Iterable[float], q: np.ndarray | Iterable[float]
) -> tuple[np.ndarray, np.ndarray]:
    pp = _distribution(p, "P")
    qq = _distribution(q, "Q")
    if pp.shape != qq.shape:
        raise ValueError(f"P and Q differ in shape: {pp.shape} vs {qq.shape}")
    return pp.ravel(), qq.ravel()


def plogp_terms(p: np.ndarray) -> np.ndarray:
    """``p log2 p`` of each share ``p > 0`` (numpy's ``log2``): the terms of the entropy
    in bits, computed alike in Spark's Python workers and in this process.

    Example:
        >>> plogp_terms(np.array([0.5, 0.25])).tolist()
        [-0.5, -0.5]
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return p * np.log2(p)


def plogratio_terms(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``p log2(p / q)`` where ``p > 0`` and ``q > 0``, else 0: the terms of KL and JS
    (numpy's ``log2``, as :func:`plogp_terms`).

    Example:
        >>> plogratio_terms(np.array([0.5, 0.5, 0.0]), np.array([0.25, 0.0, 0.5])).tolist()
        [0.5, 0.0, 0.0]
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((p > 0) & (q > 0), p * np.log2(p / q), 0.0)


#: fdlibm's split of ln 2 (a high part with trailing zero bits, and the rest) and the
#: coefficients of its polynomial for log(1 + f) (Java's ``StrictMath.log``)
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_LG = (
    6.666666666666735130e-01,
    3.999999999940941908e-01,
    2.857142874366239149e-01,
    2.222219843214978396e-01,
    1.818357216161805012e-01,
    1.531383769920937332e-01,
    1.479819860511658591e-01,
)
_TWO54 = 1.80143985094819840000e16


def strict_log(x: np.ndarray) -> np.ndarray:
    """The natural logarithm of positive finite ``x``, to the bit as Java's
    ``StrictMath.log`` (fdlibm's algorithm) computes it: the JVM's log, which the
    platform's ``log`` (numpy's) does not always match in the last bit.

    ``x = 2^k (1 + f)`` with ``sqrt(2)/2 < 1 + f < sqrt(2)``; with ``s = f / (2 + f)``,
    ``log(1 + f) = f - s (f - R(s^2))`` for a polynomial R, and
    ``log x = k ln2_hi + (log(1 + f) + k ln2_lo)``, in that order of roundings.
    Entries of ``x`` that are zero, negative, infinite or NaN give NaN.

    Example:
        >>> float(strict_log(np.array([2.0]))[0]) == math.log(2)
        True
    """
    x = np.asarray(x, dtype=np.float64)
    bad = ~(np.isfinite(x) & (x > 0))
    x = np.where(bad, 1.0, x)
    small = x < 2.0**-1022  # subnormal: scaled up by 2^54
    x = np.where(small, x * _TWO54, x)
    bits = x.view(np.uint64)
    high = (bits >> np.uint64(32)).astype(np.int64)
    k = (high >> 20) - 1023 - np.where(small, 54, 0)
    high &= 0x000FFFFF
    half = (high + 0x95F64) & 0x100000  # 1 + f below sqrt(2): x, else x / 2
    top = (high | (half ^ 0x3FF00000)).astype(np.uint64) << np.uint64(32)
    x = ((bits & np.uint64(0xFFFFFFFF)) | top).view(np.float64)
    k += half >> 20
    dk = k.astype(np.float64)
    f = x - 1.0
    found = _log_general(f, dk, high, k)
    tiny = (0x000FFFFF & (2 + high)) < 3  # |f| < 2^-20
    found = np.where(tiny, _log_near_one(f, dk, k), found)
    return np.where(bad, np.nan, found)


def _log_general(f: np.ndarray, dk: np.ndarray, high: np.ndarray, k: np.ndarray) -> np.ndarray:
    """:func:`strict_log` of ``2^k (1 + f)`` for ``|f| >= 2^-20``."""
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (_LG[1] + w * (_LG[3] + w * _LG[5]))
    t2 = z * (_LG[0] + w * (_LG[2] + w * (_LG[4] + w * _LG[6])))
    r = t2 + t1
    hfsq = 0.5 * f * f
    wide = ((high - 0x6147A) | (0x6B851 - high)) > 0
    if_wide = np.where(
        k == 0,
        f - (hfsq - s * (hfsq + r)),
        dk * _LN2_HI - ((hfsq - (s * (hfsq + r) + dk * _LN2_LO)) - f),
    )
    if_narrow = np.where(k == 0, f - s * (f - r), dk * _LN2_HI - ((s * (f - r) - dk * _LN2_LO) - f))
    return np.where(wide, if_wide, if_narrow)


def _log_near_one(f: np.ndarray, dk: np.ndarray, k: np.ndarray) -> np.ndarray:
    """:func:`strict_log` of ``2^k (1 + f)`` for ``|f| < 2^-20``."""
    r = f * f * (0.5 - 0.33333333333333333 * f)
    exact = np.where(k == 0, 0.0, dk * _LN2_HI + dk * _LN2_LO)
    near = np.where(k == 0, f - r, dk * _LN2_HI - ((r - dk * _LN2_LO) - f))
    return np.where(f == 0.0, exact, near)


#: ``StrictMath.log(2)``, the divisor of Spark's ``log2``
_STRICT_LN2 = 0.6931471805599453


def strict_log2(x: np.ndarray) -> np.ndarray:
    """``log2 x`` as Spark's ``log2`` gives it: ``StrictMath.log(x) / StrictMath.log(2)``
    (:func:`strict_log`); NaN for ``x <= 0`` (where Spark's is null).

    Example:
        >>> strict_log2(np.array([0.25, 8.0])).tolist()
        [-2.0, 3.0]
    """
    return strict_log(x) / _STRICT_LN2


def spark_plogp(p: Column) -> Column:
    """Spark expression ``p log2 p``: one term of the entropy ``H = -sum p log2 p`` (bits)
    over rows whose shares ``p`` sum to 1.

    Rows hold only items with ``p > 0`` (an item never shown has no row), so
    ``0 · log 0`` never arises. Summed exactly and negated, the Spark form of
    :func:`entropy` in base 2.
    """
    from pyspark.sql import functions as F

    return p * F.log2(p)
