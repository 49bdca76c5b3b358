"""Rating errors of local files in this process, without Spark: ``rating-errors``' local
engine (``--engine local``, and ``auto`` on small local inputs).

The rows are read as Spark's rating readers read them
(:mod:`sparkeval.io.direct_ratings`), the pairs are joined on (user, item), and the
values come from the same exact, correctly rounded sums
(:func:`~sparkeval.engine.worker.exact_summary.exact_total`), the same per-user kernels
on each user's pairs in (user, item) order, and the same report
(:mod:`sparkeval.engine.rating_values`) as on Spark
(:mod:`sparkeval.engine.plans.rating_engine`), so every value is the same to the bit.

What needs Spark's judgement ends the local evaluation
(:class:`~sparkeval.io.direct_input.NotDirect`): a pair given twice, a pair on one side
only under ``missing="error"``, no pair on both sides, an input without rows, and
``Lp(p=…)`` with a finite p (Spark raises with Java's ``pow``, whose last bit may differ
from C's); the command then runs on Spark, which reports the error or computes the value.

Example::

    pred = read_rating_rows("preds.csv", "predictions", "csv", {})
    truth = read_rating_rows("truth.csv", "truth", "csv", {})
    evaluation = rating_errors_locally(pred, truth, parse_rating_measures("RMSE,MAE"), "error")
    evaluation.report["measures"]["RMSE"]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from sparkeval.engine.rating_values import (
    lp_powers,
    needs_centred_sums,
    rating_report,
    top_sizes,
)
from sparkeval.engine.worker.exact_summary import exact_total
from sparkeval.io.direct_input import NotDirect
from sparkeval.io.direct_ratings import RatingRows
from sparkeval.measures.rating import UserGroups
from sparkeval.measures.rating_names import RatingRequest

#: the columns of ``per_user.parquet``
PER_USER_SCHEMA = pa.schema(
    [("user_id", pa.string()), ("measure", pa.string()), ("value", pa.float64())]
)


@dataclass
class LocalRatingEvaluation:
    """A rating evaluation made in this process.

    Attributes:
        report: the ``summary.json`` content, as :func:`rating_report` makes it.
        per_user: ``user_id, measure, value`` sorted by user, then the requests' order
            (what ``per_user.parquet`` holds; null where undefined).
    """

    report: dict[str, Any]
    per_user: pa.Table

    def unpersist(self) -> None:
        """Nothing to release (the Spark result's method, for the same callers)."""


def lp_needs_spark(requests: Sequence[RatingRequest]) -> str | None:
    """Why the requests need Spark (an ``Lp`` with a finite p), or None."""
    powers = lp_powers(requests)
    if not powers:
        return None
    return f"Lp(p={powers[0]:g}) raises the errors to a power as Spark does (Java's pow)"


def rating_errors_locally(
    pred: RatingRows, truth: RatingRows, requests: Sequence[RatingRequest], missing: str
) -> LocalRatingEvaluation:
    """The rating errors of ``pred`` against ``truth`` (see the module text).

    Raises:
        NotDirect: what Spark's run must judge or compute (module text).
        InputError: a value overflows double precision (as on Spark).
    """
    reason = lp_needs_spark(requests)
    if reason is not None:
        raise NotDirect(reason)
    joined = _joined(pred, truth)
    matched = joined["_merge"] == "both"
    counts = {
        "matched": int(matched.sum()),
        "pred_only": int((joined["_merge"] == "left_only").sum()),
        "truth_only": int((joined["_merge"] == "right_only").sum()),
    }
    if missing == "error" and (counts["pred_only"] or counts["truth_only"]):
        raise NotDirect("a pair on one side only")
    if not counts["matched"]:
        raise NotDirect("no pair on both sides")
    pairs = joined[matched].sort_values(["user_id", "item_id"], kind="stable")
    users = pairs["user_id"].to_numpy(dtype=object)
    t = pairs["t"].to_numpy(dtype=np.float64)
    q = pairs["q"].to_numpy(dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        sums = _pooled_sums(t, t - q, requests)
        per_user, unique = _per_user_values(users, t, q, requests)
    totals = [exact_total(values) for values in per_user]
    report = rating_report(
        requests,
        sums,
        [total.mean for total in totals],
        [len(unique) - total.count for total in totals],
        len(unique),
        counts,
        missing,
    )
    return LocalRatingEvaluation(report, _per_user_table(unique, per_user, requests))


def _joined(pred: RatingRows, truth: RatingRows) -> pd.DataFrame:
    """The full outer join of the two tables on (user, item), ``_merge`` telling the side."""
    frames = []
    for rows, value in ((pred, "q"), (truth, "t")):
        frame = pd.DataFrame(
            {
                "user_id": rows.user.to_numpy(zero_copy_only=False),
                "item_id": rows.item.to_numpy(zero_copy_only=False),
                value: rows.value,
            }
        )
        if frame.duplicated(["user_id", "item_id"]).any():
            raise NotDirect("a (user, item) pair given twice")
        frames.append(frame)
    return frames[0].merge(frames[1], on=["user_id", "item_id"], how="outer", indicator=True)


def _pooled_sums(
    t: np.ndarray, e: np.ndarray, requests: Sequence[RatingRequest]
) -> dict[str, float]:
    """The pooled sums of :mod:`sparkeval.engine.rating_values`, exact."""
    n = len(e)
    magnitude = np.abs(e)
    sums: dict[str, float] = {"n": float(n), "max_e": float(magnitude.max())}
    for name, terms in (("t", t), ("e", e), ("e2", e * e), ("a", magnitude)):
        sums[name] = exact_total(terms).total
    if needs_centred_sums(requests):
        centred_t, centred_e = t - sums["t"] / n, e - sums["e"] / n
        sums["ct"] = exact_total(centred_t * centred_t).total
        sums["ce"] = exact_total(centred_e * centred_e).total
    sizes = top_sizes(requests)
    if sizes:
        largest = np.sort(magnitude)[::-1][: max(sizes)].tolist()
        for size in sizes:
            sums[f"top:{size}"] = math.fsum(largest[:size])
    return sums


def _per_user_values(
    users: np.ndarray, t: np.ndarray, q: np.ndarray, requests: Sequence[RatingRequest]
) -> tuple[list[np.ndarray], np.ndarray]:
    """Per request, each user's value (NaN where undefined), and the users in order."""
    groups = UserGroups.of(users, t, q)
    return [r.per_user_error.of_groups(groups, r.value) for r in requests], groups.users


def _per_user_table(
    unique: np.ndarray, per_user: Sequence[np.ndarray], requests: Sequence[RatingRequest]
) -> pa.Table:
    """``user_id, measure, value`` rows: each user's requests in order, users sorted."""
    n_users, n_requests = len(unique), len(requests)
    values = np.stack(per_user, axis=1).reshape(-1) if n_requests else np.empty(0)
    names = np.array([r.name for r in requests], dtype=object)
    return pa.table(
        {
            "user_id": pa.array(np.repeat(unique, n_requests), pa.string()),
            "measure": pa.array(np.tile(names, n_users), pa.string()),
            "value": pa.array(values, pa.float64(), mask=np.isnan(values)),
        },
        schema=PER_USER_SCHEMA,
    )
