"""RePlay's ``CategoricalDiversity@k`` (its ``Mean`` mode) in ``evaluate``, from each
user's top-k list and an item → category table (``--item-categories``), in this
process and on Spark, each user's value the same double on both engines and the
measure their exact mean (:func:`~sparkeval.exact_means.local_bounded_total`,
:func:`~sparkeval.exact_means.bounded_totals`).

For a user u with a list L_u (its top k): d_u / k, d_u the number of distinct
categories of the items of L_u, divided by k even when the list is shorter (RePlay's
``unique_cats[min(len, k) - 1] / k``). An item the table does not name, or names with a
null category, adds none (such list rows are counted, ``rows_without_category``); the
users are those of the lists. Ids and categories are compared as text.

Example (RePlay's documented case): the categories of user 3's top 5 are 4, 9 and 2,
3 / 5 = 0.6; users 1 and 2 have five distinct categories each, 5 / 5 = 1, so the
measure is (1 + 1 + 0.6) / 3 = 0.8666666666666667.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sparkeval.errors import InputError
from sparkeval.exact_means import local_bounded_total

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: a user's value lies in [0, 1]
SHARE_BOUND = 1.0


def local_category_per_user(lists: pd.DataFrame, categories: pd.DataFrame, k: int) -> pd.DataFrame:
    """``query_id, value``: each user of ``lists`` (``query_id, doc_id``) with its
    distinct categories over ``k``, ``categories`` being ``doc_id, category`` (one
    row per item), users sorted by the ids' text.

    Example:
        >>> lists = pd.DataFrame({"query_id": ["a", "a", "b"], "doc_id": ["x", "y", "z"]})
        >>> cats = pd.DataFrame({"doc_id": ["x", "y", "z"], "category": ["c", "c", "d"]})
        >>> local_category_per_user(lists, cats, 2)["value"].tolist()
        [0.5, 0.5]
    """
    named = lists[["query_id", "doc_id"]].merge(categories, on="doc_id", how="left")
    users = pd.Index(np.unique(lists["query_id"].to_numpy(dtype=object)))
    distinct = named.groupby("query_id")["category"].nunique().reindex(users).fillna(0)
    value = distinct.to_numpy(dtype=np.float64) / float(k)
    return pd.DataFrame({"query_id": users.to_numpy(dtype=object), "value": value})


def local_category_value(lists: pd.DataFrame, categories: pd.DataFrame, k: int) -> dict[str, Any]:
    """The measure (the exact mean of :func:`local_category_per_user`) and its counts."""
    per_user = local_category_per_user(lists, categories, k)
    total = local_bounded_total(per_user["value"].to_numpy(dtype=np.float64), SHARE_BOUND)
    named = categories["doc_id"][categories["category"].notna()]
    missing = int((~lists["doc_id"].isin(named)).sum())
    return _block(total.mean, total.count, missing)


def _block(value: float, users: int, missing: int) -> dict[str, Any]:
    """The value and counts, the same dict on both engines."""
    return {"value": value, "users": users, "rows_without_category": missing}


def check_one_category(duplicated: list[Any], source: str) -> None:
    """Refuse a table that gives an item more than one category row.

    Raises:
        InputError: naming the table and up to 3 such items.
    """
    if duplicated:
        shown = ", ".join(repr(str(item)) for item in duplicated[:3])
        raise InputError(
            f"{source}: an item has more than one category row (items {shown}); "
            "CategoricalDiversity takes one category per item"
        )


def local_categories(items: np.ndarray, labels: np.ndarray, source: str) -> pd.DataFrame:
    """``doc_id, category`` (text) of a table read here, one row per item.

    Raises:
        InputError: an item with two rows.
    """
    frame = pd.DataFrame(
        {
            "doc_id": [str(v) for v in items.tolist()],
            "category": [None if v is None else str(v) for v in labels.tolist()],
        }
    )
    twice = frame["doc_id"][frame["doc_id"].duplicated()]
    check_one_category(sorted(set(twice)), source)
    return frame


def spark_category_per_user(lists: DataFrame, categories: DataFrame, k: int) -> DataFrame:
    """:func:`local_category_per_user` on Spark (``query_id, value``, unsorted)."""
    from pyspark.sql import functions as F

    named = lists.select("query_id", "doc_id").join(categories, "doc_id", "left")
    distinct = named.groupBy("query_id").agg(F.countDistinct("category").alias("_d"))
    return distinct.select(
        "query_id", (F.col("_d").cast("double") / F.lit(float(k))).alias("value")
    )


def spark_category_value(lists: DataFrame, categories: DataFrame, k: int) -> dict[str, Any]:
    """:func:`local_category_value` on Spark: the same value to the bit and counts."""
    from sparkeval.exact_means import bounded_totals

    total = bounded_totals(spark_category_per_user(lists, categories, k), {"value": SHARE_BOUND})
    from pyspark.sql import functions as F

    known = categories.where(F.col("category").isNotNull()).select("doc_id").distinct()
    missing = lists.select("doc_id").join(known, "doc_id", "left_anti").count()
    return _block(total["value"].mean, total["value"].count, int(missing))


def spark_categories(frame: DataFrame, source: str) -> DataFrame:
    """``doc_id, category`` as text of a Spark table, one row per item.

    Raises:
        InputError: an item with two rows.
    """
    from pyspark.sql import functions as F

    text = frame.select(*(F.col(c).cast("string").alias(c) for c in ("doc_id", "category")))
    twice = text.groupBy("doc_id").count().where(F.col("count") > 1).orderBy("doc_id").limit(3)
    check_one_category([r["doc_id"] for r in twice.collect()], source)
    return text
