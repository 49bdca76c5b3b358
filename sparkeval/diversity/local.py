"""The diversity measures of one run in this process (numpy), for the command's local
engine: the definitions of :mod:`~sparkeval.diversity.inter_user`,
:mod:`~sparkeval.diversity.intra_list` and :mod:`~sparkeval.diversity.coverage`, with
the same double operations in the same order and the same exact sums
(:func:`~sparkeval.exact_means.local_bounded_total`,
:func:`~sparkeval.exact_means.local_bounded_means`), so that the per-user table and
the summary are Spark's to the bit. Logarithms are Java's
(:func:`~sparkeval.information.strict_log2`), as Spark's ``log2`` takes them.

Ids are integer codes here: users and items numbered in the order of their ids (the
order Spark compares them in), so ``i < j`` of codes is ``i < j`` of ids.

Example::

    per_user, summary = measure_run(lists, context)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sparkeval.diversity.definitions import (
    DISSIMILARITY_BOUND,
    MISSING_EXAMPLES,
    NOVELTY_BOUND,
    SIMILARITY_BOUND,
    gini_of_blocks,
    hamming_summary,
    jaccard_bounds,
    sampled_jaccard,
)
from sparkeval.errors import InputError
from sparkeval.exact_means import local_bounded_means, local_bounded_total
from sparkeval.information import strict_log2

#: ``sim(i, j)`` of arrays of item codes
Similarity = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Lists:
    """A run's recommendation rows (already cut to k), as codes.

    Attributes:
        users, items: the user and item code of each row.
        relevance: each row's relevance (NaN for a null), or None without the column.
    """

    users: np.ndarray
    items: np.ndarray
    relevance: np.ndarray | None = None


@dataclass(frozen=True)
class Context:
    """What every run is measured with.

    Attributes:
        item_ids: the ids of the item codes (sorted), for the summary's examples.
        train: ``(users, items)`` codes of the training rows, or None.
        featured: whether each item code has a features row; None without features.
        similarity: the item similarity's name, or None.
        sim: the similarity of item-code pairs (when ``similarity`` is given).
        catalogue_from: ``train`` or ``item features`` (None: no catalogue).
        catalogue: the catalogue's item codes (distinct), or None.
        length: the list length L of inter-user diversity (``--k``), or None.
        exact_pair_limit, sample_pairs, seed: the mean Jaccard's settings.
    """

    item_ids: np.ndarray
    train: tuple[np.ndarray, np.ndarray] | None
    featured: np.ndarray | None
    similarity: str | None
    sim: Similarity | None
    catalogue_from: str | None
    catalogue: np.ndarray | None
    length: int | None
    exact_pair_limit: int
    sample_pairs: int
    seed: int


@dataclass(frozen=True)
class PerUser:
    """The per-user table of a run: each column aligned with ``users`` (sorted codes).

    Doubles are NaN for a null (no value of the measure is ever NaN here: the local
    engine's inputs are finite numbers).
    """

    users: np.ndarray
    list_length: np.ndarray
    columns: dict[str, np.ndarray]


def measure_run(lists: Lists, context: Context) -> tuple[PerUser, dict[str, Any]]:
    """The per-user table and the summary block of one run, as
    :func:`~sparkeval.diversity.evaluate.evaluate_diversity` gives them on Spark."""
    users, index = np.unique(lists.users, return_inverse=True)
    length = np.bincount(index, minlength=len(users)).astype(np.int64)
    inter_user, summary = _hamming(lists, index, length, context.length)
    summary["mean_jaccard"] = _mean_jaccard(lists, index, summary, context)
    block: dict[str, Any] = {"inter_user": summary}
    skipped: dict[str, str] = {}
    if context.catalogue_from is not None:
        block["catalogue_from"] = context.catalogue_from
    else:
        skipped["catalog_coverage"] = "no catalogue: give --train or --item-features"
    block["coverage"] = _coverage(lists.items, context.catalogue)
    columns = {"inter_user_diversity": inter_user}
    similar, similar_train = lists, context.train
    if context.featured is not None and context.similarity != "cooccurrence":
        similar, block["items_without_features"] = _with_features(lists, context)
        if context.train is not None:
            keep = context.featured[context.train[1]]
            similar_train = (context.train[0][keep], context.train[1][keep])
    nothing = np.full(len(users), np.nan)
    bounds: dict[str, float] = {}
    if context.sim is not None:
        columns["intra_list_diversity"] = _ild(similar, users, context.sim)
        bounds["intra_list_diversity"] = DISSIMILARITY_BOUND
        block["intra_list_diversity"] = {"similarity": context.similarity}
    else:
        columns["intra_list_diversity"] = nothing
        skipped["intra_list_diversity"] = "no item similarity: give --item-features or --train"
    if context.train is not None:
        columns["novelty"], block["novelty"] = _novelty(lists, index, len(users), context.train)
    else:
        columns["novelty"] = nothing
        skipped["novelty"] = "needs --train (item popularity)"
    if context.train is not None and context.sim is not None:
        assert similar_train is not None
        largest = _largest_relevance(lists.relevance)
        columns["serendipity"] = _serendipity(similar, similar_train, users, context.sim, largest)
        bounds["serendipity"] = DISSIMILARITY_BOUND * largest
        block["serendipity"] = {"similarity": context.similarity}
    else:
        columns["serendipity"] = nothing
        skipped["serendipity"] = "needs --train and an item similarity"
    _add_means(block, columns, bounds, lists.relevance is not None)
    block["skipped"] = skipped
    return PerUser(users, length, columns), block


def _add_means(
    block: dict[str, Any], columns: dict[str, np.ndarray], bounds: dict[str, float], rel: bool
) -> None:
    """The summary's means over users of intra-list diversity and serendipity."""
    if "intra_list_diversity" in bounds:
        ild = local_bounded_total(columns["intra_list_diversity"], bounds["intra_list_diversity"])
        block["intra_list_diversity"].update(
            mean=ild.mean, users_with_fewer_than_2_items=ild.rows - ild.count
        )
    if "serendipity" in bounds:
        ser = local_bounded_total(columns["serendipity"], bounds["serendipity"])
        block["serendipity"].update(
            mean_over_users=ser.mean,
            users_without_train_rows=ser.rows - ser.count,
            relevance="column relevance" if rel else "1 for every item",
        )


def _hamming(
    lists: Lists, index: np.ndarray, length: np.ndarray, cutoff: int | None
) -> tuple[np.ndarray, dict[str, Any]]:
    """Per-user inter-user Hamming diversity and the summary's figures (see
    :func:`~sparkeval.diversity.inter_user.hamming_diversity`)."""
    counts = np.bincount(lists.items).astype(np.int64)
    co_pairs = int((counts * (counts - 1)).sum()) // 2
    users = len(length)
    longest, shortest = (int(length.max()), int(length.min())) if users else (0, 0)
    denom, summary = hamming_summary(users, longest, shortest, co_pairs, cutoff)
    shared = np.zeros(users, dtype=np.int64)
    np.add.at(shared, index, counts[lists.items] - 1)
    if denom > 0:
        per_user = 1.0 - shared.astype(np.float64) / float(denom)
    else:
        per_user = np.full(users, np.nan)
    return per_user, summary


def _mean_jaccard(
    lists: Lists, index: np.ndarray, summary: dict[str, Any], context: Context
) -> dict[str, Any]:
    """The mean pairwise user Jaccard, exact or sampled (see
    :func:`~sparkeval.diversity.inter_user.mean_jaccard`)."""
    users = summary["users"]
    if users < 2:
        return {"method": "exact", "mean_jaccard": math.nan}
    total_pairs = users * (users - 1) / 2
    bounds = jaccard_bounds(summary)
    sizes = np.bincount(index, minlength=users).astype(np.int64)
    if summary["co_occurring_pairs"] <= context.exact_pair_limit:
        rows = pd.DataFrame({"u": index, "item": lists.items})
        both = rows.merge(rows, on="item")
        both = both[both["u_x"] < both["u_y"]]
        x = both.groupby(["u_x", "u_y"], sort=False).size()
        a = x.index.get_level_values(0).to_numpy()
        b = x.index.get_level_values(1).to_numpy()
        shared = x.to_numpy(dtype=np.int64)
        union = (sizes[a] + sizes[b] - shared).astype(np.float64)
        found = local_bounded_total(shared.astype(np.float64) / union, 1.0)
        return {"method": "exact", "mean_jaccard": found.total / total_pairs, "bounds": bounds}
    rng = np.random.default_rng(context.seed)
    first = rng.integers(0, users, context.sample_pairs)
    second = (first + rng.integers(1, users, context.sample_pairs)) % users
    sets = _sets_of(index, lists.items, users)
    values = [
        len(sets[a] & sets[b]) / len(sets[a] | sets[b])
        for a, b in zip(first.tolist(), second.tolist(), strict=True)
    ]
    return sampled_jaccard(values, bounds, context.seed)


def _sets_of(groups: np.ndarray, items: np.ndarray, size: int) -> list[set[int]]:
    """The set of ``items`` of each group ``0 <= g < size``."""
    sets: list[set[int]] = [set() for _ in range(size)]
    for group, item in zip(groups.tolist(), items.tolist(), strict=True):
        sets[group].add(item)
    return sets


def _coverage(items: np.ndarray, catalogue: np.ndarray | None) -> dict[str, Any]:
    """Catalog and distributional coverage and the Gini of exposure (see
    :func:`~sparkeval.diversity.coverage.coverage_summary`)."""
    listed, exposure = np.unique(items, return_counts=True)
    big_n = float(exposure.sum())
    recommended = len(listed)
    if big_n == 0:
        return {
            "recommended_items": 0,
            "catalog_coverage": math.nan,
            "distributional_coverage": math.nan,
            "gini": math.nan,
        }
    p = exposure.astype(np.float64) / big_n
    entropy = -local_bounded_total(p * strict_log2(p), 1.0).total
    result: dict[str, Any] = {
        "recommended_items": recommended,
        "recommendation_rows": int(big_n),
        "distributional_coverage": float(entropy),
    }
    if catalogue is not None:
        covered = int(np.isin(listed, catalogue).sum())
        unlisted = len(catalogue) - int(np.isin(catalogue, listed).sum())
        blocks = Counter(exposure.tolist())
        if unlisted:
            blocks[0] += unlisted
        size = len(catalogue)
        result["catalog_items"] = size
        result["catalog_coverage"] = covered / size if size else math.nan
        result["recommended_outside_catalog"] = recommended - covered
        result["gini_over"] = "catalogue items (unrecommended ones count 0)"
    else:
        blocks = Counter(exposure.tolist())
        result["catalog_coverage"] = math.nan
        result["gini_over"] = "recommended items (no catalogue given)"
    gini = gini_of_blocks(sorted(blocks.items()))
    result["gini"] = float(gini) if gini is not None else math.nan
    return result


def _novelty(
    lists: Lists, index: np.ndarray, users: int, train: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, dict[str, Any]]:
    """Per-user mean novelty and the mean over recommended rows (see
    :func:`~sparkeval.diversity.coverage.novelty`): item novelty
    ``-log2(t_i / T)``, null for an item absent from training."""
    rows = len(train[1])
    seen = np.bincount(train[1], minlength=int(lists.items.max(initial=0)) + 1)
    t = seen[lists.items] if len(seen) > 0 else np.zeros(0, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        item = -strict_log2(t.astype(np.float64) / float(rows))
    item = np.where(t > 0, item, np.nan)
    overall = local_bounded_total(item, NOVELTY_BOUND)
    per_user = local_bounded_means(index, item, users, NOVELTY_BOUND)
    return per_user, {
        "novelty": overall.mean,
        "recommended_rows_unseen_in_train": overall.rows - overall.count,
    }


def _with_features(lists: Lists, context: Context) -> tuple[Lists, dict[str, Any]]:
    """The rows of items with a features row, and the count of the others (see
    :func:`~sparkeval.diversity.evaluate.items_with_features`)."""
    assert context.featured is not None
    known = context.featured[lists.items]
    absent = np.unique(lists.items[~known])
    missing: dict[str, Any] = {"rows": int((~known).sum()), "items": len(absent)}
    if not missing["rows"]:
        return lists, missing
    missing["examples"] = [str(i) for i in context.item_ids[absent[:MISSING_EXAMPLES]]]
    rel = None if lists.relevance is None else lists.relevance[known]
    return Lists(lists.users[known], lists.items[known], rel), missing


def _ild(lists: Lists, users: np.ndarray, sim: Similarity) -> np.ndarray:
    """Per-user intra-list diversity ``1 - mean_{i<j} s(i, j)`` (NaN under 2 items)."""
    rows = pd.DataFrame({"u": lists.users, "i": lists.items})
    pairs = rows.merge(rows.rename(columns={"i": "j"}), on="u")
    pairs = pairs[pairs["i"] < pairs["j"]]
    values = _pair_similarities(pairs["i"].to_numpy(), pairs["j"].to_numpy(), sim)
    where = np.searchsorted(users, pairs["u"].to_numpy())
    return 1.0 - local_bounded_means(where, values, len(users), SIMILARITY_BOUND)


def _pair_similarities(i: np.ndarray, j: np.ndarray, sim: Similarity) -> np.ndarray:
    """``sim`` of each pair ``(i[r], j[r])``, scored once per distinct pair."""
    if not len(i):
        return np.zeros(0)
    pairs = pd.DataFrame({"i": i, "j": j})
    distinct = pairs.drop_duplicates()
    scored = distinct.assign(s=sim(distinct["i"].to_numpy(), distinct["j"].to_numpy()))
    return pairs.merge(scored, on=["i", "j"], how="left")["s"].to_numpy(dtype=np.float64)


def _largest_relevance(relevance: np.ndarray | None) -> float:
    """The largest ``|relevance|`` (1 without the column; at least 1)."""
    if relevance is None or np.isnan(relevance).all():
        return 1.0
    return max(1.0, float(np.nanmax(np.abs(relevance))))


def _serendipity(
    lists: Lists,
    train: tuple[np.ndarray, np.ndarray],
    users: np.ndarray,
    sim: Similarity,
    largest: float,
) -> np.ndarray:
    """Per-user serendipity: the mean over the list of ``rel_ui (1 - mean_{j in T_u}
    s(i, j))`` (see :func:`~sparkeval.diversity.intra_list.serendipity`); NaN for a
    user without training rows."""
    rel = np.ones(len(lists.items)) if lists.relevance is None else lists.relevance
    reco = pd.DataFrame({"u": lists.users, "i": lists.items, "row": np.arange(len(lists.items))})
    hist = pd.DataFrame({"u": train[0], "j": train[1]}).drop_duplicates()
    cross = reco.merge(hist, on="u")
    values = _pair_similarities(cross["i"].to_numpy(), cross["j"].to_numpy(), sim)
    unexpected = 1.0 - local_bounded_means(
        cross["row"].to_numpy(), values, len(lists.items), SIMILARITY_BOUND
    )
    per_item = rel * unexpected
    where = np.searchsorted(users, lists.users)
    bound = DISSIMILARITY_BOUND * max(1.0, largest)
    return local_bounded_means(where, per_item, len(users), bound)


def top_k(frame: pd.DataFrame, k: int | None) -> pd.DataFrame:
    """Each user's first ``k`` rows by score descending, tied scores by the item id's
    text descending (:func:`~sparkeval.io.lists.top_k`).

    Raises:
        InputError: a row without a score or with a NaN one, named as on Spark.
    """
    if k is None:
        return frame
    unscored = np.flatnonzero(np.isnan(frame["score"].to_numpy(dtype=np.float64)))
    if len(unscored):
        row = frame.iloc[int(unscored[0])]
        raise InputError(
            f"user {row['query_id']} item {row['doc_id']}: score is missing or NaN "
            "(expected a number; the top-k cut needs one)"
        )
    order = frame.assign(_text=frame["doc_id"].astype(str)).sort_values(
        ["query_id", "score", "_text"], ascending=[True, False, False], kind="stable"
    )
    rank = order.groupby("query_id", sort=False).cumcount()
    return order[rank.to_numpy() < k].drop(columns="_text")
