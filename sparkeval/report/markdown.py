"""The Markdown report of a comparison, short enough for a pull-request comment.

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
    """Gate outcome, the per-run/measure table, rank distances, exposure and extras."""
    alpha = float(summary.get("settings", {}).get("alpha", 0.05))
    lines = [f"## sparkeval: runs compared with `{summary.get('baseline')}`", ""]
    gate = summary.get("gate") or {}
    if gate.get("conditions"):
        status = "passed ✅" if gate.get("passed") else "FAILED ❌"
        lines.append(
            f"**Quality gate: {status}** ({', '.join(f'`{c}`' for c in gate['conditions'])})"
        )
        lines += [f"- {f['message']}" for f in gate.get("failures", [])]
        lines.append("")
    if len(comparison):
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
                    str(
                        int(rec["n_run_only"])
                        + int(rec["n_baseline_only"])
                        + int(rec["n_undefined"])
                    ),
                ]
            )
        lines += _table(
            [
                "run",
                "measure",
                "mean",
                "baseline",
                "Δ",
                "CI",
                "p t (Holm)",
                "p rand. (Holm)",
                "W/T/L",
                "paired",
                "unpaired",
            ],
            rows,
        )
        lines += [
            "",
            f"{common.MARK_RANDOMIZATION} randomization test, {common.MARK_TTEST} paired t-test: "
            f"Holm-adjusted p < {alpha:g}; ▲/▼ significant improvement/deterioration. "
            f"CI: {(1 - alpha) * 100:g}% percentile bootstrap of the mean Δ.",
            "",
        ]
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
    return "\n".join(lines).rstrip() + "\n"
