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


def spark_plogp(p: Column) -> Column:
    """Spark expression ``p log2 p``: one term of the entropy ``H = -sum p log2 p`` (bits)
    over rows whose shares ``p`` sum to 1.

    Rows hold only items with ``p > 0`` (an item never shown has no row), so
    ``0 · log 0`` never arises. Summed exactly and negated, the Spark form of
    :func:`entropy` in base 2.
    """
    from pyspark.sql import functions as F

    return p * F.log2(p)
