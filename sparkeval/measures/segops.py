"""Segmented array operations that kernels share: orderings, ranks, running maxima.

Every function works on flat arrays with a segment id per element and never loops
over segments in Python.  Results are exact: ties are detected with ``==`` on the
original values and running maxima work on integer ordinals, not on shifted floats.
"""

from __future__ import annotations

import numpy as np

from sparkeval.measures.batch import RankedBatch


def exclusive_cumsum(b: RankedBatch, values: np.ndarray) -> np.ndarray:
    """Sum of ``values`` strictly above each rank within its segment."""
    values = np.asarray(values, dtype=np.float64)
    return b.segment_cumsum(values) - values


def suffix_max(values: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """Maximum of ``values[i:]`` restricted to the segment of i (``seg`` non-decreasing).

    Values are replaced by their ordinal among all distinct values, offset by
    the segment so that a running maximum never crosses a segment boundary.
    """
    if len(values) == 0:
        return np.asarray(values, dtype=np.float64)
    uniq, ordinal = np.unique(values, return_inverse=True)
    width = len(uniq)
    # reversed order: segments appear in decreasing id, so offset by (max_seg - seg)
    key = (seg.max() - seg).astype(np.int64) * width + ordinal.astype(np.int64)
    running = np.maximum.accumulate(key[::-1])[::-1]
    return uniq[running - (seg.max() - seg).astype(np.int64) * width]


def sort_within(seg: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Permutation that sorts by segment, then ``key`` ascending (stable)."""
    return np.lexsort((key, seg))


def tie_groups(seg_sorted: np.ndarray, key_sorted: np.ndarray) -> np.ndarray:
    """Group id of every element of an array sorted by (segment, key): equal keys share one."""
    if len(seg_sorted) == 0:
        return np.zeros(0, dtype=np.int64)
    new = np.ones(len(seg_sorted), dtype=bool)
    new[1:] = (seg_sorted[1:] != seg_sorted[:-1]) | (key_sorted[1:] != key_sorted[:-1])
    return np.cumsum(new) - 1


def average_ranks(
    seg: np.ndarray, key: np.ndarray, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """1-based ascending ranks of ``key`` within each segment, ties sharing their mean rank.

    Args:
        seg: segment id per element (non-decreasing).
        key: values to rank.
        starts: segment offsets (length S+1) of the flat arrays.

    Returns:
        (ranks aligned with the input, tie-group size of every element).
    """
    order = sort_within(seg, key)
    seg_s = seg[order]
    groups = tie_groups(seg_s, key[order])
    pos = np.arange(len(order), dtype=np.float64) - starts[seg_s] + 1.0
    counts = np.bincount(groups)
    first = np.full(len(counts), np.inf)
    np.minimum.at(first, groups, pos)
    mean_rank = first + (counts - 1) / 2.0
    ranks = np.empty(len(order), dtype=np.float64)
    ranks[order] = mean_rank[groups]
    sizes = np.empty(len(order), dtype=np.int64)
    sizes[order] = counts[groups]
    return ranks, sizes


def dense_rank(seg: np.ndarray, key: np.ndarray) -> np.ndarray:
    """0-based dense rank of ``key`` within each segment (equal values share a rank)."""
    order = sort_within(seg, key)
    seg_s = seg[order]
    groups = tie_groups(seg_s, key[order])
    if len(order) == 0:
        return np.zeros(0, dtype=np.int64)
    seg_start = np.ones(len(order), dtype=bool)
    seg_start[1:] = seg_s[1:] != seg_s[:-1]
    first_group = np.maximum.accumulate(np.where(seg_start, groups, 0))
    out = np.empty(len(order), dtype=np.int64)
    out[order] = groups - first_group
    return out


def pairs_tied(b: RankedBatch, sizes: np.ndarray) -> np.ndarray:
    """Per segment: number of tied pairs, given each element's tie-group size.

    An element in a group of t contributes (t-1)/2, so a group adds t(t-1)/2.
    """
    return b.segment_sum((sizes - 1) / 2.0)
