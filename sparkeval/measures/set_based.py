"""Unranked (set) measures over all retrieved docs, the utility measure and F@k.

Notation (one segment): n retrieved docs, h of them relevant (grade >= l),
R relevant docs in the qrels.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from sparkeval.measures.batch import RankedBatch, safe_divide
from sparkeval.measures.ranking import TREC, hits_at
from sparkeval.measures.registry import Param, TrecParams, measure

BETA_PARAM = Param(
    float,
    1.0,
    minimum=0.0,
    help="weight of recall: F = (1+beta^2) P R / (beta^2 P + R); beta = 1 is F1",
)


def f_measure(precision: np.ndarray, recall: np.ndarray, beta: float) -> np.ndarray:
    """(1 + beta^2) P R / (beta^2 P + R), 0 where P + R = 0.

    The harmonic form 1 / (lam / P + (1 - lam) / R) is the same measure with
    lam = 1 / (1 + beta^2) (lam = 0.5 for beta = 1).
    """
    b2 = beta * beta
    return safe_divide((1.0 + b2) * precision * recall, b2 * precision + recall)


def _counts(b: RankedBatch, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return b.lengths.astype(np.float64), b.num_rel_ret(level), b.num_rel(level)


@measure(
    "SetP",
    description="set precision: h / n; 0 when nothing is retrieved",
    trec="set_P",
    references=TREC,
)
def set_p(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    n, h, _ = _counts(b, p["rel"])
    return safe_divide(h, n)


@measure(
    "SetR",
    description="set recall: h / R; 0 when R = 0",
    trec="set_recall",
    references=TREC,
)
def set_r(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    _, h, r = _counts(b, p["rel"])
    return safe_divide(h, r)


@measure(
    "SetF",
    description="set F: (1+beta^2) P R / (beta^2 P + R) with P = h/n, R = h/R; 0 when h = 0",
    params={"beta": BETA_PARAM},
    trec="set_F",
    references=TREC + "; van Rijsbergen, Information Retrieval, 1979",
)
def set_f(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    n, h, r = _counts(b, p["rel"])
    return f_measure(safe_divide(h, n), safe_divide(h, r), p["beta"])


@measure(
    "SetAP",
    description="set (unranked) AP: h^2 / (n R); 0 when n = 0 or R = 0",
    trec="set_map",
    references=TREC,
)
def set_ap(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    n, h, r = _counts(b, p["rel"])
    return safe_divide(h * h, n * r)


@measure(
    "SetRelP",
    description="relative set precision: h / min(n, R); 0 when n = 0 or R = 0",
    trec="set_relative_P",
    references=TREC,
)
def set_rel_p(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    n, h, r = _counts(b, p["rel"])
    return safe_divide(h, np.minimum(n, r))


@measure(
    "Utility",
    description=(
        "linear utility a*h + b*(n - h) + c*(R - h) + d*(-n - R + h) with weights a;b;c;d "
        "(trec_eval, collection size 0); 0 for a query with no retrieved docs"
    ),
    params={
        "weights": Param(
            tuple,
            (1.0, -1.0, 0.0, 0.0),
            help="four weights a;b;c;d (relevant retrieved, non-relevant "
            "retrieved, relevant missed, non-relevant missed)",
        )
    },
    trec="utility",
    trec_params=(TrecParams("utility", "list", "weights"),),
    references=TREC,
)
def utility(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    weights = p["weights"]
    if len(weights) != 4:
        raise ValueError(f"measure Utility: weights needs 4 numbers, got {len(weights)}")
    wa, wb, wc, wd = weights
    n, h, r = _counts(b, p["rel"])
    value = wa * h + wb * (n - h) + wc * (r - h) + wd * (h - n - r)
    return np.where(n > 0, value, 0.0)


@measure(
    "F",
    description=(
        "F at k: (1+beta^2) P@k R@k / (beta^2 P@k + R@k); 0 when nothing relevant is in "
        "the first k (the seed's 1/(lam/P + (1-lam)/R) with lam = 1/(1+beta^2))"
    ),
    cutoff="required",
    params={"beta": BETA_PARAM},
    references="van Rijsbergen, Information Retrieval, 1979",
)
def f_at_k(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    level = p["rel"]
    hits = hits_at(b, level, k)
    return f_measure(hits / float(k or 1), safe_divide(hits, b.num_rel(level)), p["beta"])
