"""``sparkeval rating-errors``: rating-prediction errors, pooled and per user."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TextIO

from sparkeval.engine.plans.rating_engine import MISSING_POLICIES, RatingEvaluation
from sparkeval.errors import ConfigError
from sparkeval.io.readers import FORMATS
from sparkeval.measures.rating_names import DEFAULT_RATING_MEASURES, parse_rating_measures


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "rating-errors",
        help="rating-prediction errors (RMSE, MAE, R2, ...) pooled and per user",
        description="Join predictions (user, item, prediction) with true ratings (user, item, "
        "rating) on (user, item) and compute each error pooled over all pairs and as the mean "
        "of per-user values. Writes OUT/per_user.parquet (user_id, measure, value) and "
        "OUT/summary.json.",
    )
    p.add_argument(
        "--predictions",
        required=True,
        metavar="PATH",
        help="predictions table (Parquet, CSV, JSON Lines or 'user item value' text)",
    )
    p.add_argument("--truth", required=True, metavar="PATH", help="true ratings table")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory (atomic)")
    p.add_argument(
        "--measures",
        action="append",
        metavar="LIST",
        help="comma separated: RMSE, MAE, MaxAE, TopL_AE(L=3), Lp(p=3), R2, ExpVar "
        f"(default {','.join(DEFAULT_RATING_MEASURES)})",
    )
    p.add_argument(
        "--columns",
        default=None,
        metavar="MAP",
        help="explicit columns, e.g. user_id=uid,item_id=iid,prediction=p,rating=r",
    )
    p.add_argument(
        "--missing",
        choices=MISSING_POLICIES,
        default="error",
        help="a pair on one side only: error (default) or skip it (it is counted)",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="format of both inputs ('trec' means 'user item value' text)",
    )
    p.add_argument(
        "--buckets",
        type=int,
        default=None,
        metavar="B",
        help="hash buckets of users (default spark.sql.shuffle.partitions)",
    )
    p.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, stdout: TextIO | None = None) -> int:
    try:
        requests = parse_rating_measures(args.measures)
    except ValueError as exc:
        raise ConfigError(f"--measures: {exc}") from None
    if args.buckets is not None and args.buckets < 1:
        raise ConfigError(f"--buckets: expected a whole number >= 1, got {args.buckets}")
    from sparkeval.output import check_output_path

    target = check_output_path(args.out, [args.predictions, args.truth], args.overwrite)
    from sparkeval.spark import build_session

    spark = build_session(args.master, "sparkeval-rating-errors")
    run_rating_errors(spark, args, [r.name for r in requests], target, stdout or sys.stdout)
    return 0


def run_rating_errors(
    spark, args: argparse.Namespace, measures: list[str], target, stdout: TextIO
) -> RatingEvaluation:
    """Read, evaluate and write ``per_user.parquet`` and ``summary.json`` all or nothing."""
    from sparkeval.engine.plans.rating_engine import rating_errors
    from sparkeval.io.ratings import parse_columns, read_ratings
    from sparkeval.output import atomic_output_dir, write_json

    started = time.time()
    columns = parse_columns(args.columns)
    pred = read_ratings(spark, args.predictions, "predictions", args.format, columns)
    truth = read_ratings(spark, args.truth, "truth", args.format, columns)
    evaluation = rating_errors(
        spark, pred, truth, measures, missing=args.missing, buckets=args.buckets
    )
    try:
        report = dict(evaluation.report)
        report["inputs"] = {"predictions": args.predictions, "truth": args.truth}
        with atomic_output_dir(target) as staging:
            (
                evaluation.per_user.orderBy("user_id", "_order")
                .drop("_order")
                .write.parquet(str(staging / "per_user.parquet"))
            )
            report["seconds"] = round(time.time() - started, 3)
            write_json(staging / "summary.json", report)
        for name, value in report["measures"].items():
            text = "null" if value is None or value != value else f"{value:.6f}"
            stdout.write(f"{name:<26}\t{text}\n")
        pairs = report["pairs"]
        stdout.write(f"{'pairs_matched':<26}\t{pairs['matched']}\n")
        stdout.write(f"{'pairs_skipped':<26}\t{pairs['skipped']}\n")
    finally:
        evaluation.unpersist()
    print(f"sparkeval: results in {target} (per_user.parquet, summary.json)", file=sys.stderr)
    return evaluation
