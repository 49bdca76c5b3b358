"""What both diversity engines share, without Spark: the similarity names, the bounds
of the exact means, the sampling defaults, the Gini of exposure from its blocks, the
Jaccard bounds, the summary's sampled mean Jaccard and the Arrow schema of
``per_user.parquet``.

The Spark measures (:mod:`~sparkeval.diversity.inter_user`,
:mod:`~sparkeval.diversity.intra_list`, :mod:`~sparkeval.diversity.coverage`) and the
local engine (:mod:`~sparkeval.diversity.local`) take these from here, so that the
two compute the same numbers from the same definitions.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import pyarrow as pa

#: the measure columns of ``per_user.parquet``, after ``run_id, query_id, list_length``
PER_USER_MEASURES = ("inter_user_diversity", "intra_list_diversity", "novelty", "serendipity")


def per_user_schema(id_type: pa.DataType) -> pa.Schema:
    """The Arrow schema both engines write ``per_user.parquet`` in: every column
    nullable, the user ids of ``id_type`` (``large_string`` written as ``string``).

    Example:
        >>> per_user_schema(pa.int64()).field("query_id").type
        DataType(int64)
    """
    kind = pa.string() if pa.types.is_large_string(id_type) else id_type
    return pa.schema(
        [
            pa.field("run_id", pa.string()),
            pa.field("query_id", kind),
            pa.field("list_length", pa.int64()),
            *(pa.field(name, pa.float64()) for name in PER_USER_MEASURES),
        ]
    )


def per_user_schema_of(collected: pa.Schema) -> pa.Schema:
    """:func:`per_user_schema` of the user ids of a collected ``per_user`` table."""
    return per_user_schema(collected.field("query_id").type)


#: the item similarities of intra-list diversity and serendipity (``--similarity``)
SIMILARITIES: tuple[str, ...] = ("cooccurrence", "cosine", "jaccard", "minhash")
#: every similarity lies in [-1, 1]; the means' exact sums allow for rounding beyond it
SIMILARITY_BOUND = 2.0
#: |1 - mean similarity| is at most this: the bound of intra-list diversity, and of a
#: serendipity term per unit of relevance
DISSIMILARITY_BOUND = 1.0 + SIMILARITY_BOUND
#: item novelty -log2(t_i / T) is at most log2 T < 64 (T, the training rows, is a long)
NOVELTY_BOUND = 64.0
#: above this many co-occurring user pairs the mean Jaccard is estimated by sampling
DEFAULT_EXACT_PAIR_LIMIT = 20_000_000
#: user pairs drawn for that estimate
DEFAULT_SAMPLE_PAIRS = 20_000
#: how many ids of recommended items without features the summary names
MISSING_EXAMPLES = 5
#: the 97.5% quantile of the standard normal: the sampled mean Jaccard's 95% interval
Z_975 = 1.959964


def default_similarity(has_train: bool, has_features: bool) -> str | None:
    """``cosine`` with item features, else ``cooccurrence`` with training data."""
    if has_features:
        return "cosine"
    if has_train:
        return "cooccurrence"
    return None


def gini_of_blocks(blocks: Sequence[tuple[int, int]]) -> Fraction | None:
    """The Gini of exposure, exact, from ``(x, c)`` blocks: ``c`` items exposed ``x``
    times each (None without items or exposure).

    Sorted ascending, the items of a block hold positions ``k`` in ``(s, s + c]`` (``s``
    items before it), whose ``2k - 1`` add up to ``(s + c)^2 - s^2``; so
    ``G = (sum_blocks x ((s + c)^2 - s^2) - m sum x) / (m sum x)`` with ``m`` items.

    Example: exposures (1, 2, 2, 1) are blocks (1, 2), (2, 2):
    (1·(4 - 0) + 2·(16 - 4) - 4·6) / (4·6) = 4/24 = 1/6.

    >>> gini_of_blocks([(2, 2), (1, 2)])
    Fraction(1, 6)
    """
    weighted = total = before = 0
    for x, c in sorted(blocks):
        weighted += x * ((before + c) ** 2 - before**2)
        total += x * c
        before += c
    if not before or not total:
        return None
    return Fraction(weighted - before * total, before * total)


def hamming_summary(
    users: int, longest: int, shortest: int, co_pairs: int, cutoff: int | None
) -> tuple[int, dict[str, Any]]:
    """The denominator ``L (n - 1)`` of each user's inter-user Hamming diversity
    ``1 - shared / (L (n - 1))``, and the summary's figures: ``co_pairs`` user pairs
    share an item (counted once per shared item); with ``P = n (n - 1) / 2`` user
    pairs, the mean intersection is ``co_pairs / P`` and the mean diversity
    ``1 - co_pairs / (P L)``; ``L`` is the cutoff, else the longest list.

    Example:
        >>> hamming_summary(3, 2, 2, 1, None)[1]["inter_user_diversity"]
        0.8333333333333334
    """
    big_l = int(cutoff) if cutoff is not None else longest
    user_pairs = users * (users - 1) // 2
    mean_inter = co_pairs / user_pairs if user_pairs else math.nan
    mean_div = 1.0 - mean_inter / big_l if user_pairs and big_l else math.nan
    return big_l * (users - 1), {
        "users": users,
        "list_length_L": big_l,
        "longest_list": longest,
        "shortest_list": shortest,
        "co_occurring_pairs": co_pairs,
        "mean_intersection": mean_inter,
        "inter_user_diversity": mean_div,
    }


def jaccard_bounds(summary: dict[str, Any]) -> list[float]:
    """``[m / (2 Lmax - m), min(1, m / Lmin)]``: bounds of the mean user Jaccard from
    the mean intersection ``m`` and the longest and shortest lists of the inter-user
    ``summary`` (see :mod:`~sparkeval.diversity.inter_user`)."""
    m = summary["mean_intersection"]
    lmax, lmin = summary["longest_list"], summary["shortest_list"]
    return [m / (2 * lmax - m) if lmax else math.nan, min(1.0, m / lmin) if lmin else math.nan]


def sampled_jaccard(values: Sequence[float], bounds: list[float], seed: int) -> dict[str, Any]:
    """The summary of a mean Jaccard estimated from the sampled pairs' ``values``: their
    mean (``statistics.fmean``, an exact sum: the same for any order of the values),
    a normal 95% interval from their standard deviation, and the ``bounds``."""
    n = len(values)
    mean = statistics.fmean(values) if n else math.nan
    sd = statistics.stdev(values) if n > 1 else 0.0
    half = Z_975 * sd / math.sqrt(n) if n > 1 else math.nan
    return {
        "method": "sampled",
        "mean_jaccard": mean,
        "ci95": [max(0.0, mean - half), min(1.0, mean + half)],
        "sampled_pairs": n,
        "bounds": bounds,
        "seed": seed,
    }
