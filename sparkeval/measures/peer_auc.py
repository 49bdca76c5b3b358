"""Per-query measures of recommender and retrieval libraries: partial ROC AUC at k
(RecTools' ``PartialAUC`` and ``PAP``) and the recall reached at a fixed precision
(torchmetrics' ``RetrievalRecallAtFixedPrecision``).

Notation (one segment): ranked docs d_1..d_n at positions 1..n (empty positions of a
ranking read as positions hold no relevant doc), rel_i = 1 if d_i is judged with
grade >= l, R = qrels docs with grade >= l, c_i = sum_{j<=i} rel_j. A relevant doc at
position i has i - c_i non-relevant docs above it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from sparkeval.measures.batch import RankedBatch, safe_divide
from sparkeval.measures.registry import Param, measure

RECTOOLS = "RecTools rectools.metrics.auc"
#: RecTools' insufficient_handling values offered per query
INSUFFICIENT = ("ignore", "exclude")
_INSUFFICIENT_PARAM = Param(
    str,
    "ignore",
    choices=INSUFFICIENT,
    help=(
        "ignore: score every query as given; exclude: a query whose ranking misses a "
        "relevant doc and holds fewer than k non-relevant docs is undefined (left out "
        "of the mean), as RecTools' insufficient_handling"
    ),
    refused=(
        (
            "raise",
            "is not offered: a per-query value cannot stop the evaluation; use "
            "insufficient_handling=exclude and read the undefined count",
        ),
    ),
)
_INSUFFICIENT_TEXT = (
    "insufficient_handling=exclude: the ranking misses one of the R relevant docs and "
    "holds fewer than k non-relevant docs"
)


def negatives_above(b: RankedBatch, level: int) -> np.ndarray:
    """Non-relevant docs (or empty positions) ranked above each doc: i - c_i for a
    relevant doc at position i, i - 1 - c_{i-1} in general."""
    relevant = b.relevant(level)
    return b.positions - b.cum_relevant(level) - (~relevant).astype(np.float64)


def auc_gain_sum(b: RankedBatch, level: int, k: int, first: int | None) -> np.ndarray:
    """sum over relevant docs (only the first ``first`` of them when given) of
    max(0, k - the non-relevant docs above it): the pairs of such a relevant doc and
    one of the top k non-relevant docs that it outranks."""
    relevant = b.relevant(level)
    if first is not None:
        relevant = relevant & (b.cum_relevant(level) <= first)
    gain = np.maximum(k - negatives_above(b, level), 0.0)
    return b.segment_sum(np.where(relevant, gain, 0.0))


def insufficient(b: RankedBatch, level: int, k: int) -> np.ndarray:
    """Per segment: the ranking misses a relevant doc (fewer than R retrieved) and
    holds fewer than k non-relevant docs, so the unseen relevant docs cannot be placed
    against k non-relevant ones (RecTools' insufficient recommendations)."""
    retrieved = b.num_rel_ret(level)
    negatives = b.lengths - retrieved
    return (retrieved < b.num_rel(level)) & (negatives < k)


def _handle_insufficient(
    b: RankedBatch, values: np.ndarray, level: int, k: int, handling: str
) -> np.ndarray:
    if handling == "exclude":
        return np.where(insufficient(b, level, k), np.nan, values)
    return values


def _cutoff(k: int | None) -> int:
    if k is None:  # the families require a cutoff; the parser refuses a name without one
        raise ValueError("a cutoff is required")
    return k


@measure(
    "PartialAUC",
    description=(
        "partial ROC AUC at k (pAUC@k): the share of pairs (relevant doc, one of the k "
        "highest-ranked non-relevant docs) in which the relevant doc ranks higher, "
        "sum_{rel_i=1} max(0, k - (i - c_i)) / (k * R) with c_i the relevant docs at "
        "positions <= i (an empty position is non-relevant); a relevant doc not retrieved "
        "ranks below every non-relevant doc, and a ranking with fewer than k non-relevant "
        "docs is followed by as many as needed; k counts non-relevant docs, not positions "
        "(the whole ranking is read); 0 when R = 0"
    ),
    cutoff="required",
    params={"insufficient_handling": _INSUFFICIENT_PARAM},
    references=RECTOOLS + ".PartialAUC (k, insufficient_handling)",
    undefined=_INSUFFICIENT_TEXT,
    reads_past_cutoff=True,
)
def partial_auc(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    k, level = _cutoff(k), p["rel"]
    values = safe_divide(auc_gain_sum(b, level, k, None), k * b.num_rel(level))
    return _handle_insufficient(b, values, level, k, p["insufficient_handling"])


@measure(
    "PAP",
    description=(
        "partial AUC + precision at k (pAp@k): PartialAUC@k over the first beta = min(R, k) "
        "relevant docs retrieved, sum_{rel_i=1, c_i<=k} max(0, k - (i - c_i)) / (k * beta); "
        "it behaves like P@k when R > k and like PartialAUC@k when R <= k; "
        "the whole ranking is read; 0 when R = 0"
    ),
    cutoff="required",
    params={"insufficient_handling": _INSUFFICIENT_PARAM},
    references=(
        RECTOOLS + ".PAP (k, insufficient_handling); Hiranandani et al., ICML 2020 (pAp@k)"
    ),
    undefined=_INSUFFICIENT_TEXT,
    reads_past_cutoff=True,
)
def partial_auc_precision(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    k, level = _cutoff(k), p["rel"]
    beta = np.minimum(b.num_rel(level), k)
    values = safe_divide(auc_gain_sum(b, level, k, k), k * beta)
    return _handle_insufficient(b, values, level, k, p["insufficient_handling"])


#: torchmetrics' empty_target_action values offered per query, and the value each gives
EMPTY_TARGET = {"neg": 0.0, "pos": 1.0, "skip": np.nan}


def best_recall_count(
    b: RankedBatch, level: int, k: int | None, min_precision: float
) -> np.ndarray:
    """Per segment, the largest c_i over i <= k with c_i / i >= min_precision (0 if none).

    Recall never falls as i grows, so this is the recall numerator of the deepest such
    i; positions past the ranking add nothing (c_i stays, precision falls).
    """
    cum = b.cum_relevant(level)
    ok = b.within(k) & (cum / b.positions >= min_precision)
    out = np.zeros(b.n_segments, dtype=np.float64)
    np.maximum.at(out, b.seg[ok], cum[ok])
    return out


@measure(
    "RecallAtFixedPrecision",
    description=(
        "the largest recall reached at a precision of at least min_precision: "
        "max { c_i / R : i <= k, c_i / i >= min_precision } with c_i the relevant docs "
        "among the first i (i over the whole ranking "
        "without @k), 0 when no i qualifies; a query with R = 0 scores 0 "
        "(empty_target_action=neg), 1 (pos) or is undefined (skip)"
    ),
    cutoff="optional",
    params={
        "min_precision": Param(
            float,
            0.0,
            help="the precision c_i / i a prefix must reach (0..1)",
            minimum=0.0,
            maximum=1.0,
        ),
        "empty_target_action": Param(
            str,
            "neg",
            choices=tuple(EMPTY_TARGET),
            help="a query with R = 0: neg scores 0, pos scores 1, skip leaves it undefined",
            refused=(
                (
                    "error",
                    "is not offered: a per-query value cannot stop the evaluation; use "
                    "empty_target_action=skip and read the undefined count",
                ),
            ),
        ),
    },
    references=(
        "torchmetrics RetrievalRecallAtFixedPrecision (min_precision, max_k, "
        "empty_target_action), taken per query: torchmetrics takes it on the query-averaged "
        "precision-recall curve, so its name is not accepted for this per-query mean"
    ),
    undefined="empty_target_action=skip: R = 0",
)
def recall_at_fixed_precision(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    level = p["rel"]
    r = b.num_rel(level)
    values = safe_divide(best_recall_count(b, level, k, p["min_precision"]), r)
    return np.where(r > 0, values, EMPTY_TARGET[p["empty_target_action"]])


@measure(
    "RocAuc",
    description=(
        "RePlay's ROC AUC of the top k: with h hits and m = min(k, n) - h misses among "
        "the first min(k, n) docs and F = sum over those hits of the misses above each, "
        "1 - F / (h * m); 1 when no miss precedes a hit (every hit first, or no miss), "
        "0 when the top k holds no hit (an empty ranking, or no relevant doc)"
    ),
    cutoff="required",
    references="RePlay replay.metrics.RocAuc (k)",
)
def roc_auc_at_k(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    """Example: hit, miss, hit at k = 3: h = 2, m = 1, F = 0 + 1, so 1 - 1 / 2 = 0.5."""
    level = p["rel"]
    in_top = b.within(_cutoff(k))
    hit = b.relevant(level) & in_top
    misses = b.segment_sum((~hit & in_top).astype(np.float64))
    hits = b.segment_sum(hit.astype(np.float64))
    above = np.where(hit, b.positions - b.cum_relevant(level), 0.0)  # misses above a hit
    ordered_wrongly = b.segment_sum(above.astype(np.float64))
    values = 1.0 - safe_divide(ordered_wrongly, hits * misses)
    values[ordered_wrongly == 0] = 1.0
    values[hits == 0] = 0.0
    return values
