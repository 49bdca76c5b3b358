"""Distances and overlaps between two rankings of the same query (pure numpy).

Two runs rank documents for one query; the functions here compare those two
rankings. Rankings are sequences of doc ids, best first. The lists need not hold
the same documents:

* **permutation measures** — Kendall τ-b, Spearman ρ, Spearman footrule, Cayley,
  Ulam and Hamming — are computed over the documents both lists contain, each
  list keeping its own relative order of them (positions renumbered 1..m, where
  ``m`` is the overlap size, reported next to them);
* **set/prefix measures** — Jaccard@k and rank-biased overlap — use the lists as
  they are.

The single tie rule of the project orders a run's documents by score descending,
then doc id descending (byte-wise, as trec_eval does): :func:`order_by_score_then_docid_desc`.

Example:
    >>> d = rank_distances(["a", "b", "c", "d"], ["b", "a", "c", "e"], k=3, p=0.9)
    >>> d["overlap"], d["footrule"], d["cayley"], d["ulam"], d["hamming"]
    (3, 2.0, 1.0, 1.0, 2.0)
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

import numpy as np

#: names of the values :func:`rank_distances` returns, in output column order
DISTANCE_FIELDS: tuple[str, ...] = (
    "overlap",
    "kendall_tau",
    "spearman_rho",
    "footrule",
    "cayley",
    "ulam",
    "hamming",
    "jaccard_at_k",
    "rbo",
)


def order_by_score_then_docid_desc(scores: Sequence[float], doc_ids: Sequence[str]) -> np.ndarray:
    """Indices that put one query's documents in ranking order.

    Order: ``score`` descending, ties broken by ``doc_id`` descending compared
    byte-wise (UTF-8), the rule of trec_eval's ``comp_sim_docno``. Python string
    order is code-point order, which is the UTF-8 byte order.

    Example:
        >>> order_by_score_then_docid_desc([1.0, 2.0, 1.0], ["d1", "d2", "d3"]).tolist()
        [1, 2, 0]
    """
    s = np.asarray(scores, dtype=np.float64)
    docs = np.asarray([str(x) for x in doc_ids], dtype=object)
    if s.shape != docs.shape:
        raise ValueError("scores and doc_ids must have the same length")
    doc_rank = np.empty(len(docs), dtype=np.int64)
    doc_rank[np.argsort(docs, kind="stable")] = np.arange(len(docs))
    return np.lexsort((-doc_rank, -s))


def _common_positions(a: Sequence[str], b: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """For the docs in both lists (in ``a``'s order): 1-based ranks within each list."""
    _check_unique(a, "first")
    _check_unique(b, "second")
    in_b = {doc: i for i, doc in enumerate(b)}
    common = [doc for doc in a if doc in in_b]
    pos_b = np.asarray([in_b[doc] for doc in common], dtype=np.int64)
    # ranks within the common sublists: a's order is already 1..m; b's by sorting
    rank_a = np.arange(1, len(common) + 1, dtype=np.float64)
    rank_b = np.empty(len(common), dtype=np.float64)
    rank_b[np.argsort(pos_b, kind="stable")] = np.arange(1, len(common) + 1)
    return rank_a, rank_b


def _check_unique(items: Sequence[str], which: str) -> None:
    if len(set(items)) != len(items):
        raise ValueError(f"the {which} ranking lists a document twice")


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τ-b of two paired samples (``scipy.stats.kendalltau`` default).

    ``τ_b = (C - D) / sqrt((C + D + T_x) (C + D + T_y))`` over all pairs, with
    ``C``/``D`` concordant/discordant pairs and ``T_x``/``T_y`` pairs tied only in
    ``x``/``y``. NaN for fewer than 2 items or a constant input. O(n²) time and
    memory, so callers cap the ranking depth.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = x.size
    if n < 2:
        return math.nan
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    s = float((dx * dy)[upper].sum())
    nx = float(np.count_nonzero(dx[upper]))
    ny = float(np.count_nonzero(dy[upper]))
    if nx == 0 or ny == 0:
        return math.nan
    return s / math.sqrt(nx * ny)


def spearman_rho(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's ρ: Pearson correlation of average ranks (``scipy.stats.spearmanr``).

    NaN for fewer than 2 items or a constant input.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.size < 2:
        return math.nan
    rx, ry = _average_ranks(x), _average_ranks(y)
    rx -= rx.mean()
    ry -= ry.mean()
    denom = math.sqrt(float((rx * rx).sum()) * float((ry * ry).sum()))
    if denom == 0.0:
        return math.nan
    return float((rx * ry).sum()) / denom


def _average_ranks(v: np.ndarray) -> np.ndarray:
    order = np.argsort(v, kind="stable")
    sorted_v = v[order]
    starts = np.flatnonzero(np.r_[True, sorted_v[1:] != sorted_v[:-1]])
    ends = np.r_[starts[1:], v.size]
    avg = (starts + ends + 1) / 2.0  # mean of 1-based ranks starts+1 .. ends
    ranks = np.empty(v.size, dtype=np.float64)
    ranks[order] = np.repeat(avg, ends - starts)
    return ranks


def footrule(rank_a: np.ndarray, rank_b: np.ndarray) -> float:
    """Spearman's footrule ``F = sum_i |π_i - σ_i|`` over the items of both rankings."""
    return float(np.abs(np.asarray(rank_a) - np.asarray(rank_b)).sum())


def _permutation(rank_a: np.ndarray, rank_b: np.ndarray) -> np.ndarray:
    """0-based σ with ``σ[i]`` = position in b of the item at position i of a."""
    perm = np.empty(len(rank_a), dtype=np.int64)
    perm[np.asarray(rank_a, dtype=np.int64) - 1] = np.asarray(rank_b, dtype=np.int64) - 1
    return perm


def cayley(rank_a: np.ndarray, rank_b: np.ndarray) -> float:
    """Cayley distance: ``m - (number of cycles of σ_b ∘ σ_a⁻¹)``.

    The least number of transpositions (swaps of any two items) that turn one
    ranking into the other.
    """
    perm = _permutation(rank_a, rank_b)
    seen = np.zeros(perm.size, dtype=bool)
    cycles = 0
    for start in range(perm.size):
        if seen[start]:
            continue
        cycles += 1
        j = start
        while not seen[j]:
            seen[j] = True
            j = int(perm[j])
    return float(perm.size - cycles)


def ulam(rank_a: np.ndarray, rank_b: np.ndarray) -> float:
    """Ulam distance: ``m - LIS(σ)``, LIS the longest increasing subsequence.

    The least number of moves (take one item out, insert it elsewhere) that turn
    one ranking into the other. Patience sorting, O(m log m).
    """
    perm = _permutation(rank_a, rank_b)
    tails: list[int] = []
    for value in perm.tolist():
        i = bisect.bisect_left(tails, value)
        if i == len(tails):
            tails.append(value)
        else:
            tails[i] = value
    return float(perm.size - len(tails))


def hamming(rank_a: np.ndarray, rank_b: np.ndarray) -> float:
    """Hamming distance: number of items whose positions differ (positions that differ)."""
    return float(np.count_nonzero(np.asarray(rank_a) != np.asarray(rank_b)))


def jaccard_at_k(a: Sequence[str], b: Sequence[str], k: int) -> float:
    """``|A_k ∩ B_k| / |A_k ∪ B_k|`` of the top-k sets; NaN when both are empty."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    top_a, top_b = set(a[:k]), set(b[:k])
    union = top_a | top_b
    if not union:
        return math.nan
    return len(top_a & top_b) / len(union)


def rbo_ext(a: Sequence[str], b: Sequence[str], p: float = 0.9) -> float:
    """Extrapolated rank-biased overlap RBO_ext (Webber, Moffat & Zobel 2010, eq. 32).

    With ``S`` the shorter list (length ``s``), ``L`` the longer (length ``l``),
    ``X_d = |S_{:d} ∩ L_{:d}|`` the overlap at depth ``d`` (``S_{:d} = S`` for
    ``d > s``) and ``A_d = X_d / d``::

        RBO_ext = (1-p)/p * ( sum_{d=1}^{l} X_d/d p^d
                              + sum_{d=s+1}^{l} X_s (d-s) / (s d) p^d )
                  + ( (X_l - X_s)/l + X_s/s ) p^l

    It assumes that the agreement seen at the end of the lists continues below
    them; equal lists score 1 and disjoint ones 0. For equal lengths it reduces
    to eq. 30, ``X_k/k p^k + (1-p)/p sum_{d<=k} X_d/d p^d``.

    Args:
        a, b: rankings, best first, without repeated items.
        p: persistence in (0, 1); the top d ranks carry ``1 - p^d`` of the weight
            of the non-extrapolated sum.

    Returns:
        RBO_ext in [0, 1]; NaN when either list is empty.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"RBO persistence p must lie in (0, 1), got {p}")
    _check_unique(a, "first")
    _check_unique(b, "second")
    short, long_ = (list(a), list(b)) if len(a) <= len(b) else (list(b), list(a))
    s, ll = len(short), len(long_)
    if s == 0:
        return math.nan
    # X_d for d = 1..l: an item counts at depth d once it appears in both prefixes
    depth_short = {doc: i + 1 for i, doc in enumerate(short)}
    first_common = np.zeros(ll + 1, dtype=np.float64)
    for j, doc in enumerate(long_, start=1):
        i = depth_short.get(doc)
        if i is not None:
            first_common[max(i, j)] += 1.0
    x = np.cumsum(first_common)[1:]  # x[d-1] = X_d
    d = np.arange(1, ll + 1, dtype=np.float64)
    weights = p**d
    x_s = x[s - 1]
    total = float((x / d * weights).sum())
    if ll > s:
        tail = d[s:]
        total += float((x_s * (tail - s) / (s * tail) * weights[s:]).sum())
    return (1.0 - p) / p * total + ((x[-1] - x_s) / ll + x_s / s) * p**ll


def rank_distances(
    a: Sequence[str], b: Sequence[str], k: int = 10, p: float = 0.9
) -> dict[str, float]:
    """All distances between rankings ``a`` and ``b`` of one query.

    Returns a dict with the keys of :data:`DISTANCE_FIELDS`: ``overlap`` (number
    of docs in both lists, the ``m`` over which the permutation measures are
    computed), ``kendall_tau`` and ``spearman_rho`` (NaN when ``m < 2``),
    ``footrule``, ``cayley``, ``ulam``, ``hamming`` (0 when ``m = 0``),
    ``jaccard_at_k`` and ``rbo`` (RBO_ext with persistence ``p``).
    """
    rank_a, rank_b = _common_positions(a, b)
    return {
        "overlap": len(rank_a),
        "kendall_tau": kendall_tau_b(rank_a, rank_b),
        "spearman_rho": spearman_rho(rank_a, rank_b),
        "footrule": footrule(rank_a, rank_b),
        "cayley": cayley(rank_a, rank_b),
        "ulam": ulam(rank_a, rank_b),
        "hamming": hamming(rank_a, rank_b),
        "jaccard_at_k": jaccard_at_k(a, b, k),
        "rbo": rbo_ext(a, b, p),
    }
