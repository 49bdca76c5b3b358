"""SimHash: 64-bit fingerprints of weighted shingles, and Hamming search on Spark.

Each shingle s with weight w(s) gets a 64-bit hash h(s) = the first 8 bytes,
little-endian, of BLAKE2b(utf8(s)) with an 8-byte digest. The fingerprint's bit j is
set when the weighted vote over the document's shingles is positive:

    bit_j = 1  iff  sum_s w(s) * (+1 if bit j of h(s) is 1 else -1) > 0

(a tie is 0; a document without shingles gets fingerprint 0). Repeated shingles
vote once per occurrence unless weights are given explicitly.

Search for all pairs within Hamming distance h uses the pigeonhole principle: cut
the 64 bits into h + 1 blocks; two fingerprints differing in at most h bits agree
exactly on at least one block. Block values are the bucket keys of an equi-match
(:mod:`sparkeval.lsh.candidates`), every candidate is verified with
``bit_count(fa ^ fb) <= h`` in Spark SQL, and identical fingerprints are collapsed
first (their pairs are at distance 0).

Example:
    >>> fp = simhash_of([["a b", "b c"], ["a b", "b c"]])
    >>> int(fp[0]) == int(fp[1])
    True
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.storagelevel import StorageLevel

from sparkeval.errors import ConfigError
from sparkeval.lsh.candidates import bucket_stats, candidate_pairs, pairs_of_sorted, shared_buckets
from sparkeval.lsh.similar import SimilarSets, flat_lists

FINGERPRINT_BITS = 64
#: tokens x 64 votes held at once while fingerprinting a batch
_CHUNK_TOKENS = 1 << 16
_BIT_SHIFTS = np.arange(FINGERPRINT_BITS, dtype=np.uint64)


def shingle_hashes(shingles: Sequence[Any] | np.ndarray) -> np.ndarray:
    """64-bit BLAKE2b hashes (uint64) of shingles; each distinct shingle hashed once.

    Example:
        >>> int(shingle_hashes(["x"])[0]) == int.from_bytes(
        ...     hashlib.blake2b(b"x", digest_size=8).digest(), "little")
        True
    """
    values = shingles if isinstance(shingles, np.ndarray) else np.asarray(shingles, dtype=object)
    if len(values) == 0:
        return np.zeros(0, dtype=np.uint64)
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    digest = b"".join(
        hashlib.blake2b(str(s).encode("utf-8"), digest_size=8).digest() for s in uniques
    )
    return np.frombuffer(digest, dtype="<u8").astype(np.uint64)[codes]


def fingerprints(
    values: np.ndarray, offsets: np.ndarray, weights: np.ndarray | None = None
) -> np.ndarray:
    """SimHash fingerprints (uint64) of documents given as flat shingles + offsets.

    Args:
        values: flat shingles of all documents.
        offsets: ``n_docs + 1`` offsets; document i is ``values[offsets[i]:offsets[i+1]]``.
        weights: optional weight per shingle (aligned with ``values``); default 1.

    Returns:
        ``(n_docs,)`` uint64 fingerprints.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    n_docs = len(offsets) - 1
    out = np.zeros(max(n_docs, 0), dtype=np.uint64)
    if n_docs <= 0 or offsets[-1] == offsets[0]:
        return out
    base = offsets[0]
    hv = shingle_hashes(values[base : offsets[-1]])
    w = None if weights is None else np.asarray(weights, dtype=np.float64)[base : offsets[-1]]
    start = 0
    while start < n_docs:
        end = int(np.searchsorted(offsets, offsets[start] + _CHUNK_TOKENS, side="right")) - 1
        end = min(max(end, start + 1), n_docs)
        lo, hi = offsets[start] - base, offsets[end] - base
        starts = offsets[start:end] - base
        nonempty = offsets[start + 1 : end + 1] - base > starts
        if hi > lo:
            bits = ((hv[lo:hi, None] >> _BIT_SHIFTS) & np.uint64(1)).astype(np.int8)
            votes: np.ndarray = (2 * bits - 1).astype(np.float64 if w is not None else np.int64)
            if w is not None:
                votes *= w[lo:hi, None]
            sums = np.add.reduceat(votes, starts[nonempty] - lo, axis=0)
            packed = np.packbits(sums > 0, axis=1, bitorder="little")
            out[start:end][nonempty] = packed.view("<u8").reshape(-1)
        start = end
    return out


def simhash_of(docs: Iterable[Iterable[Any]], weights: Iterable[Iterable[float]] | None = None):
    """Fingerprints of an iterable of shingle lists (wrapper of :func:`fingerprints`)."""
    lists = [list(d) for d in docs]
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in lists], dtype=np.int64)])
    values = np.empty(int(offsets[-1]), dtype=object)
    values[:] = [s for d in lists for s in d]
    flat_w = None
    if weights is not None:
        flat_w = np.array([x for ws in weights for x in ws], dtype=np.float64)
        if len(flat_w) != len(values):
            raise ValueError("weights must align with the shingles, one weight per shingle")
    return fingerprints(values, offsets, flat_w)


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


def pigeonhole_blocks(max_distance: int) -> list[tuple[int, int]]:
    """``(start_bit, width)`` of the h + 1 blocks, widths differing by at most 1.

    Example:
        >>> pigeonhole_blocks(3)
        [(0, 16), (16, 16), (32, 16), (48, 16)]
    """
    check_distance(max_distance)
    n = max_distance + 1
    widths = [FINGERPRINT_BITS // n + (1 if i < FINGERPRINT_BITS % n else 0) for i in range(n)]
    starts = np.concatenate([[0], np.cumsum(widths)[:-1]])
    return [(int(s), int(w)) for s, w in zip(starts, widths, strict=True)]


def check_distance(max_distance: int) -> int:
    """Validate a Hamming distance threshold: an integer in [0, 63]."""
    if isinstance(max_distance, bool) or not isinstance(max_distance, int):
        raise ConfigError(f"Hamming distance must be an integer in [0, 63], got {max_distance!r}")
    if not 0 <= max_distance < FINGERPRINT_BITS:
        raise ConfigError(f"Hamming distance must be in [0, 63], got {max_distance}")
    return max_distance


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
        max_bucket: skip blocks shared by more distinct fingerprints than this.

    Returns:
        :class:`~sparkeval.lsh.similar.SimilarSets` with ``pairs`` =
        ``a, b, hamming, similarity`` (similarity = 1 - hamming / 64).
    """
    h = check_distance(max_distance)
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
        F.sum(F.col("m") * (F.col("m") - 1) / 2).alias("identical_pairs"),
    ).collect()[0]
    stats.update(
        docs=int(g["docs"] or 0),
        distinct_fingerprints=int(g["distinct"] or 0),
        identical_groups=int(g["identical_groups"] or 0),
        identical_pairs=int(g["identical_pairs"] or 0),
        blocks=[list(b) for b in pigeonhole_blocks(h)],
    )
    block_structs = [
        F.struct(
            F.lit(i).alias("band"),
            F.shiftrightunsigned(F.col("fp"), s)
            .bitwiseAND(F.lit((1 << w) - 1 if w < 64 else -1).cast("long"))
            .alias("key"),
        )
        for i, (s, w) in enumerate(pigeonhole_blocks(h))
    ]
    rows = groups.select("rep", F.explode(F.array(*block_structs)).alias("blk")).select(
        "rep", "blk.band", "blk.key"
    )
    buckets = shared_buckets(rows, "rep", max_bucket).persist(StorageLevel.MEMORY_AND_DISK)
    cached.append(buckets)
    stats.update(bucket_stats(buckets).as_dict())
    cand = candidate_pairs(buckets).persist(StorageLevel.MEMORY_AND_DISK)
    cached.append(cand)
    stats["candidate_pairs"] = cand.count()
    now = time.perf_counter()
    stats["timings_s"] = {"fingerprint_groups_and_candidates": round(now - start, 3)}
    g_a = groups.select(
        F.col("rep").alias("a"), F.col("fp").alias("fp_a"), F.col("members").alias("members_a")
    )
    g_b = groups.select(
        F.col("rep").alias("b"), F.col("fp").alias("fp_b"), F.col("members").alias("members_b")
    )
    verified = (
        cand.join(g_a, "a")
        .join(g_b, "b")
        .withColumn("hamming", F.bit_count(F.col("fp_a").bitwiseXOR(F.col("fp_b"))))
        .where(F.col("hamming") <= h)
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
