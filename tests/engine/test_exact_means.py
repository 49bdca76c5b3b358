"""Order-free sums and means in Spark: the same bits for every partitioning.

Expected values come from Python's exact rationals (``fractions.Fraction``) and
``math.fsum``, never from the code under test; each check runs over several
partitionings of the same rows, which a plain ``F.sum`` of doubles would not survive
(the first test shows that it does not).
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from pyspark.sql import functions as F

from sparkeval.diversity.evaluate import evaluate_diversity
from sparkeval.engine.plans.exact import exact_totals
from sparkeval.exact_means import bounded_mean, bounded_totals
from sparkeval.spark import session_settings

pytestmark = pytest.mark.spark

#: terms whose float sum depends on their order: large ones cancel, small ones survive
_TERMS = [1e16, 1.0, -1e16, 1.0, 0.1, 3.3e-5, 1e16, -1e16, 0.7, 2.5]


def _frame(spark, values, keys=None, partitions=1, seed=0):
    """A frame of ``values`` (and ``keys``) in ``partitions`` partitions, shuffled."""
    rows = list(zip(keys or ["k"] * len(values), values, strict=True))
    random.Random(seed).shuffle(rows)
    return spark.createDataFrame(rows, "k string, x double").repartition(partitions)


def _exact_mean(values) -> float:
    defined = [v for v in values if v is not None]
    return float(sum(map(Fraction, defined), Fraction(0)) / len(defined))


def test_plain_sum_depends_on_order_and_exact_totals_do_not(spark):
    sums, totals = set(), set()
    for partitions, seed in [(1, 0), (3, 1), (4, 2), (7, 3)]:
        frame = _frame(spark, _TERMS * 40, partitions=partitions, seed=seed)
        sums.add(frame.agg(F.sum("x")).first()[0])
        found = exact_totals(frame, ["x"])[()]["x"]
        totals.add((found.total, found.mean, found.count, found.rows))
    assert len(sums) > 1  # the plain sum moves with the partitioning ...
    exact = sum(map(Fraction, _TERMS * 40), Fraction(0))
    # ... the exact one is the rational sum rounded once, every time
    assert totals == {(float(exact), float(exact / 400), 400, 400)}
    assert float(exact) == math.fsum(_TERMS * 40)


def test_groups_nulls_and_values_that_are_not_finite(spark):
    keys = ["a"] * 4 + ["b"] * 2 + ["c"] * 2 + ["d"] * 3 + [None]
    values = [0.1, 0.2, 0.3, None, None, None, math.inf, 1.0, math.inf, -math.inf, 5.0, 2.0]
    for partitions in (1, 5):
        found = exact_totals(_frame(spark, values, keys, partitions), ["x"], ["k"])
        assert set(found) == {("a",), ("b",), ("c",), ("d",), (None,)}
        a = found[("a",)]["x"]
        assert (a.count, a.rows, a.mean) == (3, 4, _exact_mean([0.1, 0.2, 0.3]))
        assert a.mean == 0.2  # left to right, 0.1 + 0.2 + 0.3 is 0.6000000000000001
        b = found[("b",)]["x"]
        assert (b.total, b.count, b.rows) == (0.0, 0, 2) and math.isnan(b.mean)
        assert found[("c",)]["x"].total == math.inf
        assert math.isnan(found[("d",)]["x"].total)  # inf + -inf
        assert found[(None,)]["x"].mean == 2.0


def test_several_columns_in_one_job(spark):
    frame = spark.createDataFrame(
        [("r", 1.0, None), ("r", 2.0, 1.0), ("s", None, 3.0)], "run string, u double, v double"
    )
    found = exact_totals(frame, ["u", "v"], ["run"])
    assert found[("r",)]["u"].mean == 1.5 and found[("r",)]["v"].count == 1
    assert found[("s",)]["u"].count == 0 and found[("s",)]["v"].total == 3.0
    # an empty frame has no group
    assert exact_totals(frame.where("run = 'none'"), ["u"]) == {}


def test_bounded_mean_is_the_same_for_every_partitioning(spark):
    rng = np.random.default_rng(8)
    values = [float(v) for v in rng.uniform(-1, 1, 400)] + [None] * 3
    keys = [f"g{i % 4}" for i in range(len(values))]
    seen = set()
    for partitions, seed in [(1, 0), (5, 1), (11, 2)]:
        frame = _frame(spark, values, keys, partitions, seed)
        rows = frame.groupBy("k").agg(bounded_mean("x", 1.0).alias("m")).collect()
        seen.add(tuple(sorted((r["k"], r["m"]) for r in rows)))
    assert len(seen) == 1
    for key, mean in seen.pop():
        group = [v for v, k in zip(values, keys, strict=True) if k == key and v is not None]
        assert mean == pytest.approx(_exact_mean(group), rel=1e-15, abs=1e-17)
    rows = [("a", 0.1), ("a", 0.2), ("a", 0.3), ("n", math.nan), ("n", 0.5), ("e", None)]
    odd = spark.createDataFrame([*rows, ("b", 0.5), ("b", 1.5)], "k string, x double")
    found = dict(odd.groupBy("k").agg(bounded_mean("x", 1.0).alias("m")).collect())
    assert found["a"] == 0.6 / 3  # the exact sum rounds to 0.6
    assert math.isnan(found["n"]) and found["e"] is None
    assert math.isnan(found["b"])  # a value beyond the bound


def test_bounded_totals_are_the_same_for_every_partitioning(spark):
    rng = np.random.default_rng(9)
    values = [float(v) for v in rng.uniform(-2, 2, 500)] + [None] * 4
    seen = set()
    for partitions, seed in [(1, 0), (6, 1), (13, 2)]:
        frame = _frame(spark, values, partitions=partitions, seed=seed)
        found = bounded_totals(frame, {"x": 2.0})["x"]
        seen.add((found.total, found.mean, found.count, found.rows))
    assert len(seen) == 1
    total, mean, count, rows = seen.pop()
    defined = [v for v in values if v is not None]
    assert (count, rows) == (500, 504)
    # each term is cut below 2^-61: the sum is the exact one to far below a double's ulp
    assert total == pytest.approx(math.fsum(defined), rel=1e-15, abs=1e-16)
    assert mean == pytest.approx(_exact_mean(defined), rel=1e-15, abs=1e-17)
    small = spark.createDataFrame([(0.1,), (0.2,), (0.3,), (None,)], "x double")
    found = bounded_totals(small, {"x": 1.0})["x"]
    assert (found.total, found.mean, found.count, found.rows) == (0.6, 0.2, 3, 4)
    odd = spark.createDataFrame([(0.5, 1.0), (math.nan, 3.0)], "x double, y double")
    found = bounded_totals(odd, {"x": 1.0, "y": 2.0})
    assert math.isnan(found["x"].total)  # a NaN: the IEEE sum
    assert found["y"].total == 4.0  # beyond the bound: the IEEE sum


def _partitioned(partitions: int) -> dict[str, str]:
    """Session settings: ``partitions`` shuffle partitions, kept as they are."""
    return {"spark.sql.shuffle.partitions": str(partitions), "spark.sql.adaptive.enabled": "false"}


def _diversity(spark, lists, train, partitions, **options):
    with session_settings(spark, _partitioned(partitions)):
        cached = lists.select("*")
        per_user, summary = evaluate_diversity(spark, cached, train=train, **options)
        rows = per_user.toPandas().sort_values("query_id").reset_index(drop=True)
        per_user.unpersist()
        cached.unpersist()
    return rows, summary


def test_diversity_values_do_not_depend_on_shuffle_partitions(spark):
    rng = np.random.default_rng(11)
    users, items = 120, 60
    lists = pd.DataFrame(
        [(f"u{u}", f"i{i}") for u in range(users) for i in rng.choice(items, 8, replace=False)],
        columns=["query_id", "doc_id"],
    )
    train = pd.DataFrame(
        {"query_id": [f"u{u}" for u in rng.integers(0, users, 900)],
         "doc_id": [f"i{i}" for i in rng.integers(0, items, 900)]}
    ).drop_duplicates()  # fmt: skip
    lists_df = spark.createDataFrame(lists).repartition(5)
    train_df = spark.createDataFrame(train).repartition(3)
    first_rows, first = _diversity(spark, lists_df, train_df, 3)
    second_rows, second = _diversity(spark, lists_df, train_df, 37)
    pd.testing.assert_frame_equal(first_rows, second_rows, check_exact=True)
    assert first == second
    assert first["inter_user"]["mean_jaccard"]["method"] == "exact"
    # the sampled mean Jaccard draws the same user pairs for every partitioning
    sampled = [
        _diversity(spark, lists_df, train_df, n, exact_pair_limit=0, sample_pairs=400)[1]
        for n in (2, 23)
    ]
    assert sampled[0]["inter_user"]["mean_jaccard"]["method"] == "sampled"
    assert sampled[0]["inter_user"] == sampled[1]["inter_user"]
    # the overall novelty is the exact mean of the per-row novelties Spark computed
    from sparkeval.diversity.coverage import item_novelty

    scored = spark.createDataFrame(lists).join(item_novelty(train_df), "doc_id", "left")
    terms = [v for v in scored.toPandas()["novelty"] if not pd.isna(v)]
    assert first["novelty"]["novelty"] == _exact_mean(terms)


def test_compare_means_are_the_evaluation_means_for_every_partitioning(spark):
    """The run means ``compare`` reports are those ``evaluate`` reports, to the bit (both
    exact), and its rank-distance and exposure summaries do not move with partitioning."""
    from sparkeval import evaluate
    from sparkeval.compare.pipeline import CompareOptions, compare

    rng = np.random.default_rng(3)
    ranked = [
        (r, f"q{q}", f"d{d}", float(rng.random()))
        for r in ("base", "x", "y")
        for q in range(150)
        for d in rng.choice(90, 12, replace=False)
    ]
    run = pd.DataFrame(ranked, columns=["run_id", "query_id", "doc_id", "score"])
    judged = [
        (f"q{q}", f"d{d}", int(rng.integers(0, 3))) for q in range(150) for d in rng.choice(90, 15)
    ]
    qrels = pd.DataFrame(judged, columns=["query_id", "doc_id", "relevance"])
    qrels = qrels.drop_duplicates(["query_id", "doc_id"])
    measures = ["AP", "nDCG@10", "P@5", "RR"]
    evaluated = evaluate(None, run, qrels, measures)
    expected = {(r.run_id, r.measure): r.value for r in evaluated.summary.itertuples()}
    per_query = spark.createDataFrame(evaluated.per_query).repartition(4)
    runs = spark.createDataFrame(run).repartition(3)
    results = []
    for partitions in (3, 41):
        with session_settings(spark, _partitioned(partitions)):
            result = compare(spark, per_query, CompareOptions(baseline="base", k=5), runs, False)
            results.append(result)
            result.deltas.unpersist()
    means = {(r, m): v for r, by in results[0].run_means().items() for m, v in by.items()}
    assert means == expected
    assert results[0].run_summary == results[1].run_summary
    assert results[0].rank_distance_summary == results[1].rank_distance_summary
    assert results[0].exposure == results[1].exposure
    pd.testing.assert_frame_equal(results[0].comparison, results[1].comparison, check_exact=True)
