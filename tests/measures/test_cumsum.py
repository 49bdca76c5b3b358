"""grouped_cumsum gives the bits of pandas' grouped cumsum (compensated summation),
for every shape of groups and values the measures pass it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sparkeval.measures import cumsum
from sparkeval.measures.cumsum import LONGEST_LAYERED, grouped_cumsum


def pandas_cumsum(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    series = pd.Series(np.asarray(values, dtype=np.float64))
    return series.groupby(np.asarray(groups), sort=False).cumsum().to_numpy()


def assert_same_bits(values, groups) -> None:
    got = grouped_cumsum(np.asarray(values, dtype=np.float64), np.asarray(groups))
    want = pandas_cumsum(values, groups)
    assert got.dtype == np.float64
    assert got.tobytes() == want.tobytes(), (values, groups, got, want)


def random_values(rng: np.random.Generator, kind: str, n: int) -> np.ndarray:
    if kind == "uniform":
        return rng.random(n)
    if kind == "integers":
        return rng.integers(-5, 5, n).astype(np.float64)
    if kind == "cancelling":  # compensation matters (pandas' own test of GH 38934)
        return rng.choice([1e16, -5e15, 97.0, 1e-8, -0.0, 0.0, 3.3], n)
    if kind == "discounted":  # DCG-like gains over log2 discounts
        return rng.integers(0, 4, n) / np.log2(np.arange(n) + 2.0)
    if kind == "signed zeros":
        return np.where(rng.random(n) < 0.2, -0.0, rng.integers(0, 3, n).astype(np.float64))
    return rng.normal(size=n) * 10.0 ** rng.integers(-20, 20, n)  # wide magnitudes


KINDS = ["uniform", "integers", "cancelling", "discounted", "signed zeros", "wide"]
SHAPES = ["equal lengths", "similar lengths", "skewed lengths"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", SHAPES)
def test_random_groups_match_pandas(kind: str, shape: str) -> None:
    rng = np.random.default_rng([KINDS.index(kind), SHAPES.index(shape)])
    for _ in range(60):
        n_groups = int(rng.integers(1, 40))
        if shape == "equal lengths":
            lengths = np.full(n_groups, int(rng.integers(1, 120)))
        elif shape == "similar lengths":
            lengths = rng.integers(50, 150, n_groups)
        else:  # one table per length class
            lengths = rng.choice([1, 2, 5, 30, 200, 2500], n_groups)
        labels = np.sort(rng.choice(10**6, n_groups, replace=False))
        groups = np.repeat(labels, lengths)
        assert_same_bits(random_values(rng, kind, len(groups)), groups)


def test_pandas_cancellation_example() -> None:
    # the data of pandas' test for compensated grouped cumsum (GH 38934), one group each
    data = [1e16, 1e16, 97, 98, -5e15, -5e15, -5e15, -5e15]
    got = grouped_cumsum(np.array(data, dtype=np.float64), np.array([1, 1, 1, 1, 2, 2, 2, 2]))
    # by hand: compensated sums; 1e16 + 1e16 + 97 is 2e16 + 96 in plain float64, and the
    # compensation carries the 1 that plain summation loses (+ 98: 2e16 + 196)
    assert got.tolist() == [1e16, 2e16, 2e16 + 96, 2e16 + 196, -5e15, -1e16, -1.5e16, -2e16]
    assert_same_bits(data, [1, 1, 1, 1, 2, 2, 2, 2])


@pytest.mark.parametrize(
    "values, groups",
    [
        ([-0.0, 1.0], [0, 1]),  # a group of one -0.0 sums to +0.0
        ([-0.0, -0.0, 2.5], [0, 0, 0]),
        ([np.inf, 1.0, 2.0, -np.inf, 0.5], [0, 0, 0, 1, 1]),
        ([np.inf, 1.0, 2.0, -np.inf, 0.5], [0, 0, 0, 1, 2]),
        ([1.5, np.nan, 2.0, 3.0], [0, 0, 0, 1]),  # NaN: pandas' own rule
        ([1.0, 2.0, 3.0, 4.0], [5, 5, 1, 5]),  # labels not in runs: pandas' own rule
        ([0.1, 0.2], [3, 3]),
        ([], []),
    ],
)
def test_edge_values_match_pandas(values, groups) -> None:
    assert_same_bits(np.array(values, dtype=np.float64), np.array(groups, dtype=np.int64))


def test_groups_longer_than_the_layered_limit_match_pandas() -> None:
    rng = np.random.default_rng(7)
    lengths = np.array([LONGEST_LAYERED + 5, 3, 40])
    groups = np.repeat(np.arange(3), lengths)
    assert_same_bits(rng.random(len(groups)), groups)


def test_each_numpy_form_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shapes above reach the integer form, one table and tables per class, and
    pandas is left only the shapes it is kept for."""
    taken: list[str] = []
    for name in ("_pandas_cumsum", "_kahan_table"):
        original = getattr(cumsum, name)

        def spy(*args, _original=original, _name=name):
            taken.append(_name)
            return _original(*args)

        monkeypatch.setattr(cumsum, name, spy)
    grouped_cumsum(np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1]))
    assert taken == []  # whole numbers: one global cumsum
    grouped_cumsum(np.array([0.1, 0.2, 0.3]), np.array([0, 0, 1]))
    assert taken == ["_kahan_table"]
    taken.clear()
    lengths = [1] * 10 + [1000]  # padding all to 1000 would be 11,000 cells for 1,010 values
    grouped_cumsum(np.full(1010, 0.1), np.repeat(np.arange(11), lengths))
    assert taken == ["_kahan_table", "_kahan_table"]  # two length classes
    taken.clear()
    grouped_cumsum(np.array([0.1, np.nan]), np.array([0, 0]))
    assert taken == ["_pandas_cumsum"]
