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

from sparkeval.measures.batch import RankedBatch

Kernel = Callable[[RankedBatch, "int | None", Mapping[str, Any]], np.ndarray]
Aggregate = Literal["mean", "sum", "gmean"]
CutoffRule = Literal["none", "optional", "required"]

#: floor applied to per-query values before a geometric mean (trec_eval MIN_GEO_MEAN)
GMEAN_FLOOR = 1e-5


@dataclass(frozen=True)
class Param:
    """A named measure parameter with its type, default and allowed values."""

    kind: type
    default: Any
    choices: tuple[Any, ...] | None = None
    help: str = ""
    minimum: float | None = None

    def coerce(self, family: str, name: str, raw: Any) -> Any:
        """Convert a parsed value to this parameter's type or raise ValueError."""
        try:
            if self.kind is int:
                if isinstance(raw, float) and not raw.is_integer():
                    raise ValueError
                value: Any = int(raw)
            elif self.kind is float:
                value = float(raw)
            else:
                value = str(raw)
        except (TypeError, ValueError):
            raise ValueError(
                f"measure {family}: parameter {name}={raw!r} is not a valid "
                f"{self.kind.__name__}"
            ) from None
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(str(c) for c in self.choices)
            raise ValueError(
                f"measure {family}: parameter {name}={raw!r} is not one of: {allowed}"
            )
        if self.minimum is not None and value < self.minimum:
            raise ValueError(
                f"measure {family}: parameter {name}={raw!r} must be >= {self.minimum}"
            )
        return value


REL_PARAM = Param(int, None, help="relevance level: grade >= rel counts as relevant", minimum=0)


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
    aggregate: Aggregate = "mean"
    higher_is_better: bool = True
    per_query: bool = True
    references: str = ""

    @property
    def uses_rel_level(self) -> bool:
        return "rel" in self.params


@dataclass(frozen=True)
class Measure:
    """One concrete measure: a family, an optional cutoff and explicit parameters.

    ``params`` holds only the parameters the user gave, in declaration order, so
    that the canonical name stays short (``AP`` rather than ``AP(rel=1)``).
    """

    family: str
    k: int | None = None
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def spec(self) -> Family:
        return REGISTRY[self.family]

    @property
    def name(self) -> str:
        """Canonical name, e.g. ``nDCG(gain=exp)@20``."""
        text = self.family
        if self.params:
            text += "(" + ",".join(f"{k}={_fmt(v)}" for k, v in self.params) + ")"
        if self.k is not None:
            text += f"@{self.k}"
        return text

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
        explicit = {k: v for k, v in self.params if not (k == "rel" and v == rel_level)}
        if explicit:
            return None
        pattern = self.spec.trec if self.k is None else self.spec.trec_cut
        if pattern is None:
            return None
        return pattern.format(k=self.k)

    def compute(self, batch: RankedBatch, rel_level: int) -> np.ndarray:
        """Per-segment values (float64; NaN where undefined)."""
        values = self.spec.kernel(batch, self.k, self.resolved_params(rel_level))
        return np.asarray(values, dtype=np.float64)


def _fmt(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


REGISTRY: dict[str, Family] = {}


def measure(
    name: str,
    *,
    description: str,
    cutoff: CutoffRule = "none",
    params: Mapping[str, Param] | None = None,
    rel: bool = True,
    trec: str | None = None,
    trec_cut: str | None = None,
    aggregate: Aggregate = "mean",
    higher_is_better: bool = True,
    per_query: bool = True,
    references: str = "",
) -> Callable[[Kernel], Kernel]:
    """Register a kernel as the measure family ``name``.

    Args:
        name: canonical family name (``nDCG``).
        description: one-line definition with its formula.
        cutoff: whether ``@k`` is forbidden, optional or required.
        params: extra parameters (``gain=exp``).
        rel: the family depends on the relevance level (adds the ``rel`` parameter).
        trec: trec_eval name without cutoff (``ndcg``), if any.
        trec_cut: trec_eval name with cutoff, ``{k}`` standing for it (``ndcg_cut_{k}``).
        aggregate: how per-query values combine into the ``all`` value.
        higher_is_better: direction, for reports and quality gates.
        per_query: False for measures that only exist as an aggregate (``gm_map``).
        references: where the definition comes from.
    """
    all_params: dict[str, Param] = dict(params or {})
    if rel:
        all_params["rel"] = REL_PARAM

    def register(kernel: Kernel) -> Kernel:
        if name in REGISTRY:
            raise ValueError(f"measure family {name} registered twice")
        REGISTRY[name] = Family(
            name=name,
            kernel=kernel,
            description=description,
            cutoff=cutoff,
            params=all_params,
            trec=trec,
            trec_cut=trec_cut,
            aggregate=aggregate,
            higher_is_better=higher_is_better,
            per_query=per_query,
            references=references,
        )
        return kernel

    return register


def trec_patterns() -> list[tuple[re.Pattern[str], str, bool]]:
    """(regex, family, has_cutoff) for every trec_eval name the registry knows."""
    out: list[tuple[re.Pattern[str], str, bool]] = []
    for fam in REGISTRY.values():
        if fam.trec is not None:
            out.append((re.compile("^" + re.escape(fam.trec) + "$"), fam.name, False))
        if fam.trec_cut is not None:
            head, tail = fam.trec_cut.split("{k}")
            rx = "^" + re.escape(head) + r"(\d+)" + re.escape(tail) + "$"
            out.append((re.compile(rx), fam.name, True))
    return out
