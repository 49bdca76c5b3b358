"""Quality-gate conditions for ``sparkeval compare --fail-if``.

A condition describes a **failure**; the gate passes when no condition holds for
any compared run. Two forms, parsed with a regular expression (never evaluated):

* ``MEASURE OP NUMBER`` — on a compared run's mean of the measure (over the
  queries on which the run defines it), e.g. ``"nDCG@10 < 0.30"``;
* ``MEASURE drop OP NUMBER[%] [p<ALPHA | p_ttest<ALPHA]`` — on the drop against
  the baseline over the paired queries. The drop is ``baseline_mean - mean`` for a
  higher-is-better measure and ``mean - baseline_mean`` for a lower-is-better one,
  so a positive drop is always a deterioration. With ``%`` the drop is relative to
  ``|baseline_mean|``. An optional ``p<ALPHA`` clause makes the condition hold
  only when the drop is also significant: ``p`` is the Holm-adjusted
  randomization-test p-value, ``p_ttest`` the Holm-adjusted t-test p-value.
  Example: ``"nDCG@10 drop > 1% p<0.05"``, ``"AP drop > 0.01"``.

``OP`` is one of ``<``, ``<=``, ``>``, ``>=``. A condition whose value is undefined
(no paired queries, a zero baseline with a relative drop) counts as a failure,
since the gate cannot vouch for the run.

Example:
    >>> c = parse_condition("nDCG@10 drop > 1% p<0.05")
    >>> (c.measure, c.kind, c.op, c.threshold, c.relative, c.p_field, c.p_threshold)
    ('nDCG@10', 'drop', '>', 0.01, True, 'p_randomization_holm', 0.05)
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sparkeval.errors import ConfigError

_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_CONDITION = re.compile(
    r"^\s*(?P<measure>[A-Za-z][\w@().,=+\-]*?)\s*"
    r"(?:(?P<drop>drop)\s*)?"
    r"(?P<op><=|>=|<|>)\s*(?P<value>" + _NUMBER + r")\s*(?P<pct>%)?"
    r"(?:\s+(?P<pname>p|p_ttest)\s*(?P<pop><=|<)\s*(?P<pvalue>" + _NUMBER + r"))?\s*$",
    re.IGNORECASE,
)

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}

#: comparison columns that a p-value clause may refer to
P_FIELDS = {"p": "p_randomization_holm", "p_ttest": "p_ttest_holm"}

SYNTAX = (
    "expected 'MEASURE OP NUMBER' (e.g. 'nDCG@10 < 0.30') or "
    "'MEASURE drop OP NUMBER[%] [p<ALPHA]' (e.g. 'nDCG@10 drop > 1% p<0.05'), "
    "OP one of <, <=, >, >="
)


@dataclass(frozen=True)
class GateCondition:
    """One parsed ``--fail-if`` condition."""

    text: str
    measure: str
    kind: str  # "mean" or "drop"
    op: str
    threshold: float
    relative: bool = False
    p_field: str | None = None
    p_op: str | None = None
    p_threshold: float | None = None


def parse_condition(text: str, canonical: Callable[[str], str] | None = None) -> GateCondition:
    """Parse one condition; ``canonical`` maps a measure name to its canonical form.

    Raises:
        ConfigError: the text does not follow the syntax, or the measure is unknown.
    """
    match = _CONDITION.match(text)
    if not match:
        raise ConfigError(f"bad --fail-if condition {text!r}: {SYNTAX}")
    drop = match["drop"] is not None
    relative = match["pct"] is not None
    if relative and not drop:
        raise ConfigError(
            f"bad --fail-if condition {text!r}: '%' applies only to a drop "
            "(e.g. 'nDCG@10 drop > 1%')"
        )
    if match["pname"] and not drop:
        raise ConfigError(
            f"bad --fail-if condition {text!r}: a p-value clause applies only to a drop "
            "(e.g. 'nDCG@10 drop > 1% p<0.05')"
        )
    threshold = float(match["value"])
    if relative:
        threshold /= 100.0
    p_threshold = float(match["pvalue"]) if match["pvalue"] else None
    if p_threshold is not None and not 0.0 < p_threshold <= 1.0:
        raise ConfigError(f"bad --fail-if condition {text!r}: p threshold must lie in (0, 1]")
    measure = match["measure"]
    if canonical is not None:
        try:
            measure = canonical(measure)
        except ValueError as exc:
            raise ConfigError(f"bad --fail-if condition {text!r}: {exc}") from None
    return GateCondition(
        text=text.strip(),
        measure=measure,
        kind="drop" if drop else "mean",
        op=match["op"],
        threshold=threshold,
        relative=relative,
        p_field=P_FIELDS[match["pname"].lower()] if match["pname"] else None,
        p_op=match["pop"],
        p_threshold=p_threshold,
    )


def drop_of(mean: float, baseline_mean: float, higher_is_better: bool, relative: bool) -> float:
    """Deterioration of ``mean`` against ``baseline_mean`` (positive = worse).

    Example:
        >>> round(drop_of(0.45, 0.50, True, relative=True), 6)  # 10% below the baseline
        0.1
    """
    drop = baseline_mean - mean if higher_is_better else mean - baseline_mean
    if not relative:
        return drop
    if baseline_mean == 0.0:
        return 0.0 if drop == 0.0 else math.copysign(math.inf, drop)
    return drop / abs(baseline_mean)


def evaluate_gate(
    conditions: Iterable[GateCondition],
    comparison: Iterable[Mapping[str, Any]],
    run_means: Mapping[str, Mapping[str, float]],
    higher_is_better: Callable[[str], bool],
    runs: Iterable[str] | None = None,
) -> list[dict[str, Any]]:
    """Check every condition against every compared run.

    Args:
        conditions: parsed conditions.
        comparison: rows with ``run_id``, ``measure``, ``mean``, ``baseline_mean``
            (paired means) and the Holm-adjusted p-value columns.
        run_means: run → measure → the run's own mean (over its defined queries).
        higher_is_better: direction of a canonical measure name.
        runs: the compared runs (not the baseline); default: the runs of ``comparison``.

    Returns:
        one dict per failure: ``condition``, ``run_id``, ``measure``, ``value`` and a
        human-readable ``message``. Empty when the gate passes.
    """
    rows = {(r["run_id"], r["measure"]): r for r in comparison}
    runs = list(runs) if runs is not None else sorted({run for run, _ in rows})
    failures: list[dict[str, Any]] = []
    for cond in conditions:
        for run in runs:
            if cond.kind == "mean":
                value = run_means.get(run, {}).get(cond.measure, math.nan)
                if value is None or math.isnan(value):
                    failures.append(_failure(cond, run, None, "the mean is undefined"))
                elif OPERATORS[cond.op](value, cond.threshold):
                    failures.append(
                        _failure(cond, run, value, f"mean {value:.6g} {cond.op} {cond.threshold:g}")
                    )
                continue
            row = rows.get((run, cond.measure))
            if row is None or _undefined(row.get("mean")) or _undefined(row.get("baseline_mean")):
                failures.append(_failure(cond, run, None, "no paired queries to measure a drop"))
                continue
            drop = drop_of(
                float(row["mean"]),
                float(row["baseline_mean"]),
                higher_is_better(cond.measure),
                cond.relative,
            )
            if math.isinf(drop) and drop > 0 and cond.relative:
                failures.append(_failure(cond, run, None, "relative drop from a zero baseline"))
                continue
            if not OPERATORS[cond.op](drop, cond.threshold):
                continue
            shown = f"{drop * 100:.3g}%" if cond.relative else f"{drop:.6g}"
            limit = f"{cond.threshold * 100:g}%" if cond.relative else f"{cond.threshold:g}"
            message = f"drop {shown} {cond.op} {limit}"
            if cond.p_field is not None:
                p: Any = row.get(cond.p_field)
                if _undefined(p):
                    failures.append(
                        _failure(cond, run, drop, message + f", {cond.p_field} undefined")
                    )
                    continue
                if not OPERATORS[cond.p_op or "<"](float(p), float(cond.p_threshold or 0.0)):
                    continue
                message += f", {cond.p_field} {float(p):.4g} {cond.p_op} {cond.p_threshold:g}"
            failures.append(_failure(cond, run, drop, message))
    return failures


def _undefined(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _failure(cond: GateCondition, run: str, value: float | None, detail: str) -> dict[str, Any]:
    return {
        "condition": cond.text,
        "run_id": run,
        "measure": cond.measure,
        "value": value,
        "message": f"run {run}: {cond.measure} {detail} (condition '{cond.text}')",
    }
