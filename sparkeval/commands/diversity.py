"""``sparkeval diversity``: beyond-accuracy measures of a run's recommendation lists.

Measures: inter-user Hamming diversity (exact, mean and per user),
mean pairwise user Jaccard (exact or sampled with CI and bounds), intra-list
diversity (item similarity from ``--item-features`` or co-occurrence in
``--train``), catalog and distributional coverage, Gini of exposure, novelty and
serendipity.

Inputs: ``--run`` (``query_id/user, doc_id/item, score[, relevance]``), optional
``--train`` (``user, item`` interactions) and ``--item-features`` (``item,
features`` with ``features`` an array: a numeric vector or labels).
Outputs in ``--out``: ``per_user.parquet`` and ``summary.json``.

Example:
    sparkeval diversity --run reco.parquet --train train.parquet --k 10 --out div/
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from pyspark.sql import SparkSession

from sparkeval.commands._tables import (
    FEATURE_COLUMNS,
    TRAIN_COLUMNS,
    _read_table,
    check_k,
    normalise_columns,
    positive_int,
    read_run,
    top_k,
)
from sparkeval.diversity.evaluate import evaluate_diversity
from sparkeval.diversity.inter_user import DEFAULT_EXACT_PAIR_LIMIT, DEFAULT_SAMPLE_PAIRS
from sparkeval.diversity.intra_list import SIMILARITIES
from sparkeval.errors import InputError
from sparkeval.output import atomic_output_dir, check_output_path, write_json
from sparkeval.spark import build_session


def run_diversity(
    spark: SparkSession,
    run_path: str,
    out: str,
    *,
    train_path: str | None = None,
    features_path: str | None = None,
    run_id: str | None = None,
    k: int | None = None,
    overwrite: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """Read the inputs, compute the measures, write ``per_user.parquet`` + ``summary.json``."""
    inputs = [p for p in (run_path, train_path, features_path) if p]
    check_output_path(out, inputs, overwrite)
    start = time.perf_counter()
    lists = top_k(read_run(spark, run_path, run_id, require_score=k is not None), check_k(k))
    cols = ["query_id", "doc_id"] + (["relevance"] if "relevance" in lists.columns else [])
    lists = lists.select(*cols)
    train = None
    if train_path:
        train = normalise_columns(
            _read_table(spark, train_path), TRAIN_COLUMNS, ("query_id", "doc_id"), train_path
        )
    features = None
    if features_path:
        features = normalise_columns(
            _read_table(spark, features_path),
            FEATURE_COLUMNS,
            ("doc_id", "features"),
            features_path,
        )
        if not features.schema["features"].dataType.simpleString().startswith("array"):
            raise InputError(
                f"{features_path}: column features must be an array (a numeric vector or "
                f"labels), got {features.schema['features'].dataType.simpleString()}"
            )
    per_user, summary = evaluate_diversity(
        spark, lists, train=train, features=features, length=k, **options
    )
    with atomic_output_dir(out) as staging:
        per_user.write.parquet(str(staging / "per_user.parquet"))
        summary = {
            "command": "diversity",
            "run": run_path,
            "run_id": run_id,
            "train": train_path,
            "item_features": features_path,
            "k": k,
            **summary,
            "timings_s": {"total": round(time.perf_counter() - start, 3)},
        }
        write_json(staging / "summary.json", summary)
    return summary


def _command(args: argparse.Namespace) -> int:
    spark = build_session(master=args.master)
    summary = run_diversity(
        spark,
        args.run,
        args.out,
        train_path=args.train,
        features_path=args.item_features,
        run_id=args.run_id,
        k=args.k,
        overwrite=args.overwrite,
        similarity=args.similarity,
        exact_pair_limit=args.exact_pair_limit,
        sample_pairs=args.sample_pairs,
        seed=args.seed,
    )
    inter = summary["inter_user"]
    print(
        f"diversity: {inter['users']} users, inter-user diversity "
        f"{inter['inter_user_diversity']:.6f}, distributional coverage "
        f"{summary['coverage']['distributional_coverage']:.6f} bits; wrote {args.out}"
    )
    for name, why in summary["skipped"].items():
        print(f"diversity: {name} not computed: {why}")
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "diversity",
        help="inter-user and intra-list diversity, coverage, Gini, novelty, serendipity",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument(
        "--run", required=True, help="recommendation lists (run table or TREC run file)"
    )
    parser.add_argument("--run-id", default=None, help="run to use when the table holds several")
    parser.add_argument("--train", default=None, help="training interactions (user, item)")
    parser.add_argument("--item-features", default=None, help="item features (item, features)")
    parser.add_argument(
        "--similarity",
        choices=SIMILARITIES,
        default=None,
        help="item similarity for intra-list diversity and serendipity "
        "(default: cosine with --item-features, else cooccurrence with --train)",
    )
    parser.add_argument(
        "--k",
        type=positive_int("--k"),
        default=None,
        help="use each user's top K items (also the L of inter-user diversity)",
    )
    parser.add_argument(
        "--exact-pair-limit",
        type=int,
        default=DEFAULT_EXACT_PAIR_LIMIT,
        help="mean user Jaccard is exact up to this many co-occurring pairs, "
        f"sampled above (default {DEFAULT_EXACT_PAIR_LIMIT})",
    )
    parser.add_argument(
        "--sample-pairs",
        type=positive_int("--sample-pairs"),
        default=DEFAULT_SAMPLE_PAIRS,
        help=f"user pairs sampled otherwise (default {DEFAULT_SAMPLE_PAIRS})",
    )
    parser.add_argument("--seed", type=int, default=1, help="sampling/MinHash seed (default 1)")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    parser.add_argument("--master", default=None, help="Spark master (default local[*])")
    parser.set_defaults(func=_command)
    return parser
