"""Item-pair similarity, intra-list diversity and serendipity, all in Spark SQL.

Similarity sources s(i, j):

* ``cooccurrence`` (training interactions): s = |U_i ∩ U_j| / sqrt(|U_i| |U_j|), the
  cosine of the items' user-incidence vectors (U_i = users who had item i).
* ``cosine`` (numeric feature vectors): s = f_i · f_j / (|f_i| |f_j|) (0 for a zero vector).
* ``jaccard`` (feature sets): s = |F_i ∩ F_j| / |F_i ∪ F_j|, exact; F is the array of
  labels, or for a numeric vector the positions of its non-zero entries.
* ``minhash``: the MinHash estimate of that Jaccard (share of equal signature values).

An item is fully similar to itself (s(i, i) = 1 whenever it has a user or features).

Intra-list diversity of user u (list I_u, at least 2 items):
``ILD_u = 1 - mean_{i<j in I_u} s(i, j)``.
Serendipity of item i for user u (training items T_u, relevance rel_ui, 1 by default):
``ser_ui = rel_ui * (1 - mean_{j in T_u} s(i, j))``; per user the mean over the list;
overall the mean over users. Every mean is an exact sum of bounded terms
(:func:`~sparkeval.exact_means.bounded_mean`): none depends on partitioning.

Example (item vectors [1,1,0] and [1,0,1]): cosine = 1 / (sqrt 2 * sqrt 2) = 0.5,
so a two-item list of them has ILD 0.5.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from sparkeval.diversity.definitions import DISSIMILARITY_BOUND, SIMILARITIES, SIMILARITY_BOUND
from sparkeval.errors import ConfigError, InputError
from sparkeval.exact_means import bounded_mean
from sparkeval.lsh.minhash import MinHasher
from sparkeval.lsh.similar import flat_lists
from sparkeval.spark import spark_type

__all__ = [
    "DISSIMILARITY_BOUND",
    "SIMILARITIES",
    "SIMILARITY_BOUND",
    "intra_list_diversity",
    "item_similarity",
    "serendipity",
]


def _pairs_cooccurrence(pairs: DataFrame, train: DataFrame) -> DataFrame:
    interactions = train.select("query_id", "doc_id").distinct()
    counts = interactions.groupBy("doc_id").agg(F.count(F.lit(1)).alias("n"))
    left = interactions.select(F.col("query_id"), F.col("doc_id").alias("i"))
    right = interactions.select(F.col("query_id"), F.col("doc_id").alias("j"))
    co = (
        pairs.join(left, "i")
        .join(right, ["query_id", "j"])
        .groupBy("i", "j")
        .agg(F.count(F.lit(1)).alias("co"))
    )
    return (
        co.join(counts.select(F.col("doc_id").alias("i"), F.col("n").alias("ni")), "i")
        .join(counts.select(F.col("doc_id").alias("j"), F.col("n").alias("nj")), "j")
        .select("i", "j", (F.col("co") / F.sqrt(F.col("ni") * F.col("nj"))).alias("sim"))
    )


def _element_type(features: DataFrame) -> str:
    """The element type of the ``features`` array column (``double``, ``string``, ...)."""
    from pyspark.sql.types import ArrayType

    kind = features.schema["features"].dataType
    assert isinstance(kind, ArrayType), "features is checked to be an array on reading"
    return kind.elementType.simpleString()


def _feature_sets(features: DataFrame) -> DataFrame:
    element = _element_type(features)
    if element in ("double", "float", "int", "bigint", "smallint", "tinyint") or element.startswith(
        "decimal"
    ):
        fset = F.filter(
            F.transform("features", lambda x, i: F.when(x != 0, i).otherwise(F.lit(-1))),
            lambda y: y >= 0,
        ).cast(spark_type("array<string>"))
    else:
        fset = F.array_distinct(F.col("features").cast(spark_type("array<string>")))
    return features.select("doc_id", fset.alias("fset"))


def _minhash_signatures(sets: DataFrame, hasher: MinHasher) -> DataFrame:
    id_type = sets.schema["doc_id"].dataType.simpleString()

    def emit(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            values, offsets = flat_lists(batch.column("fset"))
            sig = hasher.signatures(values, offsets).astype(np.int64)
            n, k = sig.shape
            sig_arr = pa.ListArray.from_arrays(
                pa.array(np.arange(0, n * k + 1, k, dtype=np.int32)), pa.array(sig.reshape(-1))
            )
            empty = np.diff(offsets) == 0
            yield pa.RecordBatch.from_arrays(
                [batch.column("doc_id"), sig_arr, pa.array(empty)],
                names=["doc_id", "sig", "empty"],
            )

    return sets.mapInArrow(emit, f"doc_id {id_type}, sig array<bigint>, empty boolean")


def item_similarity(
    pairs: DataFrame,
    method: str,
    *,
    train: DataFrame | None = None,
    features: DataFrame | None = None,
    hasher: MinHasher | None = None,
) -> DataFrame:
    """``i, j, sim`` for the given distinct ``i, j`` pairs (missing pairs mean 0).

    Args:
        pairs: distinct item pairs ``i, j`` (i == j allowed).
        method: one of :data:`SIMILARITIES`.
        train: ``query_id, doc_id`` interactions (``cooccurrence``).
        features: ``doc_id, features`` (the other methods).
        hasher: MinHash permutations (``minhash``; default 128 permutations, seed 1).
    """
    if method not in SIMILARITIES:
        raise ConfigError(f"similarity must be one of {', '.join(SIMILARITIES)}; got {method!r}")
    if method == "cooccurrence":
        if train is None:
            raise ConfigError("similarity 'cooccurrence' needs training interactions (--train)")
        return _pairs_cooccurrence(pairs, train)
    if features is None:
        raise ConfigError(f"similarity {method!r} needs item features (--item-features)")
    if method == "cosine":
        element = _element_type(features)
        if element in ("string", "binary", "boolean"):
            raise InputError(
                f"cosine similarity needs numeric feature vectors; the features column holds "
                f"{element} values (use --similarity jaccard for label sets)"
            )
        vec = features.select(
            "doc_id", F.col("features").cast(spark_type("array<double>")).alias("v")
        ).withColumn("norm", F.sqrt(F.aggregate("v", F.lit(0.0), lambda acc, x: acc + x * x)))
        dot = F.aggregate(
            F.zip_with("vi", "vj", lambda x, y: x * y), F.lit(0.0), lambda a, x: a + x
        )
        cosine = F.when(
            (F.col("ni") > 0) & (F.col("nj") > 0), dot / (F.col("ni") * F.col("nj"))
        ).otherwise(F.lit(0.0))
        return _score_pairs(pairs, vec, {"v": ("vi", "vj"), "norm": ("ni", "nj")}, cosine)
    sets = _feature_sets(features)
    if method == "jaccard":
        inter = F.size(F.array_intersect("a", "b"))
        union = F.size(F.array_union("a", "b"))
        jaccard = F.when(union > 0, inter / union).otherwise(F.lit(0.0))
        return _score_pairs(pairs, sets, {"fset": ("a", "b")}, jaccard)
    hasher = hasher or MinHasher()
    sig = _minhash_signatures(sets, hasher)
    equal = F.size(F.filter(F.zip_with("a", "b", lambda x, y: x == y), lambda t: t))
    estimate = F.when(F.col("ea") | F.col("eb"), F.lit(0.0)).otherwise(
        equal / F.lit(float(hasher.num_perm))
    )
    return _score_pairs(pairs, sig, {"sig": ("a", "b"), "empty": ("ea", "eb")}, estimate)


def _score_pairs(
    pairs: DataFrame, table: DataFrame, sides: Mapping[str, tuple[str, str]], similarity: Column
) -> DataFrame:
    """``i, j, sim``: ``table``'s rows of both items joined onto ``pairs``, then scored.

    ``sides`` renames each column of ``table`` for the ``i`` item and the ``j`` item
    (``{"v": ("vi", "vj")}``); ``similarity`` is an expression over those names.
    """
    left = table.select(
        F.col("doc_id").alias("i"), *(F.col(c).alias(a) for c, (a, _) in sides.items())
    )
    right = table.select(
        F.col("doc_id").alias("j"), *(F.col(c).alias(b) for c, (_, b) in sides.items())
    )
    return pairs.join(left, "i").join(right, "j").select("i", "j", similarity.alias("sim"))


def intra_list_diversity(lists: DataFrame, sim_of) -> DataFrame:
    """``query_id, intra_list_diversity`` (null for lists shorter than 2).

    Args:
        lists: ``query_id, doc_id`` rows.
        sim_of: callable mapping a DataFrame of pairs ``i, j`` to ``i, j, sim``.
    """
    a = lists.select("query_id", F.col("doc_id").alias("i"))
    b = lists.select("query_id", F.col("doc_id").alias("j"))
    within = a.join(b, "query_id").where(F.col("i") < F.col("j"))
    sims = sim_of(within.select("i", "j").distinct())
    per_pair = within.join(sims, ["i", "j"], "left").fillna(0.0, subset=["sim"])
    ild = per_pair.groupBy("query_id").agg(
        (F.lit(1.0) - bounded_mean("sim", SIMILARITY_BOUND)).alias("intra_list_diversity")
    )
    users = lists.select("query_id").distinct()
    return users.join(ild, "query_id", "left")


def serendipity(
    lists: DataFrame, train: DataFrame, sim_of, largest_relevance: float = 1.0
) -> tuple[DataFrame, DataFrame]:
    """Per (user, item) and per user serendipity.

    Args:
        lists: ``query_id, doc_id[, relevance]`` recommendation rows.
        train: ``query_id, doc_id`` training interactions.
        sim_of: as for :func:`intra_list_diversity`.
        largest_relevance: the largest ``|relevance|`` of ``lists`` (1 without the
            column): the per-user means' terms lie within it times
            :data:`DISSIMILARITY_BOUND`.

    Returns:
        ``(per_item, per_user)``: ``query_id, doc_id, serendipity`` and
        ``query_id, serendipity``. Users without training rows get null.
    """
    rel = (
        F.col("relevance").cast(spark_type("double"))
        if "relevance" in lists.columns
        else F.lit(1.0)
    )
    reco = lists.select("query_id", F.col("doc_id").alias("i"), rel.alias("rel"))
    hist = train.select("query_id", F.col("doc_id").alias("j")).distinct()
    cross = reco.join(hist, "query_id")
    sims = sim_of(cross.select("i", "j").distinct())
    scored = cross.join(sims, ["i", "j"], "left").fillna(0.0, subset=["sim"])
    unexp = scored.groupBy("query_id", "i", "rel").agg(
        (F.lit(1.0) - bounded_mean("sim", SIMILARITY_BOUND)).alias("u")
    )
    per_item = reco.join(unexp, ["query_id", "i", "rel"], "left").select(
        "query_id",
        F.col("i").alias("doc_id"),
        (F.col("rel") * F.col("u")).alias("serendipity"),
    )
    bound = DISSIMILARITY_BOUND * max(1.0, largest_relevance)
    per_user = per_item.groupBy("query_id").agg(
        bounded_mean("serendipity", bound).alias("serendipity")
    )
    return per_item, per_user
