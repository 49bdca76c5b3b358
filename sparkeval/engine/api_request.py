"""The keyword arguments of ``sparkeval.evaluate`` and ``evaluate_recommendations``,
checked and resolved once, before any table is read, for both paths (Spark and in
process).

Every keyword means the same on both paths: ``compat`` picks a profile
(:mod:`sparkeval.compat`: measures, query policy, relevance rule), ``relevance`` /
``relevance_threshold`` / ``relevant_only`` make the truth's ratings grades
(:class:`~sparkeval.io.truth.RelevanceRule`), ``queries``, ``rel_level``, ``depth``,
``names`` and ``run_ids`` are the engine's, ``ties`` orders tied scores (``doc-id``,
the default, ``rank`` or ``input-order``; :data:`sparkeval.formats.TIE_RULES`), and
``run_columns`` / ``qrels_columns`` map columns. A bad value raises a
:class:`~sparkeval.errors.SparkevalError` that is also a ``ValueError`` (or a
``TypeError`` for a value of the wrong type).

Example:
    >>> request = api_request("HitRate@10", compat="replay")
    >>> request.plan.measures[0].name, request.plan.queries
    ('Success@10', 'qrels')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sparkeval.compat import CompatPlan, plan_compat
from sparkeval.engine.evaluation_report import NAME_STYLES, as_measures
from sparkeval.engine.worker.assemble import EvalOptions, check_ties_allowed
from sparkeval.errors import ConfigError, OptionTypeError
from sparkeval.io.columns import PYTHON_KEYWORDS, OptionNaming, parse_mapping
from sparkeval.io.truth import RelevanceRule
from sparkeval.measures import Measure


@dataclass(frozen=True)
class ApiRequest:
    """What an API call asks for, checked.

    Attributes:
        plan: the measures, query policy and relevance rule (and the profile's report).
        options: the engine's options (query policy, ``rel_level``, ``depth``).
        names: ``canonical``, ``trec`` or {canonical: output name}.
        run_ids: every run id, or None to take them from the run's rows.
        run_columns, qrels_columns: the column mappings as given.
        buckets: the Spark path's hash buckets (None: its default; no meaning in process).
        near_duplicates: the near-duplicate pairs, or None.
        naming: how errors name the options that map columns (the keywords).
    """

    plan: CompatPlan
    options: EvalOptions
    names: str | Mapping[str, str]
    run_ids: list[str] | None
    run_columns: str | Mapping[str, str] | None
    qrels_columns: str | Mapping[str, str] | None
    buckets: int | None
    near_duplicates: Any
    naming: OptionNaming


def api_request(
    measures: Sequence[str | Measure] | str,
    *,
    compat: str = "trec",
    relevance: str | None = None,
    relevance_threshold: float | None = None,
    relevant_only: bool = False,
    queries: str | None = None,
    rel_level: int = 1,
    depth: int | None = None,
    names: str | Mapping[str, str] = "canonical",
    run_ids: Sequence[str] | None = None,
    run_columns: str | Mapping[str, str] | None = None,
    qrels_columns: str | Mapping[str, str] | None = None,
    buckets: int | None = None,
    near_duplicates: Any = None,
    naming: OptionNaming = PYTHON_KEYWORDS,
    ties: str | None = None,
) -> ApiRequest:
    """Check the keyword arguments of the API and resolve the profile.

    Raises:
        MeasureError: an unknown measure or a bad measure parameter.
        ConfigError: a bad option value, or an option the profile contradicts.
        OptionTypeError: an option of the wrong type.
    """
    typed = _measure_names(measures)
    if compat == "trec":  # an unknown name as it was typed (a profile names its own)
        as_measures(measures)
    _check_type("compat", compat, str)
    _check_type("relevant_only", relevant_only, bool)
    _check_type("names", names, (str, Mapping))
    if isinstance(names, str) and names not in NAME_STYLES:
        raise ConfigError(f"names must be one of {', '.join(NAME_STYLES)} or a dict, got {names!r}")
    if run_ids is not None:
        if isinstance(run_ids, str) or not all(isinstance(r, str) for r in run_ids):
            raise OptionTypeError(f"run_ids: expected a list of strings, got {run_ids!r}")
        run_ids = list(run_ids)
        if not run_ids:
            raise ConfigError("run_ids: give at least one run id (or None: the run's own)")
    if buckets is not None and (isinstance(buckets, bool) or not isinstance(buckets, int)):
        raise OptionTypeError(f"buckets: expected a whole number, got {buckets!r}")
    if buckets is not None and buckets < 1:
        raise ConfigError(f"buckets must be >= 1, got {buckets}")
    for key, mapping, kind in (
        ("run_columns", run_columns, "run"),
        ("qrels_columns", qrels_columns, "qrels"),
    ):
        _check_type(key, mapping, (str, Mapping, type(None)))
        parse_mapping(mapping, kind)
    rule = RelevanceRule.from_options(relevance, relevance_threshold, relevant_only)
    plan = plan_compat(compat, typed, rule, queries, ties)
    check_ties_allowed(plan.ties, near_duplicates is not None)
    options = EvalOptions(queries=plan.queries, rel_level=rel_level, depth=depth, ties=plan.ties)  # type: ignore[arg-type]
    labels = plan.labels() if names == "requested" else names
    return ApiRequest(
        plan, options, labels, run_ids, run_columns, qrels_columns, buckets, near_duplicates, naming
    )


def _measure_names(measures: Sequence[str | Measure] | str) -> list[str]:
    """The requested measures as names (a parsed measure by its canonical name)."""
    if isinstance(measures, str):
        return [measures]
    if not isinstance(measures, Sequence) or not all(
        isinstance(m, str | Measure) for m in measures
    ):
        raise OptionTypeError(
            f"measures: expected a name, or a list of names or measures, got {measures!r}"
        )
    return [m.name if isinstance(m, Measure) else m for m in measures]


def _check_type(key: str, value: Any, kinds: type | tuple[type, ...]) -> None:
    """An :class:`OptionTypeError` naming ``key`` when ``value`` is not of ``kinds``."""
    if not isinstance(value, kinds):
        names = [kinds] if isinstance(kinds, type) else list(kinds)
        expected = " or ".join("None" if k is type(None) else k.__name__ for k in names)
        raise OptionTypeError(f"{key}: expected {expected}, got {value!r}")
