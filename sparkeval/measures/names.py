"""Parse measure names (ir_measures and trec_eval styles) and expand measure sets.

Accepted forms, all parsed with regular expressions (nothing is evaluated):

* canonical / ir_measures style: ``nDCG@10``, ``AP``, ``AP(rel=2)``, ``P@5``,
  ``nDCG(gain=exp)@20``;
* trec_eval style: ``ndcg_cut_10``, ``map``, ``P_5``, ``recip_rank``, ``map_cut_100``;
* scikit-learn style: ``ndcg_score@10``, ``dcg_score(log_base=10,k=5)``,
  ``ndcg_score(ignore_ties=True)``;
* sets: ``official``, ``set`` and ``all_trec`` (trec_eval's sets, restricted to the members
  this version implements).

Example:
    >>> [m.name for m in parse_measures("P_5, nDCG@10 ,map")]
    ['P@5', 'nDCG@10', 'AP']
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator

from sparkeval.errors import MeasureError
from sparkeval.measures import REGISTRY, Measure, trec_patterns
from sparkeval.measures.registry import (
    JUDGED_ONLY,
    JUDGED_ONLY_PARAM,
    Param,
    TrecParams,
    format_value,
    pattern_fields,
    trec_bases,
)

_CANONICAL = re.compile(
    r"^(?P<family>[A-Za-z0-9][A-Za-z0-9_]*)(?:\((?P<params>[^()]*)\))?(?:@(?P<k>[^@()]+))?$"
)
#: a trec_eval parameterised request: ``base.params`` (``P.5,10``, ``ndcg.1=3``)
_TREC_REQUEST = re.compile(r"^(?P<base>[A-Za-z0-9_]+)\.(?P<params>.+)$")
#: what may follow a comma inside such a request (a number or ``name=``)
_TREC_CONTINUATION = re.compile(r"^(?:[+-]?\.?\d|[A-Za-z_]\w*=)")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")

#: common spellings of canonical family names (matched case-insensitively, as the
#: families are, where that is unambiguous)
ALIASES = {
    "MAP": "AP",
    "MRR": "RR",
    "NDCG": "nDCG",
    "Recall": "R",
    "Precision": "P",
    "Success": "Success",
    "GMAP": "gm_map",
    "HitRate": "Success",  # recommender spelling: a hit in the top k
    "HR": "Success",
    "hit_rate": "Success",  # ranx: 1 if a relevant doc is in the top k
    "HitRatio": "Success",
    "Hit": "Success",  # RecBole's hit@k
    "F1": "F",  # ranx's f1@k: 2 P@k R@k / (P@k + R@k), F with beta = 1
    "F1Beta": "F",  # RecTools' F1Beta(k, beta): the classic F_beta at k
    "iP": "IPrec",
    "Fallout": "FallOut",  # torchmetrics' RetrievalFallOut
    "pAUC": "PartialAUC",  # RecTools' PartialAUC (pAUC@k)
    "ndcg_score": "nDCG",  # scikit-learn's sklearn.metrics.ndcg_score
    "dcg_score": "DCG",  # scikit-learn's sklearn.metrics.dcg_score
    "ndcg_burges": "nDCG",  # ranx's ndcg_burges@k: the exponential gain 2^g - 1
    "dcg_burges": "DCG",  # ranx's dcg_burges@k
}
#: families whose name a peer gives another measure, which sparkeval does not offer: said
#: when the name is written the peer's way (without the family's cutoff)
OTHER_MEASURES_OF_THE_NAME = {
    "Accuracy": "sparkeval's Accuracy is RecTools' accuracy of the top k as a "
    "classification of the catalog, Accuracy(catalog=N)@k; ir_measures' Accuracy(rel=l), "
    "the share of the ranking's (relevant, non-relevant) pairs in order, is AUC(rel=l) "
    "where no scores tie",
}
#: parameters an alias fixes (any case of the alias); giving one of them is refused
ALIAS_PARAMS: dict[str, dict[str, str]] = {
    "f1": {"beta": "1"},
    "ndcg_burges": {"gain": "exp"},
    "dcg_burges": {"gain": "exp"},
}
#: parameters an alias sets unless they are given (any case of the alias): scikit-learn's
#: defaults, ignore_ties=False (tied scores share their mean gain) and, for ndcg_score,
#: the ideal DCG of the ranked docs' own gains
ALIAS_DEFAULTS: dict[str, dict[str, str]] = {
    "ndcg_score": {"ideal": "run", "ties": "average"},
    "dcg_score": {"ties": "average"},
}
#: the cumulative-gain families that read scikit-learn's keyword arguments
_SKLEARN_FAMILIES = ("nDCG", "DCG")
#: families an ir_measures spelling with ``rel=`` stands for: its NumRet(rel=l) counts the
#: retrieved docs with grade >= l (how it prints NumRelRet)
_WITH_REL = {"NumRet": "NumRelRet"}
#: ir_measures' nDCG ``dcg=`` values and the gain each stands for
_IR_MEASURES_DCG = {"log2": "linear", "exp-log2": "exp"}


def _family_of(name: str) -> str | None:
    """The registry family ``name`` spells: exactly, as an alias, or case-insensitively
    when only one family or alias matches (``ndcg``, ``map``, ``hitrate``)."""
    if name in REGISTRY:
        return name
    if name in ALIASES:
        return ALIASES[name]
    matches = {
        target
        for spelling, target in [*((f, f) for f in REGISTRY), *ALIASES.items()]
        if spelling.lower() == name.lower()
    }
    return matches.pop() if len(matches) == 1 else None


def split_top_level(text: str, brackets: str, separators: str) -> list[str]:
    """The non-blank pieces of ``text`` between ``separators`` outside ``brackets`` (an
    opening and a closing character).

    Example:
        >>> split_top_level("gains={0:0,1:1},p=2", "{}", ",")
        ['gains={0:0,1:1}', 'p=2']
    """
    opening, closing = brackets[0], brackets[1]
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        depth += (ch == opening) - (ch == closing)
        if depth == 0 and ch in separators:
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
    items.append("".join(current))
    return [item for item in items if item.strip()]


def _split_params(text: str) -> list[str]:
    """``key=value`` items split on the commas outside braces (``gains={0:0,1:1}``)."""
    return split_top_level(text, "{}", ",")


def _ir_measures_params(text: str, family: str, raw: dict[str, str]) -> dict[str, str]:
    """ir_measures' parameter spellings as registry parameters.

    ``dcg=log2|exp-log2`` is ``gain=linear|exp`` (SDCG's one ``dcg=log2`` is its
    default and drops out); ``gains={0:0,1:1,2:3}`` is the gain
    map ``0:0;1:1;2:3``; ``judged_only`` is the family's own parameter where it has one
    (the measure over the condensed ranking, trec_eval -J), elsewhere ``False`` (the
    default) is dropped and ``True`` refused; quoted values lose their quotes.
    """
    out = {}
    for key, value in raw.items():
        value = value.strip().strip("'\"")
        if key == "dcg" and family in ("nDCG", "DCG"):
            if value not in _IR_MEASURES_DCG:
                raise MeasureError(f"measure {text!r}: dcg={value!r}; expected log2 or exp-log2")
            out["gain"] = _IR_MEASURES_DCG[value]
        elif key == "dcg" and family == "SDCG":
            if value != "log2":
                raise MeasureError(f"measure {text!r}: dcg={value!r}; SDCG's only dcg is log2")
        elif key == JUDGED_ONLY and not REGISTRY[family].offers_judged_only:
            if JUDGED_ONLY_PARAM.coerce(family, key, _parse_value(value)):
                offered = ", ".join(f for f, spec in REGISTRY.items() if spec.offers_judged_only)
                raise MeasureError(
                    f"measure {text!r}: judged_only=True (the measure over the ranking without "
                    f"its unjudged docs, trec_eval -J) is not offered for {family}; it is for "
                    f"{offered}"
                )
        elif key == "gains" and value.startswith("{"):
            pairs = [p.split(":") for p in value.strip("{}").split(",") if p.strip()]
            out["gains"] = ";".join(f"{g.strip()}:{v.strip()}" for g, v in pairs)
        else:
            out[key] = value
    return out


def _sklearn_params(text: str, family: str, raw: dict[str, str]) -> dict[str, str]:
    """scikit-learn's keyword arguments of dcg_score / ndcg_score as registry parameters.

    ``k=10`` is the cutoff ``@10``; ``ignore_ties=False`` is ``ties=average`` and
    ``ignore_ties=True`` is ``ties=order`` (tied docs keep the ranking's order, doc id
    descending, where scikit-learn leaves them to its sort); ``log_base`` is refused on
    nDCG, which does not depend on it.
    """
    if family not in _SKLEARN_FAMILIES:
        return raw
    out = dict(raw)
    if "k" in out:
        if "cutoff" in out:
            raise MeasureError(f"measure {text!r}: give the cutoff once (k= or cutoff=)")
        out["cutoff"] = out.pop("k")
    if "ignore_ties" in out:
        given = out.pop("ignore_ties").strip().strip("'\"")
        ties = "order" if Param(bool, False).coerce(family, "ignore_ties", given) else "average"
        if "ties" in out and out["ties"].strip() != ties:
            raise MeasureError(
                f"measure {text!r}: ignore_ties={given} contradicts ties={out['ties']}"
            )
        out["ties"] = ties
    if family == "nDCG" and "log_base" in out:
        raise MeasureError(
            f"measure {text!r}: log_base={out['log_base'].strip()} is not offered on nDCG: "
            "the base scales DCG and its ideal alike, so nDCG does not depend on it "
            "(scikit-learn's ndcg_score takes none); DCG(log_base=…) takes it"
        )
    return out


_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALLS = ("0.00", "0.10", "0.20", "0.30", "0.40", "0.50", "0.60", "0.70", "0.80", "0.90", "1.00")

#: trec_eval's ``official`` set, in trec_eval's print order
OFFICIAL: tuple[str, ...] = (
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    *(f"iprec_at_recall_{r}" for r in _RECALLS),
    *(f"P_{k}" for k in _CUTS),
)

#: trec_eval's ``all_trec`` set (numeric measures), in trec_eval's print order
ALL_TREC: tuple[str, ...] = (
    *OFFICIAL[: -len(_CUTS)],
    *(f"P_{k}" for k in _CUTS),
    *(f"recall_{k}" for k in _CUTS),
    "infAP",
    "gm_bpref",
    *(f"Rprec_mult_{x:.2f}" for x in (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    *(f"ndcg_cut_{k}" for k in _CUTS),
    *(f"map_cut_{k}" for k in _CUTS),
    *(f"relative_P_{k}" for k in _CUTS),
    "success_1",
    "success_5",
    "success_10",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "rbp",
    "rbp_resid",
    "unj_5",
    "unj_10",
    "unj_20",
)

#: trec_eval's ``set`` set: the measures of the retrieved set as a whole
SET: tuple[str, ...] = (
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "utility",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
)

SETS: dict[str, tuple[str, ...]] = {"official": OFFICIAL, "set": SET, "all_trec": ALL_TREC}


class UnknownMeasureError(MeasureError):
    """A measure name that matches nothing in the registry."""


#: where an error about a measure name sends the reader for the whole list
LIST_HINT = "'sparkeval measures' lists every measure"


def _similarity(a: str, b: str) -> float:
    """difflib's ratio of two spellings, compared case-insensitively."""
    return difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()


def closest_measures(text: str, n: int = 3) -> list[str]:
    """The ``n`` valid names closest to ``text``, closest first, each a distinct measure.

    A family, alias or set name is compared with the name before its parameters and
    cutoff, which the suggestion keeps where the family allows them; a trec_eval name
    is compared whole, its cutoff taken from ``text`` (10 when there is none).

    Example:
        >>> closest_measures("nDGC@10")
        ['nDCG@10', 'RnDCG', 'DCG@10']
        >>> closest_measures("ndcg_cutt_5")
        ['ndcg_cut_5', 'map_cut_5', 'ndcg_score']
    """
    head = re.split(r"[(@]", text, maxsplit=1)[0]
    tail = text[len(head) :]
    number = re.search(r"_(\d+)$", text)
    cut = number.group(1) if number else "10"
    scored: list[tuple[float, int, list[str]]] = []
    for spelling in [*REGISTRY, *ALIASES]:
        tries = [spelling + tail, spelling + tail + "@10", spelling, spelling + "@10"]
        scored.append((_similarity(head, spelling), len(scored), tries))
    for fam in REGISTRY.values():
        if fam.trec and not pattern_fields(fam.trec):
            scored.append((_similarity(text, fam.trec), len(scored), [fam.trec]))
        if fam.trec_cut and pattern_fields(fam.trec_cut) == ["k"]:
            name = fam.trec_cut.format(k=cut)
            scored.append((_similarity(text, name), len(scored), [name]))
    for set_name in SETS:
        scored.append((_similarity(text, set_name), len(scored), [set_name]))
    out: list[str] = []
    seen: set[str] = set()
    for _, _, tries in sorted(scored, key=lambda item: (-item[0], item[1])):
        for candidate in tries:
            key = candidate if candidate in SETS else _measure_name(candidate)
            if key is not None:
                if key not in seen:
                    seen.add(key)
                    out.append(candidate)
                break
        if len(out) == n:
            break
    return out


def _measure_name(text: str) -> str | None:
    """The canonical name of the measure ``text`` names, None when it names none."""
    try:
        measure = _parse_known(text)
    except ValueError:
        return None
    return None if measure is None else measure.name


def closest_families(name: str, n: int = 3) -> list[str]:
    """The ``n`` family names closest to ``name`` (families and their aliases compared).

    Example:
        >>> closest_families("nDGC")
        ['nDCG', 'RnDCG', 'DCG']
    """
    spellings = sorted(
        [*((f, f) for f in REGISTRY), *ALIASES.items()],
        key=lambda item: -_similarity(name, item[0]),
    )
    out: list[str] = []
    for _, family in spellings:
        if family not in out:
            out.append(family)
    return out[:n]


#: measures of the whole set of recommendations, by the peers' names (lower case, without
#: a cutoff or parameters): the value of ``sparkeval diversity`` that reports the measure,
#: or None where no sparkeval command computes it
SET_MEASURES: dict[str, str | None] = {
    **dict.fromkeys(("coverage", "catalogcoverage", "catalog_coverage", "itemcoverage"),
                    "catalog_coverage"),
    "novelty": "novelty",
    "serendipity": "serendipity",
    **dict.fromkeys(("diversity", "ild", "intralistdiversity", "intra_list_diversity"),
                    "intra_list_diversity"),
    **dict.fromkeys(("interuserdiversity", "personalization"), "inter_user_diversity"),
    "gini": "gini",
    # RePlay's and RecTools' measures of this kind that sparkeval does not compute
    **dict.fromkeys(("surprisal", "meaninvuserfreq", "avgrecpopularity"), None),
}  # fmt: skip


def other_command(text: str) -> str | None:
    """What computes the measure ``text`` names when ``evaluate`` does not (a rating
    error, a measure of the whole recommendation set), as advice; else None.

    Example:
        >>> other_command("Coverage@10").endswith("diversity computes it as catalog_coverage")
        True
        >>> other_command("Surprisal@10")
        'a measure of the whole recommendation set, which sparkeval does not compute'
    """
    from sparkeval.measures.rating import RATING_ERRORS

    base = re.split(r"[@(]", text.strip(), maxsplit=1)[0]
    if base.upper() in {name.upper() for name in RATING_ERRORS} | {"MSE"}:
        return "a rating error: sparkeval rating-errors computes it"
    if base.lower() not in SET_MEASURES:
        return None
    reported_as = SET_MEASURES[base.lower()]
    if reported_as is None:
        return "a measure of the whole recommendation set, which sparkeval does not compute"
    return (
        "a measure of the whole recommendation set: sparkeval diversity computes it as "
        + reported_as
    )


def unknown_measure(text: str) -> UnknownMeasureError:
    """The one-line error for a name that matches nothing: the command that computes it
    where another one does, else the closest valid names; and where the list is."""
    elsewhere = other_command(text)
    if elsewhere is not None:
        return UnknownMeasureError(f"{text!r} is {elsewhere} ({LIST_HINT})")
    near = closest_measures(text)
    guess = f"did you mean {', '.join(near[:-1])} or {near[-1]}? " if len(near) > 1 else ""
    return UnknownMeasureError(f"unknown measure {text!r}; {guess}({LIST_HINT})")


def _parse_value(text: str) -> int | float | str:
    text = text.strip()
    if _NUMBER.match(text):
        number = float(text)
        return int(number) if number.is_integer() and "." not in text else number
    return text


#: the largest cutoff: ranks and cutoffs are 64-bit integers in the kernels
MAX_CUTOFF = 2**63 - 1


def _parse_cutoff(name: str, raw: str) -> int:
    """The cutoff ``raw`` of measure ``name``: a whole number from 1 to :data:`MAX_CUTOFF`."""
    raw = raw.strip()
    if not re.fullmatch(r"[+-]?\d+", raw):
        raise MeasureError(f"measure {name!r}: cutoff {raw!r} is not a whole number")
    k = int(raw)
    if k < 1:
        raise MeasureError(f"measure {name!r}: cutoff must be >= 1, got {k}")
    if k > MAX_CUTOFF:
        raise MeasureError(f"measure {name!r}: cutoff must be <= 2^63-1, got {k}")
    return k


def _build(name: str, family: str, k: int | None, raw_params: dict[str, str]) -> Measure:
    fam = REGISTRY[family]
    if fam.cutoff == "none" and k is not None:
        raise MeasureError(f"measure {name!r}: {family} takes no @k cutoff")
    if fam.cutoff == "required" and k is None:
        other = OTHER_MEASURES_OF_THE_NAME.get(family)
        raise MeasureError(
            f"measure {name!r}: {family} needs a cutoff, e.g. {family}@10"
            + (f" ({other})" if other else "")
        )
    if k is None:
        k = fam.default_cutoff
    kept: set[str] = set()
    for pname in fam.params.keys() & raw_params.keys():
        for other, why in fam.params[pname].requires:
            if other not in raw_params:
                raise MeasureError(f"measure {name!r}: {pname}=… needs {other}=… given too ({why})")
            kept.add(other)
    params = []
    for pname in fam.params:  # declaration order keeps canonical names stable
        if pname in raw_params:
            value = fam.params[pname].coerce(family, pname, _parse_value(raw_params[pname]))
            if value != fam.params[pname].default or pname == "rel" or pname in kept:
                params.append((pname, value))
    missing = [p for p, spec in fam.params.items() if spec.required and p not in raw_params]
    if missing:
        example = ",".join(f"{p}=…" for p in missing)
        raise MeasureError(f"measure {name!r}: {family} needs parameter(s) {example}")
    unknown = sorted(set(raw_params) - set(fam.params))
    if unknown:
        allowed = ", ".join(fam.params) or "none"
        raise MeasureError(
            f"measure {name!r}: unknown parameter(s) {', '.join(unknown)}; "
            f"{family} accepts: {allowed}"
        )
    if fam.check is not None:
        defaults = {pname: spec.default for pname, spec in fam.params.items()}
        problem = fam.check(defaults | dict(params))
        if problem is not None:
            raise MeasureError(f"measure {name!r}: {problem}")
    values = dict(params)
    if values.get("gain") == "jarvelin" and values.get("log_base", 2.0) != 2.0:
        raise MeasureError(
            f"measure {name!r}: log_base={format_value(values['log_base'])} is not offered "
            "with gain=jarvelin, whose discount 1/log2(max(i,2)) is taken in base 2"
        )
    for pname, value in params:
        if k is None and value in fam.params[pname].needs_cutoff:
            raise MeasureError(
                f"measure {name!r}: {pname}={value} needs a cutoff, "
                f"e.g. {family}({pname}={value})@10"
            )
    return Measure(family, k, tuple(params))


def parse_measure(name: str) -> Measure:
    """Parse one measure name (canonical or trec_eval style).

    Raises:
        UnknownMeasureError: the name matches no measure (the message suggests the
            closest valid names).
        ValueError: a known measure with a bad cutoff or parameter.
    """
    text = name.strip()
    if not text:
        raise UnknownMeasureError(f"empty measure name ({LIST_HINT})")
    measure = _parse_known(text)
    if measure is None:
        raise unknown_measure(text)
    return measure


def _parse_known(text: str) -> Measure | None:
    """The measure ``text`` names, None when it names none (ValueError when it names a
    family but with a bad cutoff or parameter)."""
    for rx, family, _has_cut in trec_patterns():
        match = rx.match(text)
        if match:
            groups = match.groupdict()
            k = _parse_cutoff(text, groups.pop("k")) if "k" in groups else None
            return _build(text, family, k, groups)
    printed = _printed_trec_value(text)
    if printed is not None:
        return printed
    match = _CANONICAL.match(text)
    if match:
        found = _family_of(match["family"])
        if found is not None:
            return _parse_canonical(text, match, found)
    return None


def _parse_canonical(text: str, match: re.Match[str], family: str) -> Measure:
    """The measure of a canonical or ir_measures style name whose family is known.

    ir_measures' spellings: ``cutoff=k`` is ``@k``; ``NumRet(rel=l)`` is
    ``NumRelRet(rel=l)``; ``SetP(relative=True)`` is ``SetRelP``; ``IPrec@r`` is
    ``IPrec(recall=r)``. An alias that fixes a parameter (``F1``: beta = 1) refuses
    that parameter rather than override it; scikit-learn's aliases (``ndcg_score``) set
    its defaults unless given (:data:`ALIAS_DEFAULTS`).
    """
    raw: dict[str, str] = {}
    if match["params"]:
        for item in _split_params(match["params"]):
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise MeasureError(f"measure {text!r}: parameter {item!r} is not key=value")
            raw[key.strip()] = value
    fixed = ALIAS_PARAMS.get(match["family"].lower(), {})
    for key, value in fixed.items():
        if key in raw:
            raise MeasureError(
                f"measure {text!r}: {match['family']} fixes {key}={value}; "
                f"write {family}({key}=…) for another {key}"
            )
        raw[key] = value
    raw = _sklearn_params(text, family, _ir_measures_params(text, family, raw))
    for key, value in ALIAS_DEFAULTS.get(match["family"].lower(), {}).items():
        raw.setdefault(key, value)
    if family in _WITH_REL and "rel" in raw:
        family = _WITH_REL[family]
    if family == "SetP" and "relative" in raw:  # ir_measures' SetP(relative=True)
        relative = raw.pop("relative").strip().strip("'\"")
        if Param(bool, False).coerce(family, "relative", _parse_value(relative)):
            family = "SetRelP"
    cutoff = match["k"]
    if "cutoff" in raw and "cutoff" not in REGISTRY[family].params:
        given = raw.pop("cutoff").strip()
        if REGISTRY[family].cutoff == "none" or family == "IPrec":
            raise MeasureError(f"measure {text!r}: {family} takes no cutoff; cutoff={given} given")
        if cutoff is not None and _parse_cutoff(text, cutoff) != _parse_cutoff(text, given):
            raise MeasureError(f"measure {text!r}: cutoff={given} contradicts @{cutoff}")
        cutoff = given
    if family == "IPrec" and cutoff is not None:  # ir_measures: IPrec@0.1
        raw["recall"] = cutoff
        return _build(text, family, None, raw)
    k = _parse_cutoff(text, cutoff) if cutoff is not None else None
    return _build(text, family, k, raw)


def _printed_trec_value(text: str) -> Measure | None:
    """The measure of a name trec_eval prints for a one-value request (``set_F_0.5`` for
    ``-m set_F.0.5``), or None."""
    base, sep, value = text.rpartition("_")
    if not sep or not _NUMBER.match(value):
        return None
    found = trec_bases().get(base)
    if found is None or found[1].mode != "one":
        return None
    family, tp = found
    return _build(text, family, None, {tp.param or "": value})


def _leading_int(text: str, request: str) -> int:
    """trec_eval reads a cutoff as its leading whole number (``23.4`` is 23)."""
    match = re.match(r"\s*([+-]?\d+)", text)
    if not match:
        raise MeasureError(f"measure {request!r}: cutoff {text!r} is not a number")
    return int(match.group(1))


#: the parameters trec_eval gives a measure requested by its bare name (its
#: defaults): ``-m ndcg_cut`` is ``-m ndcg_cut.5,10,15,20,30,100,200,500,1000``.
#: ``P`` and ``recall`` are not among them: each spelling also names another measure
#: (sparkeval's own ``P``, which needs a cutoff; ranx's ``recall``, the recall of the
#: whole list), so a bare ``P`` or ``recall`` stays refused rather than misread.
TREC_DEFAULT_PARAMS: dict[str, str] = {
    "ndcg_cut": "5,10,15,20,30,100,200,500,1000",
    "map_cut": "5,10,15,20,30,100,200,500,1000",
    "relative_P": "5,10,15,20,30,100,200,500,1000",
    "success": "1,5,10",
    "Rprec_mult": "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0",
    "iprec_at_recall": "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0",
}


def parse_trec_request(text: str) -> list[Measure] | None:
    """Expand trec_eval's parameterised syntax ``base.v1,v2,...``; None if not one.

    Cutoff and per-value parameters are sorted ascending, as trec_eval prints
    them; a repeated value is an error, as in trec_eval. A bare name of
    :data:`TREC_DEFAULT_PARAMS` takes trec_eval's default parameters.

    Example:
        >>> [m.name for m in parse_trec_request("P.5,7,3")]
        ['P@3', 'P@5', 'P@7']
        >>> [m.name for m in parse_trec_request("success")]
        ['Success@1', 'Success@5', 'Success@10']
    """
    text = text.strip()
    if text in TREC_DEFAULT_PARAMS:  # a bare trec_eval name: its default parameters
        text = f"{text}.{TREC_DEFAULT_PARAMS[text]}"
    match = _TREC_REQUEST.match(text)
    if not match:
        return None
    bases = trec_bases()
    if match["base"] not in bases:
        return None
    family, tp = bases[match["base"]]
    raw = match["params"]
    items = raw.split(",")
    if any(not item.strip() for item in items):
        raise MeasureError(f"measure {text!r}: empty parameter in {raw!r}")
    return _expand(text, family, tp, raw, items)


def _expand(text: str, family: str, tp: TrecParams, raw: str, items: list[str]) -> list[Measure]:
    if tp.mode == "cutoffs":
        cuts = sorted(_leading_int(item, text) for item in items)
        if cuts[0] < 1:
            raise MeasureError(f"measure {text!r}: cutoffs must be >= 1")
        if cuts[-1] > MAX_CUTOFF:
            raise MeasureError(f"measure {text!r}: cutoffs must be <= 2^63-1, got {cuts[-1]}")
        if len(set(cuts)) != len(cuts):
            raise MeasureError(f"measure {text!r}: duplicate cutoffs")
        return [_build(text, family, k, {}) for k in cuts]
    param = tp.param or ""
    if tp.mode == "each":
        try:
            values = sorted(float(item) for item in items)
        except ValueError:
            raise MeasureError(f"measure {text!r}: parameters must be numbers") from None
        if len(set(values)) != len(values):
            raise MeasureError(f"measure {text!r}: duplicate parameters")
        return [_build(text, family, None, {param: repr(v)}) for v in values]
    if tp.mode == "one":
        if len(items) != 1:
            raise MeasureError(
                f"measure {text!r}: {tp.base} takes one {param} value (trec_eval would use "
                f"only the first); request {tp.base}.{items[0].strip()} alone"
            )
        value = items[0].strip()
        if not _NUMBER.match(value):
            raise MeasureError(f"measure {text!r}: {param} {value!r} is not a number")
        built = _build(text, family, None, {param: value})
        return [Measure(built.family, built.k, built.params, trec_label=f"{tp.base}_{raw}")]
    if tp.mode == "list":
        value = ";".join(item.strip() for item in items)
    else:
        pairs = []
        for item in items:
            key, sep, number = item.partition("=")
            if not sep:
                raise MeasureError(f"measure {text!r}: parameter {item!r} is not grade=value")
            pairs.append(f"{key.strip()}:{number.strip()}")
        value = ";".join(pairs)
    built = _build(text, family, None, {param: value})
    return [Measure(built.family, built.k, built.params, trec_label=f"{tp.base}_{raw}")]


def split_measure_list(text: str) -> list[str]:
    """Split a comma/space separated list.

    Commas inside parentheses stay (``AP(rel=2,x=1)``), and so do commas of a
    trec_eval parameter list (``P.5,10``, ``ndcg.1=3,2=9``): a comma continues
    such a token when a number or ``name=`` follows it.
    """
    items: list[str] = []
    depth = 0
    current: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if depth == 0 and (ch == "," or ch.isspace()):
            token = "".join(current)
            if ch == "," and _TREC_REQUEST.match(token) and _TREC_CONTINUATION.match(text[i + 1 :]):
                current.append(ch)
                i += 1
                continue
            if current:
                items.append(token)
            current = []
            i += 1
            continue
        current.append(ch)
        i += 1
    if current:
        items.append("".join(current))
    return items


def expand_sets(names: Iterable[str]) -> tuple[list[str], list[str]]:
    """Replace set names by their members.

    Returns:
        (names, unavailable): the expanded names and the set members that this
        version does not implement (reported, never silently dropped).
    """
    out: list[str] = []
    unavailable: list[str] = []
    for name in names:
        if name in SETS:
            for member in SETS[name]:
                try:
                    parse_measure(member)
                except UnknownMeasureError:
                    unavailable.append(member)
                    continue
                out.append(member)
        else:
            out.append(name)
    return out, unavailable


def _requests(spec: str | Iterable[str]) -> Iterator[tuple[str, list[Measure] | None]]:
    """(name as typed, the measures of a trec_eval parameter list ``P.5,10`` or None) of
    a measure list: comma/space lists split, sets expanded to their members."""
    names = (
        split_measure_list(spec)
        if isinstance(spec, str)
        else [n for item in spec for n in split_measure_list(item)]
    )
    expanded, _ = expand_sets(names)
    for name in expanded:
        yield name.strip(), parse_trec_request(name)


def parse_measures(spec: str | Iterable[str]) -> list[Measure]:
    """Parse a measure list (a string or names), expanding sets and removing repeats."""
    measures: list[Measure] = []
    seen: set[str] = set()
    for name, request in _requests(spec):
        for m in request if request is not None else [parse_measure(name)]:
            if m.name not in seen:
                seen.add(m.name)
                measures.append(m)
    if not measures:
        raise UnknownMeasureError(f"no measures given ({LIST_HINT})")
    return measures


def requested_labels(spec: str | Iterable[str]) -> dict[str, str]:
    """{canonical name: the name as the user typed it} of a measure list, the first
    spelling winning (a set's members keep their trec_eval names; a trec_eval
    parameter list ``P.5,10`` gives each cutoff its own name, ``P_5``, ``P_10``).

    Example:
        >>> requested_labels("MAP@10, ndcg@10, HitRate@5")
        {'AP@10': 'MAP@10', 'nDCG@10': 'ndcg@10', 'Success@5': 'HitRate@5'}
    """
    labels: dict[str, str] = {}
    for name, request in _requests(spec):
        if request is None:
            labels.setdefault(parse_measure(name).name, name)
        for m in request or []:
            labels.setdefault(m.name, m.trec_label or m.trec_name() or m.name)
    return labels
