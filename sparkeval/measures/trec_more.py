"""The remaining trec_eval measures: judged-only (bpref, infAP), interpolated
precision, R-multiples, relative precision, binG, RBP and the unjudged counts.

Notation (one segment): ranked docs d_1..d_n with relevance codes c_i (grade >= 0,
-1 not in the qrels, -2 a qrels entry with a negative grade); rel_i = c_i >= l;
judged non-relevant means 0 <= c_i < l; R = qrels docs with grade >= l;
N = qrels docs with 0 <= grade < l.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from sparkeval.measures.batch import NONPOOL, UNJUDGED, RankedBatch, safe_divide
from sparkeval.measures.ranking import TREC, hits_at
from sparkeval.measures.registry import Param, TrecParams, measure
from sparkeval.measures.segops import exclusive_cumsum, suffix_max

#: trec_eval's default recall points of iprec_at_recall and 11pt_avg
RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: smoothing constant of infAP (trec_eval INFAP_EPSILON)
INFAP_EPSILON = 1e-5


def _judged_nonrel(b: RankedBatch, level: int) -> np.ndarray:
    return (b.rel >= 0) & (b.rel < level)


def _qrels_nonrel(b: RankedBatch, level: int) -> np.ndarray:
    """N per segment: qrels docs with 0 <= grade < level."""
    g = b.qrels_grades
    return b.query_sum(((g >= 0) & (g < level)).astype(np.float64))[b.seg_query]


def _bpref(b: RankedBatch, level: int) -> np.ndarray:
    rel = b.relevant(level)
    nonrel_above = exclusive_cumsum(b, _judged_nonrel(b, level))
    r = b.num_rel(level)[b.seg]
    denom = np.minimum(_qrels_nonrel(b, level)[b.seg], r)
    penalty = np.zeros(len(rel))
    # capping n_above at min(N, R) rather than R changes nothing while n_above <= N; it
    # keeps the penalty <= 1 when near-duplicates demoted to grade 0 add judged
    # non-relevant docs that the qrels count N does not hold
    capped = np.minimum(nonrel_above, denom)
    np.divide(capped, denom, out=penalty, where=rel & (nonrel_above > 0) & (denom > 0))
    return safe_divide(b.segment_sum(np.where(rel, 1.0 - penalty, 0.0)), b.num_rel(level))


@measure(
    "Bpref",
    description=(
        "binary preference over judged docs: (1/R) sum over retrieved relevant docs of "
        "1 - min(n_above, R) / min(N, R), n_above = judged non-relevant docs ranked above"
    ),
    trec="bpref",
    references=TREC + "; Buckley & Voorhees, SIGIR 2004",
)
def bpref(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    return _bpref(b, p["rel"])


@measure(
    "gm_bpref",
    description="geometric mean over queries of Bpref, each value floored at 1e-5",
    trec="gm_bpref",
    aggregate="gmean",
    per_query=False,
    references=TREC,
)
def gm_bpref(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    return _bpref(b, p["rel"])


@measure(
    "infAP",
    description=(
        "inferred AP: (1/R) sum over retrieved relevant d_i of 1 if i = 1, else "
        "1/i + ((i-1)/i) * ((r+m+u)/(i-1)) * ((r+eps)/(r+m+2eps)); r, m, u = relevant, "
        "judged non-relevant and pooled-unjudged docs above, eps = 1e-5"
    ),
    trec="infAP",
    references=TREC + "; Yilmaz & Aslam, CIKM 2006",
)
def inf_ap(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    level = p["rel"]
    rel = b.relevant(level)
    r_above = exclusive_cumsum(b, rel)
    m_above = exclusive_cumsum(b, _judged_nonrel(b, level))
    u_above = exclusive_cumsum(b, b.rel == UNJUDGED)
    j = (b.positions - 1).astype(np.float64)  # docs above, of any kind
    safe_j = np.maximum(j, 1.0)
    term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r_above + m_above + u_above) / safe_j) * (
        (r_above + INFAP_EPSILON) / (r_above + m_above + 2 * INFAP_EPSILON)
    )
    term = np.where(j == 0, 1.0, term)
    return safe_divide(b.segment_sum(np.where(rel, term, 0.0)), b.num_rel(level))


@measure(
    "Rprec_mult",
    description=(
        "precision at c = floor(mult * R + 0.9) docs: hits in the first min(c, n) / c; 0 when c = 0"
    ),
    params={
        "mult": Param(
            float, None, required=True, minimum=0.0, help="multiple of R giving the cutoff"
        )
    },
    trec="Rprec_mult_{mult:.2f}",
    trec_params=(TrecParams("Rprec_mult", "each", "mult"),),
    references=TREC,
)
def rprec_mult(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    level = p["rel"]
    cut = np.floor(p["mult"] * b.num_rel(level) + 0.9)
    hits = b.segment_sum((b.relevant(level) & (b.positions <= cut[b.seg])).astype(np.float64))
    return safe_divide(hits, cut)


def _lround(x: np.ndarray) -> np.ndarray:
    """C ``lround`` for x >= 0: halves round away from zero."""
    low = np.floor(x)
    return np.where(x - low >= 0.5, low + 1.0, low)


def _iprec(b: RankedBatch, level: int, recalls: tuple[float, ...]) -> np.ndarray:
    """Interpolated precision per (segment, recall point), shape (S, len(recalls))."""
    rel = b.relevant(level)
    idx = np.flatnonzero(rel)
    seg = b.seg[idx]
    prec = b.cum_relevant(level)[idx] / b.positions[idx]
    best = suffix_max(prec, seg) if len(idx) else prec
    n_rel_ret = np.bincount(seg, minlength=b.n_segments)
    first = np.concatenate(([0], np.cumsum(n_rel_ret)))[:-1]
    r = b.num_rel(level)
    out = np.zeros((b.n_segments, len(recalls)))
    for col, point in enumerate(recalls):
        cut = _lround(point * r).astype(np.int64)
        # the cut-th relevant doc (the first when cut = 0); 0 beyond the relevant retrieved
        m = np.maximum(cut, 1)
        ok = (cut <= n_rel_ret) & (n_rel_ret > 0)
        values = np.zeros(b.n_segments)
        values[ok] = best[first[ok] + m[ok] - 1]
        out[:, col] = values
    return out


@measure(
    "IPrec",
    judged_only=True,
    description=(
        "interpolated precision at recall r: max precision at ranks at or below the "
        "c-th relevant doc, c = round(r * R) (halves up, trec_eval 10); 0 if c exceeds "
        "the relevant docs retrieved"
    ),
    params={
        "recall": Param(
            float, None, required=True, minimum=0.0, maximum=1.0, help="recall level in [0, 1]"
        )
    },
    trec="iprec_at_recall_{recall:.2f}",
    trec_params=(TrecParams("iprec_at_recall", "each", "recall"),),
    references=TREC,
)
def iprec(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    return _iprec(b, p["rel"], (p["recall"],))[:, 0]


@measure(
    "11pt",
    description="mean of IPrec over the recall points (default 0, 0.1, ..., 1: 11-point average)",
    params={"recalls": Param(tuple, RECALL_POINTS, help="recall points, e.g. 0.2;0.5;0.8")},
    trec="11pt_avg",
    trec_params=(TrecParams("11pt_avg", "list", "recalls"),),
    references=TREC,
)
def eleven_point(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    return _iprec(b, p["rel"], tuple(p["recalls"])).mean(axis=1)


@measure(
    "RelP",
    description="relative precision at k: hits in the first min(k, n) / min(k, R); 0 when R = 0",
    cutoff="required",
    trec_cut="relative_P_{k}",
    trec_params=(TrecParams("relative_P", "cutoffs"),),
    references=TREC,
)
def relative_p(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    level = p["rel"]
    return safe_divide(hits_at(b, level, k), np.minimum(b.num_rel(level), float(k or 0)))


@measure(
    "binG",
    description=(
        "binary G: (1/R) sum over retrieved relevant docs of 1 / log2(2 + non-relevant docs above)"
    ),
    trec="binG",
    references=TREC,
)
def bin_g(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    level = p["rel"]
    rel = b.relevant(level)
    nonrel_above = b.positions - b.cum_relevant(level)  # at a relevant doc: others above it
    return safe_divide(
        b.segment_sum(np.where(rel, 1.0 / np.log2(2.0 + nonrel_above), 0.0)), b.num_rel(level)
    )


@measure(
    "NumNonRelJudgedRet",
    description="number of retrieved docs judged non-relevant (0 <= grade < l)",
    trec="num_nonrel_judged_ret",
    aggregate="sum",
    references=TREC,
)
def num_nonrel_judged_ret(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    return b.segment_sum(_judged_nonrel(b, p["rel"]).astype(np.float64))


@measure(
    "Unjudged",
    description=(
        "fraction of unjudged docs at k: docs in the first min(k, n) that are not in the "
        "qrels or have a negative grade, divided by k"
    ),
    cutoff="required",
    rel=False,
    trec_cut="unj_{k}",
    trec_params=(TrecParams("unj", "cutoffs"),),
    higher_is_better=False,
    references=TREC,
)
def unjudged(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    unj = (b.rel < 0) & b.within(k)
    return b.segment_sum(unj.astype(np.float64)) / float(k or 1)


P_PARAM = Param(float, 0.9, help="persistence p in [0, 1)", minimum=0.0, maximum=1.0)
RBP_REL_PARAM = Param(
    int,
    None,
    minimum=0,
    help="binary gain: 1 for a doc judged with grade >= rel (a negative grade counting as 0), "
    "else 0 (ir_measures' RBP(p=…,rel=…), so p must be given too); without it the graded "
    "gain of trec_eval's rbp",
    requires=(("p", "ir_measures' RBP defaults to p=0.8, trec_eval's rbp to p=0.9"),),
)


@measure(
    "RBP",
    description=(
        "rank-biased precision: (1 - p) sum_i gain_i p^(i-1); without rel, gain = grade, "
        "divided by the query's largest judged grade when that exceeds 1 (trec_eval's rbp); "
        "with rel=l (and p given), gain = 1 for a doc judged with grade >= l, else 0 "
        "(ir_measures' RBP(p=…,rel=l), computed by cwl_eval over the first 1000 ranks with "
        "weights rescaled by 1/(1 - p^1000): a relative difference of p^1000, below 1e-16 "
        "up to p = 0.96)"
    ),
    rel=False,
    params={"p": P_PARAM, "rel": RBP_REL_PARAM},
    trec="rbp",
    references=TREC
    + "; ir_measures RBP(rel=…) (terrierteam/ir_measures, cwl_eval provider); "
    + "Moffat & Zobel, ACM TOIS 27(1), 2008",
)
def rbp(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    level = p["rel"]
    if level is None:
        gains = np.maximum(b.rel, 0).astype(np.float64)
        top = np.zeros(b.n_queries)
        np.maximum.at(top, b.qrels_query, np.maximum(b.qrels_grades, 0).astype(np.float64))
        gains /= np.maximum(top, 1.0)[b.seg_query][b.seg]
    elif level <= 0:  # every judged doc: a negative grade counts as 0 >= rel
        gains = (b.rel != NONPOOL).astype(np.float64)
    else:
        gains = b.relevant(level).astype(np.float64)
    pers = p["p"]
    weight = np.power(pers, (b.positions - 1).astype(np.float64))
    return (1.0 - pers) * b.segment_sum(gains * weight)


@measure(
    "RBP_resid",
    description=(
        "RBP residual: p^n + (1 - p) sum over unjudged d_i of p^(i-1) (the most RBP could "
        "rise if every unjudged doc had full gain); 0 when no retrieved doc is unjudged"
    ),
    rel=False,
    params={"p": P_PARAM},
    trec="rbp_resid",
    higher_is_better=False,
    references=TREC + "; Moffat & Zobel, ACM TOIS 27(1), 2008",
)
def rbp_resid(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    pers = p["p"]
    unj = (b.rel == NONPOOL) | (b.rel == UNJUDGED)
    weight = np.power(pers, (b.positions - 1).astype(np.float64))
    any_unj = b.segment_sum(unj.astype(np.float64)) > 0
    tail = np.power(pers, b.lengths.astype(np.float64))
    return np.where(any_unj, tail + (1.0 - pers) * b.segment_sum(np.where(unj, weight, 0.0)), 0.0)
