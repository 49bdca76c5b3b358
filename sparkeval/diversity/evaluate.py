"""All beyond-accuracy list measures of one run in one call (per user and overall).

Which measures are computed depends on the inputs: inter-user diversity, mean user
Jaccard, distributional coverage and Gini need only the lists; catalog coverage needs
a catalogue (training items, else feature items); novelty and serendipity need
training interactions; intra-list diversity needs an item similarity (from
features, or co-occurrence in training). The summary says which were skipped, and
why.

Example:
    per_user, summary = evaluate_diversity(spark, lists, train=train)
"""

from __future__ import annotations

import math
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparkeval.diversity.coverage import coverage_summary, novelty
from sparkeval.diversity.definitions import MISSING_EXAMPLES, default_similarity
from sparkeval.diversity.inter_user import (
    DEFAULT_EXACT_PAIR_LIMIT,
    DEFAULT_SAMPLE_PAIRS,
    hamming_diversity,
    mean_jaccard,
)
from sparkeval.diversity.intra_list import (
    DISSIMILARITY_BOUND,
    SIMILARITIES,
    intra_list_diversity,
    item_similarity,
    serendipity,
)
from sparkeval.errors import ConfigError
from sparkeval.exact_means import bounded_totals
from sparkeval.lsh.minhash import MinHasher
from sparkeval.spark import spark_type


def evaluate_diversity(
    spark: SparkSession,
    lists: DataFrame,
    *,
    train: DataFrame | None = None,
    features: DataFrame | None = None,
    similarity: str | None = None,
    length: int | None = None,
    exact_pair_limit: int = DEFAULT_EXACT_PAIR_LIMIT,
    sample_pairs: int = DEFAULT_SAMPLE_PAIRS,
    seed: int = 1,
    num_perm: int = 128,
) -> tuple[DataFrame, dict[str, Any]]:
    """Per-user table and overall summary of the diversity measures.

    Args:
        lists: ``query_id, doc_id[, relevance]`` recommendation rows (already cut to k);
            cached here (``lists.cache()``), for the caller to ``unpersist()`` once
            done with ``per_user``, which is cached too (unpersist it as well).
        train: ``query_id, doc_id`` training interactions.
        features: ``doc_id, features`` item features (array column).
        similarity: item similarity for ILD/serendipity (see
            :data:`~sparkeval.diversity.intra_list.SIMILARITIES`); default cosine with
            features, co-occurrence with training data.
        length: list length L of the inter-user Hamming diversity (default: longest).
        exact_pair_limit: co-occurring user pairs up to which mean Jaccard is exact.
        sample_pairs: sampled user pairs otherwise.
        seed: sampling and MinHash seed.
        num_perm: MinHash length for ``similarity='minhash'``.

    Returns:
        ``(per_user, summary)``: ``per_user`` has ``query_id, list_length,
        inter_user_diversity, intra_list_diversity, novelty, serendipity``.
    """
    sim = similarity or default_similarity(train is not None, features is not None)
    if sim is not None and sim not in SIMILARITIES:
        raise ConfigError(f"--similarity must be one of {', '.join(SIMILARITIES)}; got {sim!r}")
    if sim == "cooccurrence" and train is None:
        raise ConfigError("--similarity cooccurrence needs --train")
    if sim in ("cosine", "jaccard", "minhash") and features is None:
        raise ConfigError(f"--similarity {sim} needs --item-features")
    skipped: dict[str, str] = {}
    lists = lists.cache()
    inter = hamming_diversity(lists.select("query_id", "doc_id"), length)
    summary: dict[str, Any] = {"inter_user": dict(inter.summary)}
    summary["inter_user"]["mean_jaccard"] = mean_jaccard(
        spark,
        lists.select("query_id", "doc_id"),
        inter.summary,
        exact_pair_limit,
        sample_pairs,
        seed,
    )
    catalogue = None
    if train is not None:
        catalogue = train.select("doc_id")
        summary["catalogue_from"] = "train"
    elif features is not None:
        catalogue = features.select("doc_id")
        summary["catalogue_from"] = "item features"
    else:
        skipped["catalog_coverage"] = "no catalogue: give --train or --item-features"
    summary["coverage"] = coverage_summary(lists, catalogue)
    per_user = inter.per_user
    hasher = MinHasher(num_perm=num_perm, seed=seed)

    def sim_of(pairs: DataFrame) -> DataFrame:
        assert sim is not None  # only called when a similarity is available
        return item_similarity(pairs, sim, train=train, features=features, hasher=hasher)

    # the per-user means are taken from per_user once it is cached (below)
    bounds: dict[str, float] = {}
    similar_lists, similar_train = lists, train
    if sim is not None and sim != "cooccurrence":
        assert features is not None  # checked above
        similar_lists, missing = items_with_features(lists, features)
        similar_train = None if train is None else items_with_features(train, features)[0]
        summary["items_without_features"] = missing
    if sim is not None:
        per_user = per_user.join(intra_list_diversity(similar_lists, sim_of), "query_id", "left")
        bounds["intra_list_diversity"] = DISSIMILARITY_BOUND
        summary["intra_list_diversity"] = {"similarity": sim}
    else:
        per_user = per_user.withColumn(
            "intra_list_diversity", F.lit(None).cast(spark_type("double"))
        )
        skipped["intra_list_diversity"] = "no item similarity: give --item-features or --train"
    if train is not None:
        nov_user, nov = novelty(lists, train)
        per_user = per_user.join(nov_user, "query_id", "left")
        summary["novelty"] = nov
    else:
        per_user = per_user.withColumn("novelty", F.lit(None).cast(spark_type("double")))
        skipped["novelty"] = "needs --train (item popularity)"
    if train is not None and sim is not None:
        largest = _largest_relevance(lists)
        assert similar_train is not None
        _per_item, ser_user = serendipity(similar_lists, similar_train, sim_of, largest)
        per_user = per_user.join(ser_user, "query_id", "left")
        bounds["serendipity"] = DISSIMILARITY_BOUND * largest
        summary["serendipity"] = {"similarity": sim}
    else:
        per_user = per_user.withColumn("serendipity", F.lit(None).cast(spark_type("double")))
        skipped["serendipity"] = "needs --train and an item similarity"
    per_user = per_user.select(
        "query_id",
        "list_length",
        "inter_user_diversity",
        "intra_list_diversity",
        "novelty",
        "serendipity",
    ).cache()
    # one job fills the cache and takes the per-user means from it; the caller's rows
    # come from the cache too, so the item pairs are joined and scored once
    try:
        means = bounded_totals(per_user, bounds) if bounds else {}
    except BaseException:
        per_user.unpersist()  # the caller gets no table to unpersist
        raise
    if "intra_list_diversity" in means:
        ild = means["intra_list_diversity"]
        summary["intra_list_diversity"].update(
            mean=ild.mean, users_with_fewer_than_2_items=ild.rows - ild.count
        )
    if "serendipity" in means:
        ser = means["serendipity"]
        summary["serendipity"].update(
            mean_over_users=ser.mean,
            users_without_train_rows=ser.rows - ser.count,
            relevance="column relevance" if "relevance" in lists.columns else "1 for every item",
        )
    summary["skipped"] = skipped
    return per_user, summary


def items_with_features(rows: DataFrame, features: DataFrame) -> tuple[DataFrame, dict[str, Any]]:
    """``rows`` (``query_id, doc_id, ...``) of items that have a features row, and a count
    of the others: ``{"rows": n, "items": m, "examples": [up to 5 ids]}``.

    A similarity from features is unknown for an item without any: its pairs are left
    out of intra-list diversity and serendipity (rather than counted as dissimilar), so
    a list's diversity is over its items with features; a list left with fewer than 2
    such items has none. The count goes into the summary.
    """
    known = features.select("doc_id").distinct()
    absent = rows.join(known, "doc_id", "left_anti")
    counts = absent.agg(
        F.count(F.lit(1)).alias("rows"), F.count_distinct("doc_id").alias("items")
    ).first()
    assert counts is not None  # an aggregate without grouping has one row
    missing: dict[str, Any] = {"rows": int(counts["rows"]), "items": int(counts["items"])}
    if missing["rows"]:
        examples = absent.select("doc_id").distinct().orderBy("doc_id").limit(MISSING_EXAMPLES)
        missing["examples"] = [str(row["doc_id"]) for row in examples.collect()]
        return rows.join(known, "doc_id", "left_semi"), missing
    return rows, missing


def _largest_relevance(lists: DataFrame) -> float:
    """The largest ``|relevance|`` of the lists (1 without the column; at least 1)."""
    if "relevance" not in lists.columns:
        return 1.0
    row = lists.agg(F.max(F.abs(F.col("relevance").cast("double")))).first()
    largest = None if row is None else row[0]
    if largest is None or not math.isfinite(largest):
        return 1.0  # (a NaN or infinite serendipity is averaged as F.mean does)
    return max(1.0, float(largest))
