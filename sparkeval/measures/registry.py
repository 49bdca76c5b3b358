"""The measure registry: the single source of names, parameters, trec_eval names,
descriptions, aggregation and direction of every measure.

A *family* (``nDCG``) is registered once with :func:`measure`; a *measure*
(``nDCG@10``, ``AP(rel=2)``) is a family plus a cutoff and explicit parameters.
Name parsing (:mod:`sparkeval.measures.names`), ``sparkeval measures``, error
messages and the trec_eval mapping are all derived from this registry.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from sparkeval.errors import MeasureError
from sparkeval.measures.batch import RankedBatch

Kernel = Callable[[RankedBatch, "int | None", Mapping[str, Any]], np.ndarray]
Aggregate = Literal["mean", "sum", "gmean"]
CutoffRule = Literal["none", "optional", "required"]
#: a family's test of its parameters together: the error message, or None when they fit
Check = Callable[[Mapping[str, Any]], "str | None"]

#: floor applied to per-query values before a geometric mean (trec_eval MIN_GEO_MEAN)
GMEAN_FLOOR = 1e-5


@dataclass(frozen=True)
class Param:
    """A named measure parameter with its type, default and allowed values.

    ``kind`` is ``int``, ``float``, ``str``, ``bool`` (a switch, written ``True`` or
    ``False`` in any case, or ``1``/``0``), ``tuple`` (a list of numbers, written
    ``0.2;0.5`` in a measure name) or ``dict`` (a map from integer grade to number,
    written ``1:3;2:9``; stored as sorted ``(grade, value)`` pairs).

    ``requires`` names other parameters that must be given with this one, each with
    the reason (a peer's default that differs from ours); they then stay in the
    canonical name even at their default. ``needs_cutoff`` holds the values that mean
    nothing without an ``@k`` cutoff (``AP(denom=k)``), refused without one.
    ``refused`` names a peer's values that are not offered, each with the reason
    given when one is asked for (a per-query value cannot stop the whole evaluation).
    """

    kind: type
    default: Any
    choices: tuple[Any, ...] | None = None
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None
    required: bool = False
    exclusive_minimum: bool = False
    requires: tuple[tuple[str, str], ...] = ()
    needs_cutoff: tuple[Any, ...] = ()
    refused: tuple[tuple[Any, str], ...] = ()

    def coerce(self, family: str, name: str, raw: Any) -> Any:
        """Convert a parsed value to this parameter's type or raise MeasureError."""
        try:
            if self.kind is bool:
                value: Any = _switch(raw)
            elif self.kind is int:
                if isinstance(raw, float) and not raw.is_integer():
                    raise ValueError
                value = int(raw)
            elif self.kind is float:
                value = float(raw)
                if value != value:
                    raise ValueError
            elif self.kind is tuple:
                value = _number_list(raw)
            elif self.kind is dict:
                value = _grade_map(raw)
            else:
                value = str(raw)
        except (TypeError, ValueError):
            raise MeasureError(
                f"measure {family}: parameter {name}={raw!r} is not a valid "
                f"{_KIND_NAMES.get(self.kind) or self.kind.__name__}"
            ) from None
        for refused, reason in self.refused:
            if value == refused:
                raise MeasureError(f"measure {family}: parameter {name}={raw!r} {reason}")
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(str(c) for c in self.choices)
            raise MeasureError(
                f"measure {family}: parameter {name}={raw!r} is not one of: {allowed}"
            )
        if isinstance(value, int | float) and not isinstance(value, bool):
            if self.minimum is not None and (
                value < self.minimum or (self.exclusive_minimum and value == self.minimum)
            ):
                op = ">" if self.exclusive_minimum else ">="
                raise MeasureError(
                    f"measure {family}: parameter {name}={raw!r} must be {op} {self.minimum}"
                )
            if self.maximum is not None and value > self.maximum:
                raise MeasureError(
                    f"measure {family}: parameter {name}={raw!r} must be <= {self.maximum}"
                )
        return value

    def render(self, value: Any) -> str:
        """The value as written in a canonical measure name."""
        return format_value(value)


_KIND_NAMES: dict[type, str] = {
    bool: "switch (True or False)",
    tuple: "list of numbers (a;b;c)",
    dict: "grade map (grade:value;...)",
}


def _switch(raw: Any) -> bool:
    """``True``/``False`` (any case) or 1/0 as a bool; anything else is a ValueError."""
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise ValueError


def _number_list(raw: Any) -> tuple[float, ...]:
    if isinstance(raw, int | float):
        return (float(raw),)
    items = raw.split(";") if isinstance(raw, str) else list(raw)
    if isinstance(raw, str) and not raw.strip():
        raise ValueError
    return tuple(float(x) for x in items)


def _grade_map(raw: Any) -> tuple[tuple[int, float], ...]:
    if isinstance(raw, str):
        pairs = []
        for item in raw.split(";"):
            level, sep, value = item.partition(":")
            if not sep or not re.fullmatch(r"\s*[+-]?\d+\s*", level):
                raise ValueError
            pairs.append((int(level), float(value)))
    elif isinstance(raw, Mapping):
        pairs = [(int(k), float(v)) for k, v in raw.items()]
    else:
        pairs = [(int(k), float(v)) for k, v in raw]
    levels = [k for k, _ in pairs]
    if not pairs or len(set(levels)) != len(levels):
        raise ValueError
    return tuple(sorted(pairs))


def format_value(value: Any) -> str:
    """Canonical text of a parameter value (``2`` for 2.0, ``0.2;0.5`` for lists,
    ``True`` for a switch that is on)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, tuple):
        if value and isinstance(value[0], tuple):
            return ";".join(f"{k}:{format_value(v)}" for k, v in value)
        return ";".join(format_value(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


REL_PARAM = Param(int, None, help="relevance level: grade >= rel counts as relevant", minimum=0)

#: the parameter that evaluates a family over the condensed ranking (trec_eval's -J)
JUDGED_ONLY = "judged_only"
JUDGED_ONLY_PARAM = Param(
    bool,
    False,
    choices=(False, True),
    help="True: the measure over the condensed ranking, the retrieved docs without a "
    "grade >= 0 in the qrels removed first (trec_eval -J; ir_measures judged_only=True)",
)


@dataclass(frozen=True)
class TrecParams:
    """How trec_eval's parameterised request ``-m base.v1,v2,...`` maps onto a family.

    Modes:
        ``cutoffs``: each value is a whole-number cutoff; one measure per value
            (``P.5,10`` gives ``P@5`` and ``P@10``).
        ``each``: each value goes to parameter ``param``; one measure per value
            (``iprec_at_recall..1,.2``).
        ``list``: the whole list goes to the list parameter ``param``; one measure
            named ``base_<values as given>`` (``utility.2,-1,0,0``).
        ``pairs``: ``grade=value`` pairs go to the grade-map parameter ``param``
            (``ndcg.1=3,2=9``).
        ``one``: exactly one number goes to parameter ``param``; one measure named
            ``base_<value as given>`` (``set_F.0.5`` is printed ``set_F_0.5``; trec_eval
            would read only the first of several values, so more than one is refused).
    """

    base: str
    mode: Literal["cutoffs", "each", "list", "pairs", "one"]
    param: str | None = None

    def render(self, value: Any) -> str:
        """trec_eval's printed parameter text for a value built from canonical params."""
        if self.mode == "pairs":
            return ",".join(f"{k}={format_value(v)}" for k, v in value)
        if self.mode == "one":
            return format_value(value)
        return ",".join(format_value(v) for v in value)


@dataclass(frozen=True)
class Family:
    """A registered measure family."""

    name: str
    kernel: Kernel
    description: str
    cutoff: CutoffRule = "none"
    params: Mapping[str, Param] = field(default_factory=dict)
    trec: str | None = None
    trec_cut: str | None = None
    trec_params: tuple[TrecParams, ...] = ()
    aggregate: Aggregate = "mean"
    higher_is_better: bool = True
    per_query: bool = True
    references: str = ""
    undefined: str = ""
    default_cutoff: int | None = None
    reads_past_cutoff: bool = False
    check: Check | None = None

    @property
    def offers_judged_only(self) -> bool:
        """The family takes ``judged_only`` (evaluation over the condensed ranking)."""
        return self.params.get(JUDGED_ONLY) == JUDGED_ONLY_PARAM

    @property
    def uses_rel_level(self) -> bool:
        """The family's ``rel`` falls back to the run's relevance level (trec_eval's -l)."""
        return self.params.get("rel") == REL_PARAM


TREC_FIELD = re.compile(r"\{(\w+)(?::([^{}]*))?\}")


def pattern_fields(pattern: str) -> list[str]:
    """Names of the ``{placeholders}`` of a trec name pattern, in order."""
    return [m.group(1) for m in TREC_FIELD.finditer(pattern)]


@dataclass(frozen=True)
class Measure:
    """One concrete measure: a family, an optional cutoff and explicit parameters.

    ``params`` holds only the parameters the user gave, in declaration order, so
    that the canonical name stays short (``AP`` rather than ``AP(rel=1)``).
    ``trec_label`` keeps the exact name trec_eval prints for a measure requested
    with trec_eval's parameter syntax (``11pt_avg_.25,.5,.75``); it does not take
    part in equality.
    """

    family: str
    k: int | None = None
    params: tuple[tuple[str, Any], ...] = ()
    trec_label: str | None = field(default=None, compare=False)

    @property
    def spec(self) -> Family:
        return REGISTRY[self.family]

    @property
    def name(self) -> str:
        """Canonical name, e.g. ``nDCG(gain=exp)@20``."""
        text = self.family
        if self.params:
            specs = self.spec.params
            text += "(" + ",".join(f"{k}={specs[k].render(v)}" for k, v in self.params) + ")"
        if self.k is not None:
            text += f"@{self.k}"
        return text

    def full_name(self, rel_level: int) -> str:
        """The canonical name with every parameter spelled out, defaults and the run's
        relevance level included: what a label means. A switch that is off
        (``judged_only=False``) is left out, as it changes nothing.

        Example: ``AP@10`` at relevance level 1 is ``AP(denom=R,rel=1)@10``.
        """
        specs = self.spec.params
        values = self.resolved_params(rel_level)
        parts = [
            f"{k}={specs[k].render(v)}"
            for k, v in values.items()
            if v is not None and v is not False
        ]
        text = self.family + (f"({','.join(parts)})" if parts else "")
        return text if self.k is None else f"{text}@{self.k}"

    def resolved_params(self, rel_level: int) -> dict[str, Any]:
        """All parameters with defaults filled in; ``rel`` falls back to ``rel_level``."""
        values = {name: p.default for name, p in self.spec.params.items()}
        values.update(dict(self.params))
        if self.spec.uses_rel_level and values.get("rel") is None:
            values["rel"] = rel_level
        return values

    def trec_name(self, rel_level: int = 1) -> str | None:
        """trec_eval's name for this measure, or None where trec_eval has no equivalent.

        A ``rel`` parameter equal to the run-wide ``rel_level`` is what trec_eval's
        ``-l`` expresses, so it does not prevent a trec name.
        """
        if self.trec_label is not None:
            return self.trec_label
        spec = self.spec
        explicit = {
            k: v
            for k, v in self.params
            if not (k == "rel" and v == rel_level and spec.uses_rel_level)
        }
        pattern = spec.trec if self.k is None else spec.trec_cut
        if pattern is not None:
            fields = set(pattern_fields(pattern)) - {"k"}
            if set(explicit) <= fields:
                values = self.resolved_params(rel_level)
                return pattern.format(k=self.k, **{f: values[f] for f in fields})
        if self.k is None and len(explicit) == 1:
            ((pname, value),) = explicit.items()
            for tp in spec.trec_params:
                if tp.mode in ("list", "pairs", "one") and tp.param == pname:
                    return f"{tp.base}_{tp.render(value)}"
        return None

    def compute(self, batch: RankedBatch, rel_level: int) -> np.ndarray:
        """Per-segment values (float64; NaN where undefined).

        With ``judged_only=True`` the kernel sees :meth:`RankedBatch.condensed`: every
        segment without its docs that have no grade >= 0 in the qrels, ranks closed up.
        """
        params = self.resolved_params(rel_level)
        if params.get(JUDGED_ONLY):
            batch = batch.condensed()
        values = self.spec.kernel(batch, self.k, params)
        return np.asarray(values, dtype=np.float64)


REGISTRY: dict[str, Family] = {}


def measure(
    name: str,
    *,
    description: str,
    cutoff: CutoffRule = "none",
    params: Mapping[str, Param] | None = None,
    rel: bool = True,
    judged_only: bool = False,
    trec: str | None = None,
    trec_cut: str | None = None,
    trec_params: tuple[TrecParams, ...] = (),
    aggregate: Aggregate = "mean",
    higher_is_better: bool = True,
    per_query: bool = True,
    references: str = "",
    undefined: str = "",
    default_cutoff: int | None = None,
    reads_past_cutoff: bool = False,
    check: Check | None = None,
) -> Callable[[Kernel], Kernel]:
    """Register a kernel as the measure family ``name``.

    Args:
        name: canonical family name (``nDCG``).
        description: one-line definition with its formula.
        cutoff: whether ``@k`` is forbidden, optional or required.
        params: extra parameters (``gain=exp``).
        rel: the family depends on the relevance level (adds the ``rel`` parameter,
            the run's relevance level unless given); a family whose ``rel`` means
            something else declares its own in ``params`` with ``rel=False``.
        judged_only: the family takes ``judged_only`` (after ``rel``): True computes it
            over the condensed ranking (trec_eval -J, ir_measures ``judged_only=True``).
        trec: trec_eval name without cutoff (``ndcg``), if any; ``{param:fmt}``
            stands for a parameter (``iprec_at_recall_{recall:.2f}``).
        trec_cut: trec_eval name with cutoff, ``{k}`` standing for it (``ndcg_cut_{k}``).
        trec_params: how trec_eval's ``-m base.params`` syntax maps onto the family.
        aggregate: how per-query values combine into the ``all`` value.
        higher_is_better: direction, for reports and quality gates.
        per_query: False for measures that only exist as an aggregate (``gm_map``).
        references: where the definition comes from.
        undefined: when a per-query value is undefined (null), if ever.
        default_cutoff: the cutoff of a name written without ``@k`` (``NearDup`` is
            ``NearDup@10``); only with an optional cutoff.
        reads_past_cutoff: ``@k`` does not bound the positions the kernel reads
            (``PartialAUC@k`` counts k non-relevant docs, wherever they are), so no
            ranking is cut at k for it.
        check: tests the parameters together once parsed (every parameter, defaults
            filled in): returns the error message, or None when they fit.
    """
    all_params: dict[str, Param] = dict(params or {})
    if rel:
        all_params["rel"] = REL_PARAM
    if judged_only:
        all_params[JUDGED_ONLY] = JUDGED_ONLY_PARAM

    def register(kernel: Kernel) -> Kernel:
        if name in REGISTRY:
            raise ValueError(f"measure family {name} registered twice")
        if default_cutoff is not None and cutoff != "optional":
            raise ValueError(f"measure family {name}: a default cutoff needs cutoff='optional'")
        for pattern in (trec, trec_cut):
            if pattern is None:
                continue
            for f in pattern_fields(pattern):
                if f != "k" and (f not in all_params or not all_params[f].required):
                    raise ValueError(
                        f"measure family {name}: trec field {f} must be a required param"
                    )
        REGISTRY[name] = Family(
            name=name,
            kernel=kernel,
            description=description,
            cutoff=cutoff,
            params=all_params,
            trec=trec,
            trec_cut=trec_cut,
            trec_params=tuple(trec_params),
            aggregate=aggregate,
            higher_is_better=higher_is_better,
            per_query=per_query,
            references=references,
            undefined=undefined,
            default_cutoff=default_cutoff,
            reads_past_cutoff=reads_past_cutoff,
            check=check,
        )
        return kernel

    return register


_FIELD_RX = {"k": r"(?P<k>\d+)"}
_NUMBER_RX = r"[0-9]*\.?[0-9]+"


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    parts, pos = [], 0
    for m in TREC_FIELD.finditer(pattern):
        parts.append(re.escape(pattern[pos : m.start()]))
        name = m.group(1)
        parts.append(_FIELD_RX.get(name, f"(?P<{name}>{_NUMBER_RX})"))
        pos = m.end()
    parts.append(re.escape(pattern[pos:]))
    return re.compile("^" + "".join(parts) + "$")


def trec_patterns() -> list[tuple[re.Pattern[str], str, bool]]:
    """(regex, family, has_cutoff) for every trec_eval name the registry knows.

    Named groups of a regex carry the cutoff (``k``) and parameters.
    """
    out: list[tuple[re.Pattern[str], str, bool]] = []
    for fam in REGISTRY.values():
        if fam.trec is not None:
            out.append((_pattern_regex(fam.trec), fam.name, False))
        if fam.trec_cut is not None:
            out.append((_pattern_regex(fam.trec_cut), fam.name, True))
    return out


def trec_bases() -> dict[str, tuple[str, TrecParams]]:
    """trec_eval base name (before the dot of ``-m base.params``) -> (family, mapping)."""
    out: dict[str, tuple[str, TrecParams]] = {}
    for fam in REGISTRY.values():
        for tp in fam.trec_params:
            if tp.base in out:
                raise ValueError(f"trec base {tp.base} claimed by {out[tp.base][0]} and {fam.name}")
            out[tp.base] = (fam.name, tp)
    return out
