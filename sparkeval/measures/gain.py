"""Gains and discounts for the cumulative-gain family (CG, DCG, nDCG, G, ...).

Gain of a grade g (retrieved docs that are not in the qrels, or that the qrels
list with a negative grade, have g < 0):

* ``linear``: max(g, 0) (trec_eval's default);
* ``exp``: 2^max(g, 0) - 1 (Burges et al. 2005);
* ``jarvelin``: linear gain with Järvelin & Kekäläinen's original discount,
  DCG = g_1 + sum_{i>=2} g_i / log2(i).

A *grade map* (trec_eval's ``ndcg.1=3,2=9``) overrides the gain of listed grades;
grades it does not list keep the gain function's value.  As in trec_eval a map
may give zero or negative gains, and may list a negative code (a retrieved doc
outside the qrels has code -1, a qrels entry with a negative grade code -2).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import numpy as np

from sparkeval.measures.batch import RankedBatch
from sparkeval.measures.cumsum import grouped_cumsum
from sparkeval.measures.registry import Param

GAINS = ("linear", "exp", "jarvelin")

GradeMap: TypeAlias = Sequence[tuple[int, float]] | None

GAIN_PARAM = Param(
    str,
    "linear",
    choices=GAINS,
    help="gain g (linear), 2^g-1 (exp), or gain g with discount 1/log2(max(i,2)) (jarvelin)",
)
GRADE_MAP_PARAM = Param(
    dict,
    None,
    help="gain per grade, e.g. 1:3;2:9 (trec_eval ndcg.1=3,2=9); other grades keep their gain",
)


def grade_gain(codes: np.ndarray, gain: str, grade_map: GradeMap) -> np.ndarray:
    """Gain of every element of ``codes`` (grades or trec relevance codes)."""
    codes = np.asarray(codes, dtype=np.int64)
    base = np.maximum(codes, 0).astype(np.float64)
    values = np.exp2(base) - 1.0 if gain == "exp" else base
    if grade_map:
        levels = np.array([k for k, _ in grade_map], dtype=np.int64)
        mapped = np.array([v for _, v in grade_map], dtype=np.float64)
        idx = np.searchsorted(levels, codes)
        idx_c = np.minimum(idx, len(levels) - 1)
        hit = levels[idx_c] == codes
        values = np.where(hit, mapped[idx_c], values)
    return values


LOG_BASE_PARAM = Param(
    float,
    2.0,
    minimum=0.0,
    exclusive_minimum=True,
    help="base b of the discount 1/log_b(i+1) = ln(b)/ln(i+1) (scikit-learn's log_base; "
    "b = 1 makes every weight 0, b < 1 negative, as there)",
)
TIES = ("order", "average")
TIES_PARAM = Param(
    str,
    "order",
    choices=TIES,
    help="order: tied scores keep the ranking's order (doc id descending); average: the "
    "docs of a run of tied scores share its mean gain (scikit-learn's ignore_ties=False)",
)


def discount(positions: np.ndarray, gain: str, log_base: float = 2.0) -> np.ndarray:
    """Weight of each 1-based rank: 1/log_b(i+1) = ln(b)/ln(i+1) (b = 2 by default), or
    1/log2(max(i, 2)) for ``jarvelin`` (base 2 only)."""
    pos = np.asarray(positions, dtype=np.float64)
    if gain == "jarvelin":
        if log_base != 2.0:
            raise ValueError("the jarvelin discount is defined here with log base 2 only")
        return 1.0 / np.log2(np.maximum(pos, 2.0))
    if log_base == 2.0:
        return 1.0 / np.log2(pos + 1.0)
    return np.log(log_base) / np.log(pos + 1.0)


def rank_discount(
    b: RankedBatch, gain: str, qrels: bool = False, log_base: float = 2.0
) -> np.ndarray:
    """:func:`discount` of every retrieved doc's rank (or every qrels position), once per batch."""
    key = ("discount", gain == "jarvelin", qrels, log_base)
    if key not in b._cache:
        positions = b.qrels_positions if qrels else b.positions
        b._cache[key] = discount(positions, gain, log_base)
    return b._cache[key]


def tie_groups(b: RankedBatch) -> np.ndarray:
    """Index of the run of equal scores (within its segment) of every retrieved doc.

    Example:
        >>> b = RankedBatch.from_lists([[1, 0, 2], [3]], [[1], [3]], [[5.0, 5.0, 1.0], [5.0]])
        >>> tie_groups(b).tolist()
        [0, 0, 1, 2]
    """
    key = ("tie_groups",)
    if key not in b._cache:
        n = len(b.score)
        starts = np.ones(n, dtype=bool)
        if n > 1:
            starts[1:] = (b.seg[1:] != b.seg[:-1]) | (b.score[1:] != b.score[:-1])
        b._cache[key] = np.cumsum(starts) - 1
    return b._cache[key]


def tie_averaged(b: RankedBatch, gains: np.ndarray) -> np.ndarray:
    """Every doc's gain replaced by the mean gain of its run of tied scores.

    sum_i mean_gain(i) * w_i over a run of ties is the run's mean gain times the sum of
    its discounts (cut at k), scikit-learn's tie-averaged DCG.
    """
    groups = tie_groups(b)
    if len(groups) == 0:
        return gains
    total = np.bincount(groups, weights=gains)
    size = np.bincount(groups)
    return (total / size)[groups]


def own_ideal_gains(b: RankedBatch, gains: np.ndarray) -> np.ndarray:
    """The ranking's own gains sorted descending within each segment (aligned with the
    retrieved docs): the ideal ordering of the docs ranked, as scikit-learn's ndcg_score
    takes it."""
    order = np.lexsort((-gains, b.seg))
    return gains[order]


def _descending_within(values: np.ndarray, groups: np.ndarray) -> bool:
    """True when ``values`` never increase inside a run of equal ``groups``."""
    if len(values) < 2:
        return True
    same = groups[1:] == groups[:-1]
    return not np.any(same & (values[1:] > values[:-1]))


def ideal_gains(b: RankedBatch, gain: str, grade_map: GradeMap) -> np.ndarray:
    """Gains of every qrels entry sorted descending within its query, non-positive ones as 0.

    Aligned with ``b.qrels_positions``: element p of a query is the ideal gain at
    rank p.  Only entries with a grade >= 0 take part (negative grades are
    "pooled but unjudged").  trec_eval orders gain levels with a comparison that
    truncates gain differences to whole numbers, so two different gains less
    than 1 apart may come out in either order there; this module always uses the
    true descending order.
    """
    grades = b.qrels_grades
    gains = np.where(grades >= 0, grade_gain(grades, gain, grade_map), 0.0)
    gains = np.maximum(gains, 0.0)
    if _descending_within(gains, b.qrels_query):
        return gains  # grades come sorted; a monotone gain keeps the order
    order = np.lexsort((-gains, b.qrels_query))
    return gains[order]


def ideal_gain_at(b: RankedBatch, sorted_ideal: np.ndarray) -> np.ndarray:
    """Ideal gain at the rank of every retrieved doc (0 beyond the query's qrels)."""
    q = b.seg_query[b.seg]
    pos = b.positions
    inside = pos <= b.qrels_lengths[q]
    idx = np.where(inside, b.qrels_starts[q] + pos - 1, 0)
    if len(sorted_ideal) == 0:
        return np.zeros(len(pos))
    return np.where(inside, sorted_ideal[idx], 0.0)


def ideal_cumulative(b: RankedBatch, sorted_ideal: np.ndarray, gain: str) -> np.ndarray:
    """Ideal DCG up to and including each qrels position, per query (aligned with qrels)."""
    weights = sorted_ideal * rank_discount(b, gain, qrels=True)
    return grouped_cumsum(weights, b.qrels_query)


def ideal_dcg_at(
    b: RankedBatch, cum_ideal: np.ndarray, ranks: np.ndarray, seg: np.ndarray
) -> np.ndarray:
    """Ideal DCG at rank ``ranks[i]`` (capped at the query's qrels count) for segment ``seg[i]``."""
    q = b.seg_query[seg]
    cap = np.minimum(ranks, b.qrels_lengths[q])
    idx = b.qrels_starts[q] + cap - 1
    out = np.zeros(len(ranks))
    ok = cap >= 1
    out[ok] = cum_ideal[idx[ok]]
    return out
