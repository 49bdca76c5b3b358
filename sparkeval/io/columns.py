"""Canonical column names, their accepted aliases and explicit column mappings.

The one alias table of every command: each canonical column lists the names accepted
for it (case-insensitive, in preference order), and each kind of table (run, qrels,
rating tables, training interactions, item features, documents) takes its columns from
it, so ``topic``, ``userID`` or ``iid`` mean the same in every command.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sparkeval.errors import ConfigError, InputError

#: names of a query (or user) id column
QUERY_NAMES = ("query_id", "qid", "query", "topic", "user_id", "userid", "user", "uid")
#: names of a doc (or item) id column
DOC_NAMES = ("doc_id", "docno", "docid", "doc", "item_id", "itemid", "item", "iid")
#: names of a run id column
RUN_NAMES = ("run_id", "runid", "run", "tag", "system")
#: names of a run's score column
SCORE_NAMES = ("score", "prediction", "pred", "sim", "similarity")
#: names of a judgement's grade column
GRADE_NAMES = ("relevance", "rel", "grade", "rating", "label", "judgment", "judgement")

#: canonical run columns and the names accepted for each (case-insensitive)
RUN_ALIASES: dict[str, tuple[str, ...]] = {
    "run_id": RUN_NAMES,
    "query_id": QUERY_NAMES,
    "doc_id": DOC_NAMES,
    "score": SCORE_NAMES,
    "relevance": GRADE_NAMES,
}

#: canonical qrels columns and the names accepted for each (case-insensitive)
QRELS_ALIASES: dict[str, tuple[str, ...]] = {
    "query_id": QUERY_NAMES,
    "doc_id": DOC_NAMES,
    "relevance": GRADE_NAMES,
}

#: rating tables: predictions ``(user, item, prediction)`` and truth ``(user, item, rating)``
RATING_ALIASES: dict[str, tuple[str, ...]] = {
    "user_id": ("user_id", "userid", "user", "uid", "query_id", "qid", "query", "topic"),
    "item_id": ("item_id", "itemid", "item", "iid", "doc_id", "docno", "docid", "doc"),
    "prediction": ("prediction", "pred", "predicted", "score", "estimate", "rating"),
    "rating": ("rating", "label", "truth", "relevance", "grade", "value"),
}

#: training interactions: a user and an item per row
TRAIN_ALIASES: dict[str, tuple[str, ...]] = {"query_id": QUERY_NAMES, "doc_id": DOC_NAMES}

#: an item -> category table (``evaluate --item-categories``)
CATEGORY_ALIASES: dict[str, tuple[str, ...]] = {
    "doc_id": DOC_NAMES,
    "category": ("category", "category_id", "categoryid"),
}

#: item features: an item and an array of features (labels or a numeric vector)
FEATURE_ALIASES: dict[str, tuple[str, ...]] = {
    "doc_id": DOC_NAMES,
    "features": ("features", "feature", "vector", "labels"),
}

#: documents for near-duplicate search
DOC_ALIASES: dict[str, tuple[str, ...]] = {
    "doc_id": (*DOC_NAMES, "id"),
    "text": ("text", "body", "content"),
    "tokens": ("tokens", "shingles"),
    "weights": ("weights",),
}

REQUIRED = {"run": ("query_id", "doc_id", "score"), "qrels": ("query_id", "doc_id", "relevance")}
OPTIONAL = {"run": ("run_id",), "qrels": ()}


@dataclass(frozen=True)
class OptionNaming:
    """How an error names the option that maps columns: as the command-line flag
    (``--run-columns score=NAME``) or as the Python keyword (``run_columns={'score':
    NAME}``).

    Attributes:
        keywords: Python style when given: {flag: keyword} for the flags whose keyword
            is not the flag's own name (``--qrels-columns`` is ``truth_columns`` in
            ``evaluate_recommendations``); None for the command line's flags.

    Example:
        >>> PYTHON_KEYWORDS.mapping_hint("--run-columns", "score")
        "run_columns={'score': NAME}"
        >>> COMMAND_LINE.mapping_hint("--run-columns", "score")
        '--run-columns score=NAME'
    """

    keywords: Mapping[str, str] | None = field(default=None, hash=False)

    def mapping_hint(self, flag: str, canonical: str) -> str:
        """How to map column ``canonical`` with the option whose flag is ``flag``."""
        if self.keywords is None:
            return f"{flag} {canonical}=NAME"
        keyword = self.keywords.get(flag, flag.lstrip("-").replace("-", "_"))
        return f"{keyword}={{{canonical!r}: NAME}}"


#: errors for the command line name its flags
COMMAND_LINE = OptionNaming()
#: errors for a caller of the Python API name its keywords
PYTHON_KEYWORDS = OptionNaming({})


def split_mapping(text: str | Mapping[str, str] | None, label: str) -> dict[str, str]:
    """Split ``canonical=source,...`` (or copy a mapping) into {canonical: source}.

    ``label`` names the option in the error for an item without ``=`` or a key given
    twice.
    """
    if text is None:
        return {}
    if isinstance(text, Mapping):
        return {str(k): str(v) for k, v in text.items()}
    pairs: dict[str, str] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ConfigError(f"{label} item {item!r} is not canonical=source")
        if key.strip() in pairs:
            raise ConfigError(f"{label} gives {key.strip()} twice ({item.strip()!r})")
        pairs[key.strip()] = value.strip()
    return pairs


def parse_mapping(text: str | Mapping[str, str] | None, kind: str) -> dict[str, str]:
    """Parse ``canonical=source,...`` (or a mapping) into {canonical: source}.

    A key may also be an accepted name of one canonical column (``user_id=uid`` maps
    the query column, whose names include ``user_id``, to the column ``uid``); any
    other key, and a source column given for two keys, is refused, naming the
    canonical columns.

    Example:
        >>> parse_mapping("query_id=uid, doc_id=iid", "run")
        {'query_id': 'uid', 'doc_id': 'iid'}
        >>> parse_mapping({"user_id": "uid", "itemId": "iid"}, "run")
        {'query_id': 'uid', 'doc_id': 'iid'}
    """
    allowed = REQUIRED[kind] + OPTIONAL[kind]
    label = f"{kind} column mapping"
    pairs = split_mapping(text, label)
    aliases = RUN_ALIASES if kind == "run" else QRELS_ALIASES
    canonical: dict[str, str] = {}
    for key, value in pairs.items():
        named, source = _canonical_of(key, allowed, aliases), value
        if named in canonical:
            raise ConfigError(f"{label} maps column {named} twice ({key}={value})")
        if source in canonical.values():
            raise ConfigError(f"{label} maps the column {source} to two columns ({key}={value})")
        canonical[named or key] = source
    return mapping_onto(canonical, allowed, label, f"{kind} columns")


def _canonical_of(
    name: str, allowed: Sequence[str], aliases: Mapping[str, Sequence[str]]
) -> str | None:
    """The canonical column among ``allowed`` that ``name`` is, or is the only one with
    ``name`` among its accepted names; None otherwise."""
    if name in allowed:
        return name
    owners = [c for c in allowed if name.lower() in aliases.get(c, ())]
    return owners[0] if len(owners) == 1 else None


def mapping_onto(
    text: str | Mapping[str, str] | None, allowed: Sequence[str], label: str, what: str
) -> dict[str, str]:
    """``canonical=source`` pairs whose canonical names are all in ``allowed``.

    A ConfigError names ``label`` (the option) and lists the canonical ``what``.

    Example:
        >>> mapping_onto("user_id=uid", ("user_id", "item_id"), "--columns", "columns")
        {'user_id': 'uid'}
    """
    pairs = split_mapping(text, label)
    unknown = sorted(set(pairs) - set(allowed))
    if unknown:
        raise ConfigError(
            f"{label} names unknown column(s) {', '.join(unknown)}; "
            f"canonical {what} are: {', '.join(allowed)}"
        )
    return pairs


def match_columns(
    available: Sequence[str],
    aliases: Mapping[str, Sequence[str]],
    required: Sequence[str],
    mapping: Mapping[str, str],
    source: str,
    table: str,
    option: str | None,
    optional: Sequence[str] = (),
    naming: OptionNaming = COMMAND_LINE,
) -> dict[str, str]:
    """Find the source column of every canonical column: mapped, else the first alias.

    Aliases match case-insensitively, and a source column serves one canonical column.

    Args:
        available: the table's columns.
        aliases: accepted names of each canonical column, in preference order.
        required, optional: the canonical columns to find (optional ones only if present).
        mapping: explicit {canonical: source column}, from ``option``.
        source: the input path, for errors.
        table: what the table is, for errors (``"a run table"``).
        option: the command-line option that maps columns, or None when there is none.
        naming: how the error names that option (the flag, or the Python keyword).

    Returns:
        {canonical: source column}.

    Raises:
        InputError: a mapped column is absent or a required column is missing, naming
            the file, what was expected and what the file has.

    Example:
        >>> match_columns(["UID", "iid"], {"user_id": ("uid",), "item_id": ("item_id",)},
        ...               ("user_id", "item_id"), {"item_id": "iid"}, "t.csv", "a table", None)
        {'user_id': 'UID', 'item_id': 'iid'}
    """
    by_lower: dict[str, str] = {}
    for column in available:
        twin = by_lower.setdefault(column.lower(), column)
        if twin != column:
            raise InputError(
                f"{source}: columns {twin!r} and {column!r} differ only in case, which Spark "
                "reads as one name; rename one of them"
            )
    found: dict[str, str] = {}
    for canonical in (*required, *optional):
        if canonical in mapping:
            if mapping[canonical] not in available:
                raise InputError(
                    f"{source}: mapped column {mapping[canonical]!r} (for {canonical}) not found; "
                    f"columns are: {', '.join(available)}"
                )
            found[canonical] = mapping[canonical]
            continue
        for alias in aliases[canonical]:
            if alias in by_lower and by_lower[alias] not in found.values():
                found[canonical] = by_lower[alias]
                break
        if canonical not in found and canonical in required:
            hint = f"; or map one with {naming.mapping_hint(option, canonical)}" if option else ""
            raise InputError(
                f"{source}: missing column {canonical!r} for {table} "
                f"(accepted names: {', '.join(aliases[canonical])}{hint}); "
                f"columns are: {', '.join(available)}"
            )
    return found


def resolve_columns(
    available: Sequence[str],
    kind: str,
    mapping: Mapping[str, str],
    source: str,
    naming: OptionNaming = COMMAND_LINE,
) -> dict[str, str]:
    """Find the source column of every canonical run or qrels column (:func:`match_columns`);
    ``naming`` says how an error names the option that maps them.

    Returns:
        {canonical: source column}; optional columns only when present.
    """
    aliases = RUN_ALIASES if kind == "run" else QRELS_ALIASES
    return match_columns(
        available,
        aliases,
        REQUIRED[kind],
        mapping,
        source,
        f"a {kind} table",
        f"--{kind}-columns",
        OPTIONAL[kind],
        naming,
    )
