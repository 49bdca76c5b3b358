"""The measures of the whole recommendation set that ``evaluate`` computes with
training interactions (``--train``): their names under each compatibility profile,
what each name computes there, and the names refused because a peer means something
else by them.

Under every profile but ``rectools`` and ``replay`` the names mean sparkeval's
definitions (those of ``sparkeval diversity``); under a peer's profile a name the peer
defines otherwise is computed as the peer computes it, or refused naming the
difference. The kinds of value:

* ``catalog_coverage``: |distinct items of the top-k lists ∩ I_train| / |I_train|
  (I_train: the items of the training interactions); RePlay's ``Coverage``;
* ``novelty``: the mean over the top-k rows whose item is in training of
  -log2(t_i / T) (t_i: training rows of item i, T: all training rows);
* ``unseen_share`` (RePlay's ``Novelty``): the mean over the users of the training
  interactions of 1 - |top-k_u ∩ train_u| / |top-k_u|, 1 for a user without
  recommendations;
* ``distinct_items`` (RecTools' ``CatalogCoverage``, ``normalize=False``): the number
  of distinct items of the top-k lists;
* ``inverse_user_frequency`` (RecTools' ``MeanInvUserFreq``): the mean over the users of
  the lists of their rows' mean -log2(u_i / U), u_i the distinct training users of item
  i (1 for an item absent from training), U all distinct training users;
* ``recommended_popularity`` (RecTools' ``AvgRecPopularity``, ``normalize=False``): the
  mean over the users of the lists of their rows' mean t_i (0 for an item absent from
  training);
* ``surprisal`` (RePlay's ``Surprisal``): the mean over the users of the lists of the
  sum of their top-k rows' weights log2(U / u_i) / log2(U) divided by k (weight 1 for
  an item absent from training).

A name with a parameter list (``CatalogCoverage(normalize=True)@10``) is refused: the
peers' other variants are not computed.

Example:
    >>> ranking, sets = split_set_measures(["nDCG@10,Coverage@10"], "trec")
    >>> ranking, [(m.name, m.kind, m.k) for m in sets]
    (['nDCG@10'], [('Coverage@10', 'catalog_coverage', 10)])
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sparkeval.errors import MeasureError
from sparkeval.measures.names import split_measure_list

#: the kinds of value, and what each computes (``compat.definitions``)
DEFINITIONS: dict[str, str] = {
    "catalog_coverage": "catalog coverage of the top-k lists: |distinct recommended items "
    "in train| / |distinct train items| (sparkeval diversity's catalog_coverage)",
    "novelty": "mean over the top-k rows whose item is in train of -log2(t_i / T), t_i the "
    "train rows of item i, T all train rows (sparkeval diversity's novelty)",
    "unseen_share": "RePlay's Novelty: mean over the train users u of "
    "1 - |top-k_u & train_u| / |top-k_u| (1 for a train user without recommendations)",
    "distinct_items": "RecTools' CatalogCoverage (normalize=False): the number of distinct "
    "items in the top-k lists",
    "inverse_user_frequency": "RecTools' MeanInvUserFreq: mean over the users of the lists of "
    "the mean over the user's top-k rows of -log2(u_i / U), u_i the distinct train users of "
    "item i (1 for an item not in train), U all distinct train users",
    "recommended_popularity": "RecTools' AvgRecPopularity (normalize=False): mean over the "
    "users of the lists of the mean over the user's top-k rows of the train rows of the item "
    "(0 for an item not in train)",
    "surprisal": "RePlay's Surprisal: mean over the users of the lists of the sum over the "
    "user's top-k rows of log2(U / u_i) / log2(U), divided by k, u_i the distinct train users "
    "of item i (weight 1 for an item not in train), U all distinct train users",
}

#: sparkeval's spellings (lower case, without the cutoff): the kind and the output name
DEFAULT_NAMES: dict[str, tuple[str, str]] = {
    **dict.fromkeys(
        ("coverage", "catalogcoverage", "catalog_coverage", "itemcoverage"),
        ("catalog_coverage", "Coverage"),
    ),
    "novelty": ("novelty", "Novelty"),
}

#: a profile's own meanings: a kind and output name, or the refusal's reason
PROFILE_NAMES: dict[str, dict[str, tuple[str, str] | str]] = {
    "replay": {
        "novelty": ("unseen_share", "Novelty"),
        "surprisal": ("surprisal", "Surprisal"),
        "unexpectedness": "RePlay's Unexpectedness compares each user's top k with a base "
        "run's top k, 1 - |top-k & base top-k| / k (0 when either list is empty); evaluate "
        "measures each run on its own, and this comparison of two runs is one which sparkeval "
        "does not compute (sparkeval rank-distance's Jaccard@k, |A & B| / |A | B| per query, "
        "is the nearest)",
    },
    "rectools": {
        "catalogcoverage": ("distinct_items", "CatalogCoverage"),
        "meaninvuserfreq": ("inverse_user_frequency", "MeanInvUserFreq"),
        "avgrecpopularity": ("recommended_popularity", "AvgRecPopularity"),
        "intersection": "RecTools' Intersection compares each user's top k with a reference "
        "run's top ref_k, |top-k & ref top-ref_k| / |top-k|; evaluate measures each run on "
        "its own, and this comparison of two runs is one which sparkeval does not compute "
        "(sparkeval rank-distance's Jaccard@k, |A & B| / |A | B| per query, is the nearest)",
    },
    "recommenders": {
        name: "Microsoft Recommenders' own catalog coverage and novelty are not reproduced "
        "under --compat recommenders; ask for it under --compat trec for sparkeval's "
        "definition"
        for name in ("coverage", "catalogcoverage", "catalog_coverage", "itemcoverage", "novelty")
    },
}

_NAME = re.compile(r"^\s*([A-Za-z_]+)\s*@\s*(\S+)\s*$")


@dataclass(frozen=True)
class SetMeasure:
    """A measure of the whole recommendation set asked of ``evaluate``.

    Attributes:
        name: its canonical output name (``Coverage@10``).
        kind: what it computes (a key of :data:`DEFINITIONS`).
        k: the cutoff: each list's top k.
        typed: the name as requested.
    """

    name: str
    kind: str
    k: int
    typed: str

    def definition(self) -> str:
        """What it computes, in words, with its cutoff."""
        return f"{DEFINITIONS[self.kind]}, k={self.k}"


def set_measure(text: str, profile: str) -> SetMeasure | None:
    """The set measure ``text`` names under ``profile``, or None when it names none.

    Raises:
        MeasureError: a set measure without a whole cutoff, or a name the profile's peer
            defines otherwise and sparkeval does not compute.
    """
    base = re.split(r"[@(]", text.strip(), maxsplit=1)[0].strip().lower()
    meaning = PROFILE_NAMES.get(profile, {}).get(base) or DEFAULT_NAMES.get(base)
    if meaning is None:
        return None
    if isinstance(meaning, str):
        raise MeasureError(f"{text.strip()!r} under --compat {profile}: {meaning}")
    if "(" in text:
        raise MeasureError(
            f"measure {text.strip()!r}: a measure of the recommendation set takes no "
            "parameters here (only the peers' defaults are computed)"
        )
    found = _NAME.match(text)
    if found is None or not re.fullmatch(r"\d+", found.group(2)) or int(found.group(2)) < 1:
        raise MeasureError(
            f"measure {text.strip()!r}: a measure of the recommendation set needs a cutoff "
            "k >= 1, as in Coverage@10"
        )
    k = int(found.group(2))
    kind, label = meaning
    return SetMeasure(f"{label}@{k}", kind, k, text.strip())


def split_set_measures(spec: Iterable[str], profile: str) -> tuple[list[str], list[SetMeasure]]:
    """The ranking measures' names of ``spec`` (comma lists split, in order) and its set
    measures (repeats removed)."""
    ranking: list[str] = []
    found: dict[str, SetMeasure] = {}
    for item in spec:
        for name in split_measure_list(item):
            measure = set_measure(name, profile)
            if measure is None:
                ranking.append(name)
            else:
                found.setdefault(measure.name, measure)
    return ranking, list(found.values())
