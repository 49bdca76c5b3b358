"""Listwise ranking measures as trec_eval defines them, vectorised over segments.

Notation (one segment): ranked docs d_1..d_n, rel_i = 1 if d_i is judged with
grade >= l, R = qrels docs with grade >= l.  Every kernel returns one float per
segment of the batch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from sparkeval.measures.batch import NONPOOL, RankedBatch, safe_divide
from sparkeval.measures.gain import TIES, tie_groups
from sparkeval.measures.registry import Param, TrecParams, measure

TREC = "trec_eval 10 (usnistgov/trec_eval)"


def hits_at(b: RankedBatch, level: int, k: int | None) -> np.ndarray:
    """Relevant docs among the first min(k, n) of each segment."""
    return b.segment_sum((b.relevant(level) & b.within(k)).astype(np.float64))


@measure(
    "NumRet",
    description="number of retrieved docs (after the depth cap)",
    rel=False,
    trec="num_ret",
    aggregate="sum",
    references=TREC,
)
def num_ret(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    return b.lengths.astype(np.float64)


@measure(
    "NumQ",
    description="number of queries evaluated: 1 per query, summed (ir_measures NumQ)",
    rel=False,
    aggregate="sum",
    references="ir_measures (terrierteam/ir_measures); trec_eval's num_q",
)
def num_q(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    return np.ones(len(b.lengths), dtype=np.float64)


@measure(
    "NumRel",
    description="R: number of qrels docs with grade >= rel (retrieved or not)",
    trec="num_rel",
    aggregate="sum",
    references=TREC,
)
def num_rel(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    return b.num_rel(p["rel"])


@measure(
    "NumRelRet",
    description="number of relevant docs retrieved",
    trec="num_rel_ret",
    aggregate="sum",
    references=TREC,
)
def num_rel_ret(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    return b.num_rel_ret(p["rel"])


@measure(
    "P",
    judged_only=True,
    description="precision at k: sum_{i<=min(k,n)} rel_i / k (divides by k even when n < k)",
    cutoff="required",
    trec_cut="P_{k}",
    trec_params=(TrecParams("P", "cutoffs"),),
    references=TREC,
)
def precision(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    return hits_at(b, p["rel"], k) / k


@measure(
    "R",
    judged_only=True,
    description="recall at k: sum_{i<=k} rel_i / R; 0 when R = 0",
    cutoff="required",
    trec_cut="recall_{k}",
    trec_params=(TrecParams("recall", "cutoffs"),),
    references=TREC,
)
def recall(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    level = p["rel"]
    return safe_divide(hits_at(b, level, k), b.num_rel(level))


#: denominators of AP@k: R (trec_eval map_cut), min(R, k) (Spark MLlib, Recommenders) or
#: k (RecTools' MAP with divide_by_k=True)
AP_DENOMINATORS = ("R", "min_k", "k")


def _average_precision(
    b: RankedBatch, level: int, k: int | None, denom: str = "R", ties: str = "order"
) -> np.ndarray:
    rel = b.relevant(level) & b.within(k)
    if ties == "average":
        precision_at_i = _tied_precision(b, level, k)
    else:
        precision_at_i = b.cum_relevant(level) / b.positions
    r = b.num_rel(level)
    if denom == "min_k" and k is not None:
        r = np.minimum(r, k)
    elif denom == "k" and k is not None:  # a cutoff is required with it (needs_cutoff)
        r = np.full_like(r, k)
    return safe_divide(b.segment_sum(np.where(rel, precision_at_i, 0.0)), r)


def _tied_precision(b: RankedBatch, level: int, k: int | None) -> np.ndarray:
    """Each doc's precision at the end of its run of tied scores (within the first k):
    c_e / e with e the run's last position and c_e the relevant docs up to it, so that
    tied docs share one threshold, as scikit-learn's average_precision_score takes it.

    Example: scores 1, 1 with grades 1, 0 give both docs the precision 1/2.
    """
    groups = tie_groups(b)
    if len(groups) == 0:
        return np.zeros(0, dtype=np.float64)
    inside = b.within(k)
    ends = np.zeros(int(groups[-1]) + 1, dtype=np.float64)
    np.maximum.at(ends, groups[inside], b.positions[inside].astype(np.float64))
    found = np.zeros_like(ends)
    np.maximum.at(found, groups[inside], b.cum_relevant(level)[inside].astype(np.float64))
    return safe_divide(found, ends)[groups]


#: how AP reads tied scores: in the ranking's order, or as one threshold per run of ties
AP_TIES_PARAM = Param(
    str,
    "order",
    choices=TIES,
    help=(
        "order: tied scores keep the ranking's order (doc id descending); average: a run of "
        "tied scores is one threshold, each of its relevant docs counting the precision at "
        "the run's end (scikit-learn's average_precision_score and LRAP)"
    ),
)


@measure(
    "AP",
    judged_only=True,
    description=(
        "average precision: sum_i rel_i * P@i / R; with @k the sum stops at k "
        "but still divides by R (trec_eval map_cut); denom=min_k divides AP@k by "
        "min(R, k) instead (Spark MLlib meanAveragePrecisionAt, Microsoft Recommenders "
        "map_at_k), denom=k by k (RecTools MAP with divide_by_k=True); ties=average makes "
        "a run of tied scores one threshold, each relevant doc of it counting the "
        "precision at the run's end, within the first k (scikit-learn's "
        "average_precision_score and LRAP); 0 when R = 0"
    ),
    cutoff="optional",
    params={
        "denom": Param(
            str,
            "R",
            choices=AP_DENOMINATORS,
            help=(
                "R (trec_eval), min_k: min(R, k) (MLlib/Recommenders MAP@k; R without @k) "
                "or k (RecTools MAP(divide_by_k=True); needs @k)"
            ),
            needs_cutoff=("k",),
        ),
        "ties": AP_TIES_PARAM,
    },
    trec="map",
    trec_cut="map_cut_{k}",
    trec_params=(TrecParams("map_cut", "cutoffs"),),
    references=TREC
    + "; Spark MLlib RankingMetrics.meanAveragePrecisionAt (denom=min_k); RecTools "
    + "rectools.metrics.MAP (denom=k)",
)
def average_precision(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    return _average_precision(b, p["rel"], k, p["denom"], p["ties"])


@measure(
    "gm_map",
    description="geometric mean over queries of AP, each value floored at 1e-5",
    trec="gm_map",
    aggregate="gmean",
    per_query=False,
    references=TREC,
)
def gm_map(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    return _average_precision(b, p["rel"], None)


@measure(
    "RR",
    judged_only=True,
    description="reciprocal rank: 1 / rank of the first relevant doc (within k); 0 if none",
    cutoff="optional",
    trec="recip_rank",
    references=TREC,
)
def reciprocal_rank(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    level = p["rel"]
    first = b.relevant(level) & (b.cum_relevant(level) == 1) & b.within(k)
    out = np.zeros(b.n_segments, dtype=np.float64)
    out[b.seg[first]] = 1.0 / b.positions[first]
    return out


@measure(
    "Rprec",
    judged_only=True,
    description="R-precision: sum_{i<=R} rel_i / R; 0 when R = 0",
    trec="Rprec",
    references=TREC,
)
def r_precision(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    level = p["rel"]
    r = b.num_rel(level)
    top_r = b.positions <= r[b.seg]
    hits = b.segment_sum((b.relevant(level) & top_r).astype(np.float64))
    return safe_divide(hits, r)


@measure(
    "Success",
    judged_only=True,
    description="1 if a relevant doc is among the first k, else 0",
    cutoff="required",
    trec_cut="success_{k}",
    trec_params=(TrecParams("success", "cutoffs"),),
    references=TREC,
)
def success(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    return (hits_at(b, p["rel"], k) > 0).astype(np.float64)


@measure(
    "Hits",
    judged_only=True,
    description=(
        "relevant docs among the first k: sum_{i<=min(k,n)} rel_i (the whole ranking "
        "without @k); a mean over queries, 0 for a query with no relevant doc retrieved"
    ),
    cutoff="optional",
    references="ranx hits@k (AmenRa/ranx); per query, trec_eval's num_rel_ret within k",
)
def hits(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    """Example: relevant docs at ranks 1, 2, 4 give Hits@3 = 2 and Hits = 3."""
    return hits_at(b, p["rel"], k)


@measure(
    "FallOut",
    description=(
        "fall-out: the share of the ranking's non-relevant docs (judged below the level, "
        "or unjudged) that are among the first k: sum_{i<=k} (1 - rel_i) / sum_i (1 - rel_i); "
        "0 when the ranking holds no non-relevant doc"
    ),
    cutoff="optional",
    higher_is_better=False,
    references=(
        "torchmetrics RetrievalFallOut (top_k; its empty_target_action='pos' counts a "
        "query without a non-relevant doc as 1, the functional form as 0)"
    ),
)
def fall_out(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    not_relevant = ~b.relevant(p["rel"])
    retrieved = b.segment_sum((not_relevant & b.within(k)).astype(np.float64))
    return safe_divide(retrieved, b.segment_sum(not_relevant.astype(np.float64)))


@measure(
    "WTA",
    description="winner takes all, a loss: 0 if the first doc is relevant, else 1 (1 when empty)",
    higher_is_better=False,
    references="Liu, Learning to Rank for Information Retrieval, 2011 (winner takes all)",
)
def winner_takes_all(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    return 1.0 - hits_at(b, p["rel"], 1)


@measure(
    "Judged",
    description=(
        "fraction of the first min(k, n) docs that have a qrels entry (any grade); "
        "0 when nothing is retrieved"
    ),
    cutoff="optional",
    rel=False,
    references="ir_measures Judged@k (MacAvaney et al., ECIR 2022)",
)
def judged(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    top = b.within(k)
    judged_top = b.segment_sum(((b.rel != NONPOOL) & top).astype(np.float64))
    return safe_divide(judged_top, b.segment_sum(top.astype(np.float64)))
