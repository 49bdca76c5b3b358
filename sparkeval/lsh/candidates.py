"""Candidate pairs from bucket keys, on Spark.

Input rows ``(id, band, key)`` say "this object falls in bucket ``key`` of band
``band``". Two objects are a candidate pair when they share a bucket in at least one
band. The equi-match on ``(band, key)`` is done by grouping on it: one shuffle
gives each bucket's members and its size at once; the pairs of a bucket of n
members (n*(n-1)/2 of them) are generated in Spark SQL from its sorted member
array, then made distinct across bands. No cross join, nothing collected but the
one-row bucket statistics.

A bucket larger than ``max_bucket`` would make n^2/2 pairs on its own (one hot
bucket can dominate the whole join); such buckets are skipped and the statistics
report how many, how many members and how many pairs they held. Pairs only found
in a skipped bucket are lost, which the caller reports.

Example (members 3, 1, 2 share one bucket):
    bucket (band 0, key 7) = [1, 2, 3]  ->  pairs (1, 2), (1, 3), (2, 3)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from sparkeval.lsh.search_stats import (  # noqa: F401 (their home before)
    DEFAULT_MAX_BUCKET,
    bucket_report,
    check_max_bucket,
)


def pairs_of_sorted(array_col: str, size_col: str) -> Column:
    """All ``(a, b)`` structs with a before b in a sorted array column (size >= 2).

    ``[x0, x1, x2]`` gives ``(x0, x1), (x0, x2), (x1, x2)``.
    """
    return F.expr(
        f"flatten(transform(sequence(0, {size_col} - 2), i -> "
        f"transform(slice({array_col}, i + 2, {size_col} - i - 1), "
        f"y -> named_struct('a', {array_col}[i], 'b', y))))"
    )


@dataclass(frozen=True)
class BucketStats:
    """What the bucket stage saw (from one aggregate over the buckets).

    Attributes:
        buckets_shared: buckets holding two or more members.
        largest_bucket: members of the largest bucket (0 when there is none).
        skipped_buckets: buckets over the cap, not expanded into pairs.
        skipped_members: members summed over the skipped buckets.
        skipped_pairs: pairs the skipped buckets would have produced (before dedup).
        bucket_pairs: pairs produced by the kept buckets (before dedup across bands).
    """

    buckets_shared: int
    largest_bucket: int
    skipped_buckets: int
    skipped_members: int
    skipped_pairs: int
    bucket_pairs: int

    def as_dict(self) -> dict[str, Any]:
        """The fields by name, as a summary reports them."""
        return dataclasses.asdict(self)


def shared_buckets(rows: DataFrame, id_col: str, max_bucket: int | None) -> DataFrame:
    """Buckets with >= 2 members: ``band, key, n, members`` (sorted), ``kept`` flag."""
    cap = check_max_bucket(max_bucket)
    buckets = (
        rows.groupBy("band", "key")
        .agg(F.count(F.lit(1)).alias("n"), F.collect_list(id_col).alias("members"))
        .where(F.col("n") >= 2)
    )
    kept = F.lit(True) if cap is None else F.col("n") <= F.lit(cap)
    return buckets.withColumn("kept", kept)


def bucket_stats(buckets: DataFrame) -> BucketStats:
    """Collect the one-row statistics of :func:`shared_buckets` output."""
    twice_pairs = F.col("n") * (F.col("n") - 1)  # whole numbers: exact in any order
    row = buckets.agg(
        F.count(F.lit(1)).alias("buckets_shared"),
        F.coalesce(F.max("n"), F.lit(0)).alias("largest_bucket"),
        F.sum(F.when(~F.col("kept"), 1).otherwise(0)).alias("skipped_buckets"),
        F.sum(F.when(~F.col("kept"), F.col("n")).otherwise(0)).alias("skipped_members"),
        F.sum(F.when(~F.col("kept"), twice_pairs).otherwise(0)).alias("skipped_pairs"),
        F.sum(F.when(F.col("kept"), twice_pairs).otherwise(0)).alias("bucket_pairs"),
    ).collect()[0]
    found = {f.name: int(row[f.name] or 0) for f in dataclasses.fields(BucketStats)}
    found["skipped_pairs"] //= 2
    found["bucket_pairs"] //= 2
    return BucketStats(**found)


def candidate_pairs(buckets: DataFrame) -> DataFrame:
    """Distinct ``(a, b)`` pairs, a < b, from the kept buckets."""
    return (
        buckets.where(F.col("kept"))
        .select(F.array_sort("members").alias("m"), F.col("n"))
        .select(F.explode(pairs_of_sorted("m", "n")).alias("p"))
        .select(F.col("p.a").alias("a"), F.col("p.b").alias("b"))
        .distinct()
    )
