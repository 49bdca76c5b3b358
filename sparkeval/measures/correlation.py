"""Pairwise measures of one ranking: AUC, Liu's rank correlation RC, Kendall's tau-b
and Spearman's rho between the run's scores and the grades of the retrieved docs.

Grades y_i are the qrels grades of the retrieved docs, with docs outside the qrels
and negative grades counting as 0.  Scores x_i are the run's scores (ties are
ties).  Pair counts are computed per segment by sorting on (segment, key) and
counting, for each grade level, the docs of that level below and above every doc:
O(n log n + n G) for G distinct grades in a segment, with no loop over segments.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from sparkeval.measures.batch import RankedBatch
from sparkeval.measures.registry import Param, measure
from sparkeval.measures.segops import average_ranks, dense_rank, pairs_tied, sort_within, tie_groups

_NULL = "fewer than 2 retrieved docs, or no variation to correlate"


def _grades(b: RankedBatch) -> np.ndarray:
    return np.maximum(b.rel, 0).astype(np.float64)


def _pairs(b: RankedBatch) -> np.ndarray:
    n = b.lengths.astype(np.float64)
    return n * (n - 1) / 2.0


@measure(
    "AUC",
    description=(
        "area under the ROC curve of the scores over the retrieved docs: share of "
        "(relevant, non-relevant) pairs where the relevant doc scores higher, ties 1/2"
    ),
    references="Hanley & McNeil, Radiology 1982 (Wilcoxon-Mann-Whitney statistic)",
    undefined="the retrieved docs are all relevant or all non-relevant (or there are none)",
)
def auc(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    positive = b.relevant(p["rel"])
    ranks, _ = average_ranks(b.seg, b.score, b.starts)
    n_pos = b.segment_sum(positive.astype(np.float64))
    n_neg = b.lengths - n_pos
    u = b.segment_sum(np.where(positive, ranks, 0.0)) - n_pos * (n_pos + 1) / 2.0
    out = np.full(b.n_segments, np.nan)
    np.divide(u, n_pos * n_neg, out=out, where=(n_pos > 0) & (n_neg > 0))
    return out


def _level_loop(levels: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """Yield (v, mask of docs at level v) for every dense level that some doc exceeds."""
    top = int(levels.max()) if len(levels) else 0
    for v in range(top):
        yield v, levels == v


@measure(
    "RC",
    description=(
        "Liu's rank correlation: over pairs (i above j) of retrieved docs, the share with "
        "y_i >= y_j (equal grades or correctly ordered), each pair weighted by w(i) "
        "(1, or 1/log2(i+1) with weight=log)"
    ),
    rel=False,
    params={
        "weight": Param(
            str,
            "none",
            choices=("none", "log"),
            help="pair weight by the upper doc's rank i: 1 or 1/log2(i+1)",
        )
    },
    references="Liu, Learning to Rank for Information Retrieval, 2011 (rank correlation)",
    undefined="fewer than 2 retrieved docs",
)
def rank_correlation(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    w = np.ones(len(b.rel)) if p["weight"] == "none" else 1.0 / np.log2(b.positions + 1.0)
    levels = dense_rank(b.seg, _grades(b))
    bad = np.zeros(len(b.rel))
    for v, at_v in _level_loop(levels):
        above = b.segment_cumsum(np.where(at_v, w, 0.0)) - np.where(at_v, w, 0.0)
        bad += np.where(levels > v, above, 0.0)
    total = b.segment_sum(w * (b.lengths[b.seg] - b.positions))
    out = np.full(b.n_segments, np.nan)
    np.divide(total - b.segment_sum(bad), total, out=out, where=b.lengths >= 2)
    return out


def _concordance(b: RankedBatch, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per segment: sum over pairs of sign(x_i - x_j) * sign(y_i - y_j)."""
    order = sort_within(b.seg, x)
    seg_s = b.seg[order]
    groups = tie_groups(seg_s, x[order])
    idx = np.arange(len(order))
    g_first = np.full(groups[-1] + 1 if len(groups) else 0, len(order))
    np.minimum.at(g_first, groups, idx)
    g_last = np.zeros(len(g_first), dtype=np.int64)
    np.maximum.at(g_last, groups, idx)
    first, last = g_first[groups], g_last[groups]
    levels = dense_rank(b.seg, y)[order]
    seg_start = b.starts[seg_s]
    total = np.zeros(len(order))
    for v, at_v in _level_loop(levels):
        ind = at_v.astype(np.float64)
        cum = np.cumsum(ind)
        before_seg = np.concatenate(([0.0], cum))[seg_start]
        incl = cum - before_seg  # count of level v up to each sorted position (in segment)
        excl_first = incl[first] - ind[first]
        below = excl_first  # level-v docs with strictly smaller score
        seg_total = incl[b.starts[1:][seg_s] - 1] if len(order) else incl
        above = seg_total - incl[last]
        total += np.where(levels > v, below - above, 0.0)
    out = np.zeros(b.n_segments)
    np.add.at(out, seg_s, total)
    return out


@measure(
    "KendallTau",
    description=(
        "Kendall's tau-b between scores and grades of the retrieved docs: "
        "(C - D) / sqrt((n0 - n1)(n0 - n2)), n1, n2 the pairs tied in score, in grade"
    ),
    rel=False,
    references="Kendall, Biometrika 1945 (tau-b); scipy.stats.kendalltau",
    undefined=_NULL,
)
def kendall_tau(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    y = _grades(b)
    s = _concordance(b, b.score, y)
    n0 = _pairs(b)
    _, x_sizes = average_ranks(b.seg, b.score, b.starts)
    _, y_sizes = average_ranks(b.seg, y, b.starts)
    denom = (n0 - pairs_tied(b, x_sizes)) * (n0 - pairs_tied(b, y_sizes))
    out = np.full(b.n_segments, np.nan)
    np.divide(s, np.sqrt(np.maximum(denom, 0.0)), out=out, where=denom > 0)
    return out


@measure(
    "SpearmanRho",
    description=(
        "Spearman's rho between scores and grades of the retrieved docs: Pearson "
        "correlation of their average ranks"
    ),
    rel=False,
    references="Spearman, Am. J. Psychol. 1904; scipy.stats.spearmanr",
    undefined=_NULL,
)
def spearman_rho(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    rx, _ = average_ranks(b.seg, b.score, b.starts)
    ry, _ = average_ranks(b.seg, _grades(b), b.starts)
    n = np.maximum(b.lengths, 1).astype(np.float64)
    dx = rx - (b.segment_sum(rx) / n)[b.seg]
    dy = ry - (b.segment_sum(ry) / n)[b.seg]
    sxy, sxx, syy = b.segment_sum(dx * dy), b.segment_sum(dx * dx), b.segment_sum(dy * dy)
    denom = np.sqrt(sxx * syy)
    out = np.full(b.n_segments, np.nan)
    np.divide(sxy, denom, out=out, where=(sxx > 0) & (syy > 0))
    return np.clip(out, -1.0, 1.0)
