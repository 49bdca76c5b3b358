"""Bounded sums and means of double columns in Spark that do not depend on partitioning.

``F.mean`` and ``F.sum`` of doubles add their terms in the order the partitions and
the shuffle deliver them, so the last bits of a summary could change with
``spark.sql.shuffle.partitions``, adaptive execution or the number of executors.
Two order-free forms replace them:

* :func:`~sparkeval.engine.plans.exact.exact_totals`, for a few totals over a whole
  frame (a summary's means, one per run or per run and measure), exact and correctly
  rounded, through the Python workers;
* :func:`bounded_mean` and :func:`bounded_totals` (here), for terms known to lie within
  a bound (similarities in [-1, 1], entropy terms, novelty): each term is turned into
  a fixed-point whole number and summed exactly as longs by Spark, streaming, with
  no Python worker; the per-group mean, or the whole frame's totals.

:func:`local_bounded_total` and :func:`local_bounded_means` are the same fixed-point
sums in numpy, for an engine without Spark that must give Spark's bits.

Example (on Spark)::

    per_user = pairs.groupBy("query_id").agg(bounded_mean("sim", 2.0).alias("mean_sim"))
    totals = bounded_totals(per_user, {"mean_sim": 1.0})
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from sparkeval.engine.worker.exact_summary import ExactTotal

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


#: a :func:`bounded_mean` term x becomes the whole number ``v = trunc(x · 2^k)`` held
#: as ``hi · 2^LIMB_BITS + lo`` (``0 <= lo < 2^LIMB_BITS``); each limb's sum is exact
#: in a long for up to 2^32 terms
LIMB_BITS = 31


def _scale_bits(bound: float) -> int:
    """k for terms within ``bound``: ``|x| · 2^k < 2^62`` (about 4e-19 kept below 2)."""
    return 62 - max(0, math.ceil(math.log2(bound)))


def _fixed_point(x: Column, bound: float) -> tuple[Column, Column, Column]:
    """(high limb, low limb, is within the bound) of the term ``x``: the whole number
    ``trunc(x · 2^k)`` is ``hi · 2^LIMB_BITS + lo``; null where x is null or outside."""
    from pyspark.sql import functions as F

    within = (x >= -bound) & (x <= bound)
    whole = F.when(within, (x * F.lit(math.ldexp(1.0, _scale_bits(bound)))).cast("long"))
    low = whole.bitwiseAND(F.lit((1 << LIMB_BITS) - 1))
    return F.shiftright(whole, LIMB_BITS), low, within


def bounded_mean(column: str, bound: float) -> Column:
    """Aggregate: the mean of the group's non-null values of ``column``, which lie in
    ``[-bound, bound]``, from an exact sum of fixed-point terms, whatever the
    partitioning (null for a group without a value).

    Each term is scaled by ``2^k`` (k as large as keeps ``|x| · 2^k < 2^62``), cut to a
    whole number (an absolute error below ``2^-k``: about 4e-19 for a bound of 2) and
    split into two limbs that Spark adds as longs, streaming; the mean is
    ``(Σhi · 2^(31-k) + Σlo · 2^-k) / n`` in doubles.  A group holding a NaN, an
    infinity or a value beyond the bound has the mean NaN (such values are not
    expected where this is used).

    Example: similarities 0.1, 0.2, 0.3 give 0.19999999999999998 for every
    partitioning (their sum rounds to 0.6; ``F.mean`` adding left to right gives
    0.6000000000000001 / 3 = 0.20000000000000004).
    """
    from pyspark.sql import functions as F

    k = _scale_bits(bound)
    x = F.col(column).cast("double")
    hi, lo, _ = _fixed_point(x, bound)
    total = F.sum(hi).cast("double") * F.lit(math.ldexp(1.0, LIMB_BITS - k)) + F.sum(lo).cast(
        "double"
    ) * F.lit(math.ldexp(1.0, -k))
    count = F.count(x)
    # a value outside the bound is counted in x but has no limbs
    return F.when(F.count(hi) < count, F.lit(math.nan)).when(count > 0, total / count)


def bounded_totals(frame: DataFrame, bounds: Mapping[str, float]) -> dict[str, ExactTotal]:
    """Totals, counts and means over the whole frame of the non-null values of each
    column of ``bounds``, whose values lie within ``[-bound, bound]``: fixed-point sums
    (:func:`bounded_mean`'s terms) added exactly as Python integers, so the same for
    every partitioning; one Spark job, no Python worker.

    A column holding a NaN, an infinity or a value beyond its bound has the IEEE
    total of ``F.sum`` (NaN or an infinity whatever the order).

    Example: the 0.1, 0.2, 0.3 of :func:`bounded_mean` total 0.6 and average 0.2
    (the mean is the truncated terms' exact sum divided once).
    """
    from pyspark.sql import functions as F

    aggregates = [F.count(F.lit(1)).alias("_rows")]
    for index, (column, bound) in enumerate(bounds.items()):
        x = F.col(column).cast("double")
        hi, lo, within = _fixed_point(x, bound)
        aggregates += [
            F.sum(hi).alias(f"_hi{index}"),
            F.sum(lo).alias(f"_lo{index}"),
            F.count(x).alias(f"_n{index}"),
            F.max(F.when(x.isNotNull() & ~within, F.lit(1))).alias(f"_out{index}"),
            F.sum(x).alias(f"_float{index}"),
        ]
    row = frame.agg(*aggregates).first()
    assert row is not None  # a global aggregate has one row
    rows = int(row["_rows"])
    found = {}
    for index, (column, bound) in enumerate(bounds.items()):
        count = int(row[f"_n{index}"])
        if row[f"_out{index}"] is not None:
            total = float(row[f"_float{index}"])
            found[column] = ExactTotal(total, count, rows, total / count if count else math.nan)
            continue
        whole = (int(row[f"_hi{index}"] or 0) << LIMB_BITS) + int(row[f"_lo{index}"] or 0)
        exact = Fraction(whole, 1 << _scale_bits(bound))
        mean = float(exact / count) if count else math.nan
        found[column] = ExactTotal(float(exact), count, rows, mean)
    return found


def _fixed_point_terms(values: np.ndarray, bound: float) -> tuple[np.ndarray, np.ndarray]:
    """(high limbs, low limbs) of the non-NaN ``values`` as :func:`bounded_mean` cuts
    them on Spark: ``trunc(x · 2^k)`` split at :data:`LIMB_BITS` (a value beyond
    ``bound`` is an error here: the local engine's callers keep within it)."""
    x = values[~np.isnan(values)]
    if np.any(np.abs(x) > bound):
        raise ValueError(f"a term beyond the bound {bound}")
    whole = (x * math.ldexp(1.0, _scale_bits(bound))).astype(np.int64)  # truncates
    return whole >> LIMB_BITS, whole & ((1 << LIMB_BITS) - 1)


def local_bounded_total(values: np.ndarray, bound: float) -> ExactTotal:
    """:func:`bounded_totals` of one column in this process: ``values`` (NaN for a null)
    within ``[-bound, bound]``, their fixed-point terms added exactly as Python integers,
    so the same total, count and mean as on Spark to the bit.

    Example:
        >>> local_bounded_total(np.array([0.1, 0.2, 0.3, np.nan]), 1.0).mean
        0.2
    """
    values = np.asarray(values, dtype=np.float64)
    hi, lo = _fixed_point_terms(values, bound)
    count = len(hi)
    whole = (int(hi.sum()) << LIMB_BITS) + int(lo.sum())
    exact = Fraction(whole, 1 << _scale_bits(bound))
    return ExactTotal(float(exact), count, len(values), float(exact / count) if count else math.nan)


def local_bounded_means(
    groups: np.ndarray, values: np.ndarray, size: int, bound: float
) -> np.ndarray:
    """:func:`bounded_mean` per group in this process: the mean of the non-NaN ``values``
    of each group ``0 <= g < size`` (``groups[r]`` is row r's), NaN for a group without
    a value, from the same fixed-point terms and the same double operations as Spark's:
    ``(Σhi · 2^(31-k) + Σlo · 2^-k) / n``.

    Example:
        >>> local_bounded_means(np.array([0, 0, 0, 1]), np.array([0.1, 0.2, 0.3, np.nan]),
        ...                     2, 2.0).tolist()
        [0.19999999999999998, nan]
    """
    values = np.asarray(values, dtype=np.float64)
    total = local_bounded_sums(groups, values, size, bound)
    count = np.bincount(np.asarray(groups)[~np.isnan(values)], minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / count, np.nan)


def bounded_sum(column: str, bound: float) -> Column:
    """Aggregate: the sum of the group's non-null values of ``column`` (within
    ``[-bound, bound]``) from :func:`bounded_mean`'s exact fixed-point terms, as the
    double ``Σhi · 2^(31-k) + Σlo · 2^-k``, whatever the partitioning (0 for a group
    without a value; NaN when a value lies beyond the bound).

    Example: 0.1, 0.2, 0.3 sum to 0.6 for every partitioning.
    """
    from pyspark.sql import functions as F

    k = _scale_bits(bound)
    x = F.col(column).cast("double")
    hi, lo, _ = _fixed_point(x, bound)
    total = F.coalesce(F.sum(hi), F.lit(0)).cast("double") * F.lit(
        math.ldexp(1.0, LIMB_BITS - k)
    ) + F.coalesce(F.sum(lo), F.lit(0)).cast("double") * F.lit(math.ldexp(1.0, -k))
    return F.when(F.count(hi) < F.count(x), F.lit(math.nan)).otherwise(total)


def local_bounded_sums(
    groups: np.ndarray, values: np.ndarray, size: int, bound: float
) -> np.ndarray:
    """:func:`bounded_sum` per group in this process: the same fixed-point terms and
    double operations as Spark's, so the same bits (0 for a group without a value).

    Example:
        >>> local_bounded_sums(np.array([0, 0, 0]), np.array([0.1, 0.2, 0.3]), 2, 1.0).tolist()
        [0.6, 0.0]
    """
    values = np.asarray(values, dtype=np.float64)
    where = np.asarray(groups)[~np.isnan(values)]
    hi, lo = _fixed_point_terms(values, bound)
    k = _scale_bits(bound)
    sum_hi = np.zeros(size, dtype=np.int64)
    sum_lo = np.zeros(size, dtype=np.int64)
    np.add.at(sum_hi, where, hi)
    np.add.at(sum_lo, where, lo)
    return sum_hi.astype(np.float64) * math.ldexp(1.0, LIMB_BITS - k) + sum_lo.astype(
        np.float64
    ) * math.ldexp(1.0, -k)
