"""Writing a comparison: ``summary.json``, the gate's verdict, Parquet tables and reports.

A comparison (:func:`sparkeval.compare.pipeline.compare`) becomes ``comparison.parquet``,
``deltas.parquet``, ``summary.json``, ``report.html`` and ``report.md`` (plus
``rank_distance.parquet`` with run tables), written atomically; the ``--fail-if``
conditions are judged on it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparkeval.compare.gate import GateCondition, evaluate_gate, parse_condition
from sparkeval.compare.progress import stage
from sparkeval.errors import ConfigError, InputError
from sparkeval.storage import files
from sparkeval.storage.uris import is_remote, join, parent
from sparkeval.storage.uris import name as name_of

if TYPE_CHECKING:
    import pandas as pd

OUTPUT_FILES = {
    "comparison": "comparison.parquet",
    "deltas": "deltas.parquet",
    "summary": "summary.json",
    "report_html": "report.html",
    "report_md": "report.md",
    "rank_distance": "rank_distance.parquet",
    "summary_table": "summary.parquet",
}


def _remote_extra_summary(raw: str) -> tuple[str, Any]:
    """:func:`load_extra_summary` of a URI of a store."""
    uri = join(raw, "summary.json") if files.kind(raw) == "directory" else raw
    try:
        payload = json.loads(files.read_bytes(uri))
    except FileNotFoundError:
        raise ConfigError(
            f"--extra-summary {raw}: no such file (or no summary.json in it)"
        ) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"--extra-summary {raw}: not valid JSON ({exc})") from None
    title = (
        name_of(parent(uri)) if name_of(uri) == "summary.json" else name_of(uri).rsplit(".", 1)[0]
    )
    return f"Summary of {title}", payload


def load_extra_summary(raw: str) -> tuple[str, Any]:
    """(title, payload) of an ``--extra-summary`` path (a JSON file or a dir with summary.json)."""
    if is_remote(raw):
        return _remote_extra_summary(raw)
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


def build_summary(
    result: Any, conditions: list[GateCondition], failures: list[dict[str, Any]]
) -> dict[str, Any]:
    """The ``summary.json`` payload of a comparison."""
    from sparkeval.compare.pipeline import higher_is_better

    opts = result.options
    comparison: dict[str, Any] = {}
    for rec in result.comparison.to_dict("records"):
        entry = {k: _plain(v) for k, v in rec.items() if k not in ("run_id", "measure", "baseline")}
        comparison.setdefault(rec["run_id"], {})[rec["measure"]] = entry
    exact = result.comparison["randomization_exact"].dropna()
    summary: dict[str, Any] = {
        "baseline": opts.baseline,
        "runs_compared": list(result.runs),
        "measures": list(result.measures),
        "directions": {
            m: ("higher_is_better" if higher_is_better(m) else "lower_is_better")
            for m in result.measures
        },
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


class SparkTables:
    """How :func:`write_outputs` writes the tables of a comparison computed on Spark:
    ``deltas`` and ``rank_distance`` are cached DataFrames, sorted and written as the
    local engine writes them up to :func:`sparkeval.output.driver_write_rows` rows, by
    Spark's writer past it (:func:`sparkeval.output.write_spark_table`: at most N + 1
    rows of the cached frame collected to tell), then unpersisted."""

    def write(self, table: Any, directory: Path, order: Sequence[str], schema: Any) -> None:
        from sparkeval.output import write_spark_table

        write_spark_table(table.orderBy(*order), directory, schema)

    def release(self, table: Any) -> None:
        table.unpersist()


class ArrowTables:
    """How :func:`write_outputs` writes the tables of a comparison computed in this
    process: Arrow tables already in their order and ``schema``, written as one Parquet
    part (:func:`sparkeval.output.write_arrow_parquet`)."""

    def write(self, table: Any, directory: Path, order: Sequence[str], schema: Any) -> None:
        from sparkeval.output import write_arrow_parquet

        write_arrow_parquet(table, directory)

    def release(self, table: Any) -> None:
        """Nothing to free."""


#: the order of deltas.parquet, and of the plot samples (so that the report is the
#: same for every order the engine read them in)
QUERY_ROW_ORDER = ["run_id", "measure", "query_id"]


def _sorted_rows(frame: pd.DataFrame | None) -> pd.DataFrame | None:
    """``frame`` (a plot sample, or None) in :data:`QUERY_ROW_ORDER`, on a fresh index."""
    if frame is None:
        return None
    return frame.sort_values(QUERY_ROW_ORDER, kind="stable").reset_index(drop=True)


def write_outputs(
    result: Any,
    conditions: list[GateCondition],
    extras: dict[str, Any],
    out: str,
    inputs: Sequence[str] = (),
    tables: SparkTables | ArrowTables | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Judge the gate and write every output atomically; returns the summary and the
    gate's failures (empty when it passed). ``tables`` writes ``deltas.parquet`` and
    ``rank_distance.parquet`` (default: :class:`SparkTables`)."""
    from sparkeval.compare.pipeline import DELTAS_SCHEMA, RD_ARROW_SCHEMA, higher_is_better
    from sparkeval.output import atomic_output_dir, write_summary
    from sparkeval.report.html import render_html
    from sparkeval.report.markdown import render_markdown

    tables = tables or SparkTables()

    failures = evaluate_gate(
        conditions,
        result.comparison.to_dict("records"),
        result.run_means(),
        higher_is_better,
        runs=result.runs,
    )
    summary = build_summary(result, conditions, failures)
    summary["outputs"] = {
        k: v
        for k, v in OUTPUT_FILES.items()
        if k != "rank_distance" or result.rank_distance is not None
    }
    with atomic_output_dir(out) as staging:
        result.comparison.to_parquet(staging / OUTPUT_FILES["comparison"], index=False)
        deltas = staging / OUTPUT_FILES["deltas"]
        tables.write(result.deltas, deltas, QUERY_ROW_ORDER, DELTAS_SCHEMA)
        if result.rank_distance is not None:
            tables.write(
                result.rank_distance,
                staging / OUTPUT_FILES["rank_distance"],
                ["run_id", "query_id"],
                RD_ARROW_SCHEMA,
            )
        write_summary(staging, summary, "compare", inputs)
        stage("report", "rendering report.html and report.md")
        page = render_html(
            summary,
            result.comparison,
            _sorted_rows(result.plot_values),
            _sorted_rows(result.plot_deltas),
            extras,
        )
        (staging / OUTPUT_FILES["report_html"]).write_text(page, encoding="utf-8")
        (staging / OUTPUT_FILES["report_md"]).write_text(
            render_markdown(summary, result.comparison, extras), encoding="utf-8"
        )
    tables.release(result.deltas)
    if result.rank_distance is not None:
        tables.release(result.rank_distance)
    target = out if is_remote(out) else str(Path(out).resolve())
    for name in summary["outputs"].values():
        stage("write", join(target, name))
    if conditions and not failures:
        stage("gate", f"passed ({len(conditions)} condition(s))")
    return summary, failures
