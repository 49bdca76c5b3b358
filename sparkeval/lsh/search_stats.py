"""What every similarity search shares and reports, without Spark: the hot-bucket cap,
the exact threshold fraction, stage timings and the bucket entries of a summary.

The Spark stages (:mod:`sparkeval.lsh.similar`, :mod:`sparkeval.lsh.candidates`) and
the driver and local stages (:mod:`sparkeval.lsh.driver_sets`,
:mod:`sparkeval.lsh.local_near_duplicates`) take them from here, so a search in this
process imports no pyspark.

Example:
    >>> check_max_bucket(0) is None, threshold_fraction(0.8)
    (True, Fraction(4, 5))
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from sparkeval.errors import ConfigError

#: default cap on the members of one bucket (a full bucket makes ~2 million pairs)
DEFAULT_MAX_BUCKET = 2000


def check_max_bucket(max_bucket: int | None) -> int | None:
    """Validate the bucket cap: an integer >= 2, or ``None``/0 for no cap."""
    if max_bucket is None or max_bucket == 0:
        return None
    if isinstance(max_bucket, bool) or not isinstance(max_bucket, int) or max_bucket < 2:
        raise ConfigError(
            f"max_bucket must be an integer >= 2 (or 0 for no cap), got {max_bucket!r}"
        )
    return max_bucket


def threshold_fraction(threshold: float | str) -> Fraction:
    """The threshold as an exact fraction of its shortest decimal form.

    Example:
        >>> threshold_fraction(0.8)
        Fraction(4, 5)
    """
    text = threshold if isinstance(threshold, str) else repr(float(threshold))
    frac = Fraction(text)
    if frac.denominator > 10**9:
        frac = frac.limit_denominator(10**9)
    return frac


def record_lap(stats: dict[str, Any], name: str, start: float) -> float:
    """Record the seconds since ``start`` as stage ``name``'s time; returns now."""
    now = time.perf_counter()
    stats.setdefault("timings_s", {})[name] = round(now - start, 3)
    return now


def bucket_report(stats: Mapping[str, Any]) -> dict[str, Any]:
    """The ``largest_bucket`` and ``skipped_by_max_bucket`` entries of a summary."""
    return {
        "largest_bucket": stats.get("largest_bucket", 0),
        "skipped_by_max_bucket": {
            "buckets": stats.get("skipped_buckets", 0),
            "members": stats.get("skipped_members", 0),
            "pairs": stats.get("skipped_pairs", 0),
        },
    }
