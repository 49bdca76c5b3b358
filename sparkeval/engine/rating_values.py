"""The values and report of ``rating-errors`` from exact sums: one definition for Spark
(:mod:`sparkeval.engine.plans.rating_engine`) and this process
(:mod:`sparkeval.engine.local_ratings`).

Both engines reduce the matched pairs (true rating t, prediction q, residual
e = t - q) to the same exact, correctly rounded sums
(:mod:`sparkeval.engine.worker.exact_summary`), named:

* ``n`` pairs, ``max_e`` = max |e|; ``t`` = sum t, ``e`` = sum e, ``e2`` = sum e·e,
  ``a`` = sum |e|, ``lp:P`` = sum |e|^P, ``top:L`` = the L largest |e| (``math.fsum``);
* with R2 or ExpVar, ``ct`` = sum (t - mean t)·(t - mean t) and ``ce`` likewise for e.

Example:
    >>> from sparkeval.measures.rating_names import parse_rating_measures
    >>> [rmse] = parse_rating_measures("RMSE")
    >>> pooled_value(rmse, {"n": 2.0, "e2": 8.0})
    2.0
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from sparkeval.errors import InputError
from sparkeval.measures.rating_names import RatingRequest


def lp_powers(requests: Sequence[RatingRequest]) -> list[float]:
    """The finite powers p of the ``Lp`` requests, sorted, each once."""
    return sorted(
        {
            float(r.parameter or 2.0)
            for r in requests
            if r.kind == "Lp" and math.isfinite(float(r.parameter or 2.0))
        }
    )


def top_sizes(requests: Sequence[RatingRequest]) -> list[int]:
    """The L of each ``TopL_AE`` request."""
    return [int(r.parameter or 1) for r in requests if r.kind == "TopL_AE"]


def needs_centred_sums(requests: Sequence[RatingRequest]) -> bool:
    """Whether R2 or ExpVar is asked for (they need the centred sums ``ct``, ``ce``)."""
    return any(r.kind in ("R2", "ExpVar") for r in requests)


def pooled_value(r: RatingRequest, s: Mapping[str, float]) -> float:
    """The pooled value of request ``r`` from the sums ``s`` (see the module text)."""
    n = s["n"]
    if r.kind == "RMSE":
        return math.sqrt(s["e2"] / n)
    if r.kind == "MAE":
        return s["a"] / n
    if r.kind == "MaxAE":
        return s["max_e"]
    if r.kind == "TopL_AE":
        return s[f"top:{int(r.parameter or 1)}"]
    if r.kind == "Lp":
        p = float(r.parameter or 2.0)
        return s["max_e"] if math.isinf(p) else s[f"lp:{p}"] ** (1.0 / p)
    if r.kind in ("R2", "ExpVar"):
        if s["ct"] <= 0:
            return float("nan")
        return 1.0 - (s["e2"] if r.kind == "R2" else s["ce"]) / s["ct"]
    raise ValueError(f"rating measure {r.name}: no pooled form for kind {r.kind!r}")


def rating_report(
    requests: Sequence[RatingRequest],
    sums: Mapping[str, float],
    means: Sequence[float],
    undefined: Sequence[int],
    users: int,
    pairs: Mapping[str, int],
    missing: str,
) -> dict[str, Any]:
    """The ``summary.json`` content of an evaluation (before its inputs and timings).

    Args:
        requests: the parsed requests, in output order.
        sums: the pooled sums (module text).
        means: per request, the mean over users of the defined per-user values.
        undefined: per request, the users whose value is undefined.
        users: the users evaluated.
        pairs: ``matched``, ``pred_only`` and ``truth_only`` pair counts.
        missing: the missing-pair policy.

    Raises:
        InputError: a value overflows double precision.
    """
    values: dict[str, float] = {}
    undefined_users: dict[str, int] = {}
    for i, r in enumerate(requests):
        values[r.name] = pooled_value(r, sums)
        values[r.per_user_name] = means[i]
        for name in (r.name, r.per_user_name):
            if math.isinf(values[name]):
                raise InputError(
                    f"{name}: the errors reach {sums['max_e']:g}, too large for this measure "
                    "in double precision (its sums overflow); rescale the values"
                )
        undefined_users[r.per_user_name] = undefined[i]
    return {
        "measures": values,
        "undefined_users": undefined_users,
        "pairs": {
            "matched": pairs["matched"],
            "predictions_only": pairs["pred_only"],
            "truth_only": pairs["truth_only"],
            "skipped": pairs["pred_only"] + pairs["truth_only"],
        },
        "users": {"evaluated": users},
        "parameters": {"measures": [r.name for r in requests], "missing": missing},
    }
