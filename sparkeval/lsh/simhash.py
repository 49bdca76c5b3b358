"""SimHash: 64-bit fingerprints of weighted shingles, and Hamming search on Spark.

Each shingle s with weight w(s) gets a 64-bit hash h(s) = the first 8 bytes,
little-endian, of BLAKE2b(utf8(s)) with an 8-byte digest. The fingerprint's bit j is
set when the weighted vote over the document's shingles is positive:

    bit_j = 1  iff  sum_s w(s) * (+1 if bit j of h(s) is 1 else -1) > 0

(a tie is 0; a document without shingles gets fingerprint 0). Repeated shingles
vote once per occurrence unless weights are given explicitly.

Search for all pairs within Hamming distance h uses permuted tables
(:mod:`sparkeval.lsh.permuted_tables`, after Manku, Jain and Das Sarma): identical
fingerprints are collapsed first (their pairs are at distance 0), the distinct ones
are sent to every task, and each task sorts its share of the C(b, h) tables by key
and compares the fingerprints inside each run of equal keys, keeping those within
h. The search is exact; each pair comes from exactly one table, so only verified
pairs leave the tasks.

Example:
    >>> fp = simhash_of([["a b", "b c"], ["a b", "b c"]])
    >>> int(fp[0]) == int(fp[1])
    True
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.storagelevel import StorageLevel

from sparkeval.lsh.candidates import pairs_of_sorted
from sparkeval.lsh.fingerprints import (  # noqa: F401 (also here)
    check_distance,
    fingerprints,
    shingle_hashes,
    simhash_of,
)
from sparkeval.lsh.permuted_tables import (
    FINGERPRINT_BITS,
    block_layout,
    choose_blocks,
    key_bits,
    search_table,
    tables_of,
)
from sparkeval.lsh.search_stats import check_max_bucket
from sparkeval.lsh.similar import SimilarSets, flat_lists
from sparkeval.spark import parallelism, to_pandas


def fingerprint_column(
    docs: DataFrame, id_col: str, shingles_col: str, weights_col: str | None = None
) -> DataFrame:
    """``(id, fp)`` with ``fp`` the signed 64-bit view of the fingerprint (mapInArrow)."""
    id_type = docs.schema[id_col].dataType.simpleString()
    cols = [id_col, shingles_col] + ([weights_col] if weights_col else [])

    def emit(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            values, offsets = flat_lists(batch.column(shingles_col))
            w = None
            if weights_col:
                w_values, w_offsets = flat_lists(batch.column(weights_col))
                if not np.array_equal(w_offsets, offsets):
                    raise ValueError(
                        f"column {weights_col} must hold one weight per entry of {shingles_col}"
                    )
                w = w_values.astype(np.float64)
            fp = fingerprints(values, offsets, w).view(np.int64)
            yield pa.RecordBatch.from_arrays(
                [batch.column(id_col), pa.array(fp)], names=[id_col, "fp"]
            )

    return docs.select(*cols).mapInArrow(emit, f"{id_col} {id_type}, fp long")


def similar_fingerprints(
    fps: DataFrame,
    max_distance: int,
    id_col: str = "id",
    fp_col: str = "fp",
    max_bucket: int | None = None,
) -> SimilarSets:
    """All pairs of fingerprints within Hamming distance ``max_distance``, exactly.

    Args:
        fps: rows ``id_col`` (unique) and ``fp_col`` (long, the 64 fingerprint bits).
        max_distance: h in [0, 63]; pairs at distance exactly h are included.
        id_col: id column; output pairs have a < b.
        fp_col: fingerprint column.
        max_bucket: skip runs of one table key shared by more distinct fingerprints
            than this (pairs found in another table are still found).

    Returns:
        :class:`~sparkeval.lsh.similar.SimilarSets` with ``pairs`` =
        ``a, b, hamming, similarity`` (similarity = 1 - hamming / 64).
    """
    h = check_distance(max_distance)
    cap = check_max_bucket(max_bucket)
    stats: dict[str, Any] = {}
    cached: list[DataFrame] = []
    start = time.perf_counter()
    groups = (
        fps.select(F.col(id_col).alias("id"), F.col(fp_col).alias("fp"))
        .groupBy("fp")
        .agg(
            F.min("id").alias("rep"),
            F.array_sort(F.collect_list("id")).alias("members"),
            F.count(F.lit(1)).alias("m"),
        )
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    cached.append(groups)
    g = groups.agg(
        F.sum("m").alias("docs"),
        F.count(F.lit(1)).alias("distinct"),
        F.sum(F.when(F.col("m") >= 2, 1).otherwise(0)).alias("identical_groups"),
        F.sum(F.col("m") * (F.col("m") - 1)).alias("twice_identical_pairs"),
    ).collect()[0]
    stats.update(
        docs=int(g["docs"] or 0),
        distinct_fingerprints=int(g["distinct"] or 0),
        identical_groups=int(g["identical_groups"] or 0),
        identical_pairs=int(g["twice_identical_pairs"] or 0) // 2,
    )
    distinct = to_pandas(groups.select("fp"))["fp"].to_numpy(dtype=np.int64).view(np.uint64)
    blocks = choose_blocks(distinct, h)
    stats.update(
        blocks=[list(b) for b in block_layout(blocks)],
        tables=len(tables_of(blocks, h)),
        key_bits=key_bits(block_layout(blocks), h),
    )
    rows, table_stats = _search_tables(fps.sparkSession, distinct, blocks, h, cap, first_only=True)
    found = _pairs_of(rows)
    if table_stats["skipped_buckets"]:
        # a pair whose first table skipped it may sit in a later table: keep every
        # table's pairs and remove the repeats
        rows.unpersist()
        rows, table_stats = _search_tables(
            fps.sparkSession, distinct, blocks, h, cap, first_only=False
        )
        found = _pairs_of(rows).distinct()
    cached.append(rows)
    stats.update(table_stats)
    now = time.perf_counter()
    stats["timings_s"] = {"fingerprint_groups_and_candidates": round(now - start, 3)}
    g_a = groups.select(F.col("fp").alias("fp_a"), F.col("members").alias("members_a"))
    g_b = groups.select(F.col("fp").alias("fp_b"), F.col("members").alias("members_b"))
    verified = (
        found.join(g_a, "fp_a")
        .join(g_b, "fp_b")
        .select("members_a", "members_b", "hamming")
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    cached.append(verified)
    stats["verified_group_pairs"] = verified.count()
    stats["rejected_candidates"] = stats["candidate_pairs"] - stats["verified_group_pairs"]
    stats["timings_s"]["verify"] = round(time.perf_counter() - now, 3)
    across = (
        verified.select(F.explode("members_a").alias("u"), "members_b", "hamming")
        .select("u", F.explode("members_b").alias("v"), "hamming")
        .select(F.least("u", "v").alias("a"), F.greatest("u", "v").alias("b"), "hamming")
    )
    within = (
        groups.where(F.col("m") >= 2)
        .select(F.explode(pairs_of_sorted("members", "m")).alias("p"))
        .select(F.col("p.a").alias("a"), F.col("p.b").alias("b"), F.lit(0).alias("hamming"))
    )
    pairs = across.unionByName(within).withColumn(
        "similarity", 1.0 - F.col("hamming") / F.lit(float(FINGERPRINT_BITS))
    )
    return SimilarSets(pairs=pairs, stats=stats, _cached=cached)


#: what a table search task returns: its pairs, then one row of counts (null fingerprints)
_TABLE_ROWS = (
    "fp_a long, fp_b long, hamming int, candidates long, largest_run long, "
    "skipped_runs long, skipped_members long, skipped_pairs long"
)
_COUNTS = ("candidates", "largest_run", "skipped_runs", "skipped_members", "skipped_pairs")


def _search_tables(
    spark: SparkSession,
    distinct: np.ndarray,
    blocks: int,
    h: int,
    cap: int | None,
    first_only: bool,
) -> tuple[DataFrame, dict[str, int]]:
    """Run :func:`search_table` for every table in Spark tasks; their rows (persisted) and counts.

    The distinct fingerprints (8 bytes each) travel with the task function; each
    task takes a share of the table numbers and returns only verified pairs.
    """
    layout = block_layout(blocks)
    tables = tables_of(blocks, h)

    def search(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for number in batch.column(0).to_numpy():
                res = search_table(distinct, layout, tables[int(number)], h, cap, first_only)
                columns = {
                    "fp_a": pa.array(res.a.view(np.int64)),
                    "fp_b": pa.array(res.b.view(np.int64)),
                    "hamming": pa.array(res.hamming.astype(np.int32)),
                }
                nulls = pa.nulls(len(res.a), pa.int64())
                yield pa.RecordBatch.from_pydict(
                    {**columns, **{c: nulls for c in _COUNTS}}, schema=_table_schema()
                )
                counts = [res.candidates, res.largest_run, res.skipped_runs]
                counts += [res.skipped_members, res.skipped_pairs]
                yield pa.RecordBatch.from_pydict(
                    {
                        "fp_a": pa.nulls(1, pa.int64()),
                        "fp_b": pa.nulls(1, pa.int64()),
                        "hamming": pa.nulls(1, pa.int32()),
                        **{c: [v] for c, v in zip(_COUNTS, counts, strict=True)},
                    },
                    schema=_table_schema(),
                )

    tasks = max(1, min(len(tables), parallelism(spark) * 4))
    rows = (
        spark.range(0, len(tables), 1, tasks)
        .mapInArrow(search, _TABLE_ROWS)
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    row = (
        rows.where(F.col("fp_a").isNull())
        .agg(
            F.count(F.lit(1)).alias("tables_searched"),
            F.sum("candidates").alias("candidate_pairs"),
            F.max("largest_run").alias("largest_bucket"),
            F.sum("skipped_runs").alias("skipped_buckets"),
            F.sum("skipped_members").alias("skipped_members"),
            F.sum("skipped_pairs").alias("skipped_pairs"),
        )
        .collect()[0]
    )
    return rows, {key: int(row[key] or 0) for key in row.asDict()}


def _pairs_of(rows: DataFrame) -> DataFrame:
    """The pair rows of :func:`_search_tables` output: ``fp_a, fp_b, hamming``."""
    return rows.where(F.col("fp_a").isNotNull()).select("fp_a", "fp_b", "hamming")


def _table_schema() -> pa.Schema:
    """The Arrow schema of :data:`_TABLE_ROWS`."""
    return pa.schema(
        [("fp_a", pa.int64()), ("fp_b", pa.int64()), ("hamming", pa.int32())]
        + [(c, pa.int64()) for c in _COUNTS]
    )
