"""Recommender data and compatibility profiles through the real Spark path.

Expected values are the Spark MLlib RankingMetricsSuite and Microsoft Recommenders
fixtures listed in the shared PEERS.md, or derived by hand in the comments.
"""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from sparkeval.cli import main
from sparkeval.compat import plan_compat
from sparkeval.engine.api import evaluate_recommendations
from sparkeval.errors import ConfigError
from sparkeval.io.truth import RelevanceRule

pytestmark = pytest.mark.spark

# --- Spark MLlib RankingMetricsSuite -------------------------------------------------
MLLIB_PREDICTIONS = {
    "q1": [1, 6, 2, 7, 8, 3, 9, 10, 4, 5],
    "q2": [4, 1, 5, 6, 2, 7, 3, 8, 9, 10],
    "q3": [1, 2, 3, 4, 5],
}
MLLIB_LABELS = {"q1": [1, 2, 3, 4, 5], "q2": [1, 2, 3], "q3": []}
MLLIB_GRADES = {"q1": [3, 2, 1, 1, 1], "q2": [2, 0, 0]}

MLLIB_BINARY = {
    "P@1": 1 / 3, "P@2": 1 / 3, "P@3": 1 / 3, "P@4": 0.25, "P@5": 0.8 / 3, "P@10": 0.8 / 3,
    "P@15": 8 / 45,
    "MAP": 0.355026, "MAP@1": 0.333334, "MAP@2": 0.25, "MAP@3": 0.24074,
    "nDCG@3": 1 / 3, "nDCG@5": 0.328788, "nDCG@10": 0.487913, "nDCG@15": 0.487913,
    "R@1": 1 / 15, "R@2": 8 / 45, "R@3": 11 / 45, "R@5": 16 / 45, "R@10": 2 / 3,
}  # fmt: skip
MLLIB_GRADED = {"nDCG@3": 0.511959, "nDCG@5": 0.487806, "nDCG@10": 0.518700}


def _ranking_rows(rankings: dict[str, list[int]]) -> list[tuple[str, str, float]]:
    """(user, item, score) rows whose score order is the given ranking."""
    return [
        (user, str(item), float(len(items) - i))
        for user, items in rankings.items()
        for i, item in enumerate(items)
    ]


def _values(ev) -> dict[str, float]:
    [run] = ev.report["runs"].values()
    return run["measures"]


def _requested(ev) -> dict[str, float]:
    """Values under the names the user asked for (the peer's names)."""
    values = _values(ev)
    return {
        asked: values[canonical] for asked, canonical in ev.report["compat"]["measures"].items()
    }


@pytest.fixture(scope="module")
def mllib_frames(spark):
    recs = spark.createDataFrame(
        _ranking_rows(MLLIB_PREDICTIONS), "user_id string, item_id string, score double"
    )
    truth = spark.createDataFrame(
        [
            (user, str(item), MLLIB_GRADES[user][i])
            for user, items in MLLIB_LABELS.items()
            for i, item in enumerate(items)
        ],
        "user_id string, item_id string, rating int",
    )
    return recs, truth


def test_mllib_binary_fixture(spark, mllib_frames) -> None:
    recs, truth = mllib_frames
    ev = evaluate_recommendations(spark, recs, truth, list(MLLIB_BINARY), compat="mllib")
    try:
        got = _requested(ev)
        for name, want in MLLIB_BINARY.items():
            assert got[name] == pytest.approx(want, abs=1e-5), name
        # the user with empty ground truth still counts (and scores 0)
        assert ev.report["runs"]["run"]["queries"]["evaluated"] == 3
        assert ev.report["compat"]["queries"] == "union"
        assert ev.report["compat"]["measures"]["MAP@2"] == "AP(denom=min_k)@2"
    finally:
        ev.unpersist()


def test_mllib_graded_fixture(spark, mllib_frames) -> None:
    recs, truth = mllib_frames
    names = [*MLLIB_GRADED, "P@5", "MAP", "MAP@3", "R@10"]
    ev = evaluate_recommendations(spark, recs, truth, names, compat="mllib", relevance="grade")
    try:
        got = _requested(ev)
        for name, want in MLLIB_GRADED.items():
            assert got[name] == pytest.approx(want, abs=1e-6), name
        # MLlib's P, R and MAP use the label sets whatever the grades (grade 0 included)
        for name in ("P@5", "MAP", "MAP@3", "R@10"):
            assert got[name] == pytest.approx(MLLIB_BINARY[name], abs=1e-5), name
        assert ev.report["compat"]["measures"]["nDCG@3"] == "nDCG(gain=exp)@3"
    finally:
        ev.unpersist()


def _write_csv(path, rows, columns) -> str:
    pd.DataFrame(rows, columns=columns).to_csv(path, index=False)
    return str(path)


def test_spark_14886_through_the_cli(tmp_path) -> None:
    # predictions (1,6,2) for labels (1..5); no predictions at all for labels (1,2,3)
    recs = _write_csv(tmp_path / "recs.csv", _ranking_rows({"a": [1, 6, 2]}),
                      ["userID", "itemID", "prediction"])  # fmt: skip
    truth_rows = [("a", str(i), 5.0) for i in range(1, 6)] + [("b", str(i), 4.5) for i in (1, 2, 3)]
    truth = _write_csv(tmp_path / "truth.csv", truth_rows, ["userID", "itemID", "rating"])
    out = tmp_path / "out"
    code = main([
        "evaluate", "--run", recs, "--qrels", truth, "--out", str(out), "--compat", "mllib",
        "--measures", "P@1,P@2,nDCG@1,nDCG@2,R@1,R@2", "--master", "local[2]",
    ])  # fmt: skip
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    got = summary["runs"]["recs"]["measures"]
    want = {"P@1": 0.5, "P@2": 0.25, "nDCG@1": 0.5, "nDCG@2": 0.30657, "R@1": 0.1, "R@2": 0.1}
    for name, value in want.items():
        assert got[name] == pytest.approx(value, abs=1e-5), name
    assert summary["compat"] == {
        "profile": "mllib",
        "queries": "union",
        "relevance": {"rule": "all"},
        "measures": {n: n for n in want},
        # MLlib's nDCG@k: the ideal list of the user's relevant items cut at k
        "definitions": {
            "P@1": "P(rel=1)@1", "P@2": "P(rel=1)@2", "R@1": "R(rel=1)@1", "R@2": "R(rel=1)@2",
            "nDCG@1": "nDCG(gain=linear,ideal=qrels,ties=order)@1",
            "nDCG@2": "nDCG(gain=linear,ideal=qrels,ties=order)@2",
        },
        "ties": "score descending, tied scores by doc id descending (trec_eval's order); "
        "a run of ranks alone: rank ascending, then doc id descending",
    }  # fmt: skip
    assert summary["runs"]["recs"]["queries"]["in_qrels_only"] == 1


# --- Microsoft Recommenders SparkRankingEvaluation -----------------------------------
USERS = [1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 1]
TRUE_ITEMS = [3, 1, 4, 5, 6, 7, 2, 5, 6, 8, 9, 10, 11, 12, 13, 14, 1, 2]
RATINGS = [3, 5, 5, 3, 3, 1, 5, 5, 5, 4, 4, 3, 3, 3, 2, 1, 5, 4]
PRED_ITEMS = [12, 10, 3, 5, 11, 13, 4, 10, 7, 13, 1, 3, 5, 2, 11, 14, 3, 10]
PREDICTIONS = [12, 14, 13, 12, 11, 10, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 14, 13]

RECOMMENDERS = {  # k: P@k, R@k, nDCG@k, MAP, MAP@k
    10: (0.26666, 0.37777, 0.38172, 0.23613, 0.23613),
    3: (0.33333, 0.21111, 0.33333, 0.15, 0.2037),
    5: (0.26667, 0.24444, 0.33297, 0.16667, 0.2),
}


@pytest.fixture(scope="module")
def recommenders_frames(spark):
    truth = spark.createDataFrame(
        list(zip(USERS, TRUE_ITEMS, RATINGS, strict=True)), "userID int, itemID int, rating int"
    )
    recs = spark.createDataFrame(
        [(u, i, float(p)) for u, i, p in zip(USERS, PRED_ITEMS, PREDICTIONS, strict=True)],
        "userID int, itemID int, prediction double",
    )
    return recs, truth


@pytest.mark.parametrize("k", [10, 5])
def test_recommenders_ranking_fixture(spark, recommenders_frames, k: int) -> None:
    recs, truth = recommenders_frames
    names = [f"P@{k}", f"R@{k}", f"nDCG@{k}", "MAP", f"MAP@{k}"]
    ev = evaluate_recommendations(spark, recs, truth, names, compat="recommenders")
    try:
        got = _requested(ev)
        for name, want in zip(names, RECOMMENDERS[k], strict=True):
            assert got[name] == pytest.approx(want, abs=1e-5), name
        assert ev.report["compat"]["measures"]["MAP"] == f"AP@{k}"
    finally:
        ev.unpersist()


def test_recommenders_k3_through_the_cli(tmp_path) -> None:
    recs = _write_csv(tmp_path / "pred.csv", zip(USERS, PRED_ITEMS, PREDICTIONS, strict=True),
                      ["userID", "itemID", "prediction"])  # fmt: skip
    truth = _write_csv(tmp_path / "true.csv", zip(USERS, TRUE_ITEMS, RATINGS, strict=True),
                       ["userID", "itemID", "rating"])  # fmt: skip
    out = tmp_path / "out"
    code = main([
        "evaluate", "--run", recs, "--qrels", truth, "--out", str(out),
        "--compat", "recommenders", "--measures", "P@3,R@3,nDCG@3,MAP,MAP@3",
        "--master", "local[2]",
    ])  # fmt: skip
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    got = summary["runs"]["pred"]["measures"]
    mapping = summary["compat"]["measures"]
    for name, want in zip(["P@3", "R@3", "nDCG@3", "MAP", "MAP@3"], RECOMMENDERS[3], strict=True):
        assert got[mapping[name]] == pytest.approx(want, abs=1e-5), name
    assert summary["compat"]["queries"] == "both"


def test_truth_scored_against_itself_is_perfect(spark, recommenders_frames) -> None:
    _, truth = recommenders_frames
    recs = truth.withColumnRenamed("rating", "prediction")
    names = ["nDCG@10", "MAP", "MAP@10"]
    ev = evaluate_recommendations(spark, recs, truth, names, compat="recommenders")
    try:
        assert _requested(ev) == pytest.approx({n: 1.0 for n in names}, abs=1e-12)
    finally:
        ev.unpersist()


def test_trec_semantics_differ_where_they_should(spark, mllib_frames, recommenders_frames) -> None:
    recs, truth = mllib_frames
    ev = evaluate_recommendations(spark, recs, truth, ["P@1", "AP@2", "nDCG@3"], relevance="grade")
    try:
        got = _values(ev)
        # trec_eval (queries=qrels): q3 has no truth and is not evaluated -> mean over 2
        assert ev.report["runs"]["run"]["queries"]["evaluated"] == 2
        assert got["P@1"] == pytest.approx(0.5)  # q1 hit at rank 1, q2 none: (1 + 0) / 2
        # map_cut_2 divides by R: q1 (1/1)/5 = 0.2; q2 (1/2)/R, R = 1 (grades 2,0,0) -> 0.5
        assert got["AP@2"] == pytest.approx((0.2 + 0.5) / 2)
        # linear gain, ideal from sorted grades: q1 ranks items 1, 6, 2 (grades 3, -, 2):
        # DCG 3 + 0 + 2/log2(4) = 4, IDCG 3 + 2/log2(3) + 1/log2(4); q2 ranks 4, 1, 5
        # (grades -, 2, 0): DCG 2/log2(3), IDCG 2
        q1 = 4 / (3 + 2 / math.log2(3) + 0.5)
        q2 = (2 / math.log2(3)) / 2
        assert got["nDCG@3"] == pytest.approx((q1 + q2) / 2)
    finally:
        ev.unpersist()
    recs, truth = recommenders_frames
    ev = evaluate_recommendations(spark, recs, truth, ["AP@3"], relevance="all")
    try:
        # trec_eval's map_cut_3 divides by |truth|: Recommenders' map (0.15), not map_at_k
        assert _values(ev)["AP@3"] == pytest.approx(0.15)
    finally:
        ev.unpersist()


def test_relevance_threshold(spark) -> None:
    recs = spark.createDataFrame(
        [("u", "a", 4.0), ("u", "b", 3.0), ("u", "c", 2.0), ("u", "d", 1.0), ("v", "a", 1.0)],
        "user string, item string, score double",
    )
    truth = spark.createDataFrame(
        [("u", "a", 4.5), ("u", "b", 2.0), ("u", "c", 3.5), ("v", "a", 1.5)],
        "user string, item string, rating double",
    )
    ev = evaluate_recommendations(spark, recs, truth, "AP,P@2,NumRel", relevance_threshold=3.5)
    try:
        got = ev.per_query.toPandas().set_index(["query_id", "measure"])["value"]
        # u: relevant {a, c} (4.5 and 3.5 >= 3.5) at ranks 1 and 3: AP = (1 + 2/3) / 2
        assert got[("u", "AP")] == pytest.approx(5 / 6)
        assert got[("u", "P@2")] == 0.5
        # v has truth but nothing passes the threshold: judged, R = 0, scores 0
        assert got[("v", "AP")] == 0.0 and got[("v", "NumRel")] == 0.0
        assert ev.report["compat"]["relevance"] == {"rule": "threshold", "threshold": 3.5}
    finally:
        ev.unpersist()


def test_profile_errors() -> None:
    with pytest.raises(ConfigError, match="no equivalent in compat profile 'mllib'"):
        plan_compat("mllib", ["RR"])
    with pytest.raises(ConfigError, match="binary relevance"):
        plan_compat("recommenders", ["P@10"], RelevanceRule("grade"))
    with pytest.raises(ConfigError, match="MAP is taken over the top k"):
        plan_compat("recommenders", ["MAP"])
    with pytest.raises(ConfigError, match="evaluates queries='union'"):
        plan_compat("mllib", ["P@10"], queries="qrels")
    with pytest.raises(ConfigError, match="not one of trec, mllib, recommenders"):
        plan_compat("ranx", ["P@10"])
    with pytest.raises(ConfigError, match="cannot be combined"):
        RelevanceRule.from_options("all", 3.0)
    plan = plan_compat("mllib", ["AP(denom=min_k)@5", "MAP@5"])
    assert [m.name for m in plan.measures] == ["AP(denom=min_k)@5"]


def test_config_keys_are_checked_before_spark_starts() -> None:
    from sparkeval.evaluation.options import EvaluateConfig

    base = {"run": ["r.parquet"], "qrels": "t.parquet", "out": "o", "measures": ["MAP@10"]}
    config = EvaluateConfig.load(cli=base, **{"compat": "mllib", "relevance_threshold": 4})
    assert config.plan().relevance == RelevanceRule("threshold", 4)
    with pytest.raises(ConfigError, match="binary relevance"):
        EvaluateConfig.load(cli=base, **{"compat": "recommenders", "relevance": "grade"})
    with pytest.raises(ConfigError, match="key 'rel_level'"):
        EvaluateConfig.load(cli=base, **{"compat": "mllib", "rel_level": 2})
    with pytest.raises(ConfigError, match="evaluates queries='both'"):
        EvaluateConfig.load(cli=base, **{"compat": "recommenders", "queries": "run"})
    with pytest.raises(ConfigError, match="key 'compat'"):
        EvaluateConfig.load(cli=base, **{"compat": "ranx"})


def test_mllib_profile_on_the_inner_join_matches_mllib(spark) -> None:
    """``queries="both"``: only users with predictions and labels count, as when MLlib
    users join the two tables before RankingEvaluator (run here on the joined rows)."""
    from pyspark.ml.evaluation import RankingEvaluator

    # u1 ranks 1, 2, 3 and has labels {2, 9}; u2 has predictions only, u3 labels only
    recs = spark.createDataFrame(
        [("u1", "1", 0.9), ("u1", "2", 0.8), ("u1", "3", 0.7), ("u2", "4", 0.5)],
        "user_id string, item_id string, score double",
    )
    truth = spark.createDataFrame(
        [("u1", "2", 1), ("u1", "9", 1), ("u3", "5", 1)],
        "user_id string, item_id string, rating int",
    )
    names = ["P@2", "R@3", "MAP", "nDCG@3"]
    ev = evaluate_recommendations(spark, recs, truth, names, compat="mllib", queries="both")
    try:
        ours = _requested(ev)
        assert ev.report["compat"]["queries"] == "both"
    finally:
        ev.unpersist()
    joined = spark.createDataFrame(
        [([1.0, 2.0, 3.0], [2.0, 9.0])], "prediction array<double>, label array<double>"
    )
    metrics = {"P@2": ("precisionAtK", 2), "R@3": ("recallAtK", 3),
               "MAP": ("meanAveragePrecision", 3), "nDCG@3": ("ndcgAtK", 3)}  # fmt: skip
    for name, (metric, k) in metrics.items():
        expected = RankingEvaluator(metricName=metric, k=k).evaluate(joined)
        assert math.isclose(ours[name], expected, abs_tol=1e-12), (name, ours[name], expected)
    # by hand: P@2 = 1/2, R@3 = 1/2, AP = (1/2) / 2, on u1 alone
    assert (ours["P@2"], ours["R@3"], ours["MAP"]) == (0.5, 0.5, 0.25)


# --- Recommenders with a threshold (relevancy_method="by_threshold") -------------------

#: microsoft/recommenders, tests/unit/recommenders/evaluation/test_spark_evaluation.py:
#: test_spark_precision_at_k, test_spark_recall_at_k, test_spark_ndcg_at_k, test_spark_map
#: and test_spark_map_at_k evaluate SparkRankingEvaluation(df_true, df_pred,
#: relevancy_method="by_threshold", threshold=3.5) at its default k = 10 on the fixture
#: above (USERS, TRUE_ITEMS, RATINGS / PRED_ITEMS, PREDICTIONS)
RECOMMENDERS_BY_THRESHOLD = {
    "P@10": 0.26666, "R@10": 0.37777, "nDCG@10": 0.38172, "MAP": 0.23613, "MAP@10": 0.23613,
}  # fmt: skip


def test_recommenders_by_threshold_fixture(spark, recommenders_frames) -> None:
    recs, truth = recommenders_frames
    names = list(RECOMMENDERS_BY_THRESHOLD)
    ev = evaluate_recommendations(
        spark, recs, truth, names, compat="recommenders", relevance_threshold=3.5
    )
    try:
        got = _requested(ev)
        for name, want in RECOMMENDERS_BY_THRESHOLD.items():
            assert got[name] == pytest.approx(want, abs=1e-4), name  # the peer's TOL
        assert ev.report["compat"]["relevance"] == {"rule": "all"}
        # every prediction of the fixture (5 to 14) reaches 3.5: no row left out
        assert ev.report["compat"]["recommendations"] == {
            "min_score": 3.5, "rows_below_min_score": 0,
        }  # fmt: skip
        assert ev.report["compat"]["measures"]["MAP"] == "AP"  # the whole kept list
    finally:
        ev.unpersist()


def test_recommenders_by_threshold_in_process_gives_the_same_values() -> None:
    truth = pd.DataFrame({"userID": USERS, "itemID": TRUE_ITEMS, "rating": RATINGS})
    recs = pd.DataFrame({"userID": USERS, "itemID": PRED_ITEMS, "prediction": PREDICTIONS})
    ev = evaluate_recommendations(
        None, recs, truth, list(RECOMMENDERS_BY_THRESHOLD), compat="recommenders",
        relevance_threshold=3.5,
    )  # fmt: skip
    got = _requested(ev)
    for name, want in RECOMMENDERS_BY_THRESHOLD.items():
        assert got[name] == pytest.approx(want, abs=1e-4), name


@pytest.mark.parametrize("k", [10, 3])
def test_recommenders_threshold_keeps_recommendations_not_truth(spark, k: int) -> None:
    """Threshold 12 on the fixture's predictions (derived by hand from the by_threshold
    procedure: keep score >= 12, best first; truth = every row of the user):
    user 1 keeps items 3, 10, 12 (scores 14, 13, 12), hit 3 at rank 1, |truth| 3;
    user 2 keeps 10, 3, 5, hit 5 at rank 3, |truth| 5; user 3 keeps 4, 10, 7, hit 10 at
    rank 2, |truth| 10. P@k = 3 hits / k / 3 users; R@k = (1/3 + 1/5 + 1/10) / 3;
    MAP = ((1/1)/3 + (1/3)/5 + (1/2)/10) / 3 = 0.15 over the whole kept list. The kept
    lists are the top 3, so at k = 3 every value is the top_k fixture's k = 3 row."""
    truth = pd.DataFrame({"userID": USERS, "itemID": TRUE_ITEMS, "rating": RATINGS})
    recs = pd.DataFrame({"userID": USERS, "itemID": PRED_ITEMS, "prediction": PREDICTIONS})
    names = [f"P@{k}", f"R@{k}", "MAP", f"MAP@{k}", f"nDCG@{k}"]
    p3, r3, ndcg3, _, map3 = RECOMMENDERS[3]
    want = {f"P@{k}": 3 / k / 3, f"R@{k}": r3, "MAP": 0.15}
    if k == 3:
        want |= {"P@3": p3, "MAP@3": map3, "nDCG@3": ndcg3}
    keywords: dict = {"compat": "recommenders", "relevance_threshold": 12}
    ev = evaluate_recommendations(
        spark, spark.createDataFrame(recs), spark.createDataFrame(truth), names, **keywords
    )
    try:
        got = _requested(ev)
        assert ev.report["runs"]["run"]["queries"]["evaluated"] == 3
        assert ev.report["runs"]["run"]["rows"]["read"] == 9  # 18 recommendations, 9 kept
        # the other 9 (scores 11, 10, 11, 10, 9, 8, 7, 6, 5) are counted, not lost
        below = {"min_score": 12.0, "rows_below_min_score": 9}
        assert ev.report["compat"]["recommendations"] == below
    finally:
        ev.unpersist()
    for name, value in want.items():
        assert got[name] == pytest.approx(value, abs=1e-5), name
    in_process = evaluate_recommendations(None, recs, truth, names, **keywords)
    assert in_process.report["compat"]["recommendations"] == below
    assert _requested(in_process) == got


def test_recommenders_threshold_through_the_cli(tmp_path, capsys) -> None:
    # user 1: items 10 (score 5) and 11 (score 3), truth 10 (rating 1) and 11 (rating 5);
    # user 2: item 20 (score 2), truth 20 (rating 5). Threshold 4.
    (tmp_path / "recs.csv").write_text("user,item,prediction\n1,10,5\n1,11,3\n2,20,2\n")
    (tmp_path / "truth.csv").write_text("user,item,rating\n1,10,1\n1,11,5\n2,20,5\n")
    base = ["evaluate", "--run", str(tmp_path / "recs.csv"), "--qrels", str(tmp_path / "truth.csv")]

    def run(out: str, *options: str) -> dict:
        code = main([*base, "--measures", "P@1,R@2", "--out", str(tmp_path / out), *options])
        assert code == 0
        return json.loads((tmp_path / out / "summary.json").read_text())

    recommenders = ("--compat", "recommenders", "--relevance-threshold", "4")
    # by_threshold: user 1 keeps item 10 only (its truth is 10 and 11, both relevant);
    # user 2 keeps nothing and leaves the join: P@1 = 1, R@2 = 1/2, over user 1 alone
    summary = run("by_threshold", *recommenders)
    assert summary["runs"]["recs"]["measures"] == {"P@1": 1.0, "R@2": 0.5}
    assert summary["runs"]["recs"]["queries"]["evaluated"] == 1
    # items 11 (score 3) and 20 (score 2) are below 4
    assert summary["compat"]["recommendations"] == {"min_score": 4.0, "rows_below_min_score": 2}
    # --relevant-only: the truth is filtered instead (user 1: {11}, user 2: {20}) and the
    # recommendations are all kept: user 1 ranks 10 first (P@1 0, R@2 1), user 2 hits 20
    summary = run("truth_side", *recommenders, "--relevant-only")
    assert summary["runs"]["recs"]["measures"] == {"P@1": 0.5, "R@2": 1.0}
    assert summary["compat"]["relevance"] == {
        "rule": "threshold", "threshold": 4.0, "relevant_only": True,
    }  # fmt: skip
    assert "recommendations" not in summary["compat"]
    capsys.readouterr()


def _by_threshold(recs: pd.DataFrame, truth: pd.DataFrame, k: int, t: float) -> dict[str, float]:
    """Recommenders' by_threshold procedure written out: keep recommendations with score
    >= t, best first (ties by item id descending, as sparkeval breaks them); users of
    both tables; labels = every truth row of the user; MLlib's P@k (hits in top k / k),
    R@k, MAP (whole list) and MAP@k (/ min(|labels|, k))."""
    kept = recs[recs["score"] >= t]
    users = sorted(set(kept["user"]) & set(truth["user"]))
    out: dict[str, list[float]] = {"P": [], "R": [], "MAP": [], "MAP@k": []}
    for user in users:
        ranked = kept[kept["user"] == user].sort_values(["score", "item"], ascending=False)
        items = list(ranked["item"])
        labels = set(truth[truth["user"] == user]["item"])
        hits = [item in labels for item in items]
        precisions = [sum(hits[: i + 1]) / (i + 1) for i, hit in enumerate(hits) if hit]
        top = [sum(hits[: i + 1]) / (i + 1) for i, hit in enumerate(hits[:k]) if hit]
        out["P"].append(sum(hits[:k]) / k)
        out["R"].append(sum(hits[:k]) / len(labels))
        out["MAP"].append(sum(precisions) / len(labels))
        out["MAP@k"].append(sum(top) / min(len(labels), k))
    return {name: sum(v) / len(v) for name, v in out.items()}


def test_recommenders_threshold_matches_its_procedure_on_random_data(spark) -> None:
    import random

    rng = random.Random(11)
    recs = pd.DataFrame(
        [(f"u{u}", f"i{i}", rng.random()) for u in range(40) for i in rng.sample(range(30), 10)],
        columns=["user", "item", "score"],
    )
    truth = pd.DataFrame(
        [
            (f"u{u}", f"i{i}", rng.randint(1, 5))
            for u in range(50)
            for i in rng.sample(range(30), 4)
        ],
        columns=["user", "item", "rating"],
    ).astype({"rating": float})
    expected = _by_threshold(recs, truth, 5, 0.6)
    ev = evaluate_recommendations(
        spark,
        spark.createDataFrame(recs),
        spark.createDataFrame(truth),
        "P@5,R@5,MAP,MAP@5",
        compat="recommenders",
        relevance_threshold=0.6,
    )
    try:
        got = ev.summary.toPandas().set_index("measure")["value"]
    finally:
        ev.unpersist()
    want = {"P@5": "P", "R@5": "R", "AP": "MAP", "AP(denom=min_k)@5": "MAP@k"}
    for measure, name in want.items():
        assert got[measure] == pytest.approx(expected[name], abs=1e-12), measure


# --- RePlay: its per-user definitions written out, users of the ground truth -----------


def _replay_per_user(pred: list[str], truth: set[str], k: int) -> dict[str, float]:
    """RePlay's documented per-user formulas (replay.metrics), top k of ``pred``."""
    top = pred[:k]
    hits = [item in truth for item in top]
    first = next((i for i, hit in enumerate(hits) if hit), None)
    ap = sum(sum(hits[: i + 1]) / ((i + 1) * min(k, len(truth))) for i, h in enumerate(hits) if h)
    dcg = sum(1 / math.log2(i + 2) for i, hit in enumerate(hits) if hit)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(k, len(truth))))
    # RocAuc: the (hit, miss) pairs of the top k with the miss ranked higher, over all
    # such pairs; 0 without a hit, 1 when no miss precedes a hit
    misses_above = [i - sum(hits[:i]) for i, hit in enumerate(hits) if hit]
    n_hits, n_misses = sum(hits), len(hits) - sum(hits)
    if n_hits == 0:
        roc_auc = 0.0
    elif sum(misses_above) == 0:
        roc_auc = 1.0
    else:
        roc_auc = 1 - sum(misses_above) / (n_hits * n_misses)
    return {
        "HitRate": float(any(hits)),
        "MRR": 0.0 if first is None else 1 / (first + 1),
        "Precision": sum(hits) / k,
        "Recall": sum(hits) / len(truth),
        "MAP": ap if top else 0.0,
        "NDCG": dcg / idcg,
        "RocAuc": roc_auc,
    }


def test_replay_profile_reproduces_its_definitions(spark) -> None:
    import random

    rng = random.Random(3)
    recs = [(f"u{u}", f"i{i}", float(10 - r)) for u in range(30) for r, i in
            enumerate(rng.sample(range(25), 8))]  # fmt: skip
    truth = [(f"u{u}", f"i{i}", 1.0) for u in range(35) for i in rng.sample(range(25), 1 + u % 5)]
    k = 5
    by_user: dict[str, list[str]] = {}
    for user, item, _ in recs:
        by_user.setdefault(user, []).append(item)  # already best first
    wanted: dict[str, set[str]] = {}
    for user, item, _ in truth:
        wanted.setdefault(user, set()).add(item)
    # users of the ground truth; u30..u34 have no recommendations and score 0
    expected = {
        name: sum(_replay_per_user(by_user.get(u, []), wanted[u], k)[name] for u in wanted)
        / len(wanted)
        for name in ("HitRate", "MRR", "Precision", "Recall", "MAP", "NDCG", "RocAuc")
    }
    names = ",".join(f"{name}@{k}" for name in expected)
    ev = evaluate_recommendations(
        spark,
        spark.createDataFrame(recs, "user string, item string, score double"),
        spark.createDataFrame(truth, "user string, item string, rating double"),
        names,
        compat="replay",
        names="requested",
    )
    try:
        got = ev.summary.toPandas().set_index("measure")["value"]
        for name, value in expected.items():
            assert got[f"{name}@{k}"] == pytest.approx(value, abs=1e-12), name
        assert ev.report["compat"]["measures"]["MAP@5"] == "AP(denom=min_k)@5"
    finally:
        ev.unpersist()
    with pytest.raises(ConfigError, match="sparkeval diversity"):
        plan_compat("replay", ["Coverage@10"])


# --- RecTools: the per-user values of its documented examples ---------------------------

#: RecTools' docstring example: users 1-4, ranks 1.., and the interactions (ground truth)
RECTOOLS_RECO = [(1, 7, 1), (1, 8, 2), (2, 1, 1), (2, 2, 2), (3, 1, 1), (3, 2, 2), (3, 3, 3),
                 (3, 4, 4), (4, 1, 1), (4, 2, 2), (4, 3, 3)]  # fmt: skip
RECTOOLS_TRUTH = [(1, 1), (1, 2), (2, 1), (3, 1), (3, 3), (3, 4), (4, 1), (4, 2), (4, 3)]


def test_rectools_profile_reproduces_its_documented_examples(spark) -> None:
    recs = spark.createDataFrame(
        [(str(u), str(i), r) for u, i, r in RECTOOLS_RECO], "user string, item string, rank int"
    )
    truth = spark.createDataFrame(
        [(str(u), str(i)) for u, i in RECTOOLS_TRUTH], "user string, item string"
    )
    ev = evaluate_recommendations(
        spark,
        recs,
        truth,
        "NDCG@3,MAP@3,MAP@1,AP(denom=k)@1,AP(denom=k)@3,Precision@2,Recall@2,HitRate@1,MRR@3",
        compat="rectools",
        names="requested",
    )
    try:
        per_user = ev.per_query.toPandas().set_index(["query_id", "measure"])["value"]
        users = ["1", "2", "3", "4"]
        # RecTools' docstrings: NDCG(k=3) and MAP(k=3), MAP(k=1) per user
        np_values = {
            "NDCG@3": [0.0, 0.46927873, 0.70391809, 1.0],
            "MAP@3": [0.0, 1.0, 0.55555556, 1.0],
            "MAP@1": [0.0, 1.0, 0.33333333, 0.33333333],
            # MAP(k=1) and MAP(k=3) with divide_by_k=True
            "AP(denom=k)@1": [0.0, 1.0, 1.0, 1.0],
            "AP(denom=k)@3": [0.0, 0.33333333, 0.55555556, 1.0],
            # by hand: hits in the top 2 / 2; / relevant items; a hit at rank 1; 1 / first hit
            "Precision@2": [0.0, 0.5, 0.5, 1.0],
            "Recall@2": [0.0, 1.0, 1 / 3, 2 / 3],
            "HitRate@1": [0.0, 1.0, 1.0, 1.0],
            "MRR@3": [0.0, 1.0, 1.0, 1.0],
        }
        for name, values in np_values.items():
            got = [per_user[(u, name)] for u in users]
            assert got == pytest.approx(values, abs=1e-8), name
        assert ev.report["compat"]["measures"]["NDCG@3"] == "nDCG(ideal=k)@3"
        assert ev.report["compat"]["measures"]["MAP@3"] == "AP@3"
    finally:
        ev.unpersist()
    with pytest.raises(ConfigError, match="sparkeval diversity"):
        plan_compat("rectools", ["Serendipity@10"])


# --- RecTools: a rank column is the position (ranks with gaps) ---------------------------

#: MobileTeleSystems/RecTools, tests/metrics/test_ranking.py, TestMAP.test_calc
#: (divide_by_k=False): reco and interactions, per-user AP for users 1..8
RECTOOLS_MAP_RECO = {
    "user": [1, 1, 2, 3, 3, 3, 3, 3, 4, 5, 5, 5, 7, 8, 9],
    "item": [1, 3, 1, 1, 2, 3, 4, 5, 1, 1, 2, 3, 1, 2, 1],
    "rank": [9, 1, 3, 1, 3, 5, 7, 9, 1, 1, 2, 3, 2, 1, 1],
}
RECTOOLS_MAP_INTERACTIONS = {
    "user": [1, 1, 2, 3, 3, 3, 3, 3, 3, 4, 5, 5, 5, 6, 7, 8],
    "item": [1, 2, 1, 1, 2, 3, 4, 5, 6, 1, 1, 2, 3, 1, 1, 1],
}
RECTOOLS_MAP = {
    "MAP@1": [0, 0, 1 / 6, 1, 1 / 3, 0, 0, 0],
    "MAP@3": [0, 1 / 3, 1 / 6 * (1 / 1 + 2 / 3), 1, 1, 0, 1 * (1 / 2), 0],
    # by hand from RecTools' Precision (hits with rank <= k, / k), Recall (/ the user's
    # interactions) and HitRate: user 2's item at rank 3 is outside k = 2, user 3 has
    # ranks 1 and 3 in the top 3 (not 1, 2), user 7's only item sits at position 2
    "Precision@2": [0, 0, 0.5, 0.5, 1, 0, 0.5, 0],
    "Recall@3": [0, 1, 2 / 6, 1, 1, 0, 1, 0],
    "HitRate@1": [0, 0, 1, 1, 1, 0, 0, 0],
    # the same test with divide_by_k=True: AP(denom=k)@k
    "AP(denom=k)@1": [0, 0, 1, 1, 1, 0, 0, 0],
    "AP(denom=k)@3": [0, 1 / 9, 1 / 3 * (1 / 1 + 2 / 3), 1 / 3, 1, 0, 1 / 3 * (1 / 2), 0],
}
#: the same file, TestNDCG.test_calc (divide_by_achievable=False), users 1..5 (user 6 has
#: no interactions), and TestMRR.test_calc, its own interactions
RECTOOLS_NDCG_RECO = {
    "user": [1, 2, 3, 3, 3, 4, 5, 5, 5, 5, 6],
    "item": [1, 2, 1, 2, 3, 1, 1, 2, 3, 5, 1],
    "rank": [9, 1, 1, 2, 3, 1, 3, 7, 9, 1, 1],
}
RECTOOLS_NDCG_INTERACTIONS = {"user": [1, 2, 3, 3, 3, 4, 5], "item": [1, 1, 1, 2, 3, 1, 1]}
_IDCG3 = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
RECTOOLS_NDCG = {"NDCG@1": [0, 0, 1, 1, 0], "NDCG@3": [0, 0, 1, 1 / _IDCG3, 0.5 / _IDCG3]}
RECTOOLS_MRR_INTERACTIONS = {
    "user": [1, 2, 3, 3, 3, 4, 5, 5, 5, 5],
    "item": [1, 1, 1, 2, 3, 1, 1, 2, 3, 4],
}
RECTOOLS_MRR = {"MRR@1": [0, 0, 1, 1, 0], "MRR@3": [0, 0, 1, 1, 1 / 3]}


def _rectools_cases():
    reco = pd.DataFrame(RECTOOLS_MAP_RECO)
    reco_ndcg = pd.DataFrame(RECTOOLS_NDCG_RECO)
    mrr_reco = reco_ndcg[reco_ndcg["user"] != 6]  # TestMRR's reco: the NDCG one without user 6
    return [
        (reco, pd.DataFrame(RECTOOLS_MAP_INTERACTIONS), RECTOOLS_MAP),
        (reco_ndcg, pd.DataFrame(RECTOOLS_NDCG_INTERACTIONS), RECTOOLS_NDCG),
        (mrr_reco, pd.DataFrame(RECTOOLS_MRR_INTERACTIONS), RECTOOLS_MRR),
    ]


def _per_user(ev) -> dict[str, list[float]]:
    frame = ev.per_query
    frame = frame.toPandas() if hasattr(frame, "toPandas") else frame
    frame = frame.assign(user=frame["query_id"].astype(int)).sort_values("user")
    measures = frame["measure"].unique()
    return {name: frame[frame["measure"] == name]["value"].tolist() for name in measures}


@pytest.mark.parametrize("case", [0, 1, 2], ids=["MAP+classification", "NDCG", "MRR"])
def test_rectools_ranks_are_positions(spark, case: int) -> None:
    reco, interactions, expected = _rectools_cases()[case]
    names = ",".join(expected)
    keywords = {"compat": "rectools", "names": "requested"}
    local = evaluate_recommendations(None, reco, interactions, names, **keywords)
    ev = evaluate_recommendations(
        spark, spark.createDataFrame(reco), spark.createDataFrame(interactions), names, **keywords
    )
    try:
        got = _per_user(ev)
        assert ev.report["parameters"]["ranks"] == "position"
    finally:
        ev.unpersist()
    for name, values in expected.items():
        assert got[name] == pytest.approx(values, abs=1e-12), name
    assert _per_user(local) == got


def test_rectools_rejects_a_rank_that_is_not_a_position() -> None:
    from sparkeval.errors import InputError

    reco = pd.DataFrame({"user": [1, 1], "item": [1, 2], "rank": [1, 1]})
    truth = pd.DataFrame({"user": [1], "item": [1]})
    with pytest.raises(InputError, match="rank 1 is given to two docs"):
        evaluate_recommendations(None, reco, truth, "MAP@3", compat="rectools")
    reco = pd.DataFrame({"user": [1], "item": [1], "rank": [0]})
    with pytest.raises(InputError, match="rank 0 is not a whole number >= 1"):
        evaluate_recommendations(None, reco, truth, "MAP@3", compat="rectools")


def test_default_profile_reads_ranks_as_an_order_and_counts_gaps(tmp_path, capsys) -> None:
    # RecTools' MAP fixture under the default profile: ranks are an order (user 2's only
    # item is first: AP@3 = 1/1 over its 1 relevant item); the lists whose ranks are not
    # 1..n (users 1, 2, 3, 7) are counted, users 4, 5, 8, 9 have ranks 1..n
    reco = pd.DataFrame(RECTOOLS_MAP_RECO)
    truth = pd.DataFrame(RECTOOLS_MAP_INTERACTIONS)
    ev = evaluate_recommendations(None, reco, truth, "AP@3", relevance="all")
    values = _per_user(ev)["AP@3"]
    assert values[1] == 1.0
    assert ev.report["runs"]["run"]["queries"]["rank_gaps"] == 4  # of the evaluated users
    assert ev.report["parameters"]["ranks"] == "order"
    # a run with scores has no such count
    scored = reco.assign(score=-reco["rank"]).drop(columns="rank")
    ev = evaluate_recommendations(None, scored, truth, "AP@3", relevance="all")
    assert "rank_gaps" not in ev.report["runs"]["run"]["queries"]
    # the CLI says so on stderr
    reco.to_csv(tmp_path / "reco.csv", index=False)
    truth.to_csv(tmp_path / "truth.csv", index=False)
    out = tmp_path / "out"
    code = main([
        "evaluate", "--run", str(tmp_path / "reco.csv"), "--qrels", str(tmp_path / "truth.csv"),
        "--relevance", "all", "--measures", "AP@3", "--out", str(out), "--master", "local[2]",
    ])  # fmt: skip
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["runs"]["reco"]["queries"]["rank_gaps"] == 4
    assert "4 ranked list(s) have ranks other than 1..n" in capsys.readouterr().err
    # under rectools the CLI reads them as positions
    out = tmp_path / "rectools"
    code = main([
        "evaluate", "--run", str(tmp_path / "reco.csv"), "--qrels", str(tmp_path / "truth.csv"),
        "--compat", "rectools", "--measures", "MAP@3", "--out", str(out), "--master", "local[2]",
    ])  # fmt: skip
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    want = sum(RECTOOLS_MAP["MAP@3"]) / 8
    assert summary["runs"]["reco"]["measures"]["AP@3"] == pytest.approx(want, abs=1e-12)
    capsys.readouterr()
