"""Diversity between users' lists: Hamming diversity (exact, O(N)) and mean Jaccard.

Inter-user Hamming diversity of lists of length L, with c_i = the number of lists
holding item i and U users:

    d_uv = 1 - |I_u ∩ I_v| / L
    mean_{u<v} |I_u ∩ I_v| = sum_i c_i (c_i - 1) / 2 / C(U, 2)
    d_u = 1 - sum_{i in I_u} (c_i - 1) / (L (U - 1))       (mean of d_uv over v != u)

so the mean and every d_u come from item counts alone: no pairwise loop. L is the
list cutoff k when given, else the longest list.

Mean pairwise Jaccard between users, mean_{u<v} |I_u ∩ I_v| / |I_u ∪ I_v|, is exact
when the co-occurring pairs sum_i C(c_i, 2) are few enough for a self-join on the
item; otherwise it is estimated from uniformly sampled user pairs (each pair's
Jaccard exact) with a normal 95% confidence interval, and bracketed by bounds that
hold whatever the sample: with m = the exact mean intersection, Lmax/Lmin the longest
and shortest list,

    m / (2 Lmax - m)  <=  mean Jaccard  <=  min(1, m / Lmin)

(J = x / (|a| + |b| - x) >= x / (2 Lmax - x), convex in x, so Jensen gives the lower
bound; J <= x / max(|a|, |b|) <= x / Lmin the upper one).

Example (3 users, L = 2: {1,2}, {1,3}, {1,2}):
    c = {1: 3, 2: 2, 3: 1}; mean intersection = (3 + 1) / 3 = 4/3;
    mean diversity = 1 - (4/3)/2 = 1/3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from sparkeval.diversity.definitions import (
    DEFAULT_EXACT_PAIR_LIMIT,
    DEFAULT_SAMPLE_PAIRS,
    hamming_summary,
    jaccard_bounds,
    sampled_jaccard,
)
from sparkeval.exact_means import bounded_totals
from sparkeval.spark import spark_type

__all__ = ["DEFAULT_EXACT_PAIR_LIMIT", "DEFAULT_SAMPLE_PAIRS", "hamming_diversity", "mean_jaccard"]


@dataclass(frozen=True)
class InterUser:
    """Overall inter-user results; ``per_user`` is a lazy DataFrame.

    Attributes:
        per_user: ``query_id, list_length, inter_user_diversity``.
        summary: users, list length L, mean diversity, mean intersection, and the
            mean Jaccard (exact, or estimate with interval and bounds).
    """

    per_user: DataFrame
    summary: dict[str, Any]


def hamming_diversity(lists: DataFrame, length: int | None = None) -> InterUser:
    """Exact inter-user Hamming diversity, mean and per user, from item counts.

    Args:
        lists: ``query_id, doc_id`` rows, one per item of a user's list.
        length: L; default the longest list.
    """
    counts = lists.groupBy("doc_id").agg(F.count(F.lit(1)).alias("c"))
    # whole numbers: c (c - 1) is even, so the pairs are exact, whatever the order
    totals = counts.agg(
        F.sum(F.col("c") * (F.col("c") - 1)).alias("twice_co_pairs"),
        F.sum("c").alias("rows"),
    ).collect()[0]
    sizes = lists.groupBy("query_id").agg(F.count(F.lit(1)).alias("list_length"))
    shape = sizes.agg(
        F.count(F.lit(1)).alias("users"),
        F.max("list_length").alias("lmax"),
        F.min("list_length").alias("lmin"),
    ).collect()[0]
    co_pairs = int(totals["twice_co_pairs"] or 0) // 2
    denom, summary = hamming_summary(
        int(shape["users"] or 0),
        int(shape["lmax"] or 0),
        int(shape["lmin"] or 0),
        co_pairs,
        length,
    )
    per_user = (
        lists.join(counts, "doc_id")
        .groupBy("query_id")
        .agg(F.count(F.lit(1)).alias("list_length"), F.sum(F.col("c") - 1).alias("shared"))
        .select(
            "query_id",
            "list_length",
            (
                F.lit(1.0) - F.col("shared") / F.lit(float(denom))
                if denom > 0
                else F.lit(None).cast(spark_type("double"))
            ).alias("inter_user_diversity"),
        )
    )
    return InterUser(per_user=per_user, summary=summary)


def mean_jaccard(
    spark: SparkSession,
    lists: DataFrame,
    summary: dict[str, Any],
    exact_pair_limit: int = DEFAULT_EXACT_PAIR_LIMIT,
    sample_pairs: int = DEFAULT_SAMPLE_PAIRS,
    seed: int = 1,
) -> dict[str, Any]:
    """Mean pairwise Jaccard over all user pairs: exact, or sampled with CI and bounds.

    Args:
        spark: the session (to build the small sample table).
        lists: ``query_id, doc_id`` rows (distinct per user).
        summary: :func:`hamming_diversity`'s summary (users, co-pairs, list lengths).
        exact_pair_limit: largest number of co-occurring pairs joined exactly.
        sample_pairs: user pairs drawn for the estimate.
        seed: sampling seed.
    """
    users = summary["users"]
    if users < 2:
        return {"method": "exact", "mean_jaccard": math.nan}
    total_pairs = users * (users - 1) / 2
    bounds = jaccard_bounds(summary)
    sizes = lists.groupBy("query_id").agg(F.count(F.lit(1)).alias("n"))
    if summary["co_occurring_pairs"] <= exact_pair_limit:
        left = lists.select(F.col("query_id").alias("a"), "doc_id")
        right = lists.select(F.col("query_id").alias("b"), "doc_id")
        inter = (
            left.join(right, "doc_id")
            .where(F.col("a") < F.col("b"))
            .groupBy("a", "b")
            .agg(F.count(F.lit(1)).alias("x"))
        )
        jaccards = (
            inter.join(sizes.select(F.col("query_id").alias("a"), F.col("n").alias("na")), "a")
            .join(sizes.select(F.col("query_id").alias("b"), F.col("n").alias("nb")), "b")
            .select((F.col("x") / (F.col("na") + F.col("nb") - F.col("x"))).alias("j"))
        )
        found = bounded_totals(jaccards, {"j": 1.0})["j"]
        return {
            "method": "exact",
            # pairs without a shared item have Jaccard 0: the sum is over the others
            "mean_jaccard": found.total / total_pairs,
            "bounds": bounds,
        }
    rng = np.random.default_rng(seed)
    first = rng.integers(0, users, sample_pairs)
    second = (first + rng.integers(1, users, sample_pairs)) % users  # uniform over v != u
    sample = spark.createDataFrame(
        [(int(a), int(b)) for a, b in zip(first, second, strict=True)], "ia long, ib long"
    )
    # users numbered in the order of their ids: the same sample for every partitioning;
    # a window over all users (one partition), which Spark Connect runs as well
    number = F.row_number().over(Window.orderBy("query_id")) - F.lit(1)
    index = sizes.select("query_id", number.cast(spark_type("long")).alias("idx"))
    sets = lists.groupBy("query_id").agg(F.collect_set("doc_id").alias("items"))
    indexed = index.join(sets, "query_id").select("idx", "items")
    a = indexed.select(F.col("idx").alias("ia"), F.col("items").alias("A"))
    b = indexed.select(F.col("idx").alias("ib"), F.col("items").alias("B"))
    jac = (
        sample.join(a, "ia")
        .join(b, "ib")
        .select((F.size(F.array_intersect("A", "B")) / F.size(F.array_union("A", "B"))).alias("j"))
    )
    # the sample is small: its values come to the driver, which sums them exactly
    values = [float(v) for v in jac.toPandas()["j"]]
    return sampled_jaccard(values, bounds, seed)
