"""MinHash ``near-duplicates`` of a small docs table, in the driver.

As for small runs (:mod:`sparkeval.lsh.driver_users`): when Spark's size estimate of
the docs (no job) is at most
:data:`~sparkeval.engine.plans.driver_plan.DRIVER_BYTES`, one Spark job shingles the
texts (the same Spark SQL as ever), computes every shingle's SHA-1 token hash there
(:mod:`sparkeval.lsh.token_hashes`) and collects both as Arrow; the driver stages
(:mod:`sparkeval.lsh.driver_sets`) find the pairs, with the same pairs, values and
statistics as the Spark stages.

Docs the driver path does not take (the Spark stages do): ids of other types than text
or integers, a null or repeated doc id, a null token array or a null token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow.compute as pc

from sparkeval.lsh.driver_sets import TooManyCandidates, similar_docs_in_driver
from sparkeval.lsh.driver_users import ID_TYPES, small_enough
from sparkeval.lsh.similar import SimilarSets
from sparkeval.lsh.token_hashes import raw_hashes, sha1_hash_column

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sparkeval.lsh.banding import BandParams
    from sparkeval.lsh.minhash import MinHasher


def near_duplicates_in_driver(
    docs: DataFrame,
    shingled: DataFrame,
    threshold: float | str,
    hasher: MinHasher,
    params: BandParams,
    max_bucket: int | None,
) -> SimilarSets | None:
    """The pairs of :func:`sparkeval.lsh.similar.similar_sets` over ``shingled``
    (``doc_id, shingles``) found in the driver, or None when the driver path does not
    take these docs (``docs``: the table they were shingled from, for its size).

    ``pairs`` is a DataFrame ``a, b, jaccard`` of the pairs found.
    """
    from pyspark.sql import functions as F

    if dict(shingled.dtypes).get("doc_id") not in ID_TYPES or not small_enough(docs):
        return None
    width = hasher.hash_width
    hashes = sha1_hash_column(F.col("shingles"), width).alias("hashes")
    rows = shingled.select("doc_id", "shingles", hashes).toArrow()
    ids = rows.column("doc_id").combine_chunks()
    shingles = rows.column("shingles").combine_chunks()
    if ids.null_count or shingles.null_count or pc.count_distinct(ids).as_py() != len(ids):
        return None
    if pc.list_flatten(shingles).null_count:
        return None
    raw, _ = raw_hashes(rows.column("hashes"), width)
    try:
        found = similar_docs_in_driver(ids, shingles, raw, threshold, hasher, params, max_bucket)
    except TooManyCandidates:
        return None
    pairs = shingled.sparkSession.createDataFrame(found.pairs)
    return SimilarSets(pairs=pairs, stats=found.stats, searched_in_driver=True)
