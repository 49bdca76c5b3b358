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
