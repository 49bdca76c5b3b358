"""Compatibility profiles: reproduce the numbers of other evaluators with our measures.

A profile maps the measure names a user of another evaluator knows onto registry
measures with explicit parameters (the registry stays the single source of
truth), and fixes the query policy and the relevance rule:

``trec`` (default)
    trec_eval: names as given, ``queries`` as given (default ``qrels``), integer
    grades from the truth.

``mllib`` (Spark MLlib ``RankingMetrics``)
    * users: every user in the recommendations or the truth (``queries=union``);
      an empty ranking or an empty truth scores 0 and still counts; or, with
      ``queries=both``, the users of an inner join of predictions and labels, as
      MLlib users who join before ``RankingEvaluator`` get;
    * relevance: every truth item (``all``) unless a threshold is given; with
      ``relevance grade`` the labels are still every truth item for P, R and MAP
      (``rel=0``) and nDCG uses the grades with gain 2^g - 1;
    * ``P@k`` → ``P@k`` (hits / k); ``R@k`` → ``R@k`` (hits / |labels|);
      ``MAP`` → ``AP`` (/ |labels|); ``MAP@k`` → ``AP(denom=min_k)@k``
      (/ min(|labels|, k)); ``nDCG@k`` → ``nDCG@k`` (binary gain, ideal over
      min(|labels|, k) positions) or ``nDCG(gain=exp)@k`` for graded labels.

``recommenders`` (Microsoft Recommenders ``SparkRankingEvaluation``)
    * users: those with recommendations and truth (an inner join, ``queries=both``);
    * relevance: every truth row of the user (binary, ``all``);
    * ``relevancy_method="top_k"`` (no threshold): every measure is computed on the
      top k recommendations by score: ``P@k``, ``R@k``, ``nDCG@k`` as in MLlib;
      ``MAP@k`` (``map_at_k``) → ``AP(denom=min_k)@k``; ``MAP`` (``map``: MLlib's MAP
      over the top k, / |truth|) → ``AP@k`` with k the cutoff of the other requested
      measures;
    * ``relevancy_method="by_threshold"`` (a relevance threshold T): the
      *recommendations* with score >= T are kept (:attr:`CompatPlan.min_score`), all
      of them, best first, and the truth is still every row of the user; a user none of
      whose recommendations reaches T drops out of the inner join. ``P@k`` (hits in
      the top k / k), ``R@k``, ``nDCG@k`` and ``MAP@k`` as above; ``MAP`` is MLlib's
      MAP of the whole kept list (``AP``: sum over hits of precision at the hit's rank,
      / |truth|);
    * the former reading of a threshold, the truth's rows with rating >= T the only
      labels and a user without one left out, is ``relevant_only`` (``--relevant-only``)
      with the threshold; the recommendations are then cut to the top k as in ``top_k``.

``replay`` (RePlay ``replay.metrics``)
    * users: those in the ground truth (``queries=qrels``): a user without
      recommendations scores 0;
    * relevance: every ground-truth item (``all``) unless a threshold is given;
    * ``HitRate@k`` → ``Success@k``; ``MRR@k`` → ``RR@k``; ``Precision@k`` → ``P@k``;
      ``Recall@k`` → ``R@k``; ``MAP@k`` → ``AP(denom=min_k)@k`` (/ min(k, |truth|));
      ``NDCG@k`` → ``nDCG@k`` (binary, ideal over min(k, |truth|) positions);
      ``RocAuc@k`` → ``RocAuc@k`` (the AUC of the top k);
      Coverage, Novelty and the other beyond-accuracy metrics are refused, naming the
      value of ``sparkeval diversity`` that reports each (``evaluate`` computes
      Unexpectedness@k against a reference run and CategoricalDiversity@k with item
      categories, :mod:`sparkeval.measures.set_names`);
    * RePlay's aggregation modes, named as its results name them: ``NDCG-Median@k``
      and ``NDCG-ConfidenceInterval@k`` (``mode=Median()``, ``mode=ConfidenceInterval(
      alpha=0.95)``) of each metric above are computed from the per-user values of its
      measure (:class:`ModeMeasure`, :attr:`CompatPlan.modes`); ``-Mean`` and
      ``-PerUser`` are refused, naming the plain name and ``per_query.parquet``.

``rectools`` (RecTools ``rectools.metrics``, default parameters)
    * users: those of the interactions (``queries=qrels``);
    * relevance: every interaction (``all``) unless a threshold is given;
    * ``Precision@k`` → ``P@k``; ``Recall@k`` → ``R@k``; ``HitRate@k`` → ``Success@k``;
      ``MRR@k`` → ``RR@k``; ``MAP@k`` → ``AP@k`` (/ the user's relevant items,
      ``divide_by_k=False``); ``NDCG@k`` → ``nDCG(ideal=k)@k`` (IDCG of a full top k,
      ``divide_by_achievable=False``; ``nDCG(ideal=qrels)@k`` is its
      ``divide_by_achievable=True``, the ideal of the user's interactions);
      ``F1Beta(beta=b)@k`` → ``F(beta=b)@k``; ``RelP@k`` is ``Precision(k,
      r_precision=True)`` (hits / min(k, interactions)); ``PartialAUC@k`` and
      ``PAP@k`` as they are, with ``insufficient_handling`` ``ignore`` (default) or
      ``exclude`` (an excluded user is undefined, left out of the mean; ``raise`` is
      not offered); Serendipity,
      CatalogCoverage and the other beyond-accuracy metrics are refused, naming the
      value of ``sparkeval diversity`` that reports each (MeanInvUserFreq and
      AvgRecPopularity: none; ``evaluate`` computes Intersection@k against a reference
      run, :mod:`sparkeval.measures.set_names`);
    * a rank column is read as RecTools reads it, the positions themselves: ranks 1
      and 3 leave position 2 empty (an item ranked 3 counts at position 3) and an item
      ranked 4 is outside k = 3 however few items the list has; ranks must be whole
      numbers >= 1, each given once per user. (Other profiles read ranks as an order
      and count the users whose ranks are not 1..n: ``queries.rank_gaps``.)

Known differences that no profile reproduces: MLlib counts a duplicated
prediction once per occurrence (sparkeval rejects duplicates), MLlib's graded
ideal DCG takes the labels in the order given (sparkeval sorts them, so nDCG
never exceeds 1), and Recommenders breaks score ties arbitrarily (sparkeval by
item id descending).

Tied scores: every profile orders them by doc id descending by default, trec_eval's
rule, so that a profile's numbers do not depend on the order in which the rows were
written; ``ties`` (:attr:`CompatPlan.ties`) applies under every profile. A peer that
keeps the input order of tied scores (ranx) is reproduced with
``ties="input-order"`` on tables held in memory, or with ``ties="rank"`` when the
run carries that order as a rank column (RecTools reads its tables' rank column).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from sparkeval.errors import ConfigError
from sparkeval.formats import TIE_RULES
from sparkeval.io.truth import RelevanceRule
from sparkeval.measures import Measure
from sparkeval.measures.names import parse_measures

COMPAT_PROFILES = ("trec", "mllib", "recommenders", "replay", "rectools")

#: the query policies a profile allows, its default first
_QUERIES = {
    "mllib": ("union", "both"),
    "recommenders": ("both",),
    "replay": ("qrels",),
    "rectools": ("qrels",),
}
_SUPPORTED = {
    "mllib": "P@k, R@k, MAP, MAP@k, nDCG@k",
    "recommenders": "P@k, R@k, nDCG@k, MAP, MAP@k",
    "replay": "HitRate@k, MRR@k, Precision@k, Recall@k, MAP@k, NDCG@k, RocAuc@k",
    "rectools": (
        "Precision@k, RelP@k (Precision with r_precision=True), Recall@k, "
        "F1Beta(beta=b)@k, HitRate@k, MRR@k, MAP@k, AP(denom=k)@k "
        "(MAP with divide_by_k=True), NDCG@k, nDCG(ideal=qrels)@k (NDCG with "
        "divide_by_achievable=True), PartialAUC@k, PAP@k "
        "(insufficient_handling=ignore|exclude), Accuracy(catalog=N)@k, MCC(catalog=N)@k"
    ),
}
#: RePlay's names of a metric in an aggregation mode other than the mean, as its
#: results name them: ``NDCG-Median@10`` (``NDCG(10, mode=Median())``)
_REPLAY_MODE = re.compile(
    r"^\s*([A-Za-z]+)-(Mean|PerUser|Median|ConfidenceInterval)\s*@\s*(\S+)\s*$", re.IGNORECASE
)

#: why each of RePlay's modes that is not computed is not a measure here, and where its
#: value is
_REPLAY_MODE_REASONS = {
    "mean": "the mean is RePlay's default mode (Mean()): ask for {metric}@{k}",
    "peruser": "each user's value (PerUser()) is in per_query.parquet (run_id, query_id, "
    "measure, value) and, with --per-query, on stdout: ask for {metric}@{k}",
}

#: the modes computed (:class:`ModeMeasure`), by their lower-case spelling
_REPLAY_COMPUTED_MODES = {"median": "Median", "confidenceinterval": "ConfidenceInterval"}

#: RePlay's class name of the metric each registry family reproduces (the names of
#: :class:`ModeMeasure`: ``NDCG-Median@10``)
_REPLAY_METRIC_NAMES = {
    "Success": "HitRate",
    "RR": "MRR",
    "P": "Precision",
    "R": "Recall",
    "AP": "MAP",
    "nDCG": "NDCG",
    "RocAuc": "RocAuc",
}

#: RePlay's ConfidenceInterval alpha: its results' names do not carry it, so the one
#: computed is the 95% interval
REPLAY_ALPHA = 0.95

#: RePlay's metrics whose per-user values sparkeval does not write
_REPLAY_SET_METRICS = frozenset(
    ("coverage", "novelty", "surprisal", "unexpectedness", "categoricaldiversity")
)


@dataclass(frozen=True)
class ModeMeasure:
    """One of RePlay's aggregation modes of a per-user metric (``mode=`` of its metrics),
    computed from the per-user values of the registry measure that reproduces the metric.

    * ``median`` (``NDCG-Median@10``, RePlay's ``Median()``): the median of the per-user
      values, the mean of the two middle ones for an even count (numpy's ``median``, as
      RePlay computes it on pandas, dict and polars inputs; RePlay's Spark path takes
      ``percentile_approx(value, 0.5)``, the lower middle value for an even count);
    * ``confidence_interval`` (``NDCG-ConfidenceInterval@10``, RePlay's
      ``ConfidenceInterval(alpha=0.95)``): the half-width
      ``norm.ppf((1 + alpha) / 2) * s / sqrt(n)`` of the n per-user values, s their
      standard deviation with ddof 1; 0 for one user (RePlay's polars and Spark paths;
      its pandas path gives NaN).

    Undefined per-user values are left out, as they are left out of the mean.

    Attributes:
        name: its canonical output name, RePlay's: ``NDCG-Median@10``.
        typed: the name as requested.
        mode: ``median`` or ``confidence_interval``.
        base: the registry measure of the per-user values (``nDCG@10``).
        alpha: the interval's confidence (``confidence_interval`` only).
    """

    name: str
    typed: str
    mode: str
    base: Measure
    alpha: float | None = None

    def definition(self, rel_level: int) -> str:
        """What it computes, in words, with the base measure spelled out.

        Example: ``median of the per-user values of nDCG(rel=1)@10 (RePlay's Median())``.
        """
        of = f"the per-user values of {self.base.full_name(rel_level)}"
        if self.mode == "median":
            return f"median of {of} (RePlay's Median())"
        z = f"norm.ppf((1 + {self.alpha}) / 2)"
        return (
            f"{z} * std(ddof=1) / sqrt(n) of {of}, 0 for one user (RePlay's "
            f"ConfidenceInterval(alpha={self.alpha}))"
        )


def replay_mode(text: str) -> tuple[str, str, str] | None:
    """``(metric, mode, k)`` of RePlay's spelling of a metric in a computed aggregation
    mode (``Median``, ``ConfidenceInterval``), or None when ``text`` names no mode; the
    other modes are refused (:func:`refuse_replay_mode`).

    Example:
        >>> replay_mode("NDCG-Median@10")
        ('NDCG', 'Median', '10')
        >>> replay_mode("NDCG@10") is None
        True

    Raises:
        ConfigError: a mode sparkeval does not compute.
    """
    refuse_replay_mode(text)
    found = _REPLAY_MODE.match(text)
    if found is None:
        return None
    metric, mode, k = found.groups()
    return metric, _REPLAY_COMPUTED_MODES[mode.lower()], k


def refuse_replay_mode(text: str) -> None:
    """Refuse RePlay's spelling of a metric in an aggregation mode that is not computed
    (``mode=`` of its metrics: ``Mean()`` is the plain name, ``PerUser()`` is
    ``per_query.parquet``; any mode of a measure of the recommendation set), naming
    where sparkeval reports the value.

    Example:
        >>> refuse_replay_mode("NDCG@10")  # not a mode: nothing to refuse
        >>> refuse_replay_mode("NDCG-Median@10")  # computed: nothing to refuse
        >>> refuse_replay_mode("NDCG-Mean@10")
        Traceback (most recent call last):
        ...
        sparkeval.errors.ConfigError: measure 'NDCG-Mean@10' under --compat replay: the \
mean is RePlay's default mode (Mean()): ask for NDCG@10

    Raises:
        ConfigError: ``text`` is ``METRIC-MODE@k`` with a mode that is not computed.
    """
    found = _REPLAY_MODE.match(text)
    if found is None:
        return
    metric, mode, k = found.groups()
    if mode.lower() != "mean" and metric.lower() in _REPLAY_SET_METRICS:
        reason = (
            f"RePlay's {mode}() of {metric} is not computed: a measure of the "
            f"recommendation set reports its mean (ask for {metric}@{k})"
        )
        if metric.lower() in ("novelty", "surprisal"):
            reason += f"; the per-user values of {metric}@{k} are in per_user_set.parquet"
    elif mode.lower() in _REPLAY_MODE_REASONS:
        reason = _REPLAY_MODE_REASONS[mode.lower()].format(metric=metric, k=k)
    else:
        return
    raise ConfigError(f"measure {text.strip()!r} under --compat replay: {reason}")


#: an explicit ``ideal=qrels`` in a requested nDCG (RecTools' divide_by_achievable=True)
_IDEAL_QRELS = re.compile(r"[(,]\s*ideal\s*=\s*['\"]?qrels['\"]?\s*[,)]", re.IGNORECASE)
#: the parameters a RecTools AUC metric may be given under the rectools profile
_RECTOOLS_AUC_PARAMS = frozenset({"insufficient_handling"})


@dataclass(frozen=True)
class CompatPlan:
    """What a profile asks of the evaluation.

    Attributes:
        profile: the profile name.
        measures: registry measures to compute, in request order.
        queries: the query policy.
        relevance: the relevance rule for the truth.
        mapping: requested name → canonical name of the measure computed for it.
        min_score: keep only the run rows whose score is >= this value before
            evaluating (Recommenders' ``by_threshold``); None keeps every row.
        ties: how tied scores are ordered (``EvalOptions.ties``): ``doc-id`` (every
            profile's default), ``rank`` or ``input-order``.
        modes: RePlay's aggregation modes asked for (``replay``), each computed from
            the per-user values of its base measure, one of ``measures``; ``mapping``
            maps the name typed to the mode's own name.
    """

    profile: str
    measures: list[Measure]
    queries: str
    relevance: RelevanceRule
    mapping: dict[str, str]
    min_score: float | None = None
    ties: str = "doc-id"
    modes: tuple[ModeMeasure, ...] = ()

    def labels(self) -> dict[str, str]:
        """{canonical name: the name the user typed}, the first spelling winning."""
        labels: dict[str, str] = {}
        for typed, canonical in self.mapping.items():
            labels.setdefault(canonical, typed)
        return labels

    def ranks(self, rank_only: bool) -> str | None:
        """How the ranks of a run give positions (``EvalOptions.ranks``): None for a run
        with scores; for a rank-only run, ``position`` under ``rectools`` (RecTools reads
        ``rank`` as the position: ranks 1, 3 leave position 2 empty), else ``order``."""
        if not rank_only:
            return None
        return "position" if self.profile == "rectools" else "order"

    def describe(
        self, rows_below_min_score: int | None = None, rel_level: int = 1
    ) -> dict[str, Any]:
        """The profile as recorded in ``summary.json``: its query policy, relevance rule
        and measure names, what each name computes (``definitions``: every parameter
        spelled out at relevance level ``rel_level``) and how tied scores are ordered
        (``ties``); with ``min_score``, how many run rows were left out for a score below
        it (``rows_below_min_score``, when counted).

        Example: ``{"definitions": {"MAP@10": "AP(denom=R,rel=1)@10"}, ...,
        "recommendations": {"min_score": 3.5, "rows_below_min_score": 2}}``.
        """
        out: dict[str, Any] = {
            "profile": self.profile,
            "queries": self.queries,
            "relevance": self.relevance.describe(),
            "measures": dict(self.mapping),
            "definitions": self.definitions(rel_level),
            "ties": self.tie_rule(),
        }
        if self.min_score is not None:
            out["recommendations"] = {"min_score": self.min_score}
            if rows_below_min_score is not None:
                out["recommendations"]["rows_below_min_score"] = rows_below_min_score
        return out

    def definitions(self, rel_level: int) -> dict[str, str]:
        """{requested name: :meth:`~sparkeval.measures.registry.Measure.full_name` of the
        measure computed for it}, e.g. ``{"MAP@10": "AP(denom=R,rel=1)@10"}``."""
        full = {m.name: m.full_name(rel_level) for m in self.measures}
        full.update({mode.name: mode.definition(rel_level) for mode in self.modes})
        return {typed: full.get(canonical, canonical) for typed, canonical in self.mapping.items()}

    def tie_rule(self) -> str:
        """How the documents of a list are ordered, tied scores included (the text of
        ``summary.json``'s ``compat.ties`` and of the status line)."""
        rule = _TIE_TEXT[self.ties]
        if self.profile == "rectools":
            return rule + "; a run of ranks alone: each rank is the position (RecTools)"
        return rule + "; a run of ranks alone: rank ascending, then doc id descending"


#: how each tie rule orders a list (``CompatPlan.ties``)
_TIE_TEXT = {
    "doc-id": "score descending, tied scores by doc id descending (trec_eval's order)",
    "rank": (
        "score descending, tied scores by the run's rank ascending, then by doc id "
        "descending (ties rank)"
    ),
    "input-order": (
        "score descending, tied scores in the order of the input rows, then by doc id "
        "descending (ties input-order)"
    ),
}


def how_computed(compat: dict[str, Any]) -> str:
    """A status line of what :meth:`CompatPlan.describe` records: each name's
    definition, the relevance rule and the tie rule.

    Example: ``measures as computed: AP = AP(denom=R,rel=1); relevance: grade; ties:
    score descending, ...``.
    """
    definitions = ", ".join(f"{k} = {v}" for k, v in compat.get("definitions", {}).items())
    relevance = compat.get("relevance", {})
    rule = ", ".join(f"{k} {v}" for k, v in relevance.items() if k != "rule")
    rule = str(relevance.get("rule", "grade")) + (f" ({rule})" if rule else "")
    return f"measures as computed: {definitions}; relevance: {rule}; ties: {compat.get('ties')}"


def _with_rel(m: Measure, level: int | None) -> Measure:
    params = tuple((k, v) for k, v in m.params if k != "rel")
    if level is not None:
        params = (*params, ("rel", level))
    return Measure(m.family, m.k, params)


def _map_one(
    profile: str, m: Measure, rule: RelevanceRule, map_cutoff: int | None, text: str
) -> Measure:
    """The registry measure that reproduces the peer's measure requested as ``m``."""
    level = 0 if (profile == "mllib" and rule.kind == "grade") else None
    plain = Measure(m.family, m.k)
    top_k_only = profile in ("replay", "rectools")
    if top_k_only and plain.family in ("Success", "RR") and m.k is not None:
        target: Measure | None = plain  # HitRate@k: a hit in the top k; MRR@k: 1/first hit
    elif profile == "replay" and plain.family == "RocAuc" and m.k is not None:
        target = plain  # RocAuc(k): RePlay's AUC of the top k
    elif top_k_only and plain.family in ("AP", "nDCG") and m.k is None:
        target = None  # their MAP and NDCG are always @k
    elif profile == "rectools" and plain.family == "AP":
        # MAP@k divides by the user's relevant items (divide_by_k=False); AP(denom=k)@k
        # is its MAP(k, divide_by_k=True)
        target = m if m.params == (("denom", "k"),) else plain
    elif profile == "rectools" and plain.family in ("PartialAUC", "PAP"):
        # PartialAUC(k, insufficient_handling) and PAP(k, insufficient_handling)
        target = m if {p for p, _ in m.params} <= _RECTOOLS_AUC_PARAMS else plain
    elif profile == "rectools" and plain.family in ("Accuracy", "MCC") and m.k is not None:
        # Accuracy(k) and MCC(k) given their catalog: its size is the one parameter
        target = m if {p for p, _ in m.params} == {"catalog"} else None
    elif profile == "rectools" and plain.family == "nDCG":
        # NDCG(k) divides by the DCG of a full top k (divide_by_achievable=False); its
        # divide_by_achievable=True divides by the ideal of the user's own interactions,
        # asked for as nDCG(ideal=qrels)@k (a default the parsed measure no longer shows)
        achievable = m.k is not None and _IDEAL_QRELS.search(text) is not None
        target = plain if achievable else Measure("nDCG", m.k, (("ideal", "k"),))
    elif profile == "rectools" and plain.family == "F" and m.k is not None:
        target = m  # F1Beta(k, beta): (1 + beta^2) P R / (beta^2 P + R)
    elif profile == "rectools" and plain.family == "RelP" and m.k is not None:
        target = plain  # Precision(k, r_precision=True): hits / min(k, interactions)
    elif plain.family in ("P", "R") and m.k is not None:
        target = _with_rel(plain, level)
    elif plain.family == "AP" and m.k is not None:
        target = _with_rel(Measure("AP", m.k, (("denom", "min_k"),)), level)
    elif plain.family == "AP" and profile == "mllib":
        target = _with_rel(plain, level)
    elif plain.family == "AP":
        if map_cutoff is None:
            raise ConfigError(
                f"measure {text!r}: Recommenders' MAP is taken over the top k; request it with "
                "measures that share one cutoff (e.g. MAP,MAP@10,nDCG@10), or ask for AP@k"
            )
        target = Measure("AP", map_cutoff)
    elif plain.family == "nDCG" and m.k is not None:
        graded = profile == "mllib" and rule.kind == "grade"
        target = Measure("nDCG", m.k, (("gain", "exp"),)) if graded else plain
    else:
        target = None
    if target is None or (m.params and m != target):
        raise ConfigError(
            f"measure {text!r} has no equivalent in compat profile {profile!r}; "
            f"it offers: {_SUPPORTED[profile]}"
        )
    return target


def plan_compat(
    profile: str,
    measures: Sequence[str] | str,
    relevance: RelevanceRule | None = None,
    queries: str | None = None,
    ties: str | None = None,
) -> CompatPlan:
    """Resolve a profile for requested measure names.

    Args:
        profile: ``trec``, ``mllib`` or ``recommenders``.
        measures: measure names as the user wrote them.
        relevance: the relevance rule asked for (None: the profile's default).
        queries: the query policy asked for (None: the profile's default); the
            ``mllib`` profile allows ``union`` (default) or ``both``, ``recommenders``
            only ``both``.
        ties: how tied scores are ordered (None: ``doc-id``, every profile's default;
            ``rank`` or ``input-order``: :data:`sparkeval.formats.TIE_RULES`).

    Raises:
        ConfigError: an unknown profile, a measure the peer does not have, or an
            option that contradicts the profile.
    """
    if profile not in COMPAT_PROFILES:
        raise ConfigError(f"key 'compat': {profile!r} is not one of {', '.join(COMPAT_PROFILES)}")
    names = [measures] if isinstance(measures, str) else list(measures)
    tie_rule = _tie_rule(ties)
    plan = _plan_profile(profile, names, relevance, queries)
    return plan if tie_rule == "doc-id" else replace(plan, ties=tie_rule)


def _tie_rule(ties: str | None) -> str:
    """The tie rule asked for (None: ``doc-id``), checked."""
    if ties is None:
        return "doc-id"
    if ties not in TIE_RULES:
        raise ConfigError(f"ties must be one of {', '.join(TIE_RULES)}, got {ties!r}")
    return ties


def _plan_profile(
    profile: str,
    names: list[str],
    relevance: RelevanceRule | None,
    queries: str | None,
) -> CompatPlan:
    """:func:`plan_compat` with the default tie rule."""
    if profile == "trec":
        from sparkeval.measures.names import requested_labels

        parsed = _parse(names)
        rule = relevance or RelevanceRule("grade")
        typed = {label: canonical for canonical, label in requested_labels(names).items()}
        return CompatPlan(profile, parsed, queries or "qrels", rule, typed)
    allowed = _QUERIES[profile]
    if queries is not None and queries not in allowed:
        raise ConfigError(
            f"key 'queries': compat profile {profile!r} evaluates queries="
            + " or ".join(repr(q) for q in allowed)
            + f" (default {allowed[0]!r}); got {queries!r}"
        )
    fixed = queries or allowed[0]
    rule = relevance or RelevanceRule("all")
    if profile == "recommenders" and rule.kind == "grade":
        raise ConfigError(
            "compat profile 'recommenders' uses binary relevance: use relevance 'all' "
            "(every truth item) or a relevance threshold"
        )
    min_score = None
    if profile == "recommenders" and rule.kind == "threshold" and not rule.relevant_only:
        # relevancy_method="by_threshold": the threshold keeps recommendations (score >= T),
        # the truth stays every row of the user
        min_score, rule = float(rule.threshold or 0.0), RelevanceRule("all")
    requested: list[tuple[str, Measure]] = []
    modes: list[tuple[str, str, int]] = []  # (typed, mode, index of its base in requested)
    for name in names:
        for part in _split(name):
            found = replay_mode(part) if profile == "replay" else None
            if found is not None:
                metric, mode, k = found
                modes.append((part.strip(), mode, len(requested)))
                requested.append((f"{metric}@{k}", _parse_mode_base(part, f"{metric}@{k}")))
                continue
            requested.extend((part, m) for m in _parse([part]))
    cutoffs = {m.k for _, m in requested if m.k is not None}
    map_cutoff = next(iter(cutoffs)) if len(cutoffs) == 1 else None
    mapped: list[Measure] = []
    mapping: dict[str, str] = {}
    bases: dict[int, Measure] = {}
    base_indexes = {index for _, _, index in modes}
    for index, (text, m) in enumerate(requested):
        if min_score is not None and m.family == "AP" and m.k is None and not m.params:
            target = Measure("AP")  # by_threshold: MLlib's MAP of the whole kept list
        else:
            target = _map_one(profile, m, rule, map_cutoff, text)
        if index in base_indexes:
            bases[index] = target  # computed for its mode, named by the mode
        else:
            mapping[text] = target.name
        if target not in mapped:
            mapped.append(target)
    found_modes: dict[str, ModeMeasure] = {}
    for spelling, mode, index in modes:
        mode_measure = _mode_measure(spelling, mode, bases[index])
        mapping[spelling] = mode_measure.name
        found_modes.setdefault(mode_measure.name, mode_measure)
    modes_of_plan = tuple(found_modes.values())
    return CompatPlan(profile, mapped, fixed, rule, mapping, min_score, modes=modes_of_plan)


def _parse_mode_base(text: str, base: str) -> Measure:
    """The measure ``base`` (``NDCG@10``) of the mode ``text`` (``NDCG-Median@10``).

    Raises:
        ConfigError: ``base`` is not a measure, named with ``text``.
    """
    try:
        [measure] = parse_measures([base])
    except ValueError as exc:
        raise ConfigError(f"measure {text.strip()!r} under --compat replay: {exc}") from None
    return measure


def _mode_measure(typed: str, mode: str, base: Measure) -> ModeMeasure:
    """The :class:`ModeMeasure` of ``mode`` (``Median``) of the registry measure ``base``
    (``nDCG@10``), named as RePlay names its result (``NDCG-Median@10``)."""
    metric = _REPLAY_METRIC_NAMES[base.family]
    name = f"{metric}-{mode}@{base.k}"
    if mode == "Median":
        return ModeMeasure(name, typed, "median", base)
    return ModeMeasure(name, typed, "confidence_interval", base, REPLAY_ALPHA)


def _parse(names: Sequence[str]) -> list[Measure]:
    try:
        return parse_measures(list(names))
    except ValueError as exc:
        raise ConfigError(f"key 'measures': {exc}") from None


def _split(text: str) -> list[str]:
    from sparkeval.measures.names import split_measure_list

    return split_measure_list(text)
