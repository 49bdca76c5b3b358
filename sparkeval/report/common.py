"""Formatting shared by the HTML and Markdown reports."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

#: Markdown/HTML mark of a significant difference (Holm-adjusted randomization test)
MARK_RANDOMIZATION = "*"
#: mark of a significant difference under the Holm-adjusted paired t-test
MARK_TTEST = "†"


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def fmt_num(value: Any, digits: int = 4) -> str:
    """A number for a table cell: ``—`` when missing, fixed decimals for floats.

    Example:
        >>> fmt_num(0.123456), fmt_num(None), fmt_num(3), fmt_num(float("inf"))
        ('0.1235', '—', '3', '∞')
    """
    if is_missing(value):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x.is_integer() and abs(x) < 1e15 and digits == 0:
        return str(int(x))
    return f"{x:.{digits}f}"


def fmt_delta(value: Any) -> str:
    return "—" if is_missing(value) else f"{float(value):+.4f}"


def fmt_p(value: Any) -> str:
    """A p-value: three significant digits, ``<0.001`` below that.

    Example:
        >>> fmt_p(0.04321), fmt_p(0.0000123), fmt_p(None)
        ('0.0432', '<0.001', '—')
    """
    if is_missing(value):
        return "—"
    x = float(value)
    return "<0.001" if x < 0.001 else f"{x:.3g}"


def significance(row: Mapping[Any, Any], alpha: float) -> tuple[str, str]:
    """(marks, direction) of one comparison row.

    ``marks`` holds :data:`MARK_RANDOMIZATION` and/or :data:`MARK_TTEST` for the
    tests whose Holm-adjusted p-value is below ``alpha``; ``direction`` is
    ``"better"``, ``"worse"`` or ``""`` (not significant or no change).
    """
    marks = ""
    p_r: Any = row.get("p_randomization_holm")
    p_t: Any = row.get("p_ttest_holm")
    if not is_missing(p_r) and float(p_r) < alpha:
        marks += MARK_RANDOMIZATION
    if not is_missing(p_t) and float(p_t) < alpha:
        marks += MARK_TTEST
    delta: Any = row.get("delta")
    if not marks or is_missing(delta) or float(delta) == 0.0:
        return marks, ""
    better = (float(delta) > 0) == bool(row.get("higher_is_better", True))
    return marks, "better" if better else "worse"


def changed(row: Mapping[Any, Any], alpha: float) -> str:
    """``"better"``, ``"worse"`` or ``""``: the verdict on one comparison row.

    A row changed when its Holm-adjusted randomization p-value is below ``alpha`` and
    its mean delta is not zero; better or worse in the measure's direction.

    Example:
        >>> row = {"p_randomization_holm": 0.01, "delta": -0.05, "higher_is_better": True}
        >>> changed(row, 0.05), changed({**row, "higher_is_better": False}, 0.05)
        ('worse', 'better')
        >>> changed({**row, "p_randomization_holm": 0.05}, 0.05)
        ''
    """
    p: Any = row.get("p_randomization_holm")
    delta: Any = row.get("delta")
    if is_missing(p) or float(p) >= alpha or is_missing(delta) or float(delta) == 0.0:
        return ""
    better = (float(delta) > 0) == bool(row.get("higher_is_better", True))
    return "better" if better else "worse"


def relative_change(delta: Any, baseline: Any) -> float | None:
    """``delta / |baseline|``, or ``None`` when either is missing or the baseline is 0.

    Example:
        >>> relative_change(-0.05, 0.4), relative_change(0.1, 0.0)
        (-0.125, None)
    """
    if is_missing(delta) or is_missing(baseline) or float(baseline) == 0.0:
        return None
    return float(delta) / abs(float(baseline))


def fmt_relative(value: Any) -> str:
    """A relative change as a signed percentage, one decimal (two significant digits
    below 0.05%).

    Example:
        >>> fmt_relative(-0.125), fmt_relative(0.0004), fmt_relative(None)
        ('-12.5%', '+0.04%', '—')
    """
    if is_missing(value):
        return "—"
    pct = float(value) * 100
    if pct != 0.0 and abs(pct) < 0.05:
        return f"{pct:+.2g}%"
    return f"{pct:+.1f}%"


def fmt_mean_ci(rec: Mapping[str, Any]) -> str:
    """``mean [ci_low, ci_high]`` of a run's measure; only the mean when the interval is
    undefined (fewer than two values).

    Example:
        >>> fmt_mean_ci({"mean": 0.5, "ci_low": -0.396, "ci_high": 1.396})
        '0.5000 [-0.3960, 1.3960]'
        >>> fmt_mean_ci({"mean": 0.5, "ci_low": None, "ci_high": None})
        '0.5000'
    """
    text = fmt_num(rec.get("mean"))
    low, high = rec.get("ci_low"), rec.get("ci_high")
    if is_missing(rec.get("mean")) or is_missing(low) or is_missing(high):
        return text
    return f"{text} [{fmt_num(low)}, {fmt_num(high)}]"


def run_order(summary: Mapping[str, Any], comparison: Any) -> list[str]:
    """The compared runs in the summary's order, else in the comparison table's order."""
    runs = [str(r) for r in summary.get("runs_compared", [])]
    if runs or not len(comparison):
        return runs
    return [str(r) for r in dict.fromkeys(comparison["run_id"])]


def split_changes(
    comparison: Any, runs: list[str], alpha: float
) -> tuple[list[dict[str, Any]], dict[str, list[tuple[str, Any]]]]:
    """The verdict's two halves: the rows that changed significantly (:func:`changed`),
    as dicts with ``run, measure, baseline, value, delta, relative, p, outcome``, and per
    run the ``(measure, delta)`` pairs that did not move, both in ``runs`` order."""
    changes: list[dict[str, Any]] = []
    unmoved: dict[str, list[tuple[str, Any]]] = {}
    if not len(comparison):
        return changes, unmoved
    for run in runs:
        for rec in comparison[comparison["run_id"] == run].to_dict("records"):
            outcome = changed(rec, alpha)
            if not outcome:
                unmoved.setdefault(run, []).append((str(rec["measure"]), rec["delta"]))
                continue
            changes.append(
                {
                    "run": run,
                    "measure": str(rec["measure"]),
                    "baseline": rec["baseline_mean"],
                    "value": rec["mean"],
                    "delta": rec["delta"],
                    "relative": relative_change(rec["delta"], rec["baseline_mean"]),
                    "p": rec["p_randomization_holm"],
                    "outcome": outcome,
                }
            )
    return changes, unmoved


def flatten(payload: Any, prefix: str = "", limit: int = 400) -> list[tuple[str, str]]:
    """Nested JSON as (dotted key, value text) rows, lists shown compactly.

    Example:
        >>> flatten({"lsh": {"pairs": 12, "bands": [18, 7]}, "ok": True})
        [('lsh.bands', '[18, 7]'), ('lsh.pairs', '12'), ('ok', 'true')]
    """
    rows: list[tuple[str, str]] = []
    if isinstance(payload, Mapping):
        for key in sorted(payload, key=str):
            name = f"{prefix}.{key}" if prefix else str(key)
            rows.extend(flatten(payload[key], name, limit))
        return rows
    if isinstance(payload, float):
        text = fmt_num(payload, 6)
    else:
        text = json.dumps(payload, ensure_ascii=False)
        if isinstance(payload, str):
            text = payload
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return [(prefix or "value", text)]
