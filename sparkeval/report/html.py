"""The HTML report of a comparison: one self-contained file (inline CSS, PNG data URIs).

The page reads top down, each part a ``<section>`` with these ids:

1. ``verdict``: the (run, measure) pairs that changed significantly (baseline and
   run value, Δ, relative change, Holm-adjusted p, better/worse), then per run the
   measures that did not move;
2. ``gate``: the quality gate's outcome;
3. ``means``: each run's own means with their confidence intervals, baseline first;
4. ``differences``: the table of differences (CI of Δ, p-values, wins/ties/losses);
5. ``plots``: per compared run its delta plots, then a distribution plot per measure
   (other kinds of plots for binary measures), all of one size in a two-column grid;
6. ``details``: settings, rank distances, exposure, other stages' summaries, notes.

Example:
    >>> import pandas as pd
    >>> page = render_html({"baseline": "a", "runs_compared": [], "measures": []},
    ...                    pd.DataFrame(), None, None)
    >>> page.startswith("<!DOCTYPE html>")
    True
    >>> [s.split('"')[0] for s in page.split('<section id="')[1:]]
    ['verdict', 'gate', 'means', 'differences', 'plots', 'details']
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
    fmt_mean_ci,
    fmt_num,
    fmt_p,
    fmt_relative,
    run_order,
    significance,
    split_changes,
)

#: ids of the page's sections, in order
SECTIONS: tuple[str, ...] = ("verdict", "gate", "means", "differences", "plots", "details")

_CSS = """
body{font-family:-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:24px;
color:#212529;background:#fff;max-width:1400px}
h1{font-size:1.6em;margin-bottom:4px}h2{font-size:1.25em;margin-top:32px;
border-bottom:1px solid #dee2e6;padding-bottom:4px}h3{font-size:1.05em;margin-top:20px}
.wide{overflow-x:auto}
table{border-collapse:collapse;margin:8px 0 16px;font-size:0.88em}
th,td{border:1px solid #dee2e6;padding:4px 8px;text-align:right;white-space:nowrap}
th{background:#f1f3f5;text-align:center}td.l{text-align:left}
tr:nth-child(even) td{background:#f8f9fa}
td.better{background:#d3f9d8 !important;font-weight:600}
td.worse{background:#ffe3e3 !important;font-weight:600}
.pass{color:#2b8a3e;font-weight:700}.fail{color:#c92a2a;font-weight:700}
.muted{color:#868e96;font-size:0.9em}.ci{color:#495057}
.plots{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:12px}
.plots figure{margin:0;border:1px solid #e9ecef;padding:6px}
.plots img{display:block;width:100%;height:auto}
@media (max-width:900px){.plots{grid-template-columns:minmax(0,1fr)}}
code{background:#f1f3f5;padding:1px 4px}
ul.fail li{color:#c92a2a}ul.unmoved{margin-top:4px}
"""


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _section(sid: str, title: str, body: str) -> str:
    return f'<section id="{sid}"><h2>{title}</h2>{body}</section>'


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
    """The whole report page as a string, its sections in the order of :data:`SECTIONS`.

    Args:
        summary: the comparison's ``summary.json`` payload.
        comparison: the rows of ``comparison.parquet``.
        plot_values: per-query ``run_id, measure, value`` for distribution plots.
        plot_deltas: paired ``run_id, measure, delta`` for delta plots.
        extras: title → JSON payload of other stages' summaries.
        max_delta_plots: at most this many delta plots (run × measure), chosen by
            :func:`plot_order`.
    """
    settings = summary.get("settings", {})
    alpha = float(settings.get("alpha", 0.05))
    baseline = str(summary.get("baseline", ""))
    gate_title, gate_body = _gate(summary.get("gate"))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>sparkeval comparison against {_e(baseline)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Run comparison against <code>{_e(baseline)}</code></h1>",
        _section("verdict", "Verdict", verdict(summary, comparison, alpha)),
        _section("gate", gate_title, gate_body),
        _section("means", "Each run's mean", _run_means(summary, alpha)),
        _section("differences", "Differences from the baseline", _differences(comparison, alpha)),
        _section(
            "plots",
            "Plots",
            _plots(summary, comparison, plot_values, plot_deltas, max_delta_plots),
        ),
        _section("details", "Details", _details(summary, extras)),
        '<p class="muted">Generated by sparkeval compare.</p></body></html>',
    ]
    return "\n".join(parts)


def verdict(summary: Mapping[str, Any], comparison: pd.DataFrame, alpha: float) -> str:
    """The verdict: a table of the (run, measure) pairs that changed significantly
    (Holm-adjusted randomization test, direction of the measure respected), then per
    run the measures that did not move, with their Δ."""
    baseline = str(summary.get("baseline", "baseline"))
    test = f"Holm-adjusted randomization test, α = {alpha:g}"
    if not len(comparison):
        return "<p>No comparison rows.</p>"
    changes, unmoved = split_changes(comparison, run_order(summary, comparison), alpha)
    parts = []
    if changes:
        parts.append(
            f'<p class="muted">Significant changes against <code>{_e(baseline)}</code> '
            f"({_e(test)}); relative change = Δ / |baseline|; better/worse in the "
            "measure's direction.</p>"
        )
        rows = [
            [
                (_e(c["run"]), "l"),
                (_e(c["measure"]), "l"),
                (fmt_num(c["baseline"]), ""),
                (fmt_num(c["value"]), ""),
                (_e(fmt_delta(c["delta"])), ""),
                (_e(fmt_relative(c["relative"])), ""),
                (_e(fmt_p(c["p"])), ""),
                (c["outcome"], c["outcome"]),
            ]
            for c in changes
        ]
        headers = ["run", "measure", "baseline", "run value", "Δ", "relative", "p (Holm)", ""]
        parts.append(_table(headers, rows, "verdict"))
    else:
        parts.append(
            '<p class="nothing"><strong>No run differs significantly from '
            f"<code>{_e(baseline)}</code> on any measure</strong> ({_e(test)}).</p>"
        )
    if unmoved:
        items = "".join(
            f"<li><code>{_e(run)}</code>: "
            + ", ".join(f"{_e(m)} (Δ {_e(fmt_delta(d))})" for m, d in pairs)
            + "</li>"
            for run, pairs in unmoved.items()
        )
        lead = "Did not move significantly" if changes else "Changes, none significant"
        parts.append(f'<p class="unmoved">{lead}:</p><ul class="unmoved">{items}</ul>')
    return "".join(parts)


def _gate(gate: Mapping[str, Any] | None) -> tuple[str, str]:
    """(heading, body) of the gate section."""
    if not gate or not gate.get("conditions"):
        return "Quality gate", '<p class="muted">No conditions.</p>'
    conds = ", ".join(f"<code>{_e(c)}</code>" for c in gate["conditions"])
    if gate.get("passed"):
        return 'Quality gate: <span class="pass">PASSED</span>', f"<p>{conds}</p>"
    fails = "".join(f"<li>{_e(f['message'])}</li>" for f in gate.get("failures", []))
    return (
        'Quality gate: <span class="fail">FAILED</span>',
        f'<p>{conds}</p><ul class="fail">{fails}</ul>',
    )


def _run_means(summary: Mapping[str, Any], alpha: float) -> str:
    """A measure per row, a run per column (baseline first): ``mean [ci_low, ci_high]``."""
    runs = summary.get("runs", {})
    measures = list(summary.get("measures", []))
    baseline = summary.get("baseline")
    if not runs or not measures:
        return '<p class="muted">No means.</p>'
    order = [r for r in [baseline, *summary.get("runs_compared", [])] if r in runs]
    order += [r for r in runs if r not in order]
    headers = ["measure"] + [str(r) + (" (baseline)" if r == baseline else "") for r in order]
    rows = [[("queries", "l")] + [(str(runs[r].get("queries", "—")), "") for r in order]]
    for m in measures:
        cells = [(_e(m), "l")]
        for run in order:
            rec = runs[run].get("measures", {}).get(m, {})
            text = fmt_num(rec.get("mean"))
            with_ci = fmt_mean_ci(rec)
            if with_ci != text:
                text += f' <span class="ci">{_e(with_ci[len(text) + 1 :])}</span>'
            if rec.get("n_undefined"):
                text += f' <span class="muted">({int(rec["n_undefined"])} undef.)</span>'
            cells.append((text, ""))
        rows.append(cells)
    return (
        f'<p class="muted">Mean [{(1 - alpha) * 100:g}% Student t interval] over every '
        "query on which the run defines the measure (not only the paired ones); undef.: "
        "queries on which it is undefined.</p>" + _wide(_table(headers, rows, "means"))
    )


def _differences(comparison: pd.DataFrame, alpha: float) -> str:
    if not len(comparison):
        return "<p>No comparison rows.</p>"
    legend = (
        f'<p class="muted">Δ = run − baseline over the paired queries; CI: '
        f"{(1 - alpha) * 100:g}% percentile bootstrap of the mean Δ; "
        f"{_e(MARK_RANDOMIZATION)} Holm-adjusted randomization p &lt; {alpha:g}, "
        f"{_e(MARK_TTEST)} Holm-adjusted t-test p &lt; {alpha:g}; green/red cells are "
        "significant improvements/deteriorations (direction of the measure respected). "
        "W/T/L: queries won, tied, lost. Unpaired: queries missing on one side or "
        "undefined on either.</p>"
    )
    return legend + _wide(_table(SUMMARY_HEADERS, summary_rows(comparison, alpha), "summary"))


def _wide(table: str) -> str:
    return f'<div class="wide">{table}</div>'


def binary_measures(values: pd.DataFrame | None) -> set[str]:
    """The measures whose plotted per-query values (every run) are all 0 or 1."""
    if values is None or not len(values):
        return set()
    return {
        str(m)
        for m, group in values.groupby("measure", sort=False)
        if plots.is_binary(group["value"].to_numpy(np.float64))
    }


def _figure(kind: str, alt: str, uri: str) -> str:
    return f'<figure data-kind="{kind}"><img alt="{_e(alt)}" src="{uri}"></figure>'


def _plots(
    summary: Mapping[str, Any],
    comparison: pd.DataFrame,
    values: pd.DataFrame | None,
    deltas: pd.DataFrame | None,
    limit: int,
) -> str:
    has_deltas = deltas is not None and len(deltas) > 0
    has_values = values is not None and len(values) > 0
    if not has_deltas and not has_values:
        return '<p class="muted">No plots in this report.</p>'
    binary = binary_measures(values)
    parts = [_sample_note(summary)]
    if binary:
        parts.append(
            '<p class="muted">Binary measures (every per-query value 0 or 1: '
            + ", ".join(_e(m) for m in sorted(binary))
            + "): queries won/tied/lost instead of sorted deltas, the share of queries "
            "with 1 instead of box plots.</p>"
        )
    if has_deltas and deltas is not None:
        parts.append(_delta_plots(summary, comparison, deltas, limit, binary))
    if has_values and values is not None:
        parts.append(_distribution_plots(summary, values, binary))
    return "".join(parts)


def _delta_plots(
    summary: Mapping[str, Any],
    comparison: pd.DataFrame,
    deltas: pd.DataFrame,
    limit: int,
    binary: set[str],
) -> str:
    alpha = float(summary.get("settings", {}).get("alpha", 0.05))
    baseline = str(summary.get("baseline", "baseline"))
    chosen: list[tuple[dict[str, Any], np.ndarray]] = []
    for rec in plot_order(comparison, alpha):
        if len(chosen) >= limit:
            break
        sub = deltas[(deltas["run_id"] == rec["run_id"]) & (deltas["measure"] == rec["measure"])]
        if len(sub):
            chosen.append((rec, sub["delta"].to_numpy(np.float64)))
    if not chosen:
        return ""
    total = len(comparison)
    parts = [
        f'<p class="muted">{len(chosen)} of {total} run × measure pairs shown: significant '
        "ones first, then by the size of the change, every run represented.</p>"
        if len(chosen) < total
        else ""
    ]
    runs = run_order(summary, comparison)
    runs += [
        str(r) for r in dict.fromkeys(str(rec["run_id"]) for rec, _ in chosen) if r not in runs
    ]
    for run in runs:
        figs = []
        for rec, d in chosen:
            if str(rec["run_id"]) != run:
                continue
            measure, higher = str(rec["measure"]), bool(rec["higher_is_better"])
            alt = f"per-query delta of {run} on {measure}"
            if measure in binary:
                uri = plots.outcome_bars(d, run, measure, higher, baseline)
                figs.append(_figure("outcomes", alt + ": queries won, tied, lost", uri))
            else:
                uri = plots.delta_bars(d, run, measure, higher, baseline)
                figs.append(_figure("sorted-deltas", alt, uri))
        if figs:
            parts.append(
                f'<h3 class="run"><code>{_e(run)}</code> − <code>{_e(baseline)}</code>: '
                f'per-query deltas</h3><div class="plots">{"".join(figs)}</div>'
            )
    return "".join(parts)


def _distribution_plots(summary: Mapping[str, Any], values: pd.DataFrame, binary: set[str]) -> str:
    baseline = str(summary.get("baseline"))
    alpha = float(summary.get("settings", {}).get("alpha", 0.05))
    runs = [baseline, *summary.get("runs_compared", [])]
    figs = []
    for m in summary.get("measures", []):
        sub = values[values["measure"] == m]
        data = {r: sub.loc[sub["run_id"] == r, "value"].to_numpy(np.float64) for r in runs}
        if m in binary:
            uri = plots.share_plot(data, m, baseline, alpha)
            figs.append(_figure("share", f"share of queries with {m} = 1", uri))
        else:
            uri = plots.distribution_plot(data, m, baseline)
            figs.append(_figure("box", f"distribution of {m}", uri))
    if not figs:
        return ""
    return (
        '<h3 id="distributions">Per-query distributions</h3>'
        f'<div class="plots">{"".join(figs)}</div>'
    )


def _details(summary: Mapping[str, Any], extras: Mapping[str, Any] | None) -> str:
    parts = [_settings(summary)]
    if summary.get("rank_distance"):
        parts.append(_rank_distance(summary["rank_distance"]))
    if summary.get("exposure"):
        parts.append(_exposure(summary["exposure"]))
    for title, payload in (extras or {}).items():
        rows = [[(_e(k), "l"), (_e(v), "l")] for k, v in flatten(payload)]
        parts.append(f"<h3>{_e(title)}</h3>" + _wide(_table(["key", "value"], rows, "extra")))
    notes = list(summary.get("notes", []))
    if notes:
        parts.append("<h3>Notes</h3><ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>")
    return "".join(parts)


def _settings(summary: Mapping[str, Any]) -> str:
    settings = summary.get("settings", {})
    runs = summary.get("runs_compared", [])
    items = [
        f"<li>Baseline: <code>{_e(summary.get('baseline', '—'))}</code></li>",
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
    return '<ul class="settings">' + "".join(items) + "</ul>"


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
        '<h3 id="rank-distance">Rank distances to the baseline</h3>'
        f'<p class="muted">Per-query means; rankings cut at depth {_e(rd.get("depth"))}; '
        f"permutation measures over the docs both rankings hold (overlap); "
        f"{_e(rd.get('rbo'))}.</p>" + _wide(_table(headers, rows, "rank-distance"))
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
        '<h3 id="exposure">Item exposure</h3>'
        f'<p class="muted">Share of top-{_e(exp.get("k"))} slots per item; base-2 '
        "logarithms; KL is ∞ when one run exposes an item the other never shows.</p>"
        + _wide(_table(headers, rows, "exposure"))
    )
