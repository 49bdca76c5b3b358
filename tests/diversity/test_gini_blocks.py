"""The Gini of exposure from (exposure, items) blocks against its textbook formula."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import numpy as np

from sparkeval.diversity.coverage import gini_of_blocks


def _gini_by_positions(values: list[int]) -> Fraction | None:
    """G = sum_k (2k - m - 1) x_k / (m sum_k x_k), x sorted ascending, k = 1..m."""
    xs = sorted(values)
    m, total = len(xs), sum(xs)
    if not m or not total:
        return None
    return Fraction(sum((2 * k - m - 1) * x for k, x in enumerate(xs, start=1)), m * total)


def test_blocks_give_the_gini_of_the_values_they_stand_for():
    rng = np.random.default_rng(4)
    for _ in range(200):
        values = [int(v) for v in rng.integers(0, 6, int(rng.integers(1, 40)))]
        blocks = list(Counter(values).items())
        assert gini_of_blocks(blocks) == _gini_by_positions(values)


def test_equal_exposure_is_0_and_no_exposure_is_undefined():
    assert gini_of_blocks([(3, 5)]) == 0
    assert gini_of_blocks([(0, 4)]) is None
    assert gini_of_blocks([]) is None
    # one item holds all exposure among 4: (0 + 0 + 0 + 3·x) / (4 x) = 3/4
    assert gini_of_blocks([(0, 3), (7, 1)]) == Fraction(3, 4)
