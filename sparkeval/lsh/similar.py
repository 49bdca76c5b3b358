"""All pairs of sets with Jaccard >= T on Spark: MinHash LSH, then exact verification.

Pipeline (each step a Spark job, nothing data-sized on the driver):

1. Each set is made distinct and sorted; empty sets are left out (Jaccard undefined).
2. Identical sets are collapsed: one row per distinct set, with its members. Pairs
   inside a group are exact Jaccard 1.0 pairs and are emitted directly.
3. Signatures of the distinct sets (``mapInArrow``, vectorised per Arrow batch) are
   cut into b bands of r rows; each band becomes a 64-bit key: rows
   ``(rep, band, key)``.
4. Sets sharing a ``(band, key)`` bucket become candidates (see
   :mod:`sparkeval.lsh.candidates`; buckets over ``max_bucket`` are skipped and
   reported).
5. Every candidate is verified exactly in Spark SQL on the sorted arrays:
   ``inter = size(array_intersect(A, B))``, ``union = |A| + |B| - inter``, kept when
   ``inter * q >= p * union`` for the threshold T = p/q as an exact fraction (so a
   pair at exactly T is kept, free of float rounding).
6. Verified group pairs are expanded to member pairs ``(a, b)`` with a < b.

Example:
    sets {1,2,3,4,5} and {1,2,3,4} have Jaccard 4/5 = 0.8 and are a pair at T = 0.8.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.storagelevel import StorageLevel

from sparkeval.lsh.banding import BandParams, band_keys
from sparkeval.lsh.candidates import (
    BucketStats,
    bucket_stats,
    candidate_pairs,
    pairs_of_sorted,
    shared_buckets,
)
from sparkeval.lsh.minhash import MinHasher
from sparkeval.lsh.search_stats import record_lap, threshold_fraction
from sparkeval.lsh.token_hashes import (
    hashable_in_spark,
    list_offsets,
    raw_hashes,
    sha1_hash_column,
)
from sparkeval.spark import spark_type


def flat_lists(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Flat values and ``n + 1`` offsets of an Arrow list column (nulls = empty)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    values = pc.list_flatten(column).to_numpy(zero_copy_only=False)
    return values, list_offsets(column)


def band_rows(
    sets: DataFrame, id_col: str, items_col: str, hasher: MinHasher, params: BandParams
) -> DataFrame:
    """``(id, band, key)`` rows: b band keys per set, computed per Arrow batch.

    Strings and integers are hashed in Spark SQL (:mod:`sparkeval.lsh.token_hashes`),
    so only 4 or 8 bytes per item reach Python; items of other types are hashed in
    Python. Both give the signatures of ``datasketch.MinHash``.

    Args:
        sets: a DataFrame with an id column and an array column of items.
        id_col: the id column (any orderable type).
        items_col: the array column (ints or strings; tokenised as ``str(item)``).
        hasher: the MinHash permutations.
        params: bands x rows.
    """
    id_type = sets.schema[id_col].dataType.simpleString()
    bands, rows = params.bands, params.rows
    band_ids = np.arange(bands, dtype=np.int32)
    in_spark = hashable_in_spark(sets.schema[items_col].dataType)
    width = hasher.hash_width

    def signatures(column: pa.Array) -> np.ndarray:
        if in_spark:
            raw, offsets = raw_hashes(column, width)
            return hasher.signatures_of_hashes(hasher.premix(raw), offsets)
        values, offsets = flat_lists(column)
        return hasher.signatures(values, offsets)

    def emit(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            keys = band_keys(signatures(batch.column(items_col)), bands, rows)
            n = batch.num_rows
            take = pa.array(np.repeat(np.arange(n, dtype=np.int64), bands))
            yield pa.RecordBatch.from_arrays(
                [
                    batch.column(id_col).take(take),
                    pa.array(np.tile(band_ids, n)),
                    pa.array(keys.reshape(-1)),
                ],
                names=[id_col, "band", "key"],
            )

    items = F.col(items_col)
    shipped = sha1_hash_column(items, width) if in_spark else items
    return sets.select(id_col, shipped.alias(items_col)).mapInArrow(
        emit, f"{id_col} {id_type}, band int, key long"
    )


@dataclass
class SimilarSets:
    """Result of :func:`similar_sets`: verified pairs (lazy) and what each stage did.

    Attributes:
        pairs: DataFrame ``a, b, jaccard`` (a < b) of every verified pair.
        stats: counts and timings (see :func:`similar_sets`).
        searched_in_driver: whether the driver's stages found the pairs
            (:mod:`sparkeval.lsh.driver_sets`), not Spark's.
    """

    pairs: DataFrame
    stats: dict[str, Any] = field(default_factory=dict)
    _cached: list[DataFrame] = field(default_factory=list, repr=False)
    searched_in_driver: bool = False

    def release(self) -> None:
        """Unpersist the intermediate tables kept for the statistics."""
        for df in self._cached:
            df.unpersist()
        self._cached.clear()


def similar_sets(
    sets: DataFrame,
    threshold: float | str,
    hasher: MinHasher,
    params: BandParams,
    id_col: str = "id",
    items_col: str = "items",
    max_bucket: int | None = None,
) -> SimilarSets:
    """Every pair of sets with exact Jaccard >= threshold (LSH candidates, exact check).

    Args:
        sets: one row per object: ``id_col`` (unique) and ``items_col`` (array).
        threshold: verification threshold T in (0, 1]; pairs at exactly T are kept.
        hasher: MinHash permutations (num_perm must cover bands x rows).
        params: the banding (see :func:`sparkeval.lsh.banding.choose_bands`).
        id_col: name of the id column; output pairs have ``a < b`` in its ordering.
        items_col: name of the item array column.
        max_bucket: skip buckets with more members than this (``None`` = no cap).

    Returns:
        :class:`SimilarSets`; ``stats`` holds ``sets``, ``empty_sets``,
        ``distinct_sets``, ``identical_groups``, ``identical_pairs``, the bucket
        statistics, ``candidate_pairs``, ``verified_group_pairs`` and timings.
        ``pairs`` is lazy: write or count it to run the last stage.
    """
    frac = threshold_fraction(threshold)
    p, q = frac.numerator, frac.denominator
    stats: dict[str, Any] = {}
    cached: list[DataFrame] = []
    start = time.perf_counter()

    # one pass over the input: empty sets are grouped too (one group) and counted,
    # then left out; sort_array (native ordering) is much cheaper than array_sort
    clean = sets.select(
        F.col(id_col).alias("id"),
        F.sort_array(F.array_distinct(F.col(items_col))).alias("items"),
    )
    all_groups = (
        clean.groupBy("items")
        .agg(
            F.min("id").alias("rep"),
            F.sort_array(F.collect_list("id")).alias("members"),
            F.count(F.lit(1)).alias("m"),
        )
        .withColumn("len", F.size("items"))
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    cached.append(all_groups)
    groups = all_groups.where(F.col("len") > 0)
    nonempty = F.col("len") > 0
    gstats = all_groups.agg(
        F.sum("m").alias("sets"),
        F.sum(F.when(~nonempty, F.col("m")).otherwise(0)).alias("empty_sets"),
        F.sum(F.when(nonempty, 1).otherwise(0)).alias("distinct_sets"),
        F.sum(F.when(nonempty & (F.col("m") >= 2), 1).otherwise(0)).alias("identical_groups"),
        # whole numbers: exact in any order, halved below
        F.sum(F.when(nonempty, F.col("m") * (F.col("m") - 1)).otherwise(0)).alias(
            "identical_pairs"
        ),
        F.max(F.when(nonempty, F.col("m"))).alias("largest_identical_group"),
    ).collect()[0]
    stats.update({name: int(value or 0) for name, value in gstats.asDict().items()})
    stats["identical_pairs"] //= 2
    start = record_lap(stats, "collapse_identical", start)

    rows = band_rows(groups, "rep", "items", hasher, params)
    buckets = shared_buckets(rows, "rep", max_bucket).persist(StorageLevel.MEMORY_AND_DISK)
    cached.append(buckets)
    bstats: BucketStats = bucket_stats(buckets)
    stats.update(bstats.as_dict())
    start = record_lap(stats, "signatures_and_buckets", start)

    cand = candidate_pairs(buckets).persist(StorageLevel.MEMORY_AND_DISK)
    cached.append(cand)
    stats["candidate_pairs"] = cand.count()
    start = record_lap(stats, "candidates", start)

    g_a = groups.select(
        F.col("rep").alias("a"),
        F.col("items").alias("items_a"),
        F.col("len").alias("len_a"),
        F.col("members").alias("members_a"),
    )
    g_b = groups.select(
        F.col("rep").alias("b"),
        F.col("items").alias("items_b"),
        F.col("len").alias("len_b"),
        F.col("members").alias("members_b"),
    )
    inter = F.size(F.array_intersect("items_a", "items_b")).cast(spark_type("long"))
    verified = (
        cand.join(g_a, "a")
        .join(g_b, "b")
        .withColumn("inter", inter)
        .withColumn("union", F.col("len_a") + F.col("len_b") - F.col("inter"))
        .where(F.col("inter") * F.lit(q) >= F.lit(p) * F.col("union"))
        .withColumn("jaccard", F.col("inter") / F.col("union"))
        .select("members_a", "members_b", "jaccard")
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    cached.append(verified)
    stats["verified_group_pairs"] = verified.count()
    stats["rejected_candidates"] = stats["candidate_pairs"] - stats["verified_group_pairs"]
    record_lap(stats, "verify", start)

    across = (
        verified.select(F.explode("members_a").alias("u"), "members_b", "jaccard")
        .select("u", F.explode("members_b").alias("v"), "jaccard")
        .select(F.least("u", "v").alias("a"), F.greatest("u", "v").alias("b"), F.col("jaccard"))
    )
    within = (
        groups.where(F.col("m") >= 2)
        .select(F.explode(pairs_of_sorted("members", "m")).alias("p"))
        .select(F.col("p.a").alias("a"), F.col("p.b").alias("b"), F.lit(1.0).alias("jaccard"))
    )
    pairs = across.unionByName(within)
    return SimilarSets(pairs=pairs, stats=stats, _cached=cached)
