"""Near-identical documents and their clusters.

The docs table has ``doc_id`` and either ``text`` (shingled in Spark SQL, see
:mod:`sparkeval.lsh.shingles`) or ``tokens`` (an array, used as given, with an
optional aligned ``weights`` array for SimHash).

* ``--method minhash``: pairs with exact Jaccard of shingle sets >= ``--threshold``
  (a similarity in (0, 1]); MinHash LSH finds candidates, Spark SQL verifies them.
* ``--method simhash``: pairs whose 64-bit SimHash fingerprints differ in at most h
  bits; ``--threshold`` is h itself (an integer 0..63) or a similarity s in (0, 1)
  read as h = floor((1 - s) * 64). Found exactly by permuted tables.

Outputs in ``--out``: ``pairs.parquet`` (``doc_a, doc_b`` and ``jaccard``, or
``hamming`` and ``similarity``), ``clusters.parquet`` (``doc_id, cluster_id,
cluster_size`` for every document in at least one pair; the cluster id is the
smallest member) and ``summary.json``.

The command is :mod:`sparkeval.commands.near_duplicates`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparkeval.errors import ConfigError, InputError
from sparkeval.io.columns import DOC_ALIASES
from sparkeval.io.lists import normalise_columns, read_typed_table
from sparkeval.io.readers import decodes_text, strict_text
from sparkeval.lsh.banding import check_threshold
from sparkeval.lsh.driver_docs import near_duplicates_in_driver
from sparkeval.lsh.fingerprints import simhash_distance
from sparkeval.lsh.near_duplicate_outputs import (  # noqa: F401 (also here)
    minhash_parameters,
    pairs_schema,
    report_search,
    search_parameters,
    simhash_parameters,
    write_clusters,
    write_near_duplicates,
)
from sparkeval.lsh.options import DEFAULT_LSH, METHODS, LshOptions
from sparkeval.lsh.search_stats import check_max_bucket
from sparkeval.lsh.shingles import check_shingles, shingle_table
from sparkeval.lsh.simhash import (
    fingerprint_column,
    similar_fingerprints,
)
from sparkeval.lsh.similar import SimilarSets, similar_sets
from sparkeval.output import write_spark_table
from sparkeval.spark import spark_type
from sparkeval.status import status

if TYPE_CHECKING:
    import pyarrow as pa

    from sparkeval.lsh.options import NearDuplicatesConfig


def doc_shingles(
    docs: DataFrame, kind: str, k: int, source: str = "docs"
) -> tuple[DataFrame, bool]:
    """``doc_id, shingles[, weights]`` from a docs table; also whether weights exist."""
    check_shingles(kind, k)
    if "tokens" in docs.columns:
        cols = [
            F.col("doc_id"),
            F.col("tokens").cast(spark_type("array<string>")).alias("shingles"),
        ]
        has_weights = "weights" in docs.columns
        if has_weights:
            cols.append(F.col("weights").cast(spark_type("array<double>")).alias("weights"))
        return docs.select(*cols), has_weights
    if "text" not in docs.columns:
        raise InputError(f"{source}: needs a text column or a tokens array column")
    return shingle_table(docs, "text", kind, k, keep=("doc_id",)), False


def find_near_duplicates(
    docs: DataFrame,
    method: str,
    threshold: float | int | str,
    *,
    shingle: str = "word",
    k: int = 3,
    lsh: LshOptions = DEFAULT_LSH,
) -> tuple[SimilarSets, dict[str, Any]]:
    """Near-duplicate pairs of a docs DataFrame (``doc_id`` + ``text`` or ``tokens``).

    Args:
        docs: ``doc_id`` and ``text``, or ``doc_id`` and ``tokens`` (+ ``weights``).
        method: ``minhash`` (Jaccard >= threshold) or ``simhash`` (Hamming <= threshold).
        threshold: a Jaccard in (0, 1], or a Hamming distance / similarity for SimHash.
        shingle: the unit of a text shingle; ``k`` units per shingle.
        lsh: the MinHash signature and banding, and the bucket cap (both methods).

    Returns:
        ``(result, parameters)``; ``result.pairs`` has ``doc_a, doc_b`` and the
        similarity columns of the method.
    """
    if method not in METHODS:
        raise ConfigError(f"--method must be one of {', '.join(METHODS)}; got {method!r}")
    cap = check_max_bucket(lsh.max_bucket)
    table, has_weights = doc_shingles(docs, shingle, k)
    parameters = search_parameters(method, shingle, k, cap, has_weights)
    if method == "minhash":
        params = lsh.banding(threshold)
        found = near_duplicates_in_driver(docs, table, threshold, lsh.hasher(), params, cap)
        result = found or similar_sets(
            table, threshold, lsh.hasher(), params, "doc_id", "shingles", cap
        )
        parameters.update(minhash_parameters(lsh, params))
        cols = [F.col("jaccard")]
    else:
        h = simhash_distance(threshold)
        fps = fingerprint_column(table, "doc_id", "shingles", "weights" if has_weights else None)
        result = similar_fingerprints(fps, h, "doc_id", "fp", cap)
        parameters.update(simhash_parameters(h))
        cols = [F.col("hamming"), F.col("similarity")]
    result.pairs = result.pairs.select(F.col("a").alias("doc_a"), F.col("b").alias("doc_b"), *cols)
    return result, parameters


def refuse_repeated_docs(docs: DataFrame, source: str) -> None:
    """A doc id given twice (two texts for one id) is an error naming the id: a pair
    found for one of its texts would be reported for both (one Spark job).

    Raises:
        InputError: ``source: doc id X appears N times; each doc may appear once``.
    """
    repeated = (
        docs.groupBy("doc_id").count().where(F.col("count") > 1).orderBy("doc_id").limit(1)
    ).collect()
    if repeated:
        doc_id, count = repeated[0]
        raise InputError(
            f"{source}: doc id {doc_id} appears {count} times; each doc may appear once"
        )


def run_near_duplicates(spark: SparkSession, config: NearDuplicatesConfig) -> dict[str, Any]:
    """Read docs, find near-duplicate pairs and clusters, write them; returns the summary."""
    config.preflight()
    if config.method == "minhash":
        check_threshold(config.threshold, "--threshold")
    start = time.perf_counter()
    docs_path = config.docs
    decoded = decodes_text(docs_path)
    docs = normalise_columns(
        read_typed_table(spark, docs_path), DOC_ALIASES, ("doc_id",), docs_path, decoded
    )
    if "text" in docs.columns:
        docs = strict_text(docs, "text", "doc_id", docs_path, decoded)
    refuse_repeated_docs(docs, docs_path)
    status(f"[read] {docs_path}; {config.method} signatures and candidates")
    result, parameters = find_near_duplicates(
        docs, config.method, config.threshold, shingle=config.shingle, k=config.k, lsh=config
    )
    report_search(result.stats, result.searched_in_driver)

    def schema_of(collected: pa.Schema) -> pa.Schema:
        return pairs_schema(config.method, collected.field("doc_a").type)

    def write_pairs(path: Path) -> object:
        # the local engine's bytes up to the driver's limit (at most N + 1 pairs
        # collected to tell: their count is known only once they are written); SimHash
        # pairs come in the order of Spark's joins, the driver sorts them as it does
        order = ("doc_a", "doc_b") if config.method == "simhash" else ()
        return write_spark_table(result.pairs, path, schema_of, sort_by=order)

    try:
        return write_near_duplicates(config, write_pairs, result.stats, parameters, start)
    finally:
        result.release()
