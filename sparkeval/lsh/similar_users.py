"""All user pairs whose lists have Jaccard >= T.

Each user's set is the items of their list (the top k by score when ``--k`` is
given, ties by item id descending). Pairs are found with MinHash LSH and verified
exactly, so every reported pair and value is exact; a true pair is missed only
when it shares no band (probability 1 - P(J), P the S-curve; ``summary.json`` gives
P(T)) or falls only in a bucket skipped by ``--max-bucket`` (counted in the summary).

Outputs in ``--out``: ``pairs.parquet`` (``user_a, user_b, jaccard``, user_a <
user_b) and ``summary.json``.

The command is :mod:`sparkeval.commands.similar_users`.
"""

from __future__ import annotations

import time
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparkeval.commands._tables import check_k, read_run_table, top_k
from sparkeval.lsh.banding import choose_bands
from sparkeval.lsh.candidates import DEFAULT_MAX_BUCKET, bucket_report, check_max_bucket
from sparkeval.lsh.minhash import DEFAULT_SCHEME, MinHasher
from sparkeval.lsh.similar import SimilarSets, similar_sets
from sparkeval.output import atomic_output_dir, check_output_path, write_json, write_parquet


def user_sets(run: DataFrame, k: int | None = None) -> DataFrame:
    """``query_id, items`` (sorted distinct item array) per user, after the top-k cut."""
    return (
        top_k(run, check_k(k))
        .groupBy("query_id")
        .agg(F.array_sort(F.collect_set("doc_id")).alias("items"))
    )


def find_similar_users(
    run: DataFrame,
    threshold: float | str,
    *,
    k: int | None = None,
    num_perm: int = 128,
    bands: int | None = None,
    rows: int | None = None,
    seed: int = 1,
    recall: float = 0.99,
    max_bucket: int | None = DEFAULT_MAX_BUCKET,
    scheme: str = DEFAULT_SCHEME,
) -> tuple[SimilarSets, dict[str, Any]]:
    """Similar user pairs of a run DataFrame (``query_id, doc_id, score``).

    Args:
        run: the run rows (one user's list = rows sharing ``query_id``).
        threshold: Jaccard threshold T in (0, 1]; pairs at exactly T are included.
        k: list cutoff (top k by score, ties by item id descending), ``None`` = whole list.
        num_perm: MinHash signature length.
        bands: explicit bands (with ``rows``); else chosen for ``recall`` at T.
        rows: explicit rows per band.
        seed: MinHash permutation seed.
        recall: target for P(T) when choosing bands automatically.
        max_bucket: cap on one bucket's distinct sets (``None``/0 = no cap).
        scheme: datasketch MinHash scheme.

    Returns:
        ``(result, parameters)``: ``result.pairs`` has ``user_a, user_b, jaccard``.
    """
    params = choose_bands(threshold, num_perm=num_perm, recall=recall, bands=bands, rows=rows)
    hasher = MinHasher(num_perm=num_perm, seed=seed, scheme=scheme)
    cap = check_max_bucket(max_bucket)
    sets = user_sets(run, k)
    result = similar_sets(sets, threshold, hasher, params, "query_id", "items", cap)
    result.pairs = result.pairs.select(
        F.col("a").alias("user_a"), F.col("b").alias("user_b"), F.col("jaccard")
    )
    parameters = {
        "threshold": params.threshold,
        "k": k,
        "num_perm": num_perm,
        "seed": seed,
        "scheme": scheme,
        "recall_target": recall if params.chosen == "auto" else None,
        "max_bucket": cap,
        **{f"banding_{key}": value for key, value in params.as_dict().items()},
    }
    return result, parameters


def run_similar_users(
    spark: SparkSession,
    run_path: str,
    out: str,
    threshold: float | str,
    *,
    run_id: str | None = None,
    overwrite: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """Read a run, find similar users, write ``pairs.parquet`` + ``summary.json``.

    Returns the summary that was written.
    """
    check_output_path(out, [run_path], overwrite)
    start = time.perf_counter()
    run = read_run_table(spark, run_path, run_id)
    result, parameters = find_similar_users(run, threshold, **options)
    try:
        with atomic_output_dir(out) as staging:
            pairs_path = staging / "pairs.parquet"
            write_start = time.perf_counter()
            write_parquet(result.pairs, pairs_path)
            written = spark.read.parquet(str(pairs_path)).count()
            stats = dict(result.stats)
            stats["timings_s"]["expand_and_write"] = round(time.perf_counter() - write_start, 3)
            stats["timings_s"]["total"] = round(time.perf_counter() - start, 3)
            summary = {
                "command": "similar-users",
                "run": run_path,
                "run_id": run_id,
                "parameters": parameters,
                "counts": {
                    "users": stats.pop("sets"),
                    "users_with_empty_list": stats.pop("empty_sets"),
                    "pairs": written,
                    **{k: v for k, v in stats.items() if k != "timings_s"},
                },
                "estimated_recall_at_threshold": parameters[
                    "banding_estimated_recall_at_threshold"
                ],
                **bucket_report(stats),
                "timings_s": stats["timings_s"],
            }
            write_json(staging / "summary.json", summary)
    finally:
        result.release()
    return summary
