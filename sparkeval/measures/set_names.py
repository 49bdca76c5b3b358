"""The measures of the whole recommendation set that ``evaluate`` computes with
training interactions (``--train``), a reference run or item categories: their names
under each compatibility profile, the input each reads,
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
  an item absent from training);
* ``intersection`` (RecTools' ``Intersection``, ``ref_k`` = k) and ``unexpectedness``
  (RePlay's ``Unexpectedness``): each user's top k against a reference run's
  (``--reference-run``), :mod:`sparkeval.diversity.reference_values`;
* ``categorical_diversity`` (RePlay's ``CategoricalDiversity``): distinct categories
  of each user's top k over k (``--item-categories``),
  :mod:`sparkeval.diversity.category_values`.

The last three mean the peers' definitions under every profile (sparkeval has none of
its own by those names).

A name with a parameter list (``CatalogCoverage(normalize=True)@10``) is refused: the
peers' other variants are not computed.

Example:
    >>> ranking, sets = split_set_measures(["nDCG@10,Coverage@10"], "trec")
    >>> ranking, [(m.name, m.kind, m.k) for m in sets]
    (['nDCG@10'], [('Coverage@10', 'catalog_coverage', 10)])
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sparkeval.errors import ConfigError, MeasureError
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
    "intersection": "RecTools' Intersection (ref_k = k): mean over the users with a list of "
    "|top-k_u & ref top-k_u| / |top-k_u|, the reference run's top k (0 for a user absent "
    "from the reference run; no value when the reference run has no rows)",
    "unexpectedness": "RePlay's Unexpectedness: mean over the users with a list of "
    "1 - |top-k_u & base top-k_u| / k, the reference run's top k as the base (0 for a user "
    "absent from the reference run)",
    "categorical_diversity": "RePlay's CategoricalDiversity (mode Mean): mean over the users "
    "with a list of the number of distinct categories of the items of top-k_u, divided by k "
    "(an item without a category adds none)",
}

#: the input each kind reads beside the lists: its config key (the option is
#: ``--`` and the key with dashes); the kinds not named read ``train``
NEEDS: dict[str, str] = {
    "intersection": "reference_run",
    "unexpectedness": "reference_run",
    "categorical_diversity": "item_categories",
}


def needed_input(kind: str) -> str:
    """The config key of the input a kind reads: ``train``, ``reference_run`` or
    ``item_categories``.

    Example:
        >>> needed_input("intersection"), needed_input("novelty")
        ('reference_run', 'train')
    """
    return NEEDS.get(kind, "train")


#: what each input is, its option, and its keyword in Python with what it takes
_INPUT_WORDS = {
    "train": ("the training interactions", "--train PATH", "train=", " (a path or a table)"),
    "reference_run": (
        "a reference run among the runs evaluated",
        "--reference-run RUN_ID",
        "reference_run=",
        " (a run id)",
    ),
    "item_categories": (
        "an item -> category table (item_id, category)",
        "--item-categories PATH",
        "item_categories=",
        " (a path or a table)",
    ),
}
#: the measures that read each input but ``train``
_SERVES = {
    "reference_run": "Intersection@k (RecTools') and Unexpectedness@k (RePlay's)",
    "item_categories": "CategoricalDiversity@k (RePlay's)",
}


def check_set_inputs(
    measures: Iterable[SetMeasure], given: Mapping[str, object], python: bool = False
) -> None:
    """Each set measure has the input it reads (``given``: its value by config key, None
    when not given), and each input given is read by one of them.

    Example:
        >>> coverage = SetMeasure("Coverage@2", "catalog_coverage", 2, "Coverage@2")
        >>> check_set_inputs([coverage], {"train": None})
        Traceback (most recent call last):
        ...
        sparkeval.errors.ConfigError: Coverage@2 is a measure of the whole recommendation \
set: it needs the training interactions, --train PATH (key 'train'; train= in Python)

    Raises:
        ConfigError: a measure without its input, naming the option; an input no
            measure reads (``reference_run``, ``item_categories``).
    """
    measures = list(measures)
    for m in measures:
        key = needed_input(m.kind)
        if given.get(key) is None:
            what, flag, keyword, takes = _INPUT_WORDS[key]
            where = keyword + takes if python else f"{flag} (key {key!r}; {keyword} in Python)"
            raise ConfigError(
                f"{m.typed} is a measure of the whole recommendation set: it needs {what}, " + where
            )
    for key, value in given.items():
        if (
            key != "train"
            and value is not None
            and not any(needed_input(m.kind) == key for m in measures)
        ):
            raise ConfigError(
                f"key {key!r}: no measure asked for reads it (it serves {_SERVES[key]})"
            )


#: sparkeval's spellings (lower case, without the cutoff): the kind and the output name
DEFAULT_NAMES: dict[str, tuple[str, str]] = {
    **dict.fromkeys(
        ("coverage", "catalogcoverage", "catalog_coverage", "itemcoverage"),
        ("catalog_coverage", "Coverage"),
    ),
    "novelty": ("novelty", "Novelty"),
    # the peers' comparisons with a reference run and their category count, which
    # sparkeval defines no otherwise: the same under every profile
    "intersection": ("intersection", "Intersection"),
    "unexpectedness": ("unexpectedness", "Unexpectedness"),
    "categoricaldiversity": ("categorical_diversity", "CategoricalDiversity"),
}

#: a profile's own meanings: a kind and output name, or the refusal's reason
PROFILE_NAMES: dict[str, dict[str, tuple[str, str] | str]] = {
    "replay": {
        "novelty": ("unseen_share", "Novelty"),
        "surprisal": ("surprisal", "Surprisal"),
    },
    "rectools": {
        "catalogcoverage": ("distinct_items", "CatalogCoverage"),
        "meaninvuserfreq": ("inverse_user_frequency", "MeanInvUserFreq"),
        "avgrecpopularity": ("recommended_popularity", "AvgRecPopularity"),
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
