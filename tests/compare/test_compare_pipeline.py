"""The Spark comparison against scipy / brute force on a small per-query table."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from scipy.spatial.distance import jensenshannon

from sparkeval.compare import pipeline
from sparkeval.compare.pipeline import CompareOptions, compare
from sparkeval.errors import ConfigError, InputError

pytestmark = pytest.mark.spark

QUERIES = [f"q{i}" for i in range(1, 9)]
BASE = np.array([0.50, 0.20, 0.90, 0.40, 0.60, 0.30, 0.75, 0.10])
A = np.array([0.55, 0.35, 0.85, 0.40, 0.70, 0.45, 0.80, 0.30])  # q8 missing below
B_AP = np.array([0.10, 0.25, 0.95, 0.35, 0.65, 0.20, 0.70, 0.05])  # q3 undefined below


def _per_query() -> pd.DataFrame:
    rows = []
    for i, q in enumerate(QUERIES):
        rows.append(("base", q, "nDCG@10", float(BASE[i])))
        rows.append(("base", q, "AP", float(BASE[i]) / 2))
        if q != "q8":
            rows.append(("A", q, "nDCG@10", float(A[i])))
            rows.append(("A", q, "AP", float(A[i]) / 2))
        rows.append(("B", q, "nDCG@10", float(BASE[i]) - 0.1))
        rows.append(("B", q, "AP", None if q == "q3" else float(B_AP[i])))
    rows.append(("A", "q9", "nDCG@10", 0.5))  # a query the baseline lacks
    return pd.DataFrame(rows, columns=["run_id", "query_id", "measure", "value"])


@pytest.fixture(scope="module")
def result(spark):
    df = spark.createDataFrame(
        _per_query(), "run_id string, query_id string, measure string, value double"
    )
    opts = CompareOptions(baseline="base", permutations=256, bootstrap=2000, seed=5)
    res = compare(spark, df, opts, with_plots=True)
    yield res
    res.deltas.unpersist()


def _row(res, run: str, measure: str) -> dict:
    t = res.comparison
    return t[(t.run_id == run) & (t.measure == measure)].iloc[0].to_dict()


def test_columns_and_shape(result) -> None:
    assert list(result.comparison.columns[:16]) == [
        "run_id",
        "baseline",
        "measure",
        "mean",
        "baseline_mean",
        "delta",
        "p_ttest",
        "p_randomization",
        "ci_low",
        "ci_high",
        "wins",
        "ties",
        "losses",
        "p_ttest_holm",
        "p_randomization_holm",
        "n_queries",
    ]
    assert len(result.comparison) == 4
    assert result.runs == ["A", "B"]
    assert sorted(result.measures) == ["AP", "nDCG@10"]


def test_a_ndcg_against_scipy(result) -> None:
    row = _row(result, "A", "nDCG@10")
    x, y = A[:7], BASE[:7]  # q8 missing in A; q9 missing in the baseline
    assert row["n_queries"] == 7 and row["n_run_only"] == 1 and row["n_baseline_only"] == 1
    assert row["mean"] == pytest.approx(x.mean())
    assert row["baseline_mean"] == pytest.approx(y.mean())
    assert row["delta"] == pytest.approx((x - y).mean())
    assert row["p_ttest"] == pytest.approx(sps.ttest_rel(x, y).pvalue)
    exact = sps.permutation_test(
        (x, y),
        lambda a, b, axis: np.mean(a - b, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=2**7,
    )
    assert row["randomization_exact"]
    assert row["p_randomization"] == pytest.approx(exact.pvalue)
    ci = sps.bootstrap(
        (x, y),
        lambda a, b, axis=-1: np.mean(a - b, axis=axis),
        paired=True,
        vectorized=True,
        method="percentile",
        n_resamples=2000,
        rng=np.random.default_rng(5),
    ).confidence_interval
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high))
    # deltas: +.05 +.15 -.05 0 +.10 +.15 +.05 -> 5 wins, 1 tie, 1 loss
    assert (row["wins"], row["ties"], row["losses"]) == (5, 1, 1)


def test_b_constant_drop_and_holm(result) -> None:
    row = _row(result, "B", "nDCG@10")
    # every delta is -0.1: only the all-minus and all-plus sign vectors reach |mean| = 0.1
    assert row["p_randomization"] == pytest.approx(2 / 256)
    assert (row["wins"], row["ties"], row["losses"]) == (0, 0, 8)
    a = _row(result, "A", "nDCG@10")
    # Holm over the two runs of nDCG@10, written out
    p = sorted([(row["p_randomization"], "B"), (a["p_randomization"], "A")])
    first = min(1.0, 2 * p[0][0])
    second = min(1.0, max(first, p[1][0]))
    got = {"B": row["p_randomization_holm"], "A": a["p_randomization_holm"]}
    assert got[p[0][1]] == pytest.approx(first) and got[p[1][1]] == pytest.approx(second)


def test_b_ap_undefined_query_is_counted_not_paired(result) -> None:
    row = _row(result, "B", "AP")
    keep = [i for i, q in enumerate(QUERIES) if q != "q3"]
    x, y = B_AP[keep], BASE[keep] / 2
    assert row["n_queries"] == 7 and row["n_undefined"] == 1
    assert row["p_ttest"] == pytest.approx(sps.ttest_rel(x, y).pvalue)
    assert result.run_summary["B"]["measures"]["AP"]["n_undefined"] == 1


def test_deltas_table_keeps_every_row(result) -> None:
    d = result.deltas.toPandas()
    counts = d.groupby(["run_id", "status"]).size().to_dict()
    assert counts[("A", "run_only")] == 1 and counts[("A", "baseline_only")] == 2
    assert counts[("B", "undefined")] == 1
    assert len(d) == 2 * 8 * 2 + 1  # (A, B) × 8 baseline queries × 2 measures + q9 of A
    assert d["delta"].notna().sum() == (d["status"] == "paired").sum()
    assert set(d["baseline"]) == {"base"}


def test_plot_samples(result) -> None:
    assert not result.plot_sampled
    assert set(result.plot_values["run_id"]) == {"base", "A", "B"}
    assert len(result.plot_deltas) == int(result.comparison["n_queries"].sum())


def test_direction_lower_is_better(spark, monkeypatch) -> None:
    monkeypatch.setattr(pipeline, "higher_is_better", lambda name: False)
    df = spark.createDataFrame(_per_query()).filter("measure = 'nDCG@10' and run_id != 'A'")
    res = compare(
        spark, df, CompareOptions(baseline="base", permutations=16, bootstrap=10), with_plots=False
    )
    row = _row(res, "B", "nDCG@10")
    assert (row["wins"], row["losses"]) == (8, 0)  # lower values win
    assert not row["higher_is_better"]
    res.deltas.unpersist()


def test_errors(spark) -> None:
    df = spark.createDataFrame(_per_query())
    with pytest.raises(ConfigError, match="baseline run 'nope'"):
        compare(spark, df, CompareOptions(baseline="nope"))
    with pytest.raises(ConfigError, match="measure 'P@5'"):
        compare(spark, df, CompareOptions(baseline="base", measures=("P@5",)))
    dup = spark.createDataFrame(pd.concat([_per_query(), _per_query().head(1)]))
    with pytest.raises(InputError, match="duplicate"):
        compare(spark, dup, CompareOptions(baseline="base"))
    with pytest.raises(InputError, match="missing column"):
        compare(spark, df.drop("value"), CompareOptions(baseline="base"))
    with pytest.raises(ConfigError):
        CompareOptions(baseline="base", alpha=1.5)


def _runs_table() -> pd.DataFrame:
    rows = []
    # q1: base ranks d1..d5 by score; run X puts the same docs in another order plus d9
    for i, d in enumerate(["d1", "d2", "d3", "d4", "d5"]):
        rows.append(("base", "q1", d, 10.0 - i))
    for d, s in [("d3", 9.0), ("d1", 8.0), ("d9", 7.0), ("d2", 6.0), ("d5", 6.0)]:
        rows.append(("X", "q1", d, s))  # d5 > d2 by doc id at the tied score 6.0
    rows.append(("base", "q2", "d1", 1.0))  # only the baseline has q2
    rows.append(("X", "q3", "d7", 1.0))  # only X has q3
    return pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"])


def _runs_and_one_query(spark) -> tuple[Any, Any, CompareOptions]:
    """The run table of :func:`_runs_table`, a per-query table of one query and the
    options of the rank-distance tests (k = 3)."""
    runs = spark.createDataFrame(
        _runs_table(), "run_id string, query_id string, doc_id string, score double"
    )
    per_query = spark.createDataFrame(
        [("base", "q1", "AP", 0.5), ("X", "q1", "AP", 0.6)],
        "run_id string, query_id string, measure string, value double",
    )
    return (
        runs,
        per_query,
        CompareOptions(baseline="base", permutations=16, bootstrap=10, k=3, rbo_p=0.9),
    )


def test_rank_distance_and_exposure(spark) -> None:
    runs, per_query, opts = _runs_and_one_query(spark)
    res = compare(spark, per_query, opts, runs_df=runs, with_plots=False)
    rd = res.rank_distance.toPandas().set_index("query_id")
    assert rd.loc["q2", "status"] == "baseline_only" and rd.loc["q3", "status"] == "run_only"
    q1 = rd.loc["q1"]
    # X's order: d3, d1, d9, d5, d2 (tie at 6.0 broken by doc id descending)
    # common docs in base order d1, d2, d3, d5 -> X ranks among them: d3=1, d1=2, d5=3, d2=4
    base_ranks, x_ranks = [1, 2, 3, 4], [2, 4, 1, 3]
    assert q1["overlap"] == 4
    assert q1["footrule"] == sum(abs(a - b) for a, b in zip(base_ranks, x_ranks, strict=True))
    assert q1["kendall_tau"] == pytest.approx(sps.kendalltau(base_ranks, x_ranks).statistic)
    assert q1["spearman_rho"] == pytest.approx(sps.spearmanr(base_ranks, x_ranks).statistic)
    # top-3: {d1, d2, d3} vs {d3, d1, d9}: 2 shared of 4
    assert q1["jaccard_at_k"] == pytest.approx(0.5)
    summary = res.rank_distance_summary["runs"]["X"]
    assert summary["queries"] == {"paired": 1, "run_only": 1, "baseline_only": 1}
    # exposure at k=3: base slots d1, d2, d3 (q1) + d1 (q2); X slots d3, d1, d9 (q1) + d7 (q3)
    p_base = np.array([2, 1, 1, 0, 0]) / 4  # d1 d2 d3 d7 d9
    p_x = np.array([1, 0, 1, 1, 1]) / 4
    exp = res.exposure
    assert exp["runs"]["base"]["entropy"] == pytest.approx(sps.entropy(p_base, base=2))
    assert exp["runs"]["X"]["entropy"] == pytest.approx(sps.entropy(p_x, base=2))
    # top-3 slots filled, and distinct items in them: base d1 d2 d3 | d1; X d3 d1 d9 | d7
    assert {r: (v["slots"], v["items"]) for r, v in exp["runs"].items()} == {
        "base": (4, 3),
        "X": (4, 4),
    }
    vs = exp["vs_baseline"]["X"]
    assert vs["js"] == pytest.approx(jensenshannon(p_x, p_base, base=2) ** 2)
    assert vs["kl_run_baseline"] == math.inf and vs["kl_run_baseline_infinite"]
    assert vs["kl_baseline_run"] == math.inf
    assert (vs["items_shared"], vs["items_run_only"], vs["items_baseline_only"]) == (2, 2, 1)
    res.deltas.unpersist()
    res.rank_distance.unpersist()


def test_the_run_ids_the_caller_knows_are_used_instead_of_a_job(spark) -> None:
    """Given the run table's run ids (as its readers return them), ``compare`` checks
    the compared runs against them rather than running a job to find them, and gives
    what it gives without them; a compared run missing is an error naming it either way.
    """
    runs, per_query, opts = _runs_and_one_query(spark)
    results = [
        compare(spark, per_query, opts, runs_df=runs, with_plots=False, **known)
        for known in ({}, {"run_ids": ["X", "base"]})
    ]
    tables = [r.rank_distance.toPandas().sort_values("query_id") for r in results]
    pd.testing.assert_frame_equal(
        tables[0].reset_index(drop=True), tables[1].reset_index(drop=True)
    )
    assert results[0].exposure == results[1].exposure
    assert results[0].rank_distance_summary == results[1].rank_distance_summary
    for r in results:
        r.deltas.unpersist()
        r.rank_distance.unpersist()
    # the ids given are what is checked: the table holds base, the ids do not
    with pytest.raises(InputError, match="no rows for run\\(s\\) base"):
        compare(spark, per_query, opts, runs_df=runs, with_plots=False, run_ids=["X"])
    # without them, a job finds that the table lacks base
    only_x = runs.where("run_id = 'X'")
    with pytest.raises(InputError, match="no rows for run\\(s\\) base"):
        compare(spark, per_query, opts, runs_df=only_x, with_plots=False)


def test_rank_distances_do_not_depend_on_the_bucket_count(spark, monkeypatch) -> None:
    """A unit test's run table is one bucket per run (one Python task, not eight), and
    the rows and their summary are the same for any bucket count."""
    runs, _, opts = _runs_and_one_query(spark)
    assert pipeline.rank_distance_buckets(spark, runs) == 1
    tables, summaries = [], []
    for buckets in (1, 3, 8):
        monkeypatch.setattr(pipeline, "rank_distance_buckets", lambda spark, df, b=buckets: b)
        table = pipeline.rank_distance_table(spark, runs, opts, ["X"]).cache()
        tables.append(table.toPandas().sort_values("query_id").reset_index(drop=True))
        summaries.append(pipeline.rank_distance_summary(table, opts))
        table.unpersist()
    for table, summary in zip(tables[1:], summaries[1:], strict=True):
        pd.testing.assert_frame_equal(table, tables[0])
        assert summary == summaries[0]
    assert list(tables[0]["query_id"]) == ["q1", "q2", "q3"]


def test_each_runs_mean_has_a_t_interval_as_scipy_computes_it(result) -> None:
    keep = [i for i, q in enumerate(QUERIES) if q != "q3"]
    values = B_AP[keep]  # run B's AP, its undefined query left out
    entry = result.run_summary["B"]["measures"]["AP"]
    low, high = sps.t.interval(1 - 0.05, len(values) - 1, loc=values.mean(), scale=sps.sem(values))
    assert entry["mean"] == pytest.approx(values.mean())
    assert (entry["ci_low"], entry["ci_high"]) == pytest.approx((low, high))
