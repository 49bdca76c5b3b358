"""Sums and means of double columns in Spark that do not depend on partitioning.

``F.mean`` and ``F.sum`` of doubles add their terms in the order the partitions and
the shuffle deliver them, so the last bits of a summary could change with
``spark.sql.shuffle.partitions``, adaptive execution or the number of executors.
Two order-free forms replace them:

* :func:`exact_totals`, for a few totals over a whole frame (a summary's means, one
  per run or per run and measure): each partition is reduced by a Python worker to
  exact partial sums (an integer times a power of two,
  :func:`~sparkeval.engine.worker.exact_summary.exact_double_sum`), and the driver
  adds them as integers and rounds once.  The mean is the correctly rounded
  ``sum / n``, e.g. the mean of 0.1, 0.2 and 0.3 is 0.2, as
  ``float((Fraction(0.1) + Fraction(0.2) + Fraction(0.3)) / 3)`` rounds it, not the
  0.20000000000000004 of adding them left to right and dividing.
* :func:`bounded_mean` and :func:`bounded_totals`, for terms known to lie within a
  bound (similarities in [-1, 1], entropy terms, novelty): each term is turned into
  a fixed-point whole number and summed exactly as longs by Spark, streaming, with
  no Python worker; the per-group mean, or the whole frame's totals.

Example (on Spark)::

    totals = exact_totals(per_user, ["novelty"])
    mean = totals[()]["novelty"].mean
    per_user = pairs.groupBy("query_id").agg(bounded_mean("sim", 2.0).alias("mean_sim"))
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import pyarrow as pa

from sparkeval.engine.worker.exact_summary import encode_partial, sum_partials

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


@dataclass(frozen=True)
class ExactTotal:
    """The non-null values of one column in one group.

    Attributes:
        total: their sum, rounded once (0.0 when there are none; inf, -inf or nan
            when a value is not finite, as IEEE addition gives them).
        count: how many there are.
        rows: the group's rows, nulls included.
        mean: ``total / count`` rounded once from the exact sum (nan when count is 0).
    """

    total: float
    count: int
    rows: int
    mean: float


def exact_totals(
    frame: DataFrame, columns: Sequence[str], keys: Sequence[str] = ()
) -> dict[tuple[str | None, ...], dict[str, ExactTotal]]:
    """Exact sums, counts and means of the non-null values of ``columns`` (numeric)
    per distinct value of ``keys`` (as text; no keys: one group, ``()``), in one job.

    Only groups with at least one row appear; a column without a non-null value in a
    group has count 0.

    Example::

        >>> # on Spark: rows (a, 0.1), (a, 0.2), (a, 0.3), (b, None)
        >>> # exact_totals(df, ["x"], ["k"])[("a",)]["x"].mean == 0.2; [("b",)]["x"].count == 0
    """
    from pyspark.sql import functions as F

    key_names = [f"_k{i}" for i in range(len(keys))]
    value_names = [f"_v{i}" for i in range(len(columns))]
    projected = frame.select(
        *(F.col(k).cast("string").alias(n) for k, n in zip(keys, key_names, strict=True)),
        *(F.col(c).cast("double").alias(n) for c, n in zip(columns, value_names, strict=True)),
    )
    schema = ", ".join(
        [*(f"{n} string" for n in key_names), "column int", "n long", "rows long", "total string"]
    )
    partials = projected.mapInArrow(partial_sums_of(key_names, value_names), schema).collect()
    return combine_partials(partials, key_names, columns)


def partial_sums_of(key_names: Sequence[str], value_names: Sequence[str]):
    """The ``mapInArrow`` function of :func:`exact_totals`: per group of the keys in a
    partition and per value column, a row ``keys..., column, n, rows, total``."""
    keys, values = list(key_names), list(value_names)

    def partial_sums(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        received = list(batches)
        if not received or not any(b.num_rows for b in received):
            return
        table = pa.Table.from_batches(received)
        if not keys:  # one group (Arrow's list aggregate needs a key)
            table = table.append_column("_one", pa.repeat(True, table.num_rows))
        by = keys or ["_one"]
        grouped = table.group_by(by, use_threads=False).aggregate([(v, "list") for v in values])
        out: dict[str, list] = {k: [] for k in [*keys, "column", "n", "rows", "total"]}
        for row in range(grouped.num_rows):
            for index, name in enumerate(values):
                listed = grouped.column(f"{name}_list")[row].values
                defined = listed.drop_null().to_numpy(zero_copy_only=False)
                for k in keys:
                    out[k].append(grouped.column(k)[row].as_py())
                out["column"].append(index)
                out["n"].append(len(defined))
                out["rows"].append(len(listed))
                out["total"].append(encode_partial(defined))
        yield pa.record_batch(
            {
                **{k: pa.array(out[k], pa.string()) for k in keys},
                "column": pa.array(out["column"], pa.int32()),
                "n": pa.array(out["n"], pa.int64()),
                "rows": pa.array(out["rows"], pa.int64()),
                "total": pa.array(out["total"], pa.string()),
            }
        )

    return partial_sums


def combine_partials(
    rows: Sequence, key_names: Sequence[str], columns: Sequence[str]
) -> dict[tuple[str | None, ...], dict[str, ExactTotal]]:
    """:func:`exact_totals`' result from the partitions' partial rows."""
    counts: dict[tuple, list[int]] = {}
    group_rows: dict[tuple, int] = {}
    partials: dict[tuple, list[list[str]]] = {}
    for row in rows:
        key = tuple(row[k] for k in key_names)
        if key not in counts:
            counts[key] = [0] * len(columns)
            partials[key] = [[] for _ in columns]
            group_rows[key] = 0
        if row["column"] == 0:
            group_rows[key] += int(row["rows"])
        counts[key][row["column"]] += int(row["n"])
        partials[key][row["column"]].append(row["total"])
    return {
        key: {
            column: _total(partials[key][i], counts[key][i], group_rows[key])
            for i, column in enumerate(columns)
        }
        for key in counts
    }


def _total(partials: list[str], count: int, rows: int) -> ExactTotal:
    """The exact total and mean of a column's partial sums."""
    total = sum_partials(partials)
    if isinstance(total, float):  # an infinity or NaN
        return ExactTotal(total, count, rows, total / count if count else math.nan)
    mean = float(total / count) if count else math.nan
    return ExactTotal(float(total), count, rows, mean)


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
