"""Order-independent sums of double columns in Spark::


A floating-point sum depends on the order of its terms, so a plain ``F.sum`` of
doubles can change with partitioning.  Here every term x is scaled by a power of
two, 2^-m (exact in binary floating point), rounded once to ``decimal(38,18)``
(a per-row, order-free step) and summed exactly in decimal; the result is
``float(sum) * 2^m``.  The exponent m is chosen from an upper bound B of the
absolute sum (for instance rows × largest term) so that B·2^-m < 10^19, which
keeps the decimal sum inside its 20 integer digits and leaves about 37 significant
digits relative to B.

Example (on Spark)::

    m = scale_exponent(1e6)
    row = df.agg(exact_decimal_sum(F.col("x"), m).alias("s")).first()
    total = from_decimal(row["s"], m)
"""

from __future__ import annotations

import math
from decimal import Decimal

DECIMAL = "decimal(38,18)"
_LIMIT = 1e19
_MIN_EXPONENT = -900
_MAX_EXPONENT = 1000  # doubles reach 2^1024: B * 2^-m < 10^19 needs m <= 961


def scale_exponent(bound: float) -> int:
    """The exponent m for terms whose absolute sum is at most ``bound``.

    Returns 0 for a zero or non-finite bound (a non-finite bound means the sum is
    not finite either; :func:`exact_decimal_sum` then sums plain doubles).
    """
    if not math.isfinite(bound) or bound <= 0:
        return 0
    m = math.ceil(math.log2(bound / _LIMIT))
    return min(max(m, _MIN_EXPONENT), _MAX_EXPONENT)


def exact_decimal_sum(column, m: int, finite: bool = True):
    """Spark aggregate: the exact decimal sum of ``column * 2^-m``.

    Args:
        column: a double column expression (nulls are skipped, as in ``sum``).
        m: the exponent from :func:`scale_exponent`.
        finite: False when the terms may be infinite; the plain double sum is used.
    """
    from pyspark.sql import functions as F

    if not finite:
        return F.sum(column)
    return F.sum((column * F.lit(math.ldexp(1.0, -m))).cast(DECIMAL))


def from_decimal(value: Decimal | float | None, m: int) -> float:
    """The double value of a sum returned by :func:`exact_decimal_sum` (0.0 for an empty sum)."""
    if value is None:
        return 0.0
    if isinstance(value, float):
        return value
    return math.ldexp(float(value), m)
