"""Per-query measures of a top-k list read as a classification of the catalog: RecTools'
``Accuracy`` and ``MCC``.

The first k positions are the items recommended, the catalog's other items those not
recommended. With N the catalog's size (the ``catalog`` parameter), R the qrels docs
with grade >= l and TP the relevant docs among the first k positions:

* FP = k - TP: k counts positions, whatever the list's length (RecTools' ``k - tp``);
* FN = R - TP;
* TN = N - k - FN.

A catalog smaller than k + FN leaves TN negative. RecTools computes a value from it
anyway; here the query's value is undefined (left out of the mean and counted).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from sparkeval.measures.batch import RankedBatch
from sparkeval.measures.ranking import hits_at
from sparkeval.measures.registry import Param, measure

RECTOOLS = "RecTools rectools.metrics.classification"
CATALOG = Param(
    int,
    None,
    required=True,
    minimum=1,
    help="N, the number of items that could be recommended (RecTools' len(catalog))",
)
_UNDEFINED = "the catalog holds fewer than k + FN items (TN would be negative)"


def confusion(
    b: RankedBatch, k: int | None, p: Mapping[str, Any]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """(TP, FP, FN, TN, N) per segment (see the module text); TN is NaN where negative."""
    if k is None:  # the families require a cutoff; the parser refuses a name without one
        raise ValueError("a cutoff is required")
    n = p["catalog"]
    tp = hits_at(b, p["rel"], k)
    fn = b.num_rel(p["rel"]) - tp
    tn = n - k - fn
    return tp, k - tp, fn, np.where(tn < 0, np.nan, tn), n


@measure(
    "Accuracy",
    description=(
        "accuracy of the top k as a classification of the catalog's N items: "
        "(TP + TN) / N with TP = relevant docs among the first k positions, "
        "FN = R - TP, TN = N - k - FN"
    ),
    cutoff="required",
    params={"catalog": CATALOG},
    references=RECTOOLS + ".Accuracy (k; catalog given by its size)",
    undefined=_UNDEFINED,
)
def accuracy(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    tp, _, _, tn, n = confusion(b, k, p)
    return (tp + tn) / n


@measure(
    "MCC",
    description=(
        "Matthews correlation coefficient of the top k as a classification of the "
        "catalog's N items: (TP*TN - FP*FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)) with "
        "FP = k - TP, FN = R - TP, TN = N - k - FN; 0 when a factor is 0"
    ),
    cutoff="required",
    params={"catalog": CATALOG},
    references=RECTOOLS + ".MCC (k; catalog given by its size)",
    undefined=_UNDEFINED,
)
def matthews(b: RankedBatch, k: int | None, p: Mapping[str, Any]) -> np.ndarray:
    tp, fp, fn, tn, _ = confusion(b, k, p)
    numerator = tp * tn - fp * fn
    with np.errstate(invalid="ignore"):
        denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        value = np.divide(
            numerator, denominator, out=np.zeros_like(numerator), where=denominator > 0
        )
    return np.where(np.isnan(tn), np.nan, value)
