"""Coverage, exposure inequality and novelty of recommendation lists.

With n_i = times item i is recommended (over all lists), N = sum_i n_i, p_i = n_i / N:

* catalog coverage = |{i : n_i > 0}| / |catalogue| (catalogue = items of the training
  interactions, else of the item features);
* distributional coverage = -sum_i p_i log2 p_i (entropy of exposure, bits);
* Gini of exposure over the catalogue's items sorted by n ascending (x_1 <= ... <= x_m;
  unrecommended catalogue items count with 0; without a catalogue, the recommended
  items only): G = sum_k (2k - m - 1) x_k / (m sum_k x_k); 0 = equal exposure;
* item novelty = -log2(t_i / T), t_i = training interactions with i, T = all training
  rows; novelty = mean item novelty over all recommended rows, per user over the list.
  A recommended item absent from training has no novelty value (counted, left out).

Example: exposures (1, 2, 2, 1) give p = (1/6, 1/3, 1/3, 1/6) and an entropy of
1.9183 bits.
"""

from __future__ import annotations

import math
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from sparkeval.diversity.definitions import NOVELTY_BOUND, gini_of_blocks
from sparkeval.exact_means import bounded_mean, bounded_totals
from sparkeval.information import spark_plogp

__all__ = ["NOVELTY_BOUND", "coverage_summary", "gini_of_blocks", "item_novelty", "novelty"]


def coverage_summary(lists: DataFrame, catalogue: DataFrame | None = None) -> dict[str, Any]:
    """Catalog coverage, distributional coverage (entropy, bits) and Gini of exposure.

    Args:
        lists: ``query_id, doc_id`` recommendation rows.
        catalogue: one column ``doc_id`` of catalogue items, or ``None``.
    """
    exposure = lists.groupBy("doc_id").agg(F.count(F.lit(1)).alias("n"))
    total = exposure.agg(F.sum("n").alias("N"), F.count(F.lit(1)).alias("items")).collect()[0]
    big_n = float(total["N"] or 0)
    recommended = int(total["items"] or 0)
    if big_n == 0:
        return {
            "recommended_items": 0,
            "catalog_coverage": math.nan,
            "distributional_coverage": math.nan,
            "gini": math.nan,
        }
    p = F.col("n") / F.lit(big_n)
    # -sum p log2 p (bits), added exactly: the same bits for every partitioning
    terms = bounded_totals(exposure.select(spark_plogp(p).alias("plogp")), {"plogp": 1.0})
    entropy = -terms["plogp"].total  # each term lies in [-1/(e ln 2), 0]
    result: dict[str, Any] = {
        "recommended_items": recommended,
        "recommendation_rows": int(big_n),
        "distributional_coverage": float(entropy),
    }
    if catalogue is not None:
        # every item of the catalogue or the lists, its exposure 0 when unrecommended
        cat = catalogue.select("doc_id").distinct().withColumn("_listed", F.lit(1))
        items = cat.join(exposure, "doc_id", "full_outer")
        x = F.coalesce(F.col("n"), F.lit(0))
        listed = F.col("_listed").isNotNull()
        blocks = (
            items.groupBy(x.alias("x"))
            .agg(
                F.count(F.lit(1)).alias("c"),
                F.count("_listed").alias("listed"),
                F.count(F.when(listed & F.col("n").isNotNull(), F.lit(1))).alias("covered"),
            )
            .collect()
        )
        size = sum(int(row["listed"]) for row in blocks)
        covered = sum(int(row["covered"]) for row in blocks)
        result["catalog_items"] = size
        result["catalog_coverage"] = covered / size if size else math.nan
        result["recommended_outside_catalog"] = recommended - covered
        result["gini_over"] = "catalogue items (unrecommended ones count 0)"
    else:
        blocks = exposure.groupBy(F.col("n").alias("x")).agg(F.count(F.lit(1)).alias("c")).collect()
        result["catalog_coverage"] = math.nan
        result["gini_over"] = "recommended items (no catalogue given)"
    # one row per distinct exposure x (c items each): at most sqrt(2N) + 1 rows for N list
    # rows, so they come to the driver, which adds whole numbers exactly
    gini = gini_of_blocks([(int(row["x"]), int(row["c"])) for row in blocks])
    result["gini"] = float(gini) if gini is not None else math.nan
    return result


def item_novelty(train: DataFrame) -> DataFrame:
    """``doc_id, novelty`` = -log2(share of training rows holding the item)."""
    rows = train.count()
    return train.groupBy("doc_id").agg(
        (-F.log2(F.count(F.lit(1)) / F.lit(float(rows)))).alias("novelty")
    )


def novelty(lists: DataFrame, train: DataFrame) -> tuple[DataFrame, dict[str, Any]]:
    """Per-user mean novelty and the overall mean over recommended rows."""
    scored = lists.select("query_id", "doc_id").join(item_novelty(train), "doc_id", "left")
    overall = bounded_totals(scored, {"novelty": NOVELTY_BOUND})["novelty"]
    per_user = scored.groupBy("query_id").agg(
        bounded_mean("novelty", NOVELTY_BOUND).alias("novelty")
    )
    return per_user, {
        "novelty": overall.mean,
        "recommended_rows_unseen_in_train": overall.rows - overall.count,
    }
