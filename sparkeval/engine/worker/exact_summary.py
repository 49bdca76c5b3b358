"""The ``all`` values: exact, order-free per-run sums of the per-query rows.

Every finite double is ``m · 2^e`` with an integer ``m`` of at most 53 bits, so a sum
of doubles is held exactly as one integer times a power of two.  Each partition of
the per-query rows is reduced in its Python worker to per-run partial sums in that
form (:func:`partition_sums`); the driver adds the partials as Python integers and
rounds once (:func:`combine`).  The result does not depend on partitioning, row
order or the number of executors, and it is the correctly rounded mean of the
values as computed, e.g.::

    >>> exact_double_sum(np.array([0.1, 0.2, 0.3]))
    (43234556422756762, -56)
    >>> to_float(exact_double_sum(np.array([0.1, 0.2, 0.3])))  # float addition: 0.6000000000000001
    0.6
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.formats import interval_key, square_sum_key, undefined_count_key, value_sum_key
from sparkeval.measures import GMEAN_FLOOR, Measure

#: the per-run counts of the report, from the flag and count columns of the wide rows
COUNT_KEYS = (
    "evaluated",
    "in_both",
    "in_run_only",
    "in_qrels_only",
    "rows_read",
    "rows_beyond_depth",
    "rows_in_unevaluated_queries",
    "qrels_rows",
    "rank_gaps",
)
_HALF = 26  # mantissas are split into two halves so that int64 sums cannot overflow


def exact_double_sum(values: np.ndarray) -> tuple[int, int]:
    """``(n, e)`` with ``sum(values) == n · 2^e`` exactly (finite float64 values)."""
    if len(values) == 0:
        return 0, 0
    fraction, exponent = np.frexp(values)
    mantissa = (fraction * 2.0**53).astype(np.int64)  # exact: 53 significant bits
    exponent = exponent.astype(np.int64) - 53
    order = np.argsort(exponent, kind="stable")
    exponent, mantissa = exponent[order], mantissa[order]
    starts = np.flatnonzero(np.concatenate(([True], exponent[1:] != exponent[:-1])))
    high = np.add.reduceat(mantissa >> _HALF, starts)  # each < 2^27: no overflow below 2^36
    low = np.add.reduceat(mantissa & ((1 << _HALF) - 1), starts)
    base = int(exponent[0])
    total = 0
    for e, h, lo in zip(exponent[starts].tolist(), high.tolist(), low.tolist(), strict=True):
        total += ((h << _HALF) + lo) << (e - base)
    return total, base


def to_float(parts: tuple[int, int]) -> float:
    """``n · 2^e`` rounded once to the nearest double."""
    return float(_fraction(parts))


def _fraction(parts: tuple[int, int]) -> Fraction:
    n, e = parts
    return Fraction(n) * Fraction(2) ** e


def encode_partial(values: np.ndarray) -> str:
    """A partial sum as text: ``"n:e"`` when exact, else the float sum (inf or nan)."""
    values = values.astype(np.float64, copy=False)
    if np.isfinite(values).all():
        n, e = exact_double_sum(values)
        return f"{n}:{e}"
    return repr(float(values.sum()))


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


def total_of(partials: Sequence[str], count: int, rows: int) -> ExactTotal:
    """The exact total and mean of :func:`encode_partial` texts of ``count`` values
    (``rows``: the group's rows, nulls included)."""
    total = sum_partials(partials)
    if isinstance(total, float):  # an infinity or NaN
        return ExactTotal(total, count, rows, total / count if count else math.nan)
    mean = float(total / count) if count else math.nan
    return ExactTotal(float(total), count, rows, mean)


def exact_total(values: np.ndarray, rows: int | None = None) -> ExactTotal:
    """The :class:`ExactTotal` of the non-NaN ``values``, in this process: the same
    total and mean :func:`sparkeval.engine.plans.exact.exact_totals` gives on Spark
    for these values (a NaN there is a null; ``rows`` defaults to ``len(values)``).

    Example:
        >>> exact_total(np.array([0.1, 0.2, 0.3, np.nan])).mean
        0.2
    """
    values = np.asarray(values, dtype=np.float64)
    defined = values[~np.isnan(values)]
    return total_of([encode_partial(defined)], len(defined), len(values) if rows is None else rows)


def partition_sums(table: pa.Table, measures: Sequence[Measure]) -> pa.RecordBatch:
    """Per-run partial counts and sums of one partition of the per-query (wide) rows.

    Rows ``run_id, key, count, total``: a count key of :data:`COUNT_KEYS`; ``v{i}``
    with the number of defined values of measure i and their exact sum (of logs for
    a geometric mean); ``s{i}``, the exact sum of their squares (each square rounded
    once), for a measure averaged by its mean; ``u{i}``, the evaluated queries where
    measure i is undefined.
    """
    from sparkeval.formats import measure_column

    runs, keys, counts, totals = [], [], [], []

    def emit(run: str, key: str, count: int, total: str = "") -> None:
        runs.append(run)
        keys.append(key)
        counts.append(count)
        totals.append(total)

    run_ids = table.column("run_id")
    for run in pc.unique(run_ids).to_pylist():
        rows = table.filter(pc.equal(run_ids, run))
        ev = rows.column("evaluated").to_numpy(zero_copy_only=False)
        in_run = rows.column("in_run").to_numpy(zero_copy_only=False)
        in_qrels = rows.column("in_qrels").to_numpy(zero_copy_only=False)
        ret = rows.column("ret_rows").to_numpy()
        for key, value in zip(
            COUNT_KEYS,
            (
                ev.sum(),
                (in_run & in_qrels).sum(),
                (in_run & ~in_qrels).sum(),
                (~in_run & in_qrels).sum(),
                ret.sum(),
                rows.column("beyond_depth").to_numpy()[ev].sum(),
                ret[~ev].sum(),
                rows.column("qrels_rows").to_numpy()[in_qrels].sum(),
                rows.column("rank_gaps").to_numpy()[ev].sum(),
            ),
            strict=True,
        ):
            emit(run, key, int(value))
        for i, m in enumerate(measures):
            column = rows.column(measure_column(i))
            defined = pc.drop_null(column).to_numpy()
            if m.spec.aggregate == "gmean":
                defined = np.log(np.maximum(defined, GMEAN_FLOOR))
            emit(run, value_sum_key(i), len(defined), encode_partial(defined))
            if m.spec.aggregate == "mean":  # for the confidence interval of the mean
                with np.errstate(over="ignore"):
                    emit(run, square_sum_key(i), len(defined), encode_partial(defined * defined))
            emit(
                run,
                undefined_count_key(i),
                int((ev & pc.is_null(column).to_numpy(zero_copy_only=False)).sum()),
            )
    return pa.record_batch(
        {
            "run_id": pa.array(runs, pa.string()),
            "key": pa.array(keys, pa.string()),
            "count": pa.array(counts, pa.int64()),
            "total": pa.array(totals, pa.string()),
        }
    )


def combine(rows: Sequence[Any], measures: Sequence[Measure]) -> dict[str, dict[str, Any]]:
    """Per-run statistics from every partition's partial rows (exact, then rounded once).

    ``v{i}`` is the mean of the defined values (their sum for ``sum`` measures, the
    geometric mean for ``gmean`` ones), None when no value is defined.
    """
    counts: dict[str, dict[str, int]] = {}
    totals: dict[str, dict[str, list[str]]] = {}
    for row in rows:
        run, key = row["run_id"], row["key"]
        counts.setdefault(run, {}).setdefault(key, 0)
        counts[run][key] += int(row["count"])
        if row["total"]:
            totals.setdefault(run, {}).setdefault(key, []).append(row["total"])
    stats: dict[str, dict[str, Any]] = {}
    for run, run_counts in counts.items():
        stat: dict[str, Any] = {k: run_counts.get(k, 0) for k in COUNT_KEYS}
        for i, m in enumerate(measures):
            defined = run_counts.get(value_sum_key(i), 0)
            stat[undefined_count_key(i)] = run_counts.get(undefined_count_key(i), 0)
            stat[value_sum_key(i)] = (
                _value(totals.get(run, {}).get(value_sum_key(i), []), defined, m.spec.aggregate)
                if defined
                else None
            )
            squares = totals.get(run, {}).get(square_sum_key(i))
            stat[interval_key(i)] = (
                _interval(totals[run][value_sum_key(i)], squares, defined)
                if squares is not None and defined >= 2
                else None
            )
        stats[run] = stat
    return stats


def sum_partials(partials: Sequence[str]) -> Fraction | float:
    """The sum of :func:`encode_partial` texts: exact when every one is, else the IEEE
    sum of the infinite and NaN ones (an infinity, or NaN for NaN or inf + -inf)."""
    non_finite = [float(p) for p in partials if ":" not in p]
    if not non_finite:
        return sum((_fraction(_parse(p)) for p in partials), Fraction(0))
    signs = {math.copysign(1.0, v) for v in non_finite if not math.isnan(v)}
    return math.nan if any(map(math.isnan, non_finite)) or len(signs) > 1 else non_finite[0]


#: the confidence level of the intervals of the runs' means
CONFIDENCE = 0.95


def _interval(values: list[str], squares: list[str], n: int) -> tuple[float, float] | None:
    """Student's t interval (:data:`CONFIDENCE`) of the mean of ``n >= 2`` values from
    the partial sums of the values and of their squares (:func:`mean_interval` of the
    sums, each rounded once); None when a value or square is not finite."""
    total, square_total = sum_partials(values), sum_partials(squares)
    if isinstance(total, float) or isinstance(square_total, float):
        return None
    return mean_interval(float(total), float(square_total), n, 1.0 - CONFIDENCE)


def mean_interval(total: float, squares: float, n: int, alpha: float) -> tuple[float, float]:
    """Student's t interval of a mean from the sum and the sum of squares of ``n`` values:
    ``mean ± t(1 - alpha/2, n - 1) · s / sqrt(n)``, ``s² = (Σx² - (Σx)²/n) / (n - 1)``
    (NaN bounds below two values).

    Example: 0.2, 0.4 and 0.9 (sum 1.5, squares 1.01) at alpha 0.05 give
    0.5 ± 4.303 · 0.3606 / 1.732, about (-0.396, 1.396)::

        >>> [round(b, 3) for b in mean_interval(1.5, 1.01, 3, 0.05)]
        [-0.396, 1.396]
    """
    if n < 2 or not (math.isfinite(total) and math.isfinite(squares)):
        return math.nan, math.nan
    from scipy.stats import t

    mean = total / n
    variance = max(0.0, (squares - total * total / n) / (n - 1))
    half = float(t.ppf(1 - alpha / 2, n - 1)) * math.sqrt(variance / n)
    return mean - half, mean + half


def _value(partials: list[str], defined: int, aggregate: str) -> float:
    total = sum_partials(partials)
    mean = float(total if aggregate == "sum" else total / defined)
    return math.exp(mean) if aggregate == "gmean" else mean


def _parse(text: str) -> tuple[int, int]:
    n, e = text.split(":")
    return int(n), int(e)
