"""The names of the intent-aware measures (:mod:`sparkeval.measures.intent_aware`),
which ``evaluate`` computes with subtopic qrels (``--subtopic-qrels``).

Both ndeval's spellings and ir_measures' are read, case-insensitively:

=================  ====================================  =========
ndeval             ir_measures                           kind
=================  ====================================  =========
``alpha-DCG@k``    ``alpha_DCG@k``                       alpha_dcg
``alpha-nDCG@k``   ``alpha_nDCG@k``                      alpha_ndcg
``ERR-IA@k``       ``ERR_IA@k``                          err_ia
``nERR-IA@k``      ``nERR_IA@k``                         nerr_ia
``NRBP``           ``NRBP``                              nrbp
``nNRBP``          ``nNRBP``                             nnrbp
``P-IA@k``         ``P_IA@k``                            p_ia
``strec@k``        ``StRecall@k``                        strec
``MAP-IA``         ``AP_IA``                             ap_ia
=================  ====================================  =========

Parameters go in parentheses before the cutoff, as ir_measures writes them:
``alpha`` (0 <= alpha <= 1, default 0.5), ``beta`` (NRBP and nNRBP, default 0.5),
``rel`` (a grade >= rel is relevant, default 1) and ``judged_only`` (only ``False``).
The output name is ndeval's spelling, with the parameters that differ from their
defaults: ``alpha-nDCG(alpha=0.3)@20``.

Example:
    >>> m = intent_aware_measure("alpha_nDCG(alpha=0.5, judged_only=False)@20")
    >>> m.name, m.kind, m.k, m.alpha
    ('alpha-nDCG@20', 'alpha_ndcg', 20, 0.5)
    >>> intent_aware_measure("NRBP(beta=0.8)").name
    'NRBP(beta=0.8)'
    >>> intent_aware_measure("nDCG@10") is None
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sparkeval.errors import MeasureError
from sparkeval.measures.intent_aware import DEFAULT_ALPHA, DEFAULT_BETA
from sparkeval.measures.names import split_measure_list

#: each spelling (lower case), its kind
SPELLINGS: dict[str, str] = {
    "alpha-dcg": "alpha_dcg",
    "alpha_dcg": "alpha_dcg",
    "alpha-ndcg": "alpha_ndcg",
    "alpha_ndcg": "alpha_ndcg",
    "err-ia": "err_ia",
    "err_ia": "err_ia",
    "nerr-ia": "nerr_ia",
    "nerr_ia": "nerr_ia",
    "nrbp": "nrbp",
    "nnrbp": "nnrbp",
    "p-ia": "p_ia",
    "p_ia": "p_ia",
    "strec": "strec",
    "strecall": "strec",
    "map-ia": "ap_ia",
    "ap_ia": "ap_ia",
    "map_ia": "ap_ia",
}

#: each kind's output name (ndeval's spelling)
LABELS: dict[str, str] = {
    "alpha_dcg": "alpha-DCG",
    "alpha_ndcg": "alpha-nDCG",
    "err_ia": "ERR-IA",
    "nerr_ia": "nERR-IA",
    "nrbp": "NRBP",
    "nnrbp": "nNRBP",
    "p_ia": "P-IA",
    "strec": "strec",
    "ap_ia": "MAP-IA",
}

#: the kinds without a cutoff (over the whole ranking)
UNCUT = frozenset({"nrbp", "nnrbp", "ap_ia"})
#: the kinds whose value depends on alpha, and on beta
WITH_ALPHA = frozenset({"alpha_dcg", "alpha_ndcg", "err_ia", "nerr_ia", "nrbp", "nnrbp"})
WITH_BETA = frozenset({"nrbp", "nnrbp"})

#: what each kind computes (``compat.definitions``)
DEFINITIONS: dict[str, str] = {
    "alpha_dcg": "ndeval's alpha-DCG@k: sum_{j<=k} g_j / log2(1+j), g_j = sum_i J(d_j,i) "
    "(1-alpha)^{r_{i,j-1}}, over sum_{j<=k} m (1-alpha)^{j-1} / log2(1+j) (k >= 2)",
    "alpha_ndcg": "ndeval's alpha-nDCG@k: alpha-DCG@k over that of ndeval's greedy ideal "
    "ranking of the subtopic qrels",
    "err_ia": "ndeval's ERR-IA@k: sum_{j<=k} g_j / j over sum_{j<=k} m (1-alpha)^{j-1} / j "
    "(k >= 2)",
    "nerr_ia": "ndeval's nERR-IA@k: ERR-IA@k over that of the greedy ideal ranking",
    "nrbp": "ndeval's NRBP: (1 - (1-alpha) beta) / m * sum_j g_j beta^{j-1}",
    "nnrbp": "ndeval's nNRBP: NRBP over that of the greedy ideal ranking (0 without relevant docs)",
    "p_ia": "ndeval's P-IA@k: relevant (doc, subtopic) pairs of the top k over k m",
    "strec": "ndeval's strec@k: subtopics with a relevant doc in the top k over m",
    "ap_ia": "ndeval's MAP-IA: mean over the m subtopics of their average precision",
}

#: the catalogue rows of ``sparkeval measures``: ndeval's syntax, ir_measures' name,
#: the parameters and the definition of each kind
CATALOGUE: list[tuple[str, str, str, str]] = [
    (
        f"{LABELS[kind]}{'' if kind in UNCUT else '@k'}",
        {"alpha_dcg": "alpha_DCG", "alpha_ndcg": "alpha_nDCG", "err_ia": "ERR_IA",
         "nerr_ia": "nERR_IA", "nrbp": "NRBP", "nnrbp": "nNRBP", "p_ia": "P_IA",
         "strec": "StRecall", "ap_ia": "AP_IA"}[kind]
        + ("" if kind in UNCUT else "@k"),
        ", ".join(
            [*(["alpha (0.5)"] if kind in WITH_ALPHA else []),
             *(["beta (0.5)"] if kind in WITH_BETA else []), "rel (1)", "judged_only=False"]
        ),
        DEFINITIONS[kind],
    )
    for kind in LABELS
]  # fmt: skip

_SHAPE = re.compile(r"^\s*([A-Za-z_-]+)\s*(?:\((.*)\))?\s*(?:@\s*(\S+))?\s*$")


@dataclass(frozen=True)
class IntentAwareMeasure:
    """An intent-aware measure asked of ``evaluate``.

    Attributes:
        name: the output name (ndeval's spelling, non-default parameters shown).
        kind: what it computes (a key of :data:`DEFINITIONS`).
        k: the cutoff, None for NRBP, nNRBP and MAP-IA.
        alpha, beta, rel: its parameters.
        typed: the name as requested.
    """

    name: str
    kind: str
    k: int | None
    alpha: float
    beta: float
    rel: int
    typed: str

    def definition(self) -> str:
        """What it computes, with its parameters."""
        params = [f"rel={self.rel}"]
        if self.kind in WITH_ALPHA:
            params.insert(0, f"alpha={self.alpha:g}")
        if self.kind in WITH_BETA:
            params.insert(1, f"beta={self.beta:g}")
        cut = f", k={self.k}" if self.k is not None else ""
        return f"{DEFINITIONS[self.kind]}; {', '.join(params)}{cut}"


def intent_aware_measure(text: str) -> IntentAwareMeasure | None:
    """The intent-aware measure ``text`` names, or None when it names none.

    Raises:
        MeasureError: a bad cutoff or parameter, or ``judged_only=True``.
    """
    found = _SHAPE.match(text)
    if found is None:
        return None
    kind = SPELLINGS.get(found.group(1).lower())
    if kind is None:
        return None
    shown = text.strip()
    alpha, beta, rel = _parameters(shown, found.group(2), kind)
    cut = found.group(3)
    k: int | None = None
    if kind in UNCUT:
        if cut is not None:
            raise MeasureError(f"measure {shown!r}: {LABELS[kind]} takes no cutoff")
    else:
        if cut is None or not re.fullmatch(r"\d+", cut) or int(cut) < 1:
            raise MeasureError(
                f"measure {shown!r}: {LABELS[kind]} needs a cutoff k >= 1, as in {LABELS[kind]}@20"
            )
        k = int(cut)
    params = []
    if kind in WITH_ALPHA and alpha != DEFAULT_ALPHA:
        params.append(f"alpha={alpha:g}")
    if kind in WITH_BETA and beta != DEFAULT_BETA:
        params.append(f"beta={beta:g}")
    if rel != 1:
        params.append(f"rel={rel}")
    name = LABELS[kind] + (f"({','.join(params)})" if params else "")
    name += f"@{k}" if k is not None else ""
    return IntentAwareMeasure(name, kind, k, alpha, beta, rel, shown)


def _parameters(shown: str, text: str | None, kind: str) -> tuple[float, float, int]:
    """alpha, beta and rel of a parameter list ``a=1, b=2`` (or none)."""
    alpha, beta, rel = DEFAULT_ALPHA, DEFAULT_BETA, 1
    if text is None or not text.strip():
        return alpha, beta, rel
    for part in text.split(","):
        key, sep, value = (s.strip() for s in part.partition("="))
        if not sep:
            raise MeasureError(f"measure {shown!r}: expected name=value, got {part.strip()!r}")
        key = key.lower()
        if key == "judged_only":
            if value.lower() == "true":
                raise MeasureError(
                    f"measure {shown!r}: judged_only=True (dropping the unjudged docs of "
                    "the run first) is not computed; every retrieved doc counts "
                    "(judged_only=False)"
                )
            if value.lower() != "false":
                raise MeasureError(f"measure {shown!r}: judged_only is True or False")
        elif key == "alpha" and kind in WITH_ALPHA:
            alpha = _unit(shown, key, value)
        elif key == "beta" and kind in WITH_BETA:
            beta = _unit(shown, key, value)
        elif key == "rel":
            if not re.fullmatch(r"-?\d+", value):
                raise MeasureError(f"measure {shown!r}: rel is a whole number, got {value!r}")
            rel = int(value)
        else:
            raise MeasureError(f"measure {shown!r}: {LABELS[kind]} takes no parameter {key!r}")
    return alpha, beta, rel


def _unit(shown: str, key: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not 0.0 <= number <= 1.0:
        raise MeasureError(f"measure {shown!r}: {key} is a number in [0, 1], got {value!r}")
    return number


def split_intent_aware(spec: Iterable[str]) -> tuple[list[str], list[IntentAwareMeasure]]:
    """The other measures' names of ``spec`` (comma lists split, in order) and its
    intent-aware measures (repeats removed)."""
    other: list[str] = []
    found: dict[str, IntentAwareMeasure] = {}
    for item in spec:
        for name in split_measure_list(item):
            measure = intent_aware_measure(name)
            if measure is None:
                other.append(name)
            else:
                found.setdefault(measure.name, measure)
    return other, list(found.values())
