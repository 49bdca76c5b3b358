"""Graded-relevance measures: cumulative gain (CG, DCG, nDCG and trec_eval's variants
ndcg_rel, Rndcg and G) and the cascade measures ERR and pFound.

Notation (one segment): ranked docs d_1..d_n with relevance codes c_i, gains
gain(c_i) (see :mod:`sparkeval.measures.gain`), discount w_i = 1/log2(i+1);
I_1 >= I_2 >= ... the ideal gains (positive gains of every qrels doc, sorted
descending), Rg their count, IDCG_j = sum_{p<=j} I_p w_p and
DCG_j = sum_{i<=j} gain(c_i) w_i.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from sparkeval.measures.batch import RankedBatch, safe_divide
from sparkeval.measures.gain import (
    GAIN_PARAM,
    GRADE_MAP_PARAM,
    LOG_BASE_PARAM,
    TIES_PARAM,
    grade_gain,
    ideal_cumulative,
    ideal_dcg_at,
    ideal_gain_at,
    ideal_gains,
    own_ideal_gains,
    rank_discount,
    tie_averaged,
)
from sparkeval.measures.ranking import TREC
from sparkeval.measures.registry import Param, TrecParams, measure

JK = "Järvelin & Kekäläinen, ACM TOIS 20(4), 2002"
_NO_CUT = np.iinfo(np.int64).max // 4


def _cut_ranks(b: RankedBatch, k: int | None) -> np.ndarray:
    return np.full(b.n_segments, _NO_CUT if k is None else k, dtype=np.int64)


def _dcg(
    b: RankedBatch, gains: np.ndarray, k: int | None, gain: str, log_base: float = 2.0
) -> np.ndarray:
    """sum_{i<=k} gains_i * w_i per segment."""
    weights = np.where(b.within(k), gains * rank_discount(b, gain, log_base=log_base), 0.0)
    return b.segment_sum(weights)


def _with_ties(b: RankedBatch, gains: np.ndarray, ties: str) -> np.ndarray:
    """The gains as DCG counts them: each doc's own (``order``) or its tie run's mean."""
    return tie_averaged(b, gains) if ties == "average" else gains


def _divide_nonzero(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, 0 where den == 0 (scikit-learn's ndcg_score for an ideal DCG of 0)."""
    out = np.zeros_like(num, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _ideal_at_cut(b: RankedBatch, k: int | None, gain: str, grade_map: Any) -> np.ndarray:
    cum = ideal_cumulative(b, ideal_gains(b, gain, grade_map), gain)
    return ideal_dcg_at(b, cum, _cut_ranks(b, k), np.arange(b.n_segments))


SKLEARN = "scikit-learn sklearn.metrics.dcg_score / ndcg_score"


@measure(
    "nDCG",
    judged_only=True,
    description=(
        "normalised DCG: DCG@k / IDCG@k, DCG@k = sum_{i<=k} gain(g_i) * w_i with "
        "w_i = 1/log2(i+1); IDCG from all qrels grades sorted descending (cut at k); "
        "0 when IDCG = 0; relevance level ignored as in trec_eval; ideal=run takes IDCG "
        "from the ranked docs' own gains sorted descending and ties=average gives each "
        "doc the mean gain of its run of tied scores (both: scikit-learn's ndcg_score, "
        "spelled ndcg_score@k)"
    ),
    cutoff="optional",
    rel=False,
    params={
        "gain": GAIN_PARAM,
        "gains": GRADE_MAP_PARAM,
        "ideal": Param(
            str,
            "qrels",
            choices=("qrels", "k", "run"),
            help="IDCG from the qrels grades (qrels), from k docs of grade 1 (k: "
            "RecTools' default NDCG, which divides by the DCG of a full top k) or from "
            "the ranked docs' own gains sorted descending (run: scikit-learn's ndcg_score)",
        ),
        "ties": TIES_PARAM,
    },
    trec="ndcg",
    trec_cut="ndcg_cut_{k}",
    trec_params=(TrecParams("ndcg", "pairs", "gains"), TrecParams("ndcg_cut", "cutoffs")),
    references=TREC + "; " + JK + "; Burges et al., ICML 2005 (exp gain); " + SKLEARN,
)
def ndcg(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    gain, grade_map = p["gain"], p["gains"]
    gains = grade_gain(b.rel, gain, grade_map)
    actual = _dcg(b, _with_ties(b, gains, p["ties"]), k, gain)
    if p["ideal"] == "k":
        if k is None:
            raise ValueError("nDCG(ideal=k) needs a cutoff, e.g. nDCG(ideal=k)@10")
        full_top_k = float((1.0 / np.log2(np.arange(2, k + 2))).sum())
        return actual / full_top_k
    if p["ideal"] == "run":
        return _divide_nonzero(actual, _dcg(b, own_ideal_gains(b, gains), k, gain))
    return safe_divide(actual, _ideal_at_cut(b, k, gain, grade_map))


@measure(
    "DCG",
    description=(
        "discounted cumulative gain: sum_{i<=k} gain(g_i) * w_i, w_i = 1/log_b(i+1) "
        "(b = log_base, 2 by default); ties=average gives each doc the mean gain of its "
        "run of tied scores, so a run of ties adds its mean gain times the sum of its "
        "discounts within k (scikit-learn's dcg_score, spelled dcg_score@k)"
    ),
    cutoff="optional",
    rel=False,
    params={
        "gain": GAIN_PARAM,
        "gains": GRADE_MAP_PARAM,
        "log_base": LOG_BASE_PARAM,
        "ties": TIES_PARAM,
    },
    trec="dcg",
    trec_params=(TrecParams("dcg", "pairs", "gains"),),
    references=TREC + "; " + JK + "; " + SKLEARN,
)
def dcg_measure(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    gains = _with_ties(b, grade_gain(b.rel, p["gain"], p["gains"]), p["ties"])
    return _dcg(b, gains, k, p["gain"], p["log_base"])


@measure(
    "CG",
    description="cumulative gain: sum_{i<=k} gain(g_i) (no discount)",
    cutoff="optional",
    rel=False,
    params={"gain": Param(str, "linear", choices=("linear", "exp"), help="gain g or 2^g-1")},
    references=JK,
)
def cg(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    gains = grade_gain(b.rel, p["gain"], None)
    return b.segment_sum(np.where(b.within(k), gains, 0.0))


# --------------------------------------------------------------- trec_eval variants
def _trec_gain_setup(b: RankedBatch, grade_map: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(retrieved gains, sorted ideal gains, cumulative ideal DCG) with trec_eval's gains."""
    gains = grade_gain(b.rel, "linear", grade_map)
    ideal = ideal_gains(b, "linear", grade_map)
    return gains, ideal, ideal_cumulative(b, ideal, "linear")


@measure(
    "nDCG_rel",
    description=(
        "nDCG averaged over the Rg docs with positive ideal gain: (1/Rg) [sum over retrieved "
        "docs with gain > 0 of DCG_i / IDCG_min(i,Rg) + (Rg - their number) * DCG_n / IDCG_Rg]"
    ),
    rel=False,
    params={"gains": GRADE_MAP_PARAM},
    trec="ndcg_rel",
    trec_params=(TrecParams("ndcg_rel", "pairs", "gains"),),
    references=TREC,
)
def ndcg_rel(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    gains, ideal, cum_ideal = _trec_gain_setup(b, p["gains"])
    w = rank_discount(b, "linear")
    dcg_i = b.segment_cumsum(gains * w)
    idcg_i = ideal_dcg_at(b, cum_ideal, b.positions, b.seg)
    positive = gains > 0
    ratio = np.zeros(len(gains))
    np.divide(dcg_i, idcg_i, out=ratio, where=positive & (idcg_i > 0))
    total = b.segment_sum(ratio)
    rg = b.query_sum((ideal > 0).astype(np.float64))[b.seg_query]
    n_pos = b.segment_sum(positive.astype(np.float64))
    dcg_n = b.segment_sum(gains * w)
    idcg_full = _ideal_full(b, cum_ideal)
    total += safe_divide((rg - n_pos) * dcg_n, idcg_full)
    return np.where(total > 0, safe_divide(total, rg), 0.0)


def _ideal_full(b: RankedBatch, cum_ideal: np.ndarray) -> np.ndarray:
    return ideal_dcg_at(b, cum_ideal, _cut_ranks(b, None), np.arange(b.n_segments))


@measure(
    "RnDCG",
    description=(
        "nDCG averaged at the R-levels: mean of nDCG@j over the ranks j where the ideal "
        "gain changes (I_j != I_{j+1}, up to Rg), using DCG_min(j,n); plus nDCG@n when "
        "n > Rg + 1; 0 when R = 0"
    ),
    params={"gains": GRADE_MAP_PARAM},
    trec="Rndcg",
    trec_params=(TrecParams("Rndcg", "pairs", "gains"),),
    references=TREC,
    undefined="no R-level point at all (no doc with positive gain although R > 0)",
)
def rndcg(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    gains, ideal, cum_ideal = _trec_gain_setup(b, p["gains"])
    # boundaries: qrels positions j with I_j > 0 and I_j != I_{j+1} (I beyond the query = 0)
    nxt = np.concatenate((ideal[1:], [0.0]))
    last = b.qrels_positions == b.qrels_lengths[b.qrels_query]
    nxt = np.where(last, 0.0, nxt)
    bidx = np.flatnonzero((ideal > 0) & (ideal != nxt))
    per_query = np.bincount(b.qrels_query[bidx], minlength=b.n_queries)
    q_first = np.concatenate(([0], np.cumsum(per_query)))[:-1]
    counts = per_query[b.seg_query]
    rep_seg = np.repeat(np.arange(b.n_segments), counts)
    offset = np.arange(len(rep_seg)) - np.repeat(np.cumsum(counts) - counts, counts)
    entry = bidx[q_first[b.seg_query[rep_seg]] + offset] if len(rep_seg) else np.zeros(0, np.int64)
    j = b.qrels_positions[entry]
    dcg_cum = b.segment_cumsum(gains * rank_discount(b, "linear"))
    m = np.minimum(j, b.lengths[rep_seg])
    dcg_m = np.zeros(len(m))
    ok = m >= 1
    dcg_m[ok] = dcg_cum[b.starts[rep_seg[ok]] + m[ok] - 1]
    total = np.bincount(rep_seg, weights=dcg_m / cum_ideal[entry], minlength=b.n_segments)
    points = counts.astype(np.float64)
    rg = b.query_sum((ideal > 0).astype(np.float64))[b.seg_query]
    tail = b.lengths > rg + 1
    dcg_n = b.segment_sum(gains * rank_discount(b, "linear"))
    idcg_full = _ideal_full(b, cum_ideal)
    tail_ok = tail & (idcg_full > 0)
    total = total + np.where(tail_ok, safe_divide(dcg_n, idcg_full), 0.0)
    points = points + tail_ok
    out = np.full(b.n_segments, np.nan)
    np.divide(total, points, out=out, where=points > 0)
    return np.where(b.num_rel(p["rel"]) == 0, 0.0, out)


@measure(
    "G",
    description=(
        "normalised gain: sum over retrieved docs with gain != 0 of gain_i / log2(2 + C_i - S_i), "
        "C_i = sum_{r<=i} max(I_r, 1), S_i = sum_{r<=i} gain_r, divided by sum of ideal gains"
    ),
    rel=False,
    params={"gains": GRADE_MAP_PARAM},
    trec="G",
    trec_params=(TrecParams("G", "pairs", "gains"),),
    references=TREC,
)
def g_measure(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    gains, ideal, _ = _trec_gain_setup(b, p["gains"])
    cost = b.segment_cumsum(np.maximum(ideal_gain_at(b, ideal), 1.0))
    so_far = b.segment_cumsum(gains)
    contrib = np.zeros(len(gains))
    nz = gains != 0
    contrib[nz] = gains[nz] / np.log2(2.0 + cost[nz] - so_far[nz])
    total_ideal = b.query_sum(ideal)[b.seg_query]
    return safe_divide(b.segment_sum(contrib), total_ideal)


# --------------------------------------------------------------------- cascade
GMAX_PARAM = Param(
    int, 4, help="maximum grade: R = (2^g - 1) / 2^gmax, g clipped to [0, gmax]", minimum=1
)


def _stop_probability(b: RankedBatch, gmax: int) -> np.ndarray:
    grades = np.clip(b.rel, 0, gmax).astype(np.float64)
    return (np.exp2(grades) - 1.0) / 2.0**gmax


@measure(
    "ERR",
    description=(
        "expected reciprocal rank: sum_{r<=k} (1/r) R_r prod_{j<r} (1 - R_j), "
        "R_j = (2^g_j - 1) / 2^gmax"
    ),
    cutoff="optional",
    rel=False,
    params={"gmax": GMAX_PARAM},
    references="Chapelle, Metzler, Zhang & Grinspan, CIKM 2009; gdeval (TREC Web track)",
)
def err(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    stop = _stop_probability(b, p["gmax"])
    keep = np.log1p(-stop)
    reach = np.exp(b.segment_cumsum(keep) - keep)
    return b.segment_sum(np.where(b.within(k), stop * reach / b.positions, 0.0))


@measure(
    "pFound",
    description=(
        "probability of finding a relevant doc: sum_{i<=k} pLook_i pRel_i, pLook_1 = 1, "
        "pLook_i = pLook_{i-1} (1 - pRel_{i-1}) (1 - pbreak), pRel as ERR's R"
    ),
    cutoff="optional",
    rel=False,
    params={
        "pbreak": Param(
            float, 0.15, help="probability of abandoning after each doc", minimum=0.0, maximum=1.0
        ),
        "gmax": GMAX_PARAM,
    },
    references="Segalovich, Yandex (ROMIP 2009); Gulin, Karpovich et al., pFound",
)
def pfound(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    prel = _stop_probability(b, p["gmax"])
    keep = np.log1p(-prel)
    pbreak = p["pbreak"]
    cont = np.log1p(-pbreak) if pbreak < 1 else -np.inf
    steps = (b.positions - 1).astype(np.float64)
    log_look = b.segment_cumsum(keep) - keep + np.where(steps > 0, steps * cont, 0.0)
    return b.segment_sum(np.where(b.within(k), np.exp(log_look) * prel, 0.0))
