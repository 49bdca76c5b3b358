"""The measures that compare each user's top-k list with a reference run's
(``evaluate --reference-run RUN_ID``): RecTools' ``Intersection`` and RePlay's
``Unexpectedness``, in this process (pandas, numpy) and on Spark, each user's value
the same double on both engines and the measure the exact mean of those values
(:func:`~sparkeval.exact_means.local_bounded_total`,
:func:`~sparkeval.exact_means.bounded_totals`).

For a user u with a list (its top k, |L_u| <= k rows) and the reference run's top k
R_u (empty for a user absent from the reference run), c_u = |L_u ∩ R_u|:

* ``intersection`` (RecTools' ``Intersection(k)``, ``ref_k`` = k) = c_u / |L_u|, 0 for
  a user absent from the reference run (RecTools' recall of the reference over the
  user's list); when the reference run has no rows at all there is no value (NaN, no
  user), as RecTools gives for an empty ``ref_reco``;
* ``unexpectedness`` (RePlay's ``Unexpectedness(k)``) = 1 - c_u / k, divided by k even
  when a list is shorter, and 0 for a user absent from the reference run (RePlay's
  value for a user without base recommendations).

The users are those of the measured run's lists (users only of the reference run do
not count). A run compared with itself has Intersection 1 and Unexpectedness
1 - |L_u| / k.

Example (RePlay's documented case, k = 2): the lists {3, 7}, {5, 8}, {4, 9} against the
base top 2 {2, 7}, {5, 8}, {4, 9} give Unexpectedness 0.5, 0, 0 (mean 1/6) and
Intersection 0.5, 1, 1.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sparkeval.exact_means import local_bounded_total

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: the kinds that compare with a reference run
REFERENCE_KINDS = frozenset({"intersection", "unexpectedness"})
#: each user's value lies in [0, 1]
SHARE_BOUND = 1.0


def _check(kind: str) -> None:
    if kind not in REFERENCE_KINDS:
        raise ValueError(f"{kind!r} is not a measure against a reference run")


def local_reference_per_user(
    kind: str, lists: pd.DataFrame, reference: pd.DataFrame, k: int
) -> pd.DataFrame:
    """``query_id, value, _absent``: each user of ``lists`` (``query_id, doc_id``,
    one user's top k) with its value of ``kind`` against ``reference`` (the reference
    run's top k, the same columns), sorted by the ids' text; ``_absent`` marks a user
    absent from the reference run. No users when ``kind`` is ``intersection`` and the
    reference has no rows.

    Example:
        >>> lists = pd.DataFrame({"query_id": ["a", "a", "b"], "doc_id": ["x", "y", "x"]})
        >>> ref = pd.DataFrame({"query_id": ["a"], "doc_id": ["y"]})
        >>> local_reference_per_user("unexpectedness", lists, ref, 2)["value"].tolist()
        [0.5, 0.0]
        >>> local_reference_per_user("intersection", lists, ref, 2)["value"].tolist()
        [0.5, 0.0]
    """
    _check(kind)
    if kind == "intersection" and len(reference) == 0:
        return pd.DataFrame({"query_id": [], "value": [], "_absent": []})
    pairs = reference[["query_id", "doc_id"]].drop_duplicates().assign(_hit=1)
    joined = lists[["query_id", "doc_id"]].merge(pairs, on=["query_id", "doc_id"], how="left")
    users = pd.Index(np.unique(lists["query_id"].to_numpy(dtype=object)))
    n = joined.groupby("query_id").size().reindex(users).to_numpy(dtype=np.float64)
    c = joined.groupby("query_id")["_hit"].count().reindex(users).to_numpy(dtype=np.float64)
    absent = ~users.isin(pd.unique(reference["query_id"]))
    if kind == "intersection":
        value = np.where(absent, 0.0, c / n)
    else:
        value = np.where(absent, 0.0, 1.0 - c / float(k))
    return pd.DataFrame(
        {"query_id": users.to_numpy(dtype=object), "value": value, "_absent": absent}
    )


def local_reference_value(
    kind: str, lists: pd.DataFrame, reference: pd.DataFrame, k: int
) -> dict[str, Any]:
    """The value of ``kind`` (the exact mean of :func:`local_reference_per_user`) and
    its counts: the users, those absent from the reference run."""
    per_user = local_reference_per_user(kind, lists, reference, k)
    total = local_bounded_total(per_user["value"].to_numpy(dtype=np.float64), SHARE_BOUND)
    return _block(total.mean if total.count else math.nan, total.count, per_user["_absent"].sum())


def _block(value: float, users: int, absent: Any) -> dict[str, Any]:
    """The value and counts, the same dict on both engines."""
    return {"value": value, "users": int(users), "users_absent_from_reference": int(absent)}


def spark_reference_per_user(
    kind: str, lists: DataFrame, reference: DataFrame, k: int
) -> DataFrame:
    """:func:`local_reference_per_user` on Spark (``query_id, value, _absent``,
    unsorted): the same doubles."""
    from pyspark.sql import functions as F

    _check(kind)
    pairs = reference.select("query_id", "doc_id").distinct().withColumn("_hit", F.lit(1))
    per_user = (
        lists.select("query_id", "doc_id")
        .join(pairs, ["query_id", "doc_id"], "left")
        .groupBy("query_id")
        .agg(F.count(F.lit(1)).alias("_n"), F.count("_hit").alias("_c"))
    )
    known = reference.select("query_id").distinct().withColumn("_in", F.lit(True))
    users = per_user.join(known, "query_id", "left")
    c = F.col("_c").cast("double")
    if kind == "intersection":
        share = c / F.col("_n").cast("double")
    else:
        share = F.lit(1.0) - c / F.lit(float(k))
    absent = F.col("_in").isNull()
    value = F.when(absent, F.lit(0.0)).otherwise(share)
    frame = users.select("query_id", value.alias("value"), absent.alias("_absent"))
    if kind == "intersection" and reference.limit(1).count() == 0:
        return frame.limit(0)
    return frame


def spark_reference_value(
    kind: str, lists: DataFrame, reference: DataFrame, k: int
) -> dict[str, Any]:
    """:func:`local_reference_value` on Spark: the same value to the bit and counts."""
    from pyspark.sql import functions as F

    from sparkeval.exact_means import bounded_totals

    per_user = spark_reference_per_user(kind, lists, reference, k).cache()
    try:
        total = bounded_totals(per_user, {"value": SHARE_BOUND})["value"]
        absent = per_user.where(F.col("_absent")).count()
    finally:
        per_user.unpersist()
    return _block(total.mean if total.count else math.nan, total.count, absent)
