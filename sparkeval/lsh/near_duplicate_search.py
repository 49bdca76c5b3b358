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

import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparkeval.errors import ConfigError, InputError
from sparkeval.io.columns import DOC_ALIASES
from sparkeval.io.lists import normalise_columns, read_typed_table
from sparkeval.io.readers import decodes_text, strict_text
from sparkeval.lsh.banding import check_threshold
from sparkeval.lsh.candidates import bucket_report, check_max_bucket
from sparkeval.lsh.clusters import components
from sparkeval.lsh.driver_docs import near_duplicates_in_driver
from sparkeval.lsh.options import DEFAULT_LSH, METHODS, LshOptions
from sparkeval.lsh.shingles import check_shingles, shingle_table
from sparkeval.lsh.simhash import (
    FINGERPRINT_BITS,
    check_distance,
    fingerprint_column,
    similar_fingerprints,
)
from sparkeval.lsh.similar import SimilarSets, similar_sets
from sparkeval.output import atomic_output_dir, write_parquet, write_summary
from sparkeval.spark import spark_type
from sparkeval.status import status

if TYPE_CHECKING:
    from sparkeval.lsh.options import NearDuplicatesConfig


def simhash_distance(threshold: float | int | str) -> int:
    """The Hamming distance h for a SimHash threshold (an integer h or a similarity).

    Example:
        >>> simhash_distance("3"), simhash_distance(0.95)
        (3, 3)
    """
    text = str(threshold).strip()
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(
            f"--threshold for simhash must be a Hamming distance 0..63 or a similarity in "
            f"(0, 1), got {threshold!r}"
        ) from None
    if value.is_integer() and value >= 1:
        return check_distance(int(value))
    if 0.0 < value < 1.0:
        return check_distance(math.floor((1.0 - value) * FINGERPRINT_BITS + 1e-9))
    if value == 0.0:
        return 0
    raise ConfigError(
        f"--threshold for simhash must be a Hamming distance 0..63 or a similarity in (0, 1), "
        f"got {threshold!r}"
    )


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
    parameters: dict[str, Any] = {
        "method": method,
        "shingle": shingle,
        "k": k,
        "max_bucket": cap,
        "weights": has_weights,
    }
    if method == "minhash":
        params = lsh.banding(threshold)
        found = near_duplicates_in_driver(docs, table, threshold, lsh.hasher(), params, cap)
        result = found or similar_sets(
            table, threshold, lsh.hasher(), params, "doc_id", "shingles", cap
        )
        parameters.update(
            threshold=params.threshold,
            **lsh.signature(),
            **{f"banding_{key}": value for key, value in params.as_dict().items()},
        )
        cols = [F.col("jaccard")]
    else:
        h = simhash_distance(threshold)
        fps = fingerprint_column(table, "doc_id", "shingles", "weights" if has_weights else None)
        result = similar_fingerprints(fps, h, "doc_id", "fp", cap)
        parameters.update(max_hamming_distance=h, fingerprint_bits=FINGERPRINT_BITS)
        cols = [F.col("hamming"), F.col("similarity")]
    result.pairs = result.pairs.select(F.col("a").alias("doc_a"), F.col("b").alias("doc_b"), *cols)
    return result, parameters


def write_clusters(pairs_path: Path, clusters_path: Path) -> dict[str, int]:
    """Connected components of the written pairs -> ``clusters.parquet``; counts."""
    table = pq.read_table(pairs_path, columns=["doc_a", "doc_b"])
    a = table.column("doc_a").to_numpy()
    b = table.column("doc_b").to_numpy()
    labels = components(a, b) if len(a) else {}
    ids = np.array(list(labels.keys()), dtype=a.dtype if len(a) else object)
    roots = np.array(list(labels.values()), dtype=ids.dtype)
    if len(roots):
        _, root_index, sizes = np.unique(roots, return_inverse=True, return_counts=True)
    else:
        root_index = sizes = np.zeros(0, dtype=np.int64)
    out = pa.table(
        {
            "doc_id": pa.array(ids, type=table.schema.field("doc_a").type),
            "cluster_id": pa.array(roots, type=table.schema.field("doc_a").type),
            "cluster_size": pa.array(
                np.asarray(sizes)[root_index] if len(roots) else [], type=pa.int64()
            ),
        }
    )
    pq.write_table(out, clusters_path)
    return {
        "pairs": table.num_rows,
        "clustered_docs": len(ids),
        "clusters": len(sizes),
        "largest_cluster": int(max(sizes)) if len(roots) else 0,
    }


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
    if result.searched_in_driver:
        status(f"[driver] {result.stats['sets']} docs: searched in the driver")
    status(
        f"[candidates] {result.stats.get('candidate_pairs', 0)} candidate pairs; "
        "verifying, writing pairs and clusters"
    )
    try:
        with atomic_output_dir(config.out) as staging:
            write_start = time.perf_counter()
            write_parquet(result.pairs, staging / "pairs.parquet")
            cluster_counts = write_clusters(staging / "pairs.parquet", staging / "clusters.parquet")
            stats = dict(result.stats)
            timings = stats.pop("timings_s")
            timings["expand_write_and_cluster"] = round(time.perf_counter() - write_start, 3)
            timings["total"] = round(time.perf_counter() - start, 3)
            summary = {
                "command": "near-duplicates",
                "docs": docs_path,
                "parameters": parameters,
                "counts": {**cluster_counts, **stats},
                **bucket_report(stats),
                "clusters_method": "driver-side vectorised union-find over the verified pairs",
                "timings_s": timings,
            }
            write_summary(staging, summary, "near-duplicates", config.input_paths())
    finally:
        result.release()
    return summary
