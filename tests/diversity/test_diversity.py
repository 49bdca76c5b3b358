"""Diversity measures: the Microsoft Recommenders fixture and brute-force checks."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from pyspark.sql import functions as F

from sparkeval.cli import run_argv
from sparkeval.diversity.coverage import coverage_summary
from sparkeval.diversity.inter_user import hamming_diversity, mean_jaccard
from sparkeval.diversity.intra_list import item_similarity, serendipity
from sparkeval.errors import ConfigError

pytestmark = pytest.mark.spark

# Microsoft Recommenders SparkDiversityEvaluation fixture (values from PEERS.md)
TRAIN = {"UserId": [1, 1, 1, 2, 2, 3, 3, 3], "ItemId": [1, 2, 4, 3, 4, 3, 4, 5]}
RECO = {"UserId": [1, 1, 2, 2, 3, 3], "ItemId": [3, 5, 2, 5, 1, 2], "Relevance": [1, 0, 1, 1, 1, 0]}
FEATURES = [[0, 1, 1, 0, 0], [0, 1, 0, 1, 0], [0, 0, 1, 1, 0], [0, 0, 1, 0, 1], [0, 0, 0, 1, 1]]


@pytest.fixture
def fixture_paths(tmp_path):
    pd.DataFrame(TRAIN).to_parquet(tmp_path / "train.parquet")
    pd.DataFrame(RECO).to_parquet(tmp_path / "reco.parquet")
    pd.DataFrame(
        {"ItemId": [1, 2, 3, 4, 5], "features": [np.array(f, dtype=float) for f in FEATURES]}
    ).to_parquet(tmp_path / "features.parquet")
    return tmp_path


def _run(tmp_path, *extra) -> tuple[dict, pd.DataFrame]:
    out = tmp_path / ("out" + "_".join(x.strip("-") for x in extra if x.startswith("--")))
    argv = [
        "diversity",
        "--run",
        str(tmp_path / "reco.parquet"),
        "--train",
        str(tmp_path / "train.parquet"),
        "--out",
        str(out),
        "--master",
        "local[2]",
        *extra,
    ]
    assert run_argv(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    per_user = pd.read_parquet(out / "per_user.parquet")
    # one run, named by its file, sorted by user; its entries at the summary's top too
    assert set(per_user["run_id"]) == {"reco"} and per_user["query_id"].is_monotonic_increasing
    assert summary["runs"]["reco"]["coverage"] == summary["coverage"]
    return summary, per_user


def test_peers_fixture_cooccurrence(spark, fixture_paths):
    summary, per_user = _run(fixture_paths)
    assert summary["coverage"]["catalog_coverage"] == pytest.approx(0.8)
    assert summary["coverage"]["distributional_coverage"] == pytest.approx(1.9183, abs=1e-4)
    assert summary["novelty"]["novelty"] == pytest.approx(2.83333, abs=1e-5)
    assert summary["intra_list_diversity"]["mean"] == pytest.approx(0.43096, abs=1e-5)
    np.testing.assert_allclose(per_user["intra_list_diversity"], [0.29289, 1.0, 0.0], atol=1e-5)
    np.testing.assert_allclose(per_user["serendipity"], [0.363915, 0.53455, 0.403775], atol=1e-5)
    assert summary["serendipity"]["mean_over_users"] == pytest.approx(0.43408, abs=1e-5)


def test_peers_fixture_item_feature_cosine(spark, fixture_paths):
    summary, per_user = _run(
        fixture_paths, "--item-features", str(fixture_paths / "features.parquet")
    )
    np.testing.assert_allclose(per_user["intra_list_diversity"], [0.5, 0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(per_user["serendipity"], [0.25, 0.625, 1 / 3], atol=1e-12)
    assert summary["serendipity"]["mean_over_users"] == pytest.approx(0.4028, abs=1e-4)


def test_items_without_features_are_left_out_and_counted(spark, fixture_paths, capsys):
    # item 5 has no features row: its pairs are unknown, not dissimilar. By hand (cosine
    # of the vectors above): user 1 keeps item 3 alone and user 2 item 2 alone (no ILD);
    # user 3's items 1 and 2 have cosine 1/2, ILD 1/2. Serendipity: user 1, item 3
    # (rel 1) against training items 1, 2, 4: cosines 1/2 each, 1 - 1/2 = 1/2; user 2,
    # item 2 against 3 and 4: cosines 1/2 and 0, 3/4; user 3, item 1 (rel 1) against
    # 3 and 4 (5 left out): 1/2, and item 2 (rel 0): 0, mean 1/4.
    pd.DataFrame(
        {"ItemId": [1, 2, 3, 4], "features": [np.array(f, dtype=float) for f in FEATURES[:4]]}
    ).to_parquet(fixture_paths / "features.parquet")
    summary, per_user = _run(
        fixture_paths, "--item-features", str(fixture_paths / "features.parquet")
    )
    assert per_user["intra_list_diversity"].isna().tolist() == [True, True, False]
    assert per_user["intra_list_diversity"].iloc[2] == pytest.approx(0.5, abs=1e-12)
    np.testing.assert_allclose(per_user["serendipity"], [0.5, 0.75, 0.25], atol=1e-12)
    assert summary["items_without_features"] == {"rows": 2, "items": 1, "examples": ["5"]}
    assert summary["intra_list_diversity"]["users_with_fewer_than_2_items"] == 2
    out = capsys.readouterr().out
    assert "diversity: warning: 1 recommended items (2 rows) have no --item-features row" in out


def test_peers_fixture_per_item_serendipity_and_similarities(spark):
    train = spark.createDataFrame(
        list(zip(TRAIN["UserId"], TRAIN["ItemId"], strict=True)), "query_id long, doc_id long"
    )
    reco = spark.createDataFrame(
        list(zip(RECO["UserId"], RECO["ItemId"], RECO["Relevance"], strict=True)),
        "query_id long, doc_id long, relevance long",
    )
    pairs = spark.createDataFrame(
        [(1, 2), (1, 4), (2, 4), (3, 4), (3, 5), (4, 5)], "i long, j long"
    )
    sims = {
        (r.i, r.j): r.sim for r in item_similarity(pairs, "cooccurrence", train=train).collect()
    }
    np.testing.assert_allclose(
        [sims[p] for p in [(1, 2), (1, 4), (2, 4), (3, 4), (3, 5), (4, 5)]],
        [1.0, 0.57735, 0.57735, 0.816497, 0.707107, 0.57735],
        atol=1e-6,
    )

    def sim_of(p):
        return item_similarity(p, "cooccurrence", train=train)

    per_item, _ = serendipity(reco, train, sim_of)
    got = {(r.query_id, r.doc_id): r.serendipity for r in per_item.collect()}
    order = [(1, 3), (1, 5), (2, 2), (2, 5), (3, 1), (3, 2)]
    np.testing.assert_allclose(
        [got[k] for k in order], [0.72783, 0, 0.71132, 0.35777, 0.80755, 0], atol=1e-5
    )


def test_jaccard_and_minhash_item_similarity(spark):
    feats = spark.createDataFrame(
        [(1, ["a", "b", "c"]), (2, ["b", "c", "d"]), (3, ["x"])],
        "doc_id long, features array<string>",
    )
    pairs = spark.createDataFrame([(1, 2), (1, 3)], "i long, j long")
    exact = {(r.i, r.j): r.sim for r in item_similarity(pairs, "jaccard", features=feats).collect()}
    assert exact == {(1, 2): 0.5, (1, 3): 0.0}
    est = {(r.i, r.j): r.sim for r in item_similarity(pairs, "minhash", features=feats).collect()}
    assert est[(1, 3)] == 0.0
    assert abs(est[(1, 2)] - 0.5) < 0.2  # 128 permutations: sd ~ 0.044
    with pytest.raises(ConfigError, match="needs item features"):
        item_similarity(pairs, "cosine")


def _random_lists(seed: int, users: int = 40, items: int = 30, length: int = 6):
    rng = np.random.default_rng(seed)
    return {
        u: sorted(int(x) for x in rng.choice(items, length, replace=False)) for u in range(users)
    }


def test_inter_user_diversity_equals_brute_force(spark):
    lists = _random_lists(3)
    df = spark.createDataFrame(
        [(u, i) for u, items in lists.items() for i in items], "query_id long, doc_id long"
    )
    result = hamming_diversity(df)
    length = 6
    users = sorted(lists)
    d = {}
    for u, v in itertools.combinations(users, 2):
        d[(u, v)] = d[(v, u)] = 1 - len(set(lists[u]) & set(lists[v])) / length
    mean = np.mean([d[(u, v)] for u, v in itertools.combinations(users, 2)])
    assert result.summary["inter_user_diversity"] == pytest.approx(mean, abs=1e-12)
    per_user = {r.query_id: r.inter_user_diversity for r in result.per_user.collect()}
    for u in users:
        assert per_user[u] == pytest.approx(
            np.mean([d[(u, v)] for v in users if v != u]), abs=1e-12
        )

    jac = [
        len(set(lists[u]) & set(lists[v])) / len(set(lists[u]) | set(lists[v]))
        for u, v in itertools.combinations(users, 2)
    ]
    exact = mean_jaccard(spark, df, result.summary)
    assert exact["method"] == "exact"
    assert exact["mean_jaccard"] == pytest.approx(np.mean(jac), abs=1e-12)
    low, high = exact["bounds"]
    assert low <= np.mean(jac) <= high
    sampled = mean_jaccard(spark, df, result.summary, exact_pair_limit=0, sample_pairs=3000)
    assert sampled["method"] == "sampled"
    lo, hi = sampled["ci95"]
    assert lo - 0.01 <= np.mean(jac) <= hi + 0.01
    assert low <= sampled["mean_jaccard"] <= high


def test_coverage_and_gini_by_hand(spark):
    lists = spark.createDataFrame([(1, 1), (1, 2), (2, 1), (2, 3)], "query_id long, doc_id long")
    catalogue = spark.createDataFrame([(i,) for i in range(1, 5)], "doc_id long")
    result = coverage_summary(lists, catalogue)
    # exposures over the catalogue, ascending: 0, 1, 1, 2 (sum 4, m 4)
    # G = sum (2k - m - 1) x_k / (m sum x) = (-3*0 - 1*1 + 1*1 + 3*2) / 16 = 6/16
    assert result["gini"] == pytest.approx(6 / 16)
    assert result["catalog_coverage"] == pytest.approx(3 / 4)
    p = np.array([2, 1, 1]) / 4
    assert result["distributional_coverage"] == pytest.approx(-(p * np.log2(p)).sum())
    no_cat = coverage_summary(lists)
    assert math.isnan(no_cat["catalog_coverage"])
    # exposures 1, 1, 2: (-2*1 + 0*1 + 2*2) / (3*4) = 2/12
    assert no_cat["gini"] == pytest.approx(2 / 12)


def test_diversity_without_train_reports_skipped(spark, fixture_paths):
    out = fixture_paths / "bare"
    argv = [
        "diversity",
        "--run",
        str(fixture_paths / "reco.parquet"),
        "--out",
        str(out),
        "--master",
        "local[2]",
    ]
    assert run_argv(argv) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["skipped"]) >= {"novelty", "serendipity", "intra_list_diversity"}
    assert summary["coverage"]["catalog_coverage"] is None
    bad = [
        "diversity",
        "--run",
        str(fixture_paths / "reco.parquet"),
        "--similarity",
        "cosine",
        "--out",
        str(fixture_paths / "b2"),
        "--master",
        "local[2]",
    ]
    with pytest.raises(ConfigError, match="needs --item-features"):
        run_argv(bad)


def test_relevance_column_is_optional(spark):
    train = spark.createDataFrame([(1, 1), (1, 2)], "query_id long, doc_id long")
    reco = spark.createDataFrame([(1, 3)], "query_id long, doc_id long")
    per_item, _per_user = serendipity(
        reco, train, lambda p: item_similarity(p, "cooccurrence", train=train)
    )
    assert per_item.select(F.col("serendipity")).first()[0] == 1.0


def test_the_per_user_table_is_scored_once_and_read_from_its_cache(spark):
    """The summary's means and the caller's rows come from one cached per-user table:
    once evaluate_diversity returns, reading the rows is one job, and the summary's
    means are the exact means of those rows (the Recommenders fixture's values)."""
    from sparkeval.diversity.evaluate import evaluate_diversity
    from tests.job_groups import jobs_run

    train = spark.createDataFrame(
        list(zip(TRAIN["UserId"], TRAIN["ItemId"], strict=True)), "query_id long, doc_id long"
    )
    lists = spark.createDataFrame(
        list(zip(RECO["UserId"], RECO["ItemId"], RECO["Relevance"], strict=True)),
        "query_id long, doc_id long, relevance long",
    )
    per_user, summary = evaluate_diversity(spark, lists, train=train)
    try:
        assert per_user.storageLevel.useMemory
        found: list = []
        assert jobs_run(spark, "diversity-rows", lambda: found.extend(per_user.collect())) == 1
    finally:
        per_user.unpersist()
        lists.unpersist()
    assert not per_user.storageLevel.useMemory
    rows = sorted(found)
    assert [r.query_id for r in rows] == [1, 2, 3]
    ild = [r.intra_list_diversity for r in rows]
    ser = [r.serendipity for r in rows]
    np.testing.assert_allclose(ild, [0.29289, 1.0, 0.0], atol=1e-5)
    np.testing.assert_allclose(ser, [0.363915, 0.53455, 0.403775], atol=1e-5)
    assert summary["intra_list_diversity"]["mean"] == pytest.approx(math.fsum(ild) / 3, abs=1e-15)
    assert summary["serendipity"]["mean_over_users"] == pytest.approx(0.43408, abs=1e-5)
    assert summary["serendipity"]["mean_over_users"] == pytest.approx(math.fsum(ser) / 3, abs=1e-15)
    assert summary["serendipity"]["users_without_train_rows"] == 0
