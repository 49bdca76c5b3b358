"""Exact per-run sums: partials from any split of the rows combine to the same, correctly
rounded value (checked against Python's exact rational arithmetic)."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import pairwise

import numpy as np
import pyarrow as pa
import pytest

from sparkeval.engine.worker.exact_summary import (
    combine,
    encode_partial,
    exact_double_sum,
    partition_sums,
    sum_partials,
    to_float,
)
from sparkeval.measures.names import parse_measures


def exact(values) -> Fraction:
    return sum((Fraction(v) for v in values), Fraction(0))


@pytest.mark.parametrize("seed", range(20))
def test_exact_sum_equals_rational_sum(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(int(rng.integers(0, 2000))) * 10.0 ** float(
        rng.integers(-300, 300)
    )
    values[::5] = 0.0
    if len(values) > 3:
        values[1], values[2] = 5e-324, -2.2250738585072014e-308  # subnormal, smallest normal
    n, e = exact_double_sum(values)
    assert Fraction(n) * Fraction(2) ** e == exact(values.tolist())
    assert to_float((n, e)) == float(exact(values.tolist()))


def wide(run_ids, values, evaluated=None) -> pa.Table:
    k = len(run_ids)
    evaluated = [v is not None for v in values] if evaluated is None else evaluated
    return pa.table(
        {
            "run_id": run_ids,
            "query_id": [f"q{i}" for i in range(k)],
            "in_run": [True] * k,
            "in_qrels": [True] * k,
            "evaluated": evaluated,
            "ret_rows": [3] * k,
            "beyond_depth": [1] * k,
            "qrels_rows": [2] * k,
            "rank_gaps": [0] * k,
            "m0": pa.array(values, pa.float64()),
            "m1": pa.array(values, pa.float64()),
            "m2": pa.array(values, pa.float64()),
        }
    )


def test_partials_of_any_split_give_the_correctly_rounded_mean() -> None:
    measures = parse_measures(["AP", "NumRet", "gm_map"])  # mean, sum, geometric mean
    rng = np.random.default_rng(7)
    values = (rng.random(997) ** 3).tolist()
    values[10] = 0.0  # floored at 1e-5 by the geometric mean
    runs = ["a" if i % 3 else "b" for i in range(len(values))]
    results = []
    for cuts in ([], [500], [1, 2, 3, 400, 996]):
        bounds = [0, *cuts, len(values)]
        partials = []
        for lo, hi in pairwise(bounds):
            batch = partition_sums(wide(runs[lo:hi], values[lo:hi]), measures)
            partials += batch.to_pylist()
        results.append(combine(partials, measures))
    assert results[0] == results[1] == results[2]
    for run in ("a", "b"):
        mine = [v for v, r in zip(values, runs, strict=True) if r == run]
        stats = results[0][run]
        assert stats["v0"] == float(exact(mine) / len(mine))
        assert stats["v1"] == float(exact(mine))
        logs = [math.log(max(v, 1e-5)) for v in mine]
        assert stats["v2"] == math.exp(float(exact(logs) / len(logs)))
        assert stats["evaluated"] == len(mine) and stats["rows_read"] == 3 * len(mine)
        assert stats["rows_beyond_depth"] == len(mine) and stats["qrels_rows"] == 2 * len(mine)


def test_undefined_values_and_infinities() -> None:
    measures = parse_measures(["AP"])
    table = wide(["r", "r", "r"], [None, None, None], evaluated=[True, True, False])
    stats = combine(partition_sums(table, measures).to_pylist(), measures)["r"]
    assert stats["v0"] is None and stats["u0"] == 2 and stats["evaluated"] == 2
    assert stats["rows_in_unevaluated_queries"] == 3
    table = wide(["r", "r"], [1.0, math.inf])
    assert combine(partition_sums(table, measures).to_pylist(), measures)["r"]["v0"] == math.inf


def test_partials_with_infinities_and_nan_sum_as_ieee_addition_does() -> None:
    exact_part = encode_partial(np.array([0.1, 0.2]))
    assert sum_partials([exact_part, encode_partial(np.array([0.3]))]) == exact([0.1, 0.2, 0.3])
    assert sum_partials([exact_part, encode_partial(np.array([math.inf]))]) == math.inf
    # +inf in one partition and -inf in another: NaN, as inf + -inf is
    opposite = [encode_partial(np.array([math.inf])), encode_partial(np.array([-math.inf, 1.0]))]
    assert math.isnan(sum_partials(opposite))
    assert math.isnan(sum_partials([exact_part, encode_partial(np.array([math.nan]))]))
