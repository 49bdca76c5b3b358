"""Segmented arrays: many ranked queries in one set of flat numpy arrays.

A :class:`RankedBatch` holds S *segments* (one per evaluated ``(run_id, query_id)``)
and Q *judged queries*.  Retrieved documents of all segments are concatenated in
rank order; ``starts`` gives segment boundaries.  Relevance of a retrieved document
uses trec_eval's encoding:

* ``g >= 0``  the qrels grade,
* ``-1`` (:data:`NONPOOL`) the document is not in the qrels,
* ``-2`` (:data:`UNJUDGED`) the qrels list it with a negative grade
  (pooled but not judged).

Kernels (see :mod:`sparkeval.measures.ranking`) turn a batch into one value per
segment with vectorised numpy (``np.bincount`` over segment ids, cumulative sums
over ranks) and never loop over queries in Python.

Example:
    >>> import numpy as np
    >>> b = RankedBatch.from_lists([[1, -1, 2]], [[2, 1, 0]])
    >>> b.num_rel(1).tolist()  # grades 2 and 1 are relevant at level 1
    [2.0]
    >>> b.positions.tolist()
    [1, 2, 3]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from sparkeval.measures.cumsum import grouped_cumsum

NONPOOL = -1
UNJUDGED = -2


@dataclass(eq=False)
class RankedBatch:
    """Retrieved documents and judgements of many queries as flat arrays.

    Attributes:
        starts: int64 offsets, length S+1; segment s holds ``rel[starts[s]:starts[s+1]]``.
        rel: int64 relevance codes of retrieved docs in rank order (see module doc).
        score: float64 scores of retrieved docs, aligned with ``rel``.
        seg_query: int64, length S; the judged query (index into the qrels arrays)
            of each segment.
        qrels_starts: int64 offsets, length Q+1, into ``qrels_grades``.
        qrels_grades: int64 grades of every qrels entry of each query, sorted
            descending within the query (negative grades included).
        dup: optional bool, aligned with ``rel``: the doc near-duplicates a
            higher-ranked doc of its segment (None when no pairs were given).
            ``rel`` already holds grade 0 for a flagged doc judged relevant
            (see :mod:`sparkeval.measures.near_dup`).
    """

    starts: np.ndarray
    rel: np.ndarray
    score: np.ndarray
    seg_query: np.ndarray
    qrels_starts: np.ndarray
    qrels_grades: np.ndarray
    dup: np.ndarray | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ shape
    @property
    def n_segments(self) -> int:
        return len(self.starts) - 1

    @property
    def n_queries(self) -> int:
        return len(self.qrels_starts) - 1

    @cached_property
    def lengths(self) -> np.ndarray:
        """Number of retrieved docs per segment (trec_eval ``num_ret``)."""
        return np.diff(self.starts)

    @cached_property
    def seg(self) -> np.ndarray:
        """Segment id of every retrieved doc."""
        return np.repeat(np.arange(self.n_segments, dtype=np.int64), self.lengths)

    @cached_property
    def positions(self) -> np.ndarray:
        """1-based rank of every retrieved doc within its segment."""
        return np.arange(len(self.rel), dtype=np.int64) - self.starts[self.seg] + 1

    @cached_property
    def qrels_lengths(self) -> np.ndarray:
        return np.diff(self.qrels_starts)

    @cached_property
    def qrels_query(self) -> np.ndarray:
        """Query index of every qrels entry."""
        return np.repeat(np.arange(self.n_queries, dtype=np.int64), self.qrels_lengths)

    @cached_property
    def qrels_positions(self) -> np.ndarray:
        """1-based position of every qrels entry in its query's descending grade order."""
        idx = np.arange(len(self.qrels_grades), dtype=np.int64)
        return idx - self.qrels_starts[self.qrels_query] + 1

    # ------------------------------------------------------------- helpers
    def segment_sum(self, weights: np.ndarray) -> np.ndarray:
        """Sum ``weights`` (aligned with retrieved docs) per segment; empty segments give 0."""
        out = np.bincount(self.seg, weights=weights, minlength=self.n_segments)
        return out.astype(np.float64, copy=False)  # float even when there are no docs

    def query_sum(self, weights: np.ndarray) -> np.ndarray:
        """Sum ``weights`` (aligned with qrels entries) per judged query."""
        out = np.bincount(self.qrels_query, weights=weights, minlength=self.n_queries)
        return out.astype(np.float64, copy=False)

    def segment_cumsum(self, values: np.ndarray) -> np.ndarray:
        """Inclusive cumulative sum of ``values`` restarting at every segment."""
        return grouped_cumsum(values, self.seg)

    def relevant(self, level: int) -> np.ndarray:
        """Boolean: retrieved doc is judged with grade >= ``level``."""
        key = ("relevant", level)
        if key not in self._cache:
            self._cache[key] = (self.rel >= level) & (self.rel >= 0)
        return self._cache[key]

    def cum_relevant(self, level: int) -> np.ndarray:
        """Relevant docs retrieved at or above each rank (segment-local)."""
        key = ("cum_relevant", level)
        if key not in self._cache:
            self._cache[key] = self.segment_cumsum(self.relevant(level).astype(np.float64))
        return self._cache[key]

    def num_rel(self, level: int) -> np.ndarray:
        """R per segment: qrels docs of the segment's query with grade >= ``level``."""
        key = ("num_rel", level)
        if key not in self._cache:
            q = self.qrels_grades
            per_query = self.query_sum(((q >= level) & (q >= 0)).astype(np.float64))
            self._cache[key] = per_query[self.seg_query]
        return self._cache[key]

    def num_rel_ret(self, level: int) -> np.ndarray:
        """Relevant docs retrieved per segment."""
        return self.segment_sum(self.relevant(level).astype(np.float64))

    def within(self, k: int | None) -> np.ndarray:
        """Boolean: retrieved doc is at rank <= k (all docs when k is None)."""
        if k is None:
            return np.ones(len(self.rel), dtype=bool)
        return self.positions <= k

    def condensed(self) -> RankedBatch:
        """The batch without the retrieved docs that have no grade >= 0 in the qrels
        (codes :data:`NONPOOL` and :data:`UNJUDGED`), ranks closed up: trec_eval's -J
        ("judged docs only"). Computed once per batch.

        Each segment keeps its judged docs in rank order (a segment may become empty);
        the qrels are unchanged, so R and the ideal gains stay those of the whole qrels.

        Example:
            >>> b = RankedBatch.from_lists([[-1, 2, -2, 0], [-1]], [[2, 0, -1], [1]])
            >>> c = b.condensed()
            >>> c.rel.tolist(), c.starts.tolist()
            ([2, 0], [0, 2, 2])
        """
        key = ("condensed",)
        if key not in self._cache:
            keep = self.rel >= 0
            counts = np.bincount(self.seg[keep], minlength=self.n_segments)
            self._cache[key] = RankedBatch(
                starts=np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
                rel=self.rel[keep],
                score=self.score[keep],
                seg_query=self.seg_query,
                qrels_starts=self.qrels_starts,
                qrels_grades=self.qrels_grades,
                dup=None if self.dup is None else self.dup[keep],
            )
        return self._cache[key]

    # --------------------------------------------------------- construction
    @classmethod
    def from_lists(
        cls,
        rels: Sequence[Sequence[int]],
        qrels: Sequence[Sequence[int]],
        scores: Sequence[Sequence[float]] | None = None,
    ) -> RankedBatch:
        """Build a batch from Python lists (one ranked list and one grade list per query).

        Handy for tests and notebooks; ``rels[s]`` is already in rank order.
        """
        if len(rels) != len(qrels):
            raise ValueError("rels and qrels must have one entry per query")
        lengths = np.array([len(r) for r in rels], dtype=np.int64)
        starts = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        rel = np.array([x for r in rels for x in r], dtype=np.int64)
        if scores is None:
            # strictly decreasing scores reproduce the given order
            score = -(np.arange(len(rel), dtype=np.float64))
        else:
            score = np.array([x for s in scores for x in s], dtype=np.float64)
        sorted_grades = [sorted(q, reverse=True) for q in qrels]
        q_lengths = np.array([len(q) for q in sorted_grades], dtype=np.int64)
        q_starts = np.concatenate(([0], np.cumsum(q_lengths))).astype(np.int64)
        grades = np.array([x for q in sorted_grades for x in q], dtype=np.int64)
        return cls(
            starts=starts,
            rel=rel,
            score=score,
            seg_query=np.arange(len(rels), dtype=np.int64),
            qrels_starts=q_starts,
            qrels_grades=grades,
        )


def safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, 0 where den == 0 (trec_eval's convention for R = 0).

    Example:
        >>> safe_divide(np.array([1.0, 2.0]), np.array([4.0, 0.0])).tolist()
        [0.25, 0.0]
    """
    out = np.zeros_like(num, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out
