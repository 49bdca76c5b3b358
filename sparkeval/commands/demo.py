"""``sparkeval demo``: generate the demo collection and evaluate it in local mode."""

from __future__ import annotations

import argparse
from pathlib import Path

from sparkeval.errors import ConfigError

DEMO_MEASURES = ("official", "nDCG@10", "nDCG", "AP@100", "R@100", "Success@10")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo",
        help="generate a synthetic collection and evaluate it (local Spark)",
        description="Generate a graded synthetic collection (qrels + three runs of "
        "different quality, with unjudged docs and exact score ties) into OUT/data and "
        "evaluate it into OUT/results.",
    )
    p.add_argument("--out", default="demo-results", metavar="DIR")
    p.add_argument("--queries", type=int, default=200, metavar="N")
    p.add_argument("--data-only", action="store_true", help="only generate the data")
    p.add_argument("--master", default="local[*]")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from sparkeval.config import build_config
    from sparkeval.demo_data import generate

    if args.queries < 1:
        raise ConfigError("--queries must be >= 1")
    out = Path(args.out)
    paths = generate(out / "data", queries=args.queries)
    print(f"sparkeval: demo data in {out / 'data'}")
    if args.data_only:
        return 0
    config = build_config(
        {},
        {
            "run": [str(p) for p in paths.runs],
            "qrels": str(paths.qrels),
            "measures": list(DEMO_MEASURES),
            "out": str(out / "results"),
            "master": args.master,
            "overwrite": True,
        },
    )
    from sparkeval.pipeline import jvm_profile, run_evaluate
    from sparkeval.spark import build_session

    partitions = {"spark.sql.shuffle.partitions": "8"}
    spark = build_session(config.master, "sparkeval-demo", partitions, jvm_profile(config))
    run_evaluate(spark, config)
    return 0
