"""The values of the measures of the whole recommendation set that ``evaluate``
computes (:mod:`sparkeval.measures.set_names`), from one run's top-k lists and the
training interactions: in this process (pandas, numpy) and on Spark, with the same
double operations and exact sums as ``sparkeval diversity`` (so the same bits on both
engines, and the same values as the diversity command's for the same lists):

* ``catalog_coverage`` = |L ∩ I| / |I|, L the distinct items of the lists, I those of
  training (integers divided once);
* ``novelty`` = mean over the list rows whose item is in training of -log2(t_i / T),
  t_i the training rows of item i and T all training rows (``log2`` as Spark's;
  the mean from exact fixed-point sums: :mod:`sparkeval.exact_means`);
* ``unseen_share`` (RePlay's Novelty) = mean over the training users u of
  1 - |top-k_u ∩ train_u| / |top-k_u| (1 for a user without a list), exact sums;
* ``distinct_items`` (RecTools' CatalogCoverage) = |L|;
* ``inverse_user_frequency`` (RecTools' MeanInvUserFreq) = mean over the users of the
  lists of the mean over their rows of -log2(u_i / U) (u_i distinct training users of
  item i, 1 for an item absent from training; U all distinct training users);
* ``recommended_popularity`` (RecTools' AvgRecPopularity) = mean over the users of the
  lists of the mean over their rows of t_i (0 for an item absent from training);
* ``surprisal`` (RePlay's Surprisal) = mean over the users of the lists of
  (Σ over their top-k rows of w_i) / k, w_i = log2(U / u_i) / log2(U) (u_i distinct
  training users of item i, U all distinct training users; w_i = 1 for an item absent
  from training): a user with 2 rows at k = 5 divides by 5, as RePlay does.

The per-user means and the means over users are exact fixed-point sums on both
engines (:func:`~sparkeval.exact_means.local_bounded_means` and
:func:`~sparkeval.exact_means.bounded_mean`, as ``diversity``'s per-user novelty).

The four means over users (:data:`PER_USER_KINDS`) also give each user's value
(:func:`local_per_user`, :func:`spark_per_user`), whose exact mean is the measure's.

Example (RePlay's documented case, k = 2): the top-2 lists {3, 7}, {5, 8}, {4, 9} of
users 1, 2, 3 cover 5 of the 9 training items (catalog coverage 5/9); only user 1 has
unseen items (both), so RePlay's Novelty is (1 + 0 + 0) / 3.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sparkeval.diversity.definitions import NOVELTY_BOUND
from sparkeval.exact_means import (
    ExactTotal,
    local_bounded_means,
    local_bounded_sums,
    local_bounded_total,
)
from sparkeval.information import strict_log2

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: |1 - share| of RePlay's Novelty lies in [0, 1]
SHARE_BOUND = 1.0
#: the kinds that are a mean over users, so have a value per user; the others are of
#: the whole catalog (``catalog_coverage``, ``distinct_items``) or a mean over all list
#: rows (``novelty``: a user's rows weigh by their number)
PER_USER_KINDS = frozenset(
    {"unseen_share", "inverse_user_frequency", "recommended_popularity", "surprisal"}
)


def local_value(
    kind: str, lists: pd.DataFrame, train: pd.DataFrame, k: int | None = None
) -> dict[str, Any]:
    """The value of ``kind`` (and its counts) from ``lists`` and ``train``, both with
    ``query_id, doc_id`` (ids of one kind), in this process; ``k`` is the measure's
    cutoff (the divisor of ``surprisal``)."""
    if kind == "surprisal":
        return _local_surprisal(lists, train, _divisor(k))
    if kind == "catalog_coverage":
        return _local_coverage(lists, train)
    if kind == "novelty":
        return _local_novelty(lists, train)
    if kind == "unseen_share":
        return _local_unseen_share(lists, train)
    if kind == "distinct_items":
        return {"value": float(lists["doc_id"].nunique())}
    if kind in ("inverse_user_frequency", "recommended_popularity"):
        return _local_user_means(kind, lists, train)
    raise ValueError(f"unknown set measure kind {kind!r}")


def _local_user_means(kind: str, lists: pd.DataFrame, train: pd.DataFrame) -> dict[str, Any]:
    """RecTools' MeanInvUserFreq or AvgRecPopularity: each row's item value, its mean
    per user of the lists, then the mean over those users."""
    per_user = _local_per_user_means(kind, lists, train)
    total = local_bounded_total(per_user["value"].to_numpy(), _user_bound(kind, train))
    return {"value": total.mean, "users": total.count}


def _user_bound(kind: str, train: pd.DataFrame) -> float:
    """The bound of a user's value of ``kind`` (the exact sums' scale)."""
    if kind == "inverse_user_frequency":
        return NOVELTY_BOUND
    if kind == "recommended_popularity":
        return _popularity_bound(len(train))
    return SHARE_BOUND


def _local_per_user_means(kind: str, lists: pd.DataFrame, train: pd.DataFrame) -> pd.DataFrame:
    """``query_id, value``: each user of the lists with the exact mean over their rows
    of the item value of ``kind`` (users in the order of their ids' text)."""
    if kind == "inverse_user_frequency":
        users_of = train.groupby("doc_id")["query_id"].nunique()
        u = lists["doc_id"].map(users_of).fillna(1).to_numpy(dtype=np.float64)
        values = -strict_log2(u / float(train["query_id"].nunique()))
    else:
        rows_of = train["doc_id"].value_counts()
        values = lists["doc_id"].map(rows_of).fillna(0).to_numpy(dtype=np.float64)
    users, index = np.unique(lists["query_id"].to_numpy(dtype=object), return_inverse=True)
    means = local_bounded_means(index, values, len(users), _user_bound(kind, train))
    return pd.DataFrame({"query_id": users, "value": means})


def _divisor(k: int | None) -> int:
    """The cutoff a per-user sum is divided by (a measure of the kind always has one)."""
    if k is None or k < 1:
        raise ValueError("surprisal needs the measure's cutoff k >= 1")
    return k


def _log2_users(users: int) -> float:
    """log2(U) as Spark's ``log2`` gives it, the divisor of RePlay's item weight."""
    return float(strict_log2(np.array([float(users)]))[0])


def _surprisal_block(total: ExactTotal, train_users: int, cold_rows: int) -> dict[str, Any]:
    """The mean surprisal and its counts, the same dict on both engines; NaN when
    training has fewer than 2 users (log2(U) = 0: every weight is undefined)."""
    return {
        "value": total.mean if train_users >= 2 else math.nan,
        "users": total.count,
        "train_users": train_users,
        "rows_unseen_in_train": cold_rows,
    }


def _local_surprisal(lists: pd.DataFrame, train: pd.DataFrame, k: int) -> dict[str, Any]:
    """RePlay's Surprisal: per user of the lists the sum of the item weights of the
    user's top-k rows over k, averaged over those users (exact sums)."""
    every, _, per_user, cold = _local_surprisal_parts(lists, train, k)
    total = local_bounded_total(per_user, SHARE_BOUND)
    return _surprisal_block(total, every, cold)


def _local_surprisal_parts(
    lists: pd.DataFrame, train: pd.DataFrame, k: int
) -> tuple[int, np.ndarray, np.ndarray, int]:
    """The training users U, the users of the lists (sorted), each one's sum of
    weights over k, and the list rows of items absent from training."""
    every = int(train["query_id"].nunique())
    users_of = train.groupby("doc_id")["query_id"].nunique()
    u = lists["doc_id"].map(users_of).to_numpy(dtype=np.float64)  # NaN: a cold item
    cold = np.isnan(u)
    if every >= 2:
        with np.errstate(invalid="ignore"):
            weight = np.where(cold, 1.0, strict_log2(every / u) / _log2_users(every))
    else:
        weight = np.where(cold, 1.0, 0.0)  # the value is NaN; the counts still hold
    users, index = np.unique(lists["query_id"].to_numpy(dtype=object), return_inverse=True)
    per_user = local_bounded_sums(index, weight, len(users), SHARE_BOUND) / float(k)
    return every, users, per_user, int(cold.sum())


def _local_per_user_surprisal(lists: pd.DataFrame, train: pd.DataFrame, k: int) -> pd.DataFrame:
    """``query_id, value``: each user of the lists with their surprisal (the sum of
    their rows' weights over k; NaN when training has fewer than 2 users)."""
    every, users, per_user, _ = _local_surprisal_parts(lists, train, k)
    values = per_user if every >= 2 else np.full(len(users), math.nan)
    return pd.DataFrame({"query_id": users, "value": values})


def _spark_surprisal(lists: DataFrame, train: DataFrame, k: int) -> dict[str, Any]:
    """:func:`_local_surprisal` on Spark: the same doubles and exact sums."""
    from pyspark.sql import functions as F

    from sparkeval.exact_means import bounded_totals

    every, rows, per_user = _spark_surprisal_parts(lists, train, k)
    total = bounded_totals(per_user.select("value"), {"value": SHARE_BOUND})["value"]
    cold = rows.where(F.col("_n").isNull()).count()
    return _surprisal_block(total, every, int(cold))


def _spark_surprisal_parts(
    lists: DataFrame, train: DataFrame, k: int
) -> tuple[int, DataFrame, DataFrame]:
    """The training users U, the list rows with their items' training users ``_n``,
    and ``query_id, value`` (each user's sum of weights over k) on Spark."""
    from pyspark.sql import functions as F

    from sparkeval.exact_means import bounded_sum

    every = train.select("query_id").distinct().count()
    per_item = train.groupBy("doc_id").agg(F.countDistinct("query_id").alias("_n"))
    rows = lists.select("query_id", "doc_id").join(per_item, "doc_id", "left")
    if every >= 2:
        warm = F.log2(F.lit(float(every)) / F.col("_n").cast("double")) / F.lit(_log2_users(every))
    else:
        warm = F.lit(0.0)
    weight = F.when(F.col("_n").isNull(), F.lit(1.0)).otherwise(warm)
    per_user = (
        rows.select("query_id", weight.alias("_w"))
        .groupBy("query_id")
        .agg(bounded_sum("_w", SHARE_BOUND).alias("_s"))
    )
    return every, rows, per_user.select("query_id", (F.col("_s") / F.lit(float(k))).alias("value"))


def _popularity_bound(rows: int) -> float:
    """The bound of an item's training rows: all of them (at least 1)."""
    return float(max(rows, 1))


def _local_coverage(lists: pd.DataFrame, train: pd.DataFrame) -> dict[str, Any]:
    """|L ∩ I| / |I| and the counts (see the module)."""
    listed = pd.unique(lists["doc_id"])
    catalogue = pd.unique(train["doc_id"])
    covered = int(pd.Series(listed).isin(catalogue).sum())
    return _coverage_block(covered, len(catalogue), len(listed))


def _coverage_block(covered: int, size: int, listed: int) -> dict[str, Any]:
    """The value and counts of catalog coverage, the same dict on both engines."""
    return {
        "value": covered / size if size else math.nan,
        "catalog_items": size,
        "recommended_items": listed,
        "recommended_outside_catalog": listed - covered,
    }


def _local_novelty(lists: pd.DataFrame, train: pd.DataFrame) -> dict[str, Any]:
    """The mean item novelty over the list rows whose item is in training."""
    counts = train["doc_id"].value_counts()
    t = lists["doc_id"].map(counts).to_numpy(dtype=np.float64)  # NaN: not in training
    with np.errstate(divide="ignore", invalid="ignore"):
        item = -strict_log2(t / float(len(train)))
    item = np.where(np.isnan(t), np.nan, item)
    return _novelty_block(local_bounded_total(item, NOVELTY_BOUND))


def _novelty_block(total: ExactTotal) -> dict[str, Any]:
    """The mean novelty and its counts: list rows, those of items not in training."""
    return {
        "value": total.mean,
        "rows": total.rows,
        "rows_unseen_in_train": total.rows - total.count,
    }


def _local_unseen_share(lists: pd.DataFrame, train: pd.DataFrame) -> dict[str, Any]:
    """RePlay's Novelty: the per-user share of listed items the user has no training
    row with, averaged over the training users."""
    per_user = _local_per_user_shares(lists, train)
    total = local_bounded_total(per_user["value"].to_numpy(), SHARE_BOUND)
    without = int((~per_user["query_id"].isin(lists["query_id"])).sum())
    return {"value": total.mean, "users": total.count, "users_without_lists": without}


def _local_per_user_shares(lists: pd.DataFrame, train: pd.DataFrame) -> pd.DataFrame:
    """``query_id, value``: each training user with 1 - |top-k_u ∩ train_u| / |top-k_u|
    (1 without a list), users in the order of their ids' text."""
    history = train[["query_id", "doc_id"]].drop_duplicates()
    length = lists.groupby("query_id").size()
    seen = lists[["query_id", "doc_id"]].merge(history, on=["query_id", "doc_id"])
    seen_counts = seen.groupby("query_id").size()
    users = pd.Index(np.unique(history["query_id"].to_numpy(dtype=object)))
    n = length.reindex(users).to_numpy(dtype=np.float64)
    c = seen_counts.reindex(users).fillna(0).to_numpy(dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(np.isnan(n), 1.0, 1.0 - c / n)
    return pd.DataFrame({"query_id": users.to_numpy(dtype=object), "value": share})


def local_per_user(
    kind: str, lists: pd.DataFrame, train: pd.DataFrame, k: int | None = None
) -> pd.DataFrame:
    """Each user's value of a measure that is a mean over users (a kind of
    :data:`PER_USER_KINDS`), as ``query_id, value`` sorted by the ids' text; the
    exact mean of ``value`` (:func:`~sparkeval.exact_means.local_bounded_total`) is
    :func:`local_value`'s to the bit (``k``: the cutoff, the divisor of
    ``surprisal``, whose users' values are NaN with fewer than 2 training users).

    Example (RePlay's documented case, k = 2): users 1, 2, 3 have the values 1.0,
    0.0, 0.0 of ``unseen_share``, whose mean is its value 1/3.

    Raises:
        ValueError: a kind of the whole catalog or of all list rows (no per-user value).
    """
    if kind == "unseen_share":
        return _local_per_user_shares(lists, train)
    if kind in ("inverse_user_frequency", "recommended_popularity"):
        return _local_per_user_means(kind, lists, train)
    if kind == "surprisal":
        return _local_per_user_surprisal(lists, train, _divisor(k))
    raise ValueError(f"set measure kind {kind!r} has no per-user values")


def spark_value(
    kind: str, lists: DataFrame, train: DataFrame, k: int | None = None
) -> dict[str, Any]:
    """:func:`local_value` on Spark: the same value to the bit and the same counts."""
    if kind == "surprisal":
        return _spark_surprisal(lists, train, _divisor(k))
    if kind == "catalog_coverage":
        return _spark_coverage(lists, train)
    if kind == "novelty":
        return _spark_novelty(lists, train)
    if kind == "unseen_share":
        return _spark_unseen_share(lists, train)
    if kind == "distinct_items":
        return {"value": float(lists.select("doc_id").distinct().count())}
    if kind in ("inverse_user_frequency", "recommended_popularity"):
        return _spark_user_means(kind, lists, train)
    raise ValueError(f"unknown set measure kind {kind!r}")


def _spark_user_means(kind: str, lists: DataFrame, train: DataFrame) -> dict[str, Any]:
    """:func:`_local_user_means` on Spark: the same doubles and exact sums."""
    from sparkeval.exact_means import bounded_totals

    means, bound = _spark_per_user_means(kind, lists, train)
    total = bounded_totals(means, {"value": bound})["value"]
    return {"value": total.mean, "users": total.count}


def _spark_per_user_means(kind: str, lists: DataFrame, train: DataFrame) -> tuple[DataFrame, float]:
    """:func:`_local_per_user_means` on Spark (unsorted), and the values' bound."""
    from pyspark.sql import functions as F

    from sparkeval.exact_means import bounded_mean

    if kind == "inverse_user_frequency":
        every = train.select("query_id").distinct().count()
        per_item = train.groupBy("doc_id").agg(F.countDistinct("query_id").alias("_n"))
        n = F.coalesce(F.col("_n"), F.lit(1)).cast("double")
        value = -F.log2(n / F.lit(float(every)))
        bound = NOVELTY_BOUND
    else:
        per_item = train.groupBy("doc_id").agg(F.count(F.lit(1)).alias("_n"))
        value = F.coalesce(F.col("_n"), F.lit(0)).cast("double")
        bound = _popularity_bound(train.count())
    rows = lists.select("query_id", "doc_id").join(per_item, "doc_id", "left")
    per_user = rows.select("query_id", value.alias("_v")).groupBy("query_id")
    return per_user.agg(bounded_mean("_v", bound).alias("value")), bound


def _spark_coverage(lists: DataFrame, train: DataFrame) -> dict[str, Any]:
    """|L ∩ I| / |I| from three counts of one joined frame."""
    from pyspark.sql import functions as F

    listed = lists.select("doc_id").distinct().withColumn("_l", F.lit(1))
    catalogue = train.select("doc_id").distinct().withColumn("_c", F.lit(1))
    row = (
        listed.join(catalogue, "doc_id", "full_outer")
        .agg(
            F.count("_l").alias("listed"),
            F.count("_c").alias("size"),
            F.count(F.when(F.col("_l").isNotNull() & F.col("_c").isNotNull(), 1)).alias("both"),
        )
        .collect()[0]
    )
    return _coverage_block(int(row["both"]), int(row["size"]), int(row["listed"]))


def _spark_novelty(lists: DataFrame, train: DataFrame) -> dict[str, Any]:
    """The mean item novelty (:func:`sparkeval.diversity.coverage.novelty`'s overall)."""
    from sparkeval.diversity.coverage import item_novelty
    from sparkeval.exact_means import bounded_totals

    scored = lists.select("doc_id").join(item_novelty(train), "doc_id", "left")
    return _novelty_block(bounded_totals(scored, {"novelty": NOVELTY_BOUND})["novelty"])


def _spark_unseen_share(lists: DataFrame, train: DataFrame) -> dict[str, Any]:
    """RePlay's Novelty on Spark: per training user 1 - seen / listed (1 without a
    list), the same doubles and exact sum as :func:`_local_unseen_share`."""
    from pyspark.sql import functions as F

    from sparkeval.exact_means import bounded_totals

    scored = _spark_shares(lists, train)
    total = bounded_totals(scored, {"value": SHARE_BOUND})["value"]
    without = scored.where(F.col("_none")).count()
    return {"value": total.mean, "users": total.count, "users_without_lists": int(without)}


def _spark_shares(lists: DataFrame, train: DataFrame) -> DataFrame:
    """``query_id, value, _none`` (no list): :func:`_local_per_user_shares` on Spark."""
    from pyspark.sql import functions as F

    history = train.select("query_id", "doc_id").distinct().withColumn("_seen", F.lit(1))
    per_user = (
        lists.select("query_id", "doc_id")
        .join(history, ["query_id", "doc_id"], "left")
        .groupBy("query_id")
        .agg(F.count(F.lit(1)).alias("n"), F.count("_seen").alias("c"))
    )
    users = history.select("query_id").distinct().join(per_user, "query_id", "left")
    share = F.when(F.col("n").isNull(), F.lit(1.0)).otherwise(
        F.lit(1.0) - F.col("c").cast("double") / F.col("n").cast("double")
    )
    return users.select("query_id", share.alias("value"), F.col("n").isNull().alias("_none"))


def spark_per_user(
    kind: str, lists: DataFrame, train: DataFrame, k: int | None = None
) -> DataFrame:
    """:func:`local_per_user` on Spark: ``query_id, value`` with the same doubles,
    sorted by ``query_id``.

    Raises:
        ValueError: a kind without per-user values.
    """
    from pyspark.sql import functions as F

    if kind == "unseen_share":
        frame = _spark_shares(lists, train).select("query_id", "value")
    elif kind in ("inverse_user_frequency", "recommended_popularity"):
        frame = _spark_per_user_means(kind, lists, train)[0]
    elif kind == "surprisal":
        every, _, frame = _spark_surprisal_parts(lists, train, _divisor(k))
        if every < 2:
            frame = frame.select("query_id", F.lit(math.nan).alias("value"))
    else:
        raise ValueError(f"set measure kind {kind!r} has no per-user values")
    return frame.orderBy("query_id")
