"""``sparkeval rank-distance``: how differently two or more runs rank the same queries.

Example:
    sparkeval rank-distance --runs runs.parquet --baseline bm25 --run dense \\
        --k 10 --rbo-p 0.9 --depth 100 --out out/rd

Writes ``rank_distance.parquet`` (one row per run × query: Kendall τ-b, Spearman ρ,
footrule, Cayley, Ulam, Hamming over the shared docs, with the overlap size;
Jaccard@k; RBO_ext) and ``summary.json`` (per-run means, query counts, top-k
exposure entropy and JS/KL against the baseline) atomically into ``--out``.
"""

from __future__ import annotations

import argparse
from typing import Any

from sparkeval.compare.progress import stage
from sparkeval.errors import EXIT_OK, ConfigError


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "rank-distance",
        help="rank distances (τ, ρ, footrule, Cayley, Ulam, Hamming, Jaccard@k, RBO) and "
        "exposure divergence between runs and a baseline",
        description="Compare the rankings of runs with a baseline's, query by query. "
        "Rankings: score descending, ties by doc_id descending; cut at --depth.",
    )
    p.add_argument("--runs", action="append", required=True, metavar="PATH",
                   help="run table(s) run_id, query_id, doc_id, score (Parquet or CSV)")
    p.add_argument("--baseline", required=True, metavar="RUN", help="run id of the baseline")
    p.add_argument("--run", action="append", dest="runs_compared", metavar="RUN",
                   help="run id to compare (repeatable; default: every other run)")
    p.add_argument("--k", type=int, default=10, help="depth of Jaccard@k and exposure")
    p.add_argument("--rbo-p", type=float, default=0.9, help="RBO persistence (default 0.9)")
    p.add_argument("--depth", type=int, default=100, help="ranking depth cap (default 100)")
    p.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--overwrite", action="store_true", help="replace a non-empty --out")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from sparkeval.compare.pipeline import (
        CompareOptions,
        exposure_summary,
        rank_distance_summary,
        rank_distance_table,
        read_runs,
    )
    from sparkeval.output import atomic_output_dir, check_output_path, write_json
    from sparkeval.spark import build_session

    options = CompareOptions(baseline=args.baseline, k=args.k, rbo_p=args.rbo_p,
                             depth=args.depth)
    check_output_path(args.out, list(args.runs), args.overwrite)
    stage("spark", "starting Spark")
    spark = build_session(master=args.master, app_name="sparkeval-rank-distance")
    runs_df = read_runs(spark, args.runs)
    present = sorted(r[0] for r in runs_df.select("run_id").distinct().collect())
    if args.baseline not in present:
        raise ConfigError(f"baseline run {args.baseline!r} is not in the run table(s); runs: "
                          + ", ".join(present))
    wanted = args.runs_compared or [r for r in present if r != args.baseline]
    unknown = sorted(set(wanted) - set(present))
    if unknown:
        raise ConfigError(f"run(s) {', '.join(unknown)} not in the run table(s); runs: "
                          + ", ".join(present))
    runs = [r for r in dict.fromkeys(wanted) if r != args.baseline]
    if not runs:
        raise ConfigError("nothing to compare: give at least one run besides the baseline")
    stage("read", f"{len(present)} run(s) in {', '.join(args.runs)}")
    table = rank_distance_table(spark, runs_df, options, runs).cache()
    summary = {"rank_distance": rank_distance_summary(table, options)}
    stage("rank-distance", f"{len(runs)} run(s) against {args.baseline}")
    summary["exposure"] = exposure_summary(spark, runs_df, options, runs)
    stage("exposure", f"top-{args.k} exposure entropy, JS and KL")
    with atomic_output_dir(args.out) as staging:
        table.orderBy("run_id", "query_id").write.parquet(str(staging / "rank_distance.parquet"))
        write_json(staging / "summary.json", summary)
    table.unpersist()
    stage("write", f"{args.out}/rank_distance.parquet and summary.json")
    return EXIT_OK
