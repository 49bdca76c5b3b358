"""Rating-prediction errors on Spark: predictions ``(user, item, prediction)`` against
truth ``(user, item, rating)``.

Plan::

    predictions --group by (user, item)--+
                                          full outer join -> counts, checks (one pass)
    truth       --group by (user, item)--+        |
                                   matched pairs (t, q, e = t - q), cached
                                     |                          |
        pooled: exact sums of e^2, |e|, |e|^p,           per user: hash buckets of users,
        (t - mean t)^2, (e - mean e)^2; max |e|;         one pandas UDF per bucket computes
        the L largest |e|                                 every requested error for all its
                                                          users at once (numpy, no loop)
                                                                |
                                                mean over users (exact sums)

Every sum is exact and rounded once (:mod:`sparkeval.engine.plans.exact`), so the values
do not depend on partitioning or row order, and equal those of the local engine
(:mod:`sparkeval.engine.local_ratings`) to the bit; the values from the sums are
:mod:`sparkeval.engine.rating_values`.  A pair present on one side only is
an error (``missing="error"``) or is left out and counted (``missing="skip"``,
the inner join that Microsoft Recommenders' rating evaluation uses); the counts
are always reported.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sparkeval.engine.plans.exact import exact_totals
from sparkeval.engine.plans.spark_engine import capped_buckets, plan_bytes
from sparkeval.engine.rating_values import (
    lp_powers,
    needs_centred_sums,
    rating_report,
    top_sizes,
)
from sparkeval.errors import InputError
from sparkeval.formats import BAD
from sparkeval.io.ratings import canonical_ratings
from sparkeval.measures.rating import UserGroups
from sparkeval.measures.rating_names import RatingRequest, parse_rating_measures
from sparkeval.spark import spark_type

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

MISSING_POLICIES = ("error", "skip")
_CANONICAL = {"user_id", "item_id", "value", BAD}
_PER_USER_SCHEMA = "user_id string, _order int, value double"


@dataclass
class RatingEvaluation:
    """The result of :func:`rating_errors`.

    Attributes:
        per_user: ``user_id, measure, value`` (the error of each user's pairs;
            null where undefined).
        ordered_per_user: the same rows sorted by user, then the requests' order (what
            ``per_user.parquet`` holds).
        report: the ``summary.json`` content: pooled and per-user-mean values, counts.
        requests: the parsed requests, in output order.
    """

    _with_order: Any = field(repr=False)
    report: dict[str, Any]
    requests: list[RatingRequest]
    _cached: list[Any] = field(default_factory=list, repr=False)

    @property
    def per_user(self) -> Any:
        return self._with_order.drop("_order")

    @property
    def ordered_per_user(self) -> Any:
        return self._with_order.orderBy("user_id", "_order").drop("_order")

    def unpersist(self) -> None:
        """Release cached intermediate results."""
        for df in self._cached:
            df.unpersist()


def _canonical(df: DataFrame, kind: str, columns: Mapping[str, str] | None):
    if set(df.columns) >= _CANONICAL:
        return df.select(*sorted(_CANONICAL))
    return canonical_ratings(df, kind, columns)


def _by_pair(df: DataFrame, value: str, count: str, bad: str):
    from pyspark.sql import functions as F

    return df.groupBy("user_id", "item_id").agg(
        F.first("value").alias(value),
        F.count(F.lit(1)).alias(count),
        F.min(BAD).alias(bad),
    )


def _example(condition):
    """Aggregate: the smallest (user_id, item_id) for which ``condition`` holds."""
    from pyspark.sql import functions as F

    return F.min(F.when(condition, F.struct("user_id", "item_id")))


def _pair_text(row) -> str:
    return f"user {row['user_id']} item {row['item_id']}"


def _check_pairs(stats, missing: str) -> None:
    if stats["bad"] is not None:
        raise InputError(stats["bad"])
    for side, key in (("predictions", "dup_pred"), ("truth", "dup_truth")):
        if stats[key]:
            raise InputError(
                f"{side}: duplicate pair {_pair_text(stats[key + '_example'])} "
                f"({stats[key]} pair(s) appear more than once; each (user, item) may appear once)"
            )
    pred_only, truth_only = int(stats["pred_only"]), int(stats["truth_only"])
    if missing == "error" and (pred_only or truth_only):
        parts = []
        if pred_only:
            parts.append(
                f"{pred_only} prediction(s) have no true rating "
                f"(e.g. {_pair_text(stats['pred_only_example'])})"
            )
        if truth_only:
            parts.append(
                f"{truth_only} true rating(s) have no prediction "
                f"(e.g. {_pair_text(stats['truth_only_example'])})"
            )
        raise InputError(
            "; ".join(parts) + "; use missing 'skip' (--missing skip) to "
            "evaluate only the pairs present on both sides"
        )
    if not stats["matched"]:
        raise InputError("no (user, item) pair is present in both the predictions and the truth")


def _pair_stats(joined) -> dict[str, Any]:
    from pyspark.sql import functions as F

    both = F.col("n_pred").isNotNull() & F.col("n_truth").isNotNull()
    err = F.col("t") - F.col("q")
    row = joined.agg(
        F.min(F.coalesce("bad_pred", "bad_truth")).alias("bad"),
        F.sum((F.col("n_pred") > 1).cast(spark_type("long"))).alias("dup_pred"),
        _example(F.col("n_pred") > 1).alias("dup_pred_example"),
        F.sum((F.col("n_truth") > 1).cast(spark_type("long"))).alias("dup_truth"),
        _example(F.col("n_truth") > 1).alias("dup_truth_example"),
        F.sum(F.col("n_truth").isNull().cast(spark_type("long"))).alias("pred_only"),
        _example(F.col("n_truth").isNull()).alias("pred_only_example"),
        F.sum(F.col("n_pred").isNull().cast(spark_type("long"))).alias("truth_only"),
        _example(F.col("n_pred").isNull()).alias("truth_only_example"),
        F.sum(both.cast(spark_type("long"))).alias("matched"),
        F.max(F.when(both, F.abs(err))).alias("max_e"),
    ).first()
    out = row.asDict()
    for key in ("dup_pred", "dup_truth", "pred_only", "truth_only", "matched"):
        out[key] = int(out[key] or 0)
    return out


def _pooled(pairs, requests: Sequence[RatingRequest], n: int, max_e: float) -> dict[str, float]:
    """The pooled sums of every request (:mod:`sparkeval.engine.rating_values`), exact
    over the matched pairs."""
    from pyspark.sql import functions as F

    e, t = F.col("e"), F.col("t")
    powers = lp_powers(requests)
    terms = {
        "t": t,
        "e": e,
        "e2": e * e,
        "a": F.abs(e),
        **{f"p{i}": F.pow(F.abs(e), F.lit(p)) for i, p in enumerate(powers)},
    }
    sums = _exact_sums(pairs, terms)
    out: dict[str, float] = {"n": float(n), "max_e": max_e}
    out.update(sums)
    out.update({f"lp:{p}": sums[f"p{i}"] for i, p in enumerate(powers)})
    if needs_centred_sums(requests):
        mean_t, mean_e = sums["t"] / n, sums["e"] / n
        centred_t, centred_e = t - F.lit(mean_t), e - F.lit(mean_e)
        out.update(_exact_sums(pairs, {"ct": centred_t * centred_t, "ce": centred_e * centred_e}))
    sizes = top_sizes(requests)
    if sizes:
        top = pairs.select(F.abs(e).alias("a")).orderBy(F.desc("a")).limit(max(sizes)).collect()
        largest = [float(row["a"]) for row in top]
        for size in sizes:
            out[f"top:{size}"] = math.fsum(largest[:size])
    return out


def _exact_sums(df: DataFrame, terms: Mapping[str, Any]) -> dict[str, float]:
    """The exact, correctly rounded sum of each term over ``df`` (one job)."""
    totals = exact_totals(df.select(*(col.alias(k) for k, col in terms.items())), list(terms))
    found = totals.get(())
    return {k: found[k].total if found else 0.0 for k in terms}


def _per_user(pairs, requests: Sequence[RatingRequest], buckets: int):
    """``user_id, _order, value`` for every user and request (NaN where undefined)."""
    from pyspark.sql import functions as F

    def compute(pdf: pd.DataFrame) -> pd.DataFrame:
        if len(pdf) == 0:
            return pd.DataFrame(
                {
                    "user_id": pd.Series(dtype=object),
                    "_order": pd.Series(dtype=np.int32),
                    "value": pd.Series(dtype=np.float64),
                }
            )
        pdf = pdf.sort_values(["user_id", "item_id"], kind="stable")
        users = pdf["user_id"].to_numpy(dtype=object)
        truth = pdf["t"].to_numpy(dtype=np.float64)
        pred = pdf["q"].to_numpy(dtype=np.float64)
        groups = UserGroups.of(users, truth, pred)
        frames = [
            pd.DataFrame(
                {
                    "user_id": groups.users,
                    "_order": np.int32(order),
                    "value": r.per_user_error.of_groups(groups, r.value),
                }
            )
            for order, r in enumerate(requests)
        ]
        return pd.concat(frames, ignore_index=True)

    bucketed = pairs.withColumn("_bucket", F.pmod(F.xxhash64("user_id"), F.lit(buckets)))
    raw = bucketed.groupBy("_bucket").applyInPandas(compute, schema=_PER_USER_SCHEMA)
    return raw.select("user_id", "_order", F.when(~F.isnan("value"), F.col("value")).alias("value"))


def _user_means(per_user, n_requests: int) -> tuple[list[float], list[int], int]:
    """(mean over users with a defined value, undefined count) per request; number of
    users. The means are exact and correctly rounded (one job)."""
    totals = exact_totals(per_user, ["value"], ["_order"])
    found = [totals[(str(i),)]["value"] for i in range(n_requests)]
    users = found[0].rows
    return [t.mean for t in found], [users - t.count for t in found], users


def rating_errors(
    spark: SparkSession,
    pred_df: DataFrame,
    truth_df: DataFrame,
    measures: str | Sequence[str] | None = None,
    *,
    missing: str = "error",
    columns: Mapping[str, str] | None = None,
    buckets: int | None = None,
) -> RatingEvaluation:
    """Compute rating errors of predictions against true ratings on Spark; nothing is written.

    Args:
        spark: the SparkSession.
        pred_df: predictions with user, item and prediction columns (canonical names
            ``user_id, item_id, prediction`` or aliases such as ``userID``/``user``,
            ``itemID``/``item``, ``score``).
        truth_df: true ratings with user, item and rating columns (``rating``,
            ``label``, ...; any finite numbers).
        measures: ``RMSE, MAE, MaxAE, TopL_AE(L=3), Lp(p=3), R2, ExpVar`` (default
            ``RMSE, MAE, R2``); each gives a pooled value and a per-user mean.
        missing: ``error`` (default: a pair on one side only is an error naming it)
            or ``skip`` (evaluate the pairs on both sides; the others are counted).
        columns: explicit column mapping ``{canonical: source}`` for both tables.
        buckets: hash buckets of users (default ``spark.sql.shuffle.partitions``).

    Returns:
        A :class:`RatingEvaluation`; call ``unpersist()`` when done with ``per_user``.

    Example::

        ev = rating_errors(spark, preds, truth, "RMSE,MAE", missing="skip")
        ev.report["measures"]["RMSE"], ev.report["measures"]["RMSE_per_user"]
    """
    from pyspark.sql import functions as F

    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {', '.join(MISSING_POLICIES)}, got {missing!r}")
    requests = parse_rating_measures(measures)
    if buckets is None:
        buckets = int(spark.conf.get("spark.sql.shuffle.partitions") or 200)
    if buckets < 1:
        raise ValueError(f"buckets must be >= 1, got {buckets}")
    buckets = capped_buckets(buckets, plan_bytes(pred_df, truth_df))

    pred = _by_pair(_canonical(pred_df, "predictions", columns), "q", "n_pred", "bad_pred")
    truth = _by_pair(_canonical(truth_df, "truth", columns), "t", "n_truth", "bad_truth")
    joined = pred.join(truth, ["user_id", "item_id"], "full_outer").persist()
    cached = [joined]
    try:
        stats = _pair_stats(joined)
        _check_pairs(stats, missing)
        pairs = (
            joined.where(F.col("n_pred").isNotNull() & F.col("n_truth").isNotNull())
            .select("user_id", "item_id", "t", "q", (F.col("t") - F.col("q")).alias("e"))
            .persist()
        )
        cached.append(pairs)
        n = stats["matched"]
        sums = _pooled(pairs, requests, n, float(stats["max_e"]))
        per_user = _per_user(pairs, requests, buckets).persist()
        cached.append(per_user)
        means, undefined, users = _user_means(per_user, len(requests))
        report = rating_report(requests, sums, means, undefined, users, stats, missing)
    except BaseException:
        for df in cached:
            df.unpersist()
        raise
    names = F.create_map(*(x for i, r in enumerate(requests) for x in (F.lit(i), F.lit(r.name))))
    per_user_out = per_user.select(
        "user_id", names[F.col("_order")].alias("measure"), "value", "_order"
    )
    return RatingEvaluation(per_user_out, report, requests, cached)
