"""Spark's size estimate of a Spark Connect DataFrame, read from its cost plan.

A classic DataFrame hands over its plan's statistics in the driver's JVM
(:func:`~sparkeval.engine.plans.spark_engine.plan_bytes`). A Connect DataFrame has no
JVM handle here, but the server explains its plan with the same statistics
(``explain(mode="cost")``, one request): the optimised plan's first line ends with
``Statistics(sizeInBytes=2.7 KiB, rowCount=50)``. Spark prints the size with one
decimal of a binary unit, so the figure read back is rounded, which is close enough to
choose a plan by (the driver path, the number of buckets).

Example:
    >>> cost_plan_bytes(
    ...     "== Optimized Logical Plan ==\\n"
    ...     "LocalRelation [a#1], Statistics(sizeInBytes=2.7 KiB, rowCount=50)\\n"
    ... )
    2764
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sparkeval.engine.plans.driver_plan import UNKNOWN_BYTES
from sparkeval.engine.plans.local_rows import client_table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: binary units as Spark prints them, by their power of two
_UNITS = {"B": 0, "KiB": 10, "MiB": 20, "GiB": 30, "TiB": 40, "PiB": 50, "EiB": 60}
_SIZE = re.compile(r"Statistics\(sizeInBytes=([0-9.]+(?:E[+-]?[0-9]+)?) (B|[KMGTPE]iB)\b")
_OPTIMIZED = "== Optimized Logical Plan =="


def remote_plan_bytes(frame: DataFrame) -> int | None:
    """The size estimate of a Connect DataFrame's optimised plan, asked of the server;
    None when the frame cannot explain itself so, or the answer has no estimate.

    A frame of local data the client holds (:func:`~sparkeval.engine.plans.local_rows.
    client_table`) is not asked about: its estimate is its Arrow table's size.
    """
    held = client_table(frame)
    if held is not None:
        return held.nbytes
    explain = getattr(frame, "_explain_string", None)
    if explain is None:
        return None
    try:
        return cost_plan_bytes(explain(mode="cost"))
    except Exception:  # a server or a version that explains otherwise
        return None


def cost_plan_bytes(text: str) -> int | None:
    """The root's size estimate in an explained cost plan (bytes, at most
    :data:`~sparkeval.engine.plans.driver_plan.UNKNOWN_BYTES`, what Spark prints as
    8.0 EiB for an estimate it does not have), or None when the text holds none.

    Example:
        >>> cost_plan_bytes("== Optimized Logical Plan ==\\nX, Statistics(sizeInBytes=8.0 EiB)")
        9223372036854775807
        >>> cost_plan_bytes("== Physical Plan ==\\nLocalTableScan [a#1]") is None
        True
    """
    _, marker, optimized = text.partition(_OPTIMIZED)
    match = _SIZE.search(optimized) if marker else None
    if match is None:
        return None
    value, unit = float(match.group(1)), match.group(2)
    return min(int(value * (1 << _UNITS[unit])), UNKNOWN_BYTES)
