"""Ranks read as absolute positions: RecTools' reading of a rank column.

A rank-only run gets the score ``-rank`` (:func:`sparkeval.io.readers.rank_column`),
which orders its docs; by default a doc's position is its place in that order (ranks
1, 3 are positions 1, 2). Under ``EvalOptions(positions="rank")`` the rank *is* the
position, as in RecTools (``rectools.metrics``: ``rank <= k`` selects the top k, MAP's
precision at a hit is hits up to its rank / rank, DCG divides by log2(rank + 1)):
ranks 1, 3 leave position 2 empty, and a doc ranked 4 is outside the top 3 even when
the list has two docs.

:func:`spread_to_ranks` rebuilds the ranked arrays so that every measure sees this:
each segment becomes ``max(rank)`` positions long (ranks above ``cap``, the largest
cutoff, are dropped; no cap when a measure reads past its cutoff, as ``PartialAUC@k``
does), each doc at index ``rank - 1``, and each empty position holds a doc that is not
in the truth (not relevant, never a hit; a non-relevant item to ``PartialAUC``). The
run's row counts are those of the real rows.

:func:`rank_gap_segments` counts the segments whose ranks are not 1, 2, ..., n (a gap,
or a first rank other than 1): under the default reading such a list is read as an
order, which the report says.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from sparkeval.measures import NONPOOL


class Spread(NamedTuple):
    """Ranked arrays with a doc at each position (see :func:`spread_to_ranks`)."""

    starts: np.ndarray
    rel: np.ndarray
    score: np.ndarray
    dup: np.ndarray | None


def bad_rank(seg: np.ndarray, score: np.ndarray) -> tuple[int, str] | None:
    """The first entry whose rank (``-score``) cannot be a position, and why: not a
    whole number >= 1, or the rank of the entry before it in the same segment (entries
    sorted by segment, then rank)."""
    ranks = -score
    wrong = ~np.isfinite(ranks) | (ranks < 1) | (ranks != np.round(ranks))
    if wrong.any():
        return int(np.flatnonzero(wrong)[0]), "is not a whole number >= 1"
    repeated = np.flatnonzero((seg[1:] == seg[:-1]) & (ranks[1:] == ranks[:-1]))
    if len(repeated):
        return int(repeated[0]) + 1, "is given to two docs of the list"
    return None


def spread_to_ranks(
    seg: np.ndarray,
    rel: np.ndarray,
    score: np.ndarray,
    dup: np.ndarray | None,
    n_segments: int,
    cap: int,
) -> Spread:
    """Place each entry at position ``-score`` of its segment.

    Args:
        seg: the segment (0..n_segments-1) of each entry, non-decreasing; within a
            segment the entries are in rank order, each rank a whole number >= 1 given
            once (:func:`bad_rank` is None).
        rel, score, dup: the entries' relevance codes, scores (``-rank``) and
            near-duplicate flags.
        n_segments: the number of segments.
        cap: the largest position any measure looks at; entries ranked below it go.

    Returns:
        ``starts`` (length n_segments + 1), and ``rel``, ``score`` (``-position``) and
        ``dup`` of ``starts[-1]`` positions, empty ones holding :data:`NONPOOL`.
    """
    ranks = np.round(-score).astype(np.int64)
    keep = ranks <= cap
    seg, rel, ranks = seg[keep], rel[keep], ranks[keep]
    length = np.zeros(n_segments, np.int64)
    np.maximum.at(length, seg, ranks)
    starts = np.concatenate(([0], np.cumsum(length))).astype(np.int64)
    total = int(starts[-1])
    at = starts[seg] + ranks - 1
    out_rel = np.full(total, NONPOOL, np.int64)
    out_rel[at] = rel
    owner = np.repeat(np.arange(n_segments), length)
    out_score = -(np.arange(total) - starts[owner] + 1).astype(np.float64)
    out_dup = None
    if dup is not None:
        out_dup = np.zeros(total, bool)
        out_dup[at] = dup[keep]
    return Spread(starts, out_rel, out_score, out_dup)


def rank_gap_segments(seg: np.ndarray, score: np.ndarray, n_segments: int) -> np.ndarray:
    """Per segment, whether its ranks (``-score``, entries sorted by segment and rank)
    are other than 1, 2, ..., n: some entry's rank differs from its place in the order."""
    count = np.bincount(seg, minlength=n_segments)
    starts = np.concatenate(([0], np.cumsum(count)))
    place = np.arange(len(seg)) - starts[seg] + 1
    off = np.bincount(seg, weights=(-score != place), minlength=n_segments)
    return off > 0
