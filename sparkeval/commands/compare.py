"""``sparkeval compare``: paired comparison of runs against a baseline, gate and report.

Example:
    sparkeval compare --per-query out/eval --baseline bm25 --measures nDCG@10 AP \\
        --permutations 10000 --seed 7 --fail-if "nDCG@10 drop > 1% p<0.05" --out out/cmp

Writes ``comparison.parquet``, ``deltas.parquet``, ``summary.json``, ``report.html``
and ``report.md`` (plus ``rank_distance.parquet`` with ``--runs``) atomically into
``--out``; exits 3 when a ``--fail-if`` condition holds.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from sparkeval.compare.gate import GateCondition, evaluate_gate, parse_condition
from sparkeval.compare.progress import stage
from sparkeval.errors import EXIT_GATE, EXIT_OK, ConfigError, InputError

OUTPUT_FILES = {
    "comparison": "comparison.parquet",
    "deltas": "deltas.parquet",
    "summary": "summary.json",
    "report_html": "report.html",
    "report_md": "report.md",
    "rank_distance": "rank_distance.parquet",
}


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "compare",
        help="compare runs with a baseline: paired tests, deltas, rank distances, gate, report",
        description="Compare every run of a per-query table (from 'sparkeval evaluate') with a "
        "baseline run: per-query deltas, paired t-test, Fisher's randomization test, "
        "bootstrap CI of the mean delta, Holm correction across runs, wins/ties/losses; "
        "optional rank distances and exposure from run tables; a quality gate "
        "(--fail-if, exit code 3) and an HTML/Markdown report.",
    )
    p.add_argument("--per-query", required=True, metavar="PATH",
                   help="per_query.parquet, or the output directory of 'sparkeval evaluate'")
    p.add_argument("--baseline", required=True, metavar="RUN", help="run id of the baseline")
    p.add_argument("--run", action="append", dest="runs_compared", metavar="RUN",
                   help="run id to compare (repeatable; default: every other run)")
    p.add_argument("--measures", nargs="+", metavar="NAME",
                   help="measures to compare, space or comma separated (default: all in the table)")
    p.add_argument("--permutations", type=int, default=10_000, metavar="N",
                   help="sign flips of the randomization test; exact enumeration when "
                   "2^n <= N (default 10000)")
    p.add_argument("--bootstrap", type=int, default=10_000, metavar="N",
                   help="bootstrap resamples of the confidence interval (default 10000)")
    p.add_argument("--seed", type=int, default=0, metavar="S",
                   help="seed of the randomization and bootstrap generators (default 0)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="significance level; the CI is 1-alpha (default 0.05)")
    p.add_argument("--fail-if", action="append", default=[], metavar="COND",
                   help="gate condition, repeatable: 'nDCG@10 < 0.30' (a run's mean) or "
                   "'nDCG@10 drop > 1%% p<0.05' / 'AP drop > 0.01' (against the baseline)")
    p.add_argument("--runs", action="append", default=[], metavar="PATH",
                   help="run table(s) run_id, query_id, doc_id, score (Parquet or CSV) for "
                   "rank distances and item exposure against the baseline")
    p.add_argument("--k", type=int, default=10,
                   help="depth of Jaccard@k and of the exposure distributions (default 10)")
    p.add_argument("--rbo-p", type=float, default=0.9, help="RBO persistence (default 0.9)")
    p.add_argument("--depth", type=int, default=100,
                   help="rankings are cut at this depth for rank distances (default 100)")
    p.add_argument("--extra-summary", action="append", default=[], metavar="PATH",
                   help="summary.json (or a directory holding one) of another stage, shown "
                   "in the report (repeatable)")
    p.add_argument("--no-plots", action="store_true", help="report without plots")
    p.add_argument("--master", default=None, help="Spark master URL (default local[*])")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--overwrite", action="store_true", help="replace a non-empty --out")
    p.set_defaults(func=run)


def load_extra_summary(raw: str) -> tuple[str, Any]:
    """(title, payload) of an ``--extra-summary`` path (a JSON file or a dir with summary.json)."""
    path = Path(raw)
    if path.is_dir():
        path = path / "summary.json"
    if not path.is_file():
        raise ConfigError(f"--extra-summary {raw}: no such file (or no summary.json in it)")
    try:
        payload = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise InputError(f"--extra-summary {raw}: not valid JSON ({exc})") from None
    title = path.parent.name if path.name == "summary.json" else path.stem
    return f"Summary of {title}", payload


def parse_conditions(texts: list[str]) -> list[GateCondition]:
    from sparkeval.compare.pipeline import canonical_measure

    return [parse_condition(t, canonical_measure) for t in texts]


def run(args: argparse.Namespace) -> int:
    from sparkeval.compare.pipeline import CompareOptions, compare, read_per_query, read_runs
    from sparkeval.measures.names import split_measure_list
    from sparkeval.output import check_output_path

    measures = [n for item in args.measures or [] for n in split_measure_list(item)]
    options = CompareOptions(
        baseline=args.baseline,
        measures=tuple(measures) if measures else None,
        runs=tuple(args.runs_compared) if args.runs_compared else None,
        permutations=args.permutations,
        bootstrap=args.bootstrap,
        seed=args.seed,
        alpha=args.alpha,
        k=args.k,
        rbo_p=args.rbo_p,
        depth=args.depth,
    )
    conditions = parse_conditions(args.fail_if)
    extras = dict(load_extra_summary(p) for p in args.extra_summary)
    inputs = [args.per_query, *args.runs, *args.extra_summary]
    check_output_path(args.out, inputs, args.overwrite)

    from sparkeval.spark import build_session

    stage("spark", "starting Spark")
    spark = build_session(master=args.master, app_name="sparkeval-compare")
    per_query = read_per_query(spark, args.per_query)
    stage("read", f"per-query table {args.per_query}")
    runs_df = read_runs(spark, args.runs) if args.runs else None
    result = compare(spark, per_query, options, runs_df=runs_df,
                     with_plots=not args.no_plots, say=stage)
    return write_outputs(result, match_conditions(conditions, result.measures), extras, args.out)


def match_conditions(conditions: list[GateCondition], measures: list[str]) -> list[GateCondition]:
    """Point each condition at the table's spelling of its measure, or raise ConfigError."""
    from dataclasses import replace

    from sparkeval.compare.pipeline import canonical_measure

    by_canon = {canonical_measure(m): m for m in measures}
    matched = []
    for cond in conditions:
        name = cond.measure if cond.measure in measures else by_canon.get(cond.measure)
        if name is None:
            raise ConfigError(
                f"--fail-if {cond.text!r}: measure {cond.measure} is not compared; measures: "
                + ", ".join(measures)
            )
        matched.append(replace(cond, measure=name))
    return matched


def build_summary(result: Any, conditions: list[GateCondition],
                  failures: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``summary.json`` payload of a comparison."""
    from sparkeval.compare.pipeline import higher_is_better

    opts = result.options
    comparison: dict[str, Any] = {}
    for rec in result.comparison.to_dict("records"):
        entry = {k: _plain(v) for k, v in rec.items() if k not in ("run_id", "measure",
                                                                    "baseline")}
        comparison.setdefault(rec["run_id"], {})[rec["measure"]] = entry
    exact = result.comparison["randomization_exact"].dropna()
    summary: dict[str, Any] = {
        "baseline": opts.baseline,
        "runs_compared": list(result.runs),
        "measures": list(result.measures),
        "directions": {m: ("higher_is_better" if higher_is_better(m) else "lower_is_better")
                       for m in result.measures},
        "settings": {
            "permutations": opts.permutations,
            "bootstrap": opts.bootstrap,
            "seed": opts.seed,
            "alpha": opts.alpha,
            "randomization": "two-sided sign-flip test of the mean paired difference; exact "
            "over all 2^n sign vectors when 2^n <= permutations, else Monte-Carlo with "
            "p = (1 + hits) / (permutations + 1)",
            "randomization_exact_pairs": int(exact.sum()),
            "bootstrap_method": "percentile, paired (queries resampled with replacement)",
            "multiple_testing": "Holm-Bonferroni across the runs compared, per measure",
            "ties": "|delta| <= 1e-12 counts as a tie",
        },
        "runs": result.run_summary,
        "comparison": comparison,
        "gate": {
            "conditions": [c.text for c in conditions],
            "passed": not failures,
            "failures": failures,
        },
        "plots": {"sampled": bool(result.plot_sampled)},
        "notes": list(result.notes),
    }
    unpaired = result.comparison[["n_run_only", "n_baseline_only", "n_undefined"]].sum()
    if int(unpaired.sum()):
        summary["notes"].append(
            f"unpaired (run, query, measure) rows: {int(unpaired['n_run_only'])} only in a run, "
            f"{int(unpaired['n_baseline_only'])} only in the baseline, "
            f"{int(unpaired['n_undefined'])} undefined on a side; they are listed in "
            "deltas.parquet and left out of the paired statistics"
        )
    if result.rank_distance_summary is not None:
        summary["rank_distance"] = result.rank_distance_summary
    if result.exposure is not None:
        summary["exposure"] = result.exposure
    return summary


def _plain(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.generic):
        value = value.item()
    if value is None:
        return None
    try:
        import pandas as pd

        if value is pd.NA:
            return None
    except ImportError:
        pass
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def write_outputs(result: Any, conditions: list[GateCondition], extras: dict[str, Any],
                  out: str) -> int:
    """Evaluate the gate and write every output atomically; returns the exit code."""
    from sparkeval.compare.pipeline import higher_is_better
    from sparkeval.output import atomic_output_dir, write_json
    from sparkeval.report.html import render_html
    from sparkeval.report.markdown import render_markdown

    failures = evaluate_gate(
        conditions, result.comparison.to_dict("records"), result.run_means(), higher_is_better,
        runs=result.runs,
    )
    summary = build_summary(result, conditions, failures)
    summary["outputs"] = {k: v for k, v in OUTPUT_FILES.items()
                          if k != "rank_distance" or result.rank_distance is not None}
    with atomic_output_dir(out) as staging:
        result.comparison.to_parquet(staging / OUTPUT_FILES["comparison"], index=False)
        result.deltas.orderBy("run_id", "measure", "query_id").write.parquet(
            str(staging / OUTPUT_FILES["deltas"])
        )
        if result.rank_distance is not None:
            result.rank_distance.orderBy("run_id", "query_id").write.parquet(
                str(staging / OUTPUT_FILES["rank_distance"])
            )
        write_json(staging / OUTPUT_FILES["summary"], summary)
        stage("report", "rendering report.html and report.md")
        page = render_html(summary, result.comparison, result.plot_values, result.plot_deltas,
                           extras)
        (staging / OUTPUT_FILES["report_html"]).write_text(page, encoding="utf-8")
        (staging / OUTPUT_FILES["report_md"]).write_text(
            render_markdown(summary, result.comparison, extras), encoding="utf-8"
        )
    result.deltas.unpersist()
    if result.rank_distance is not None:
        result.rank_distance.unpersist()
    target = Path(out).resolve()
    for name in summary["outputs"].values():
        stage("write", f"{target / name}")
    if failures:
        for failure in failures:
            stage("gate", "FAILED: " + failure["message"])
        return EXIT_GATE
    if conditions:
        stage("gate", f"passed ({len(conditions)} condition(s))")
    return EXIT_OK
