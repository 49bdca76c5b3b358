"""The HTML report of a comparison: one self-contained file (inline CSS, PNG data URIs).

Sections: settings and gate outcome, a summary table per run and measure (means,
delta, confidence interval, p-values with significance marks, wins/ties/losses,
missing queries), each run's own means, per-query distribution plots, sorted
per-query delta plots, rank distances, exposure, and any extra stage summaries
(rendered generically as key/value tables).

Example:
    >>> import pandas as pd
    >>> page = render_html({"baseline": "a", "runs_compared": [], "measures": []},
    ...                    pd.DataFrame(), None, None)
    >>> page.startswith("<!DOCTYPE html>")
    True
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from sparkeval.report import plots
from sparkeval.report.common import (
    MARK_RANDOMIZATION,
    MARK_TTEST,
    flatten,
    fmt_delta,
    fmt_num,
    fmt_p,
    significance,
)

_CSS = """
body{font-family:-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:24px;
color:#212529;background:#fff;max-width:1400px}
h1{font-size:1.6em;margin-bottom:4px}h2{font-size:1.25em;margin-top:32px;
border-bottom:1px solid #dee2e6;padding-bottom:4px}h3{font-size:1.05em}
table{border-collapse:collapse;margin:8px 0 16px;font-size:0.88em}
th,td{border:1px solid #dee2e6;padding:4px 8px;text-align:right;white-space:nowrap}
th{background:#f1f3f5;text-align:center}td.l{text-align:left}
tr:nth-child(even) td{background:#f8f9fa}
td.better{background:#d3f9d8 !important;font-weight:600}
td.worse{background:#ffe3e3 !important;font-weight:600}
.pass{color:#2b8a3e;font-weight:700}.fail{color:#c92a2a;font-weight:700}
.muted{color:#868e96;font-size:0.9em}.plots{display:flex;flex-wrap:wrap;gap:12px}
.plots figure{margin:0;border:1px solid #e9ecef;padding:6px}
.plots img{display:block;max-width:100%}code{background:#f1f3f5;padding:1px 4px}
ul.fail li{color:#c92a2a}
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _table(headers: list[str], rows: list[list[tuple[str, str]]], cls: str = "") -> str:
    """rows of (cell html, css class) pairs."""
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(f'<td class="{c}">{v}</td>' if c else f"<td>{v}</td>" for v, c in row)
        + "</tr>"
        for row in rows
    )
    attr = f' class="{cls}"' if cls else ""
    return f"<table{attr}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def summary_rows(comparison: pd.DataFrame, alpha: float) -> list[list[tuple[str, str]]]:
    """Cells of the main table, one row per (run, measure)."""
    rows = []
    for rec in comparison.to_dict("records"):
        marks, direction = significance(rec, alpha)
        ci = f"[{fmt_delta(rec['ci_low'])}, {fmt_delta(rec['ci_high'])}]"
        missing = int(rec["n_run_only"]) + int(rec["n_baseline_only"]) + int(rec["n_undefined"])
        rows.append(
            [
                (_e(rec["run_id"]), "l"),
                (_e(rec["measure"]), "l"),
                (fmt_num(rec["mean"]), ""),
                (fmt_num(rec["baseline_mean"]), ""),
                (_e(fmt_delta(rec["delta"]) + (" " + marks if marks else "")), direction),
                (_e(ci), ""),
                (fmt_p(rec["p_ttest"]), ""),
                (fmt_p(rec["p_ttest_holm"]), ""),
                (fmt_p(rec["p_randomization"]), ""),
                (fmt_p(rec["p_randomization_holm"]), ""),
                (f"{int(rec['wins'])}/{int(rec['ties'])}/{int(rec['losses'])}", ""),
                (str(int(rec["n_queries"])), ""),
                (str(missing), ""),
            ]
        )
    return rows


SUMMARY_HEADERS = [
    "run",
    "measure",
    "mean",
    "baseline",
    "Δ",
    "CI of Δ",
    "p t-test",
    "p t (Holm)",
    "p rand.",
    "p rand. (Holm)",
    "W/T/L",
    "paired",
    "unpaired",
]


def render_html(
    summary: Mapping[str, Any],
    comparison: pd.DataFrame,
    plot_values: pd.DataFrame | None,
    plot_deltas: pd.DataFrame | None,
    extras: Mapping[str, Any] | None = None,
    max_delta_plots: int = 24,
) -> str:
    """The whole report page as a string.

    Args:
        summary: the comparison's ``summary.json`` payload.
        comparison: the rows of ``comparison.parquet``.
        plot_values: per-query ``run_id, measure, value`` for distribution plots.
        plot_deltas: paired ``run_id, measure, delta`` for delta plots.
        extras: title → JSON payload of other stages' summaries.
        max_delta_plots: at most this many delta plots (run × measure), in table order.
    """
    settings = summary.get("settings", {})
    alpha = float(settings.get("alpha", 0.05))
    baseline = str(summary.get("baseline", ""))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>sparkeval comparison against {_e(baseline)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Run comparison against <code>{_e(baseline)}</code></h1>",
        verdict(summary, comparison, alpha),
        _intro(summary),
        _gate(summary.get("gate")),
        '<h2 id="summary">Summary per run and measure</h2>',
        f'<p class="muted">Δ = run − baseline over the paired queries; CI: '
        f"{(1 - alpha) * 100:g}% percentile bootstrap of the mean Δ; "
        f"{_e(MARK_RANDOMIZATION)} Holm-adjusted randomization p &lt; {alpha:g}, "
        f"{_e(MARK_TTEST)} Holm-adjusted t-test p &lt; {alpha:g}; green/red cells are "
        "significant improvements/deteriorations (direction of the measure respected). "
        "W/T/L: queries won, tied, lost. Unpaired: queries missing on one side or "
        "undefined on either.</p>",
    ]
    if plot_deltas is not None and len(plot_deltas):  # the findings first: on the first screen
        parts.insert(
            parts.index(_intro(summary)),
            _delta_section(summary, comparison, plot_deltas, max_delta_plots),
        )
    if len(comparison):
        parts.append(_table(SUMMARY_HEADERS, summary_rows(comparison, alpha), "summary"))
    else:
        parts.append("<p>No comparison rows.</p>")
    parts.append(_run_means(summary))
    if plot_values is not None and len(plot_values):
        parts.append(_distribution_section(summary, plot_values))
    if summary.get("rank_distance"):
        parts.append(_rank_distance(summary["rank_distance"]))
    if summary.get("exposure"):
        parts.append(_exposure(summary["exposure"]))
    for title, payload in (extras or {}).items():
        parts.append(f"<h2>{_e(title)}</h2>")
        rows = [[(_e(k), "l"), (_e(v), "l")] for k, v in flatten(payload)]
        parts.append(_table(["key", "value"], rows, "extra"))
    notes = list(summary.get("notes", []))
    if notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>")
    parts.append('<p class="muted">Generated by sparkeval compare.</p></body></html>')
    return "\n".join(parts)


def verdict(summary: Mapping[str, Any], comparison: pd.DataFrame, alpha: float) -> str:
    """One paragraph: for each compared run, the measures on which it is significantly
    better or worse than the baseline (Holm-adjusted randomization test), else the
    largest change, not significant."""
    baseline = str(summary.get("baseline", "baseline"))
    sentences = []
    for run in summary.get("runs_compared", []):
        rows = comparison[comparison["run_id"] == run].to_dict("records")
        better: list[str] = []
        worse: list[str] = []
        for rec in rows:
            p = rec.get("p_randomization_holm")
            if p is None or pd.isna(p) or float(p) >= alpha or pd.isna(rec.get("delta")):
                continue
            gain = float(rec["delta"]) * (1 if rec["higher_is_better"] else -1)
            text = f"{_e(rec['measure'])} ({float(rec['delta']):+.4g})"
            (better if gain > 0 else worse).append(text)
        if better or worse:
            parts = []
            if better:
                parts.append(f"significantly better on {', '.join(better)}")
            if worse:
                parts.append(f"significantly worse on {', '.join(worse)}")
            sentences.append(f"<code>{_e(run)}</code> is {' and '.join(parts)}.")
        elif rows:
            top = max(rows, key=lambda r: abs(float(r["delta"])) if not pd.isna(r["delta"]) else 0)
            delta = "n/a" if pd.isna(top["delta"]) else f"{float(top['delta']):+.4g}"
            sentences.append(
                f"<code>{_e(run)}</code> differs from the baseline on no measure significantly "
                f"(largest change: {_e(top['measure'])} {delta})."
            )
    if not sentences:
        return ""
    return (
        f'<p class="verdict"><strong>Verdict</strong> (against <code>{_e(baseline)}</code>, '
        f"Holm-adjusted randomization test, α = {alpha:g}): " + " ".join(sentences) + "</p>"
    )


def _intro(summary: Mapping[str, Any]) -> str:
    settings = summary.get("settings", {})
    runs = summary.get("runs_compared", [])
    items = [
        f"<li>Runs compared: {', '.join(f'<code>{_e(r)}</code>' for r in runs) or '—'}</li>",
        f"<li>Measures: {', '.join(_e(m) for m in summary.get('measures', [])) or '—'}</li>",
    ]
    if settings:
        items.append(
            "<li>Randomization test: "
            f"{_e(settings.get('permutations'))} sign flips (exact when 2<sup>n</sup> fit), "
            f"bootstrap: {_e(settings.get('bootstrap'))} resamples, seed "
            f"{_e(settings.get('seed'))}, α = {_e(settings.get('alpha'))}</li>"
        )
    return "<ul>" + "".join(items) + "</ul>"


def _gate(gate: Mapping[str, Any] | None) -> str:
    if not gate or not gate.get("conditions"):
        return '<p class="muted">Quality gate: no conditions.</p>'
    conds = ", ".join(f"<code>{_e(c)}</code>" for c in gate["conditions"])
    if gate.get("passed"):
        return f'<h2 id="gate">Quality gate: <span class="pass">PASSED</span></h2><p>{conds}</p>'
    fails = "".join(f"<li>{_e(f['message'])}</li>" for f in gate.get("failures", []))
    return (
        f'<h2 id="gate">Quality gate: <span class="fail">FAILED</span></h2><p>{conds}</p>'
        f'<ul class="fail">{fails}</ul>'
    )


def _run_means(summary: Mapping[str, Any]) -> str:
    runs = summary.get("runs", {})
    measures = list(summary.get("measures", []))
    if not runs or not measures:
        return ""
    rows = []
    order = [summary.get("baseline")] + [r for r in runs if r != summary.get("baseline")]
    for run in order:
        info = runs.get(run)
        if info is None:
            continue
        cells = [
            (_e(run) + (" (baseline)" if run == summary.get("baseline") else ""), "l"),
            (str(info.get("queries", "—")), ""),
        ]
        for m in measures:
            rec = info.get("measures", {}).get(m, {})
            text = fmt_num(rec.get("mean"))
            if rec.get("n_undefined"):
                text += f' <span class="muted">({int(rec["n_undefined"])} undef.)</span>'
            cells.append((text, ""))
        rows.append(cells)
    return (
        '<h2 id="means">Each run\'s own means</h2><p class="muted">Over every query '
        "on which the run defines the measure (not only the paired ones).</p>"
        + _table(["run", "queries", *measures], rows, "means")
    )


def _distribution_section(summary: Mapping[str, Any], values: pd.DataFrame) -> str:
    baseline = str(summary.get("baseline"))
    runs = [baseline, *summary.get("runs_compared", [])]
    figs = []
    for m in summary.get("measures", []):
        sub = values[values["measure"] == m]
        data = {r: sub.loc[sub["run_id"] == r, "value"].to_numpy(np.float64) for r in runs}
        uri = plots.distribution_plot(data, m, baseline)
        figs.append(f'<figure><img alt="distribution of {_e(m)}" src="{uri}"></figure>')
    note = _sample_note(summary)
    return (
        '<h2 id="distributions">Per-query distributions</h2>'
        + note
        + '<div class="plots">'
        + "".join(figs)
        + "</div>"
    )


def plot_order(comparison: pd.DataFrame, alpha: float) -> list[dict[str, Any]]:
    """The run × measure pairs in the order their delta plots are worth showing.

    Significant pairs (Holm-adjusted randomization p < alpha) first, then by the size
    of the mean delta relative to the baseline's mean (|Δ| / max(|baseline|, 1e-9)),
    largest first; every compared run's most notable pair is placed among the first
    ones, so no run goes unplotted when the plots are capped.
    """
    records: list[dict[str, Any]] = [
        {str(k): v for k, v in rec.items()} for rec in comparison.to_dict("records")
    ]

    def weight(rec: dict[str, Any]) -> tuple[bool, float]:
        p = rec.get("p_randomization_holm")
        significant = p is not None and not pd.isna(p) and float(p) < alpha
        delta = rec.get("delta")
        base = rec.get("baseline_mean")
        size = 0.0
        if delta is not None and not pd.isna(delta):
            scale = abs(float(base)) if base is not None and not pd.isna(base) else 0.0
            size = abs(float(delta)) / max(scale, 1e-9)
        return significant, size

    ranked = sorted(records, key=weight, reverse=True)
    first_of_run: dict[str, dict[str, Any]] = {}
    for rec in ranked:
        first_of_run.setdefault(str(rec["run_id"]), rec)
    leaders = list(first_of_run.values())
    return leaders + [rec for rec in ranked if all(rec is not lead for lead in leaders)]


def _delta_section(
    summary: Mapping[str, Any], comparison: pd.DataFrame, deltas: pd.DataFrame, limit: int
) -> str:
    figs = []
    shown = 0
    alpha = float(summary.get("settings", {}).get("alpha", 0.05))
    baseline = str(summary.get("baseline", "baseline"))
    for rec in plot_order(comparison, alpha):
        if shown >= limit:
            break
        sub = deltas[(deltas["run_id"] == rec["run_id"]) & (deltas["measure"] == rec["measure"])]
        if not len(sub):
            continue
        uri = plots.delta_bars(
            sub["delta"].to_numpy(np.float64),
            rec["run_id"],
            rec["measure"],
            bool(rec["higher_is_better"]),
            baseline,
        )
        figs.append(
            f'<figure><img alt="per-query delta of {_e(rec["run_id"])} on '
            f'{_e(rec["measure"])}" src="{uri}"></figure>'
        )
        shown += 1
    total = len(comparison)
    more = (
        f'<p class="muted">{shown} of {total} run × measure pairs shown: significant '
        "ones first, then by the size of the change, every run represented.</p>"
        if shown < total
        else ""
    )
    return (
        '<h2 id="deltas">Per-query deltas against the baseline</h2>'
        + _sample_note(summary)
        + more
        + '<div class="plots">'
        + "".join(figs)
        + "</div>"
    )


def _sample_note(summary: Mapping[str, Any]) -> str:
    if summary.get("plots", {}).get("sampled"):
        return (
            '<p class="muted">Plots drawn from a deterministic sample of the queries '
            "(hash of query_id); tables use every query.</p>"
        )
    return ""


def _rank_distance(rd: Mapping[str, Any]) -> str:
    from sparkeval.compare.rank_distance import DISTANCE_FIELDS

    rows = []
    for run, info in sorted(rd.get("runs", {}).items()):
        q = info.get("queries", {})
        cells = [(_e(run), "l")]
        cells += [
            (fmt_num(info["mean"].get(f), 2 if f == "overlap" else 4), "") for f in DISTANCE_FIELDS
        ]
        cells += [
            (str(q.get("paired", 0)), ""),
            (str(q.get("run_only", 0) + q.get("baseline_only", 0)), ""),
        ]
        rows.append(cells)
    headers = [
        "run",
        "mean overlap",
        "Kendall τ-b",
        "Spearman ρ",
        "footrule",
        "Cayley",
        "Ulam",
        "Hamming",
        f"Jaccard@{rd.get('k')}",
        "RBO",
        "queries",
        "unpaired",
    ]
    return (
        '<h2 id="rank-distance">Rank distances to the baseline</h2>'
        f'<p class="muted">Per-query means; rankings cut at depth {_e(rd.get("depth"))}; '
        f"permutation measures over the docs both rankings hold (overlap); "
        f"{_e(rd.get('rbo'))}.</p>" + _table(headers, rows, "rank-distance")
    )


def _exposure(exp: Mapping[str, Any]) -> str:
    rows = []
    vs = exp.get("vs_baseline", {})
    for run, info in sorted(exp.get("runs", {}).items()):
        other = vs.get(run, {})
        rows.append(
            [
                (_e(run), "l"),
                (fmt_num(info.get("entropy")), ""),
                (str(info.get("items")), ""),
                (str(info.get("slots")), ""),
                (fmt_num(other.get("js")), ""),
                (fmt_num(other.get("kl_run_baseline")), ""),
                (fmt_num(other.get("kl_baseline_run")), ""),
            ]
        )
    headers = [
        "run",
        "entropy (bits)",
        "items",
        "slots",
        "JS vs baseline",
        "KL(run‖baseline)",
        "KL(baseline‖run)",
    ]
    return (
        '<h2 id="exposure">Item exposure</h2>'
        f'<p class="muted">Share of top-{_e(exp.get("k"))} slots per item; base-2 '
        "logarithms; KL is ∞ when one run exposes an item the other never shows.</p>"
        + _table(headers, rows, "exposure")
    )
