"""Unranked (set) measures over all retrieved docs, the utility measure and F@k.

Notation (one segment): n retrieved docs, h of them relevant (grade >= l),
R relevant docs in the qrels.

Two F measures weigh recall differently, each as its peers spell it:

* ``SetF(beta=x)`` is trec_eval's ``set_F.x`` and ir_measures' ``SetF(beta=x)``:
  (1 + x) P R / (x P + R), with x un-squared (trec_eval's ``m_set_F.c``);
* ``F(beta=b)@k`` is van Rijsbergen's classic F_b at k: (1 + b^2) P R / (b^2 P + R).

Both are F1 at 1; elsewhere ``SetF(beta=x)`` over the whole list equals the classic
F with b = sqrt(x).
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
    help="weight of recall, squared (the classic F_beta): F = (1+beta^2) P R / (beta^2 P + R); "
    "beta = 1 is F1; SetF's beta is trec_eval's, not squared",
)
SET_F_BETA_PARAM = Param(
    float,
    1.0,
    minimum=0.0,
    help="trec_eval's weight of recall, not squared: (1+beta) P R / (beta P + R); beta = 1 "
    "is F1; the classic F_b is beta = b^2",
)


def f_measure(precision: np.ndarray, recall: np.ndarray, beta: float) -> np.ndarray:
    """The classic F_beta: (1 + beta^2) P R / (beta^2 P + R), 0 where P + R = 0.

    The harmonic form 1 / (lam / P + (1 - lam) / R) is the same measure with
    lam = 1 / (1 + beta^2) (lam = 0.5 for beta = 1).

    Example:
        >>> f_measure(np.array([0.5]), np.array([0.25]), 2.0).tolist()  # (5/8) / (9/4)
        [0.2777777777777778]
    """
    return set_f_measure(precision, recall, beta * beta)


def set_f_measure(precision: np.ndarray, recall: np.ndarray, x: float) -> np.ndarray:
    """trec_eval's set_F with parameter x: (1 + x) P R / (x P + R), 0 where P + R = 0.

    x weighs recall as it is, not squared: x = 1 is F1, and x = b^2 is the classic F_b.

    Example:
        >>> set_f_measure(np.array([0.5]), np.array([0.25]), 2.0).tolist()  # (3/8) / (5/4)
        [0.3]
    """
    return safe_divide((1.0 + x) * precision * recall, x * precision + recall)


def _counts(b: RankedBatch, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return b.lengths.astype(np.float64), b.num_rel_ret(level), b.num_rel(level)


@measure(
    "SetP",
    judged_only=True,
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
    judged_only=True,
    description=(
        "set F as trec_eval's set_F and ir_measures' SetF define it: (1+beta) P R / "
        "(beta P + R) with P = h/n, R = h/R and beta not squared (SetF(beta=4) is the "
        "classic F_2); 0 when h = 0"
    ),
    params={"beta": SET_F_BETA_PARAM},
    trec="set_F",
    trec_params=(TrecParams("set_F", "one", "beta"),),
    references=TREC + " m_set_F.c; van Rijsbergen, Information Retrieval, 1979",
)
def set_f(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    n, h, r = _counts(b, p["rel"])
    return set_f_measure(safe_divide(h, n), safe_divide(h, r), p["beta"])


@measure(
    "SetAP",
    judged_only=True,
    description="set (unranked) AP: h^2 / (n R); 0 when n = 0 or R = 0",
    trec="set_map",
    references=TREC,
)
def set_ap(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    n, h, r = _counts(b, p["rel"])
    return safe_divide(h * h, n * r)


@measure(
    "SetRelP",
    judged_only=True,
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
        "F at k, the classic F_beta with beta squared: (1+beta^2) P@k R@k / (beta^2 P@k + "
        "R@k) (unlike SetF's trec_eval beta); 0 when nothing relevant is in the first k "
        "(1/(lam/P + (1-lam)/R) with lam = 1/(1+beta^2)); F1@k is F@k"
    ),
    cutoff="required",
    params={"beta": BETA_PARAM},
    references="van Rijsbergen, Information Retrieval, 1979",
)
def f_at_k(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    level = p["rel"]
    hits = hits_at(b, level, k)
    return f_measure(hits / float(k or 1), safe_divide(hits, b.num_rel(level)), p["beta"])
