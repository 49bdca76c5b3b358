"""``sparkeval similar-users``: all user pairs whose lists have Jaccard >= T.

Each user's set is the items of their list (the top k by score when ``--k`` is
given, ties by item id descending). Pairs are found with MinHash LSH and verified
exactly, so every reported pair and value is exact; a true pair is missed only
when it shares no band (probability 1 - P(J), P the S-curve; ``summary.json`` gives
P(T)) or falls only in a bucket skipped by ``--max-bucket`` (counted in the summary).

Outputs in ``--out``: ``pairs.parquet`` (``user_a, user_b, jaccard``, user_a <
user_b) and ``summary.json``.

Example:
    sparkeval similar-users --run run.parquet --threshold 0.8 --k 20 --out sim/
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparkeval.commands._tables import check_k, positive_int, read_run, top_k
from sparkeval.lsh.banding import choose_bands
from sparkeval.lsh.candidates import DEFAULT_MAX_BUCKET, check_max_bucket
from sparkeval.lsh.minhash import DEFAULT_SCHEME, SCHEMES, MinHasher
from sparkeval.lsh.similar import SimilarSets, similar_sets
from sparkeval.output import atomic_output_dir, check_output_path, write_json
from sparkeval.spark import build_session


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
    run = read_run(spark, run_path, run_id)
    result, parameters = find_similar_users(run, threshold, **options)
    try:
        with atomic_output_dir(out) as staging:
            pairs_path = staging / "pairs.parquet"
            write_start = time.perf_counter()
            result.pairs.write.parquet(str(pairs_path))
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


def _command(args: argparse.Namespace) -> int:
    spark = build_session(master=args.master)
    summary = run_similar_users(
        spark,
        args.run,
        args.out,
        args.threshold,
        run_id=args.run_id,
        overwrite=args.overwrite,
        k=args.k,
        **common_lsh_values(args),
    )
    counts = summary["counts"]
    print(
        f"similar-users: {counts['pairs']} pairs with Jaccard >= {args.threshold} among "
        f"{counts['users']} users (bands {summary['parameters']['banding_bands']} x "
        f"{summary['parameters']['banding_rows']}, estimated recall at threshold "
        f"{summary['estimated_recall_at_threshold']:.4f}); wrote {args.out}"
    )
    if summary["skipped_by_max_bucket"]["buckets"]:
        skipped = summary["skipped_by_max_bucket"]
        print(
            f"similar-users: warning: {skipped['buckets']} buckets over --max-bucket "
            f"{args.max_bucket} were skipped ({skipped['pairs']} candidate pairs not checked)"
        )
    return 0


def add_common_lsh_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by the MinHash commands."""
    parser.add_argument(
        "--num-perm",
        type=positive_int("--num-perm"),
        default=128,
        help="MinHash signature length (default 128)",
    )
    parser.add_argument(
        "--bands",
        type=positive_int("--bands"),
        default=None,
        help="number of LSH bands (with --rows; default: chosen for --recall)",
    )
    parser.add_argument(
        "--rows",
        type=positive_int("--rows"),
        default=None,
        help="signature rows per band (with --bands)",
    )
    parser.add_argument(
        "--recall",
        type=float,
        default=0.99,
        help="target probability that a pair exactly at the threshold becomes "
        "a candidate, used to choose bands x rows (default 0.99)",
    )
    parser.add_argument("--seed", type=int, default=1, help="MinHash permutation seed (default 1)")
    parser.add_argument(
        "--scheme",
        choices=SCHEMES,
        default=DEFAULT_SCHEME,
        help="datasketch MinHash scheme (default affine32, datasketch 2.x's)",
    )
    parser.add_argument(
        "--max-bucket",
        type=int,
        default=DEFAULT_MAX_BUCKET,
        help="skip LSH buckets with more distinct sets than this, and report "
        f"them (default {DEFAULT_MAX_BUCKET}; 0 = no cap)",
    )


def common_lsh_values(args: argparse.Namespace) -> dict[str, Any]:
    """The values of :func:`add_common_lsh_options`, as keyword arguments."""
    names = ("num_perm", "bands", "rows", "seed", "recall", "max_bucket", "scheme")
    return {name: getattr(args, name) for name in names}


def bucket_report(stats: Mapping[str, Any]) -> dict[str, Any]:
    """The ``largest_bucket`` and ``skipped_by_max_bucket`` entries of a summary."""
    return {
        "largest_bucket": stats.get("largest_bucket", 0),
        "skipped_by_max_bucket": {
            "buckets": stats.get("skipped_buckets", 0),
            "members": stats.get("skipped_members", 0),
            "pairs": stats.get("skipped_pairs", 0),
        },
    }


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "similar-users",
        help="user pairs whose recommendation lists have Jaccard >= T (MinHash LSH, exact)",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument(
        "--run", required=True, help="run table (Parquet/CSV/TSV/JSONL) or TREC run file"
    )
    parser.add_argument("--run-id", default=None, help="run to use when the table holds several")
    parser.add_argument("--threshold", required=True, help="Jaccard threshold in (0, 1]")
    parser.add_argument(
        "--k",
        type=positive_int("--k"),
        default=None,
        help="use each user's top K items by score (default: whole list)",
    )
    add_common_lsh_options(parser)
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    parser.add_argument("--master", default=None, help="Spark master (default local[*])")
    parser.set_defaults(func=_command)
    return parser
