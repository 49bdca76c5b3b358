"""``sparkeval evaluate``: ranking measures of one or more runs against qrels."""

from __future__ import annotations

import argparse

from sparkeval.compat import COMPAT_PROFILES
from sparkeval.config import READERS, build_config, load_config_file
from sparkeval.engine.worker.assemble import QUERY_POLICIES
from sparkeval.io.readers import FORMATS


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate",
        help="compute ranking measures per query and overall",
        description="Evaluate runs against qrels on Spark. Writes OUT/per_query.parquet and "
        "OUT/summary.json and prints a trec_eval-style table.",
    )
    p.add_argument(
        "--run", action="append", metavar="PATH", help="run file or directory (repeatable)"
    )
    p.add_argument("--qrels", metavar="PATH", help="relevance judgements")
    p.add_argument(
        "--measures",
        action="append",
        metavar="LIST",
        help="comma separated measure names (nDCG@10, AP, P@5, map, ndcg_cut_10, ...) "
        "or sets (official, all_trec); see 'sparkeval measures'",
    )
    p.add_argument("--out", metavar="DIR", help="output directory (written atomically)")
    p.add_argument(
        "--queries",
        choices=QUERY_POLICIES,
        default=None,
        help="queries averaged: qrels (default; missing from a run scores 0), both, run, "
        "union (run or qrels)",
    )
    p.add_argument(
        "--rel-level",
        type=int,
        default=None,
        metavar="N",
        help="grade >= N is relevant (default 1, trec_eval -l)",
    )
    p.add_argument(
        "--depth",
        type=int,
        default=None,
        metavar="N",
        help="keep the first N docs per query after sorting (trec_eval -M)",
    )
    p.add_argument(
        "--names",
        choices=("canonical", "trec"),
        default=None,
        help="measure names in outputs (default canonical)",
    )
    p.add_argument(
        "--per-query",
        action="store_const",
        const=True,
        default=None,
        help="print per-query values too",
    )
    p.add_argument(
        "--compat",
        choices=COMPAT_PROFILES,
        default=None,
        help="reproduce another evaluator: trec (default), mllib (Spark RankingMetrics) or "
        "recommenders (Microsoft Recommenders); see the README",
    )
    p.add_argument(
        "--relevance",
        choices=("grade", "all"),
        default=None,
        help="truth relevance: grade (integer grades, default) or all (every truth item)",
    )
    p.add_argument(
        "--relevance-threshold",
        type=float,
        default=None,
        metavar="T",
        help="truth ratings >= T are relevant (grade 1), others grade 0",
    )
    p.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    p.add_argument("--config", metavar="FILE", help="YAML config; options given here win")
    p.add_argument("--format", choices=FORMATS, default=None, help="format of all inputs")
    p.add_argument("--run-format", choices=FORMATS, default=None)
    p.add_argument("--qrels-format", choices=FORMATS, default=None)
    p.add_argument(
        "--run-columns",
        default=None,
        metavar="MAP",
        help="explicit run columns, e.g. query_id=user,doc_id=item,score=pred",
    )
    p.add_argument(
        "--qrels-columns",
        default=None,
        metavar="MAP",
        help="explicit qrels columns, e.g. relevance=rating",
    )
    p.add_argument(
        "--near-duplicates",
        default=None,
        metavar="PATH",
        help="near-duplicate pairs doc_a, doc_b (e.g. the pairs.parquet of 'sparkeval "
        "near-duplicates'): a doc that near-duplicates a higher-ranked doc gains nothing, "
        "and NearDup@k becomes available",
    )
    p.add_argument(
        "--near-duplicates-format",
        choices=FORMATS,
        default=None,
        help="format of the pairs (default from the extension; trec means whitespace "
        "separated 'doc_a doc_b' lines)",
    )
    p.add_argument(
        "--buckets",
        type=int,
        default=None,
        metavar="B",
        help="hash buckets of queries (default spark.sql.shuffle.partitions)",
    )
    p.add_argument(
        "--reader",
        choices=READERS,
        default=None,
        help="who reads Parquet inputs: auto (default: the Python workers read plain "
        "local Parquet row groups themselves and exchange Arrow payloads; anything else "
        "is read by Spark) or spark (always Spark's readers)",
    )
    p.add_argument(
        "--overwrite",
        action="store_const",
        const=True,
        default=None,
        help="replace an existing output directory",
    )
    p.set_defaults(func=run)


def config_from_args(args: argparse.Namespace):
    file_values = load_config_file(args.config) if args.config else {}
    cli_values = {
        "run": args.run,
        "qrels": args.qrels,
        "measures": args.measures,
        "out": args.out,
        "queries": args.queries,
        "rel_level": args.rel_level,
        "depth": args.depth,
        "names": args.names,
        "per_query": args.per_query,
        "master": args.master,
        "format": args.format,
        "run_format": args.run_format,
        "qrels_format": args.qrels_format,
        "run_columns": args.run_columns,
        "qrels_columns": args.qrels_columns,
        "buckets": args.buckets,
        "reader": args.reader,
        "overwrite": args.overwrite,
        "compat": args.compat,
        "relevance": args.relevance,
        "relevance_threshold": args.relevance_threshold,
        "near_duplicates": args.near_duplicates,
        "near_duplicates_format": args.near_duplicates_format,
    }
    return build_config(file_values, cli_values)


def run(args: argparse.Namespace) -> int:
    config = config_from_args(args)  # validated before Spark starts
    from sparkeval.pipeline import jvm_profile, run_evaluate
    from sparkeval.spark import build_session

    spark = build_session(config.master, config.app_name, config.spark, jvm_profile(config))
    run_evaluate(spark, config)
    return 0
