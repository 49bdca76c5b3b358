"""The Markdown report of a comparison, short enough for a pull-request comment.

It reads top down as the HTML report does: the verdict (significant changes, then
the measures that did not move), the quality gate, each run's means with their
confidence intervals, the table of differences, then rank distances, exposure,
other stages' summaries, notes and settings. No plots.

Example:
    >>> import pandas as pd
    >>> text = render_markdown({"baseline": "bm25", "measures": []}, pd.DataFrame())
    >>> text.splitlines()[0]
    '## sparkeval: runs compared with `bm25`'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from sparkeval.report import common


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    out = [
        "| " + " | ".join(_cell(h) for h in headers) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
    ]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


def render_markdown(
    summary: Mapping[str, Any],
    comparison: pd.DataFrame,
    extras: Mapping[str, Any] | None = None,
) -> str:
    """Verdict, gate, means with CI, differences, then rank distances, exposure and extras."""
    alpha = float(summary.get("settings", {}).get("alpha", 0.05))
    lines = [f"## sparkeval: runs compared with `{summary.get('baseline')}`", ""]
    lines += _verdict(summary, comparison, alpha)
    lines += _gate(summary.get("gate") or {})
    lines += _means(summary, alpha)
    lines += _differences(comparison, alpha)
    rd = summary.get("rank_distance")
    if rd:
        lines += [f"### Rank distances to the baseline (depth {rd.get('depth')})", ""]
        rows = [
            [
                run,
                common.fmt_num(i["mean"].get("overlap"), 2),
                common.fmt_num(i["mean"].get("kendall_tau")),
                common.fmt_num(i["mean"].get("spearman_rho")),
                common.fmt_num(i["mean"].get("jaccard_at_k")),
                common.fmt_num(i["mean"].get("rbo")),
                common.fmt_num(i["mean"].get("footrule"), 2),
            ]
            for run, i in sorted(rd.get("runs", {}).items())
        ]
        lines += _table(
            ["run", "overlap", "τ-b", "ρ", f"Jaccard@{rd.get('k')}", "RBO_ext", "footrule"], rows
        )
        lines.append("")
    exp = summary.get("exposure")
    if exp:
        lines += [f"### Top-{exp.get('k')} item exposure", ""]
        vs = exp.get("vs_baseline", {})
        rows = [
            [
                run,
                common.fmt_num(i.get("entropy")),
                str(i.get("items")),
                common.fmt_num(vs.get(run, {}).get("js")),
                common.fmt_num(vs.get(run, {}).get("kl_run_baseline")),
            ]
            for run, i in sorted(exp.get("runs", {}).items())
        ]
        lines += _table(
            ["run", "entropy (bits)", "items", "JS vs baseline", "KL(run‖baseline)"], rows
        )
        lines.append("")
    for title, payload in (extras or {}).items():
        lines += [f"### {title}", ""]
        lines += _table(["key", "value"], [[k, v] for k, v in common.flatten(payload, limit=120)])
        lines.append("")
    for note in summary.get("notes", []):
        lines.append(f"> {note}")
    lines += _settings(summary)
    return "\n".join(lines).rstrip() + "\n"


def _verdict(summary: Mapping[str, Any], comparison: pd.DataFrame, alpha: float) -> list[str]:
    test = f"Holm-adjusted randomization test, α = {alpha:g}"
    lines = ["### Verdict", ""]
    if not len(comparison):
        return [*lines, "No comparison rows.", ""]
    changes, unmoved = common.split_changes(
        comparison, common.run_order(summary, comparison), alpha
    )
    if changes:
        lines.append(
            f"Significant changes against `{summary.get('baseline')}` ({test}); "
            "relative = Δ / |baseline|; better/worse in the measure's direction."
        )
        lines.append("")
        rows = [
            [
                c["run"],
                c["measure"],
                common.fmt_num(c["baseline"]),
                common.fmt_num(c["value"]),
                common.fmt_delta(c["delta"]),
                common.fmt_relative(c["relative"]),
                common.fmt_p(c["p"]),
                {"better": "better ▲", "worse": "worse ▼"}[c["outcome"]],
            ]
            for c in changes
        ]
        lines += _table(
            ["run", "measure", "baseline", "run value", "Δ", "relative", "p (Holm)", ""], rows
        )
    else:
        lines.append(
            f"**No run differs significantly from `{summary.get('baseline')}` on any "
            f"measure** ({test})."
        )
    if unmoved:
        lead = "Did not move significantly" if changes else "Changes, none significant"
        lines += ["", f"{lead}:", ""]
        lines += [
            f"- `{run}`: " + ", ".join(f"{m} (Δ {common.fmt_delta(d)})" for m, d in pairs)
            for run, pairs in unmoved.items()
        ]
    lines.append("")
    return lines


def _gate(gate: Mapping[str, Any]) -> list[str]:
    if not gate.get("conditions"):
        return ["### Quality gate", "", "No conditions.", ""]
    status = "passed ✅" if gate.get("passed") else "FAILED ❌"
    lines = [f"### Quality gate: {status}", ""]
    lines.append(", ".join(f"`{c}`" for c in gate["conditions"]))
    lines += [f"- {f['message']}" for f in gate.get("failures", [])]
    lines.append("")
    return lines


def _means(summary: Mapping[str, Any], alpha: float) -> list[str]:
    runs = summary.get("runs", {})
    measures = list(summary.get("measures", []))
    baseline = summary.get("baseline")
    if not runs or not measures:
        return []
    order = [r for r in [baseline, *summary.get("runs_compared", [])] if r in runs]
    order += [r for r in runs if r not in order]
    headers = ["measure"] + [f"{r} (baseline)" if r == baseline else str(r) for r in order]
    rows = [["queries"] + [str(runs[r].get("queries", "—")) for r in order]]
    for m in measures:
        row = [m]
        for run in order:
            rec = runs[run].get("measures", {}).get(m, {})
            text = common.fmt_mean_ci(rec)
            if rec.get("n_undefined"):
                text += f" ({int(rec['n_undefined'])} undef.)"
            row.append(text)
        rows.append(row)
    return [
        "### Each run's mean",
        "",
        *_table(headers, rows),
        "",
        f"Mean [{(1 - alpha) * 100:g}% Student t interval] over every query on which the run "
        "defines the measure (not only the paired ones).",
        "",
    ]


def _differences(comparison: pd.DataFrame, alpha: float) -> list[str]:
    if not len(comparison):
        return []
    rows = []
    for rec in comparison.to_dict("records"):
        marks, direction = common.significance(rec, alpha)
        arrow = {"better": " ▲", "worse": " ▼"}.get(direction, "")
        delta = common.fmt_delta(rec["delta"]) + (f" {marks}" if marks else "") + arrow
        if direction:
            delta = f"**{delta}**"
        rows.append(
            [
                rec["run_id"],
                rec["measure"],
                common.fmt_num(rec["mean"]),
                common.fmt_num(rec["baseline_mean"]),
                delta,
                f"[{common.fmt_delta(rec['ci_low'])}, {common.fmt_delta(rec['ci_high'])}]",
                common.fmt_p(rec["p_ttest_holm"]),
                common.fmt_p(rec["p_randomization_holm"]),
                f"{int(rec['wins'])}/{int(rec['ties'])}/{int(rec['losses'])}",
                str(int(rec["n_queries"])),
                str(int(rec["n_run_only"]) + int(rec["n_baseline_only"]) + int(rec["n_undefined"])),
            ]
        )
    headers = ["run", "measure", "mean", "baseline", "Δ", "CI", "p t (Holm)", "p rand. (Holm)"]
    return [
        "### Differences from the baseline",
        "",
        *_table([*headers, "W/T/L", "paired", "unpaired"], rows),
        "",
        f"{common.MARK_RANDOMIZATION} randomization test, {common.MARK_TTEST} paired t-test: "
        f"Holm-adjusted p < {alpha:g}; ▲/▼ significant improvement/deterioration. "
        f"CI: {(1 - alpha) * 100:g}% percentile bootstrap of the mean Δ.",
        "",
    ]


def _settings(summary: Mapping[str, Any]) -> list[str]:
    settings = summary.get("settings", {})
    if not settings:
        return []
    return [
        "",
        f"<sub>Randomization test: {settings.get('permutations')} sign flips; bootstrap: "
        f"{settings.get('bootstrap')} resamples; seed {settings.get('seed')}; "
        f"α = {settings.get('alpha')}.</sub>",
    ]
