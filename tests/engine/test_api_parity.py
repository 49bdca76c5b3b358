"""Every keyword of ``sparkeval.evaluate`` and ``evaluate_recommendations`` means the same
with ``spark=None`` (pandas, in this process) as on a SparkSession (Spark DataFrames):
the same report, per-query values to the bit and summary.

The Spark path is the reference; a few cases also check values derived by hand.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

import sparkeval
from sparkeval.errors import ConfigError, InputError, SparkevalError

# two runs over users u1..u3; the truth judges u1, u2 and u4 (u3 is in the runs only)
RUN = pd.DataFrame(
    {
        "run_id": ["a"] * 6 + ["b"] * 4,
        "query_id": ["u1", "u1", "u1", "u2", "u2", "u3", "u1", "u1", "u2", "u3"],
        "doc_id": ["i1", "i2", "i3", "i1", "i4", "i2", "i3", "i1", "i4", "i5"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0, 1.0, 2.0, 1.0, 5.0, 1.0],
    }
)
TRUTH = pd.DataFrame(
    {
        "query_id": ["u1", "u1", "u2", "u2", "u4"],
        "doc_id": ["i1", "i3", "i4", "i9", "i1"],
        "relevance": [2, 1, 1, 0, 1],
    }
)
#: the same truth with ratings (not grades) for the relevance rules
RATED = TRUTH.assign(relevance=[4.5, 3.0, 4.0, 1.5, 5.0]).rename(columns={"relevance": "rating"})
ONE_RUN = RUN[RUN["run_id"] == "a"].drop(columns="run_id").reset_index(drop=True)
TREC = ["AP", "P@2", "nDCG@3", "RR", "R@2", "Rprec", "num_ret"]
PEER = {
    "mllib": "P@2,R@2,MAP,MAP@2,nDCG@2",
    "recommenders": "P@2,R@2,nDCG@2,MAP,MAP@2",
    "replay": "HitRate@2,MRR@2,Precision@2,Recall@2,MAP@2,NDCG@2",
    "rectools": "HitRate@2,MRR@2,Precision@2,Recall@2,MAP@2,NDCG@2",
}

#: (case, run, truth, measures, keywords) evaluated with sparkeval.evaluate
EVALUATE_CASES: list[tuple[str, pd.DataFrame, pd.DataFrame, Any, dict[str, Any]]] = [
    ("defaults", RUN, TRUTH, TREC, {}),
    *((f"queries={q}", RUN, TRUTH, TREC, {"queries": q}) for q in ("both", "run", "union")),
    ("rel_level", RUN, TRUTH, TREC, {"rel_level": 2}),
    ("depth", RUN, TRUTH, TREC, {"depth": 1}),
    ("names=trec", RUN, TRUTH, TREC, {"names": "trec"}),
    ("names=requested", RUN, TRUTH, "map,P_2", {"names": "requested"}),
    ("names=dict", RUN, TRUTH, ["AP"], {"names": {"AP": "mean AP"}}),
    ("ranx hits, bare trec names", RUN, TRUTH, "hits@2,Hits,success", {"names": "requested"}),
    ("run_ids", RUN, TRUTH, TREC, {"run_ids": ["b", "a", "c"]}),
    ("buckets", RUN, TRUTH, TREC, {"buckets": 1}),
    *((f"compat={p}", RUN, RATED, m, {"compat": p}) for p, m in PEER.items()),
    (
        "compat=mllib,queries=both",
        RUN,
        RATED,
        PEER["mllib"],
        {"compat": "mllib", "queries": "both"},
    ),
    ("compat=mllib,grade", RUN, TRUTH, PEER["mllib"], {"compat": "mllib", "relevance": "grade"}),
    ("relevance=all, no rating", RUN, TRUTH[["query_id", "doc_id"]], TREC, {"relevance": "all"}),
    ("relevant_only", RUN, TRUTH, TREC, {"relevant_only": True}),
    (
        "threshold, relevant_only",
        RUN,
        RATED,
        TREC,
        {"relevance": "threshold", "relevance_threshold": 4, "relevant_only": True},
    ),
    (
        "compat=replay,threshold",
        RUN,
        RATED,
        PEER["replay"],
        {"compat": "replay", "relevance_threshold": 4},
    ),
    (
        "compat=recommenders,by_threshold",
        RUN,
        RATED,
        PEER["recommenders"],
        {"compat": "recommenders", "relevance_threshold": 2},
    ),
    (
        "compat=recommenders,threshold,relevant_only",
        RUN,
        RATED,
        PEER["recommenders"],
        {"compat": "recommenders", "relevance_threshold": 4, "relevant_only": True},
    ),
    (
        "rank-only run",
        ONE_RUN.assign(rank=[1, 2, 3, 1, 2, 1]).drop(columns="score"),
        TRUTH,
        TREC,
        {},
    ),
    (
        "aliases",
        RUN.rename(columns={"run_id": "system", "query_id": "user_id", "doc_id": "item_id"}).rename(
            columns={"score": "prediction"}
        ),
        TRUTH.rename(columns={"query_id": "userID", "doc_id": "itemID", "relevance": "rating"}),
        TREC,
        {},
    ),
    (
        "run_columns text, qrels_columns dict",
        RUN.rename(columns={"query_id": "u", "doc_id": "i", "score": "s"}),
        TRUTH.rename(columns={"query_id": "u", "doc_id": "i", "relevance": "g"}),
        TREC,
        {
            "run_columns": "query_id=u,doc_id=i,score=s",
            "qrels_columns": {"query_id": "u", "doc_id": "i", "relevance": "g"},
        },
    ),
    (
        "column mappings by alias",
        RUN.rename(columns={"query_id": "uid2", "doc_id": "thing"}),
        TRUTH.rename(columns={"query_id": "who"}),
        TREC,
        {"run_columns": {"user_id": "uid2", "item_id": "thing"}, "qrels_columns": {"user": "who"}},
    ),
    ("empty run", RUN.iloc[0:0], TRUTH, TREC, {}),
    ("empty run, queries=union", RUN.iloc[0:0], TRUTH, TREC, {"queries": "union"}),
    ("empty run, run_ids", RUN.iloc[0:0], TRUTH, TREC, {"run_ids": ["x", "y"]}),
]

#: (case, recommendations, truth, measures, keywords) for evaluate_recommendations, which
#: is evaluate with the truth's columns named truth_columns: the profiles, one each above
RECOMMENDATION_CASES: list[tuple[str, pd.DataFrame, pd.DataFrame, Any, dict[str, Any]]] = [
    ("defaults", RUN, TRUTH, TREC, {}),
    (
        "truth_columns, run_columns by alias",
        RUN.rename(columns={"query_id": "uid"}),
        RATED.rename(columns={"rating": "stars"}),
        PEER["mllib"],
        {"compat": "mllib", "run_columns": {"user_id": "uid"}, "truth_columns": "relevance=stars"},
    ),
    (
        "rank-only, relevant_only",
        ONE_RUN.assign(pos=[3, 2, 1, 2, 1, 1]),
        RATED,
        TREC,
        {
            "relevance_threshold": 4.0,
            "relevant_only": True,
        },
    ),
    ("empty run, replay", RUN.iloc[0:0], RATED, PEER["replay"], {"compat": "replay"}),
    (
        "rank-only with gaps, rectools: positions",
        ONE_RUN.assign(rank=[1, 3, 4, 2, 5, 1]).drop(columns="score"),
        RATED,
        PEER["rectools"],
        {"compat": "rectools"},
    ),
    (
        "rank-only with gaps, default: an order, counted",
        ONE_RUN.assign(rank=[1, 3, 4, 2, 5, 1]).drop(columns="score"),
        TRUTH,
        TREC,
        {},
    ),
]


def _spark_frame(spark, frame: pd.DataFrame):
    """``frame`` as a Spark DataFrame; an empty one with string ids and double values
    (Spark infers no type from no rows)."""
    if len(frame):
        return spark.createDataFrame(frame)
    schema = ", ".join(
        f"`{c}` {'double' if c in ('score', 'rating', 'relevance') else 'string'}"
        for c in frame.columns
    )
    return spark.createDataFrame([], schema)


def _assert_same(local, on_spark) -> None:
    """The same report, per-query rows (bit for bit) and summary."""
    try:
        report = on_spark.report
        spark_rows = on_spark.ordered_per_query.toPandas()
        spark_summary = on_spark.summary.toPandas()
    finally:
        on_spark.unpersist()
    assert local.report == report
    mine = local.per_query
    assert mine[["run_id", "query_id", "measure"]].values.tolist() == (
        spark_rows[["run_id", "query_id", "measure"]].values.tolist()
    )
    nan = float("nan").hex()
    assert [float(v).hex() for v in mine["value"]] == [
        nan if v is None or v != v else float(v).hex() for v in spark_rows["value"]
    ]
    assert local.summary.equals(spark_summary.astype(local.summary.dtypes.to_dict()))


@pytest.mark.spark
@pytest.mark.parametrize(
    ("run", "truth", "measures", "keywords"),
    [case[1:] for case in EVALUATE_CASES],
    ids=[case[0] for case in EVALUATE_CASES],
)
def test_evaluate_is_the_same_in_process_and_on_spark(spark, run, truth, measures, keywords):
    local = sparkeval.evaluate(None, run, truth, measures, **keywords)
    frames = _spark_frame(spark, run), _spark_frame(spark, truth)
    _assert_same(local, sparkeval.evaluate(spark, *frames, measures, **keywords))


@pytest.mark.spark
@pytest.mark.parametrize(
    ("recs", "truth", "measures", "keywords"),
    [case[1:] for case in RECOMMENDATION_CASES],
    ids=[case[0] for case in RECOMMENDATION_CASES],
)
def test_evaluate_recommendations_is_the_same_in_process_and_on_spark(
    spark, recs, truth, measures, keywords
):
    local = sparkeval.evaluate_recommendations(None, recs, truth, measures, **keywords)
    frames = _spark_frame(spark, recs), _spark_frame(spark, truth)
    _assert_same(local, sparkeval.evaluate_recommendations(spark, *frames, measures, **keywords))


def _values(evaluation) -> dict[tuple[str, str], float]:
    return {(r.run_id, r.measure): r.value for r in evaluation.summary.itertuples()}


def test_an_empty_run_scores_its_qrels_queries_as_retrieving_nothing() -> None:
    # no rows, and pandas gives the empty id columns no type (object: null in Arrow)
    empty = pd.DataFrame({"query_id": [], "doc_id": [], "score": []}, dtype=object)
    ev = sparkeval.evaluate(None, empty, TRUTH, ["AP", "P@2", "RR", "num_ret", "num_rel"])
    # trec_eval: a judged query without retrieved docs scores 0; num_rel sums the
    # relevant docs of the 3 judged queries: 2 + 1 + 1 (u2's i9 has grade 0)
    assert _values(ev) == {
        ("run", "AP"): 0.0,
        ("run", "P@2"): 0.0,
        ("run", "RR"): 0.0,
        ("run", "NumRet"): 0.0,
        ("run", "NumRel"): 4.0,
    }
    assert ev.report["runs"]["run"]["queries"]["evaluated"] == 3


def test_a_rank_only_run_is_ordered_by_its_ranks() -> None:
    # u1's ranks put i3 first and i1 second: both relevant, so P@2 = 1 and RR = 1
    ranked = pd.DataFrame(
        {"user": ["u1", "u1", "u1"], "item": ["i2", "i1", "i3"], "rank": [3, 2, 1]}
    )
    ev = sparkeval.evaluate(None, ranked, TRUTH, ["P@2", "RR"], queries="both")
    assert _values(ev) == {("run", "P@2"): 1.0, ("run", "RR"): 1.0}


def test_a_profile_names_the_peers_measures() -> None:
    # replay: HitRate@1 is Success@1 over the truth's users u1 (i1 first: hit), u2 (i1
    # first, not in its truth: miss) and u4 (no recommendations: 0)
    ev = sparkeval.evaluate(None, ONE_RUN, RATED, "HitRate@1", compat="replay", names="requested")
    assert math.isclose(ev.report["runs"]["run"]["measures"]["HitRate@1"], 1 / 3)
    assert ev.report["compat"]["measures"] == {"HitRate@1": "Success@1"}


@pytest.mark.parametrize(
    ("call", "keyword"),
    [
        (
            lambda: sparkeval.evaluate(None, RUN, TRUTH[["query_id", "doc_id"]], "AP"),
            "qrels_columns=",
        ),
        (lambda: sparkeval.evaluate(None, RUN.drop(columns="score"), TRUTH, "AP"), "run_columns="),
        (
            lambda: sparkeval.evaluate_recommendations(
                None, RUN, TRUTH[["query_id", "doc_id"]], "AP", relevance="grade"
            ),
            "truth_columns=",
        ),
    ],
    ids=["qrels", "run", "truth"],
)
def test_a_python_callers_error_names_the_keyword(call, keyword: str) -> None:
    with pytest.raises(InputError) as info:
        call()
    assert keyword in str(info.value)
    assert "--" not in str(info.value)


def test_a_bad_measure_or_option_is_a_sparkeval_error_and_a_value_error() -> None:
    for measures, keywords in (("NoSuchMeasure@10", {}), ("P@0", {}), ("AP", {"queries": "some"})):
        with pytest.raises(SparkevalError) as info:
            sparkeval.evaluate(None, RUN, TRUTH, measures, **keywords)
        assert isinstance(info.value, ValueError)
    with pytest.raises(SparkevalError) as wrong_type:
        sparkeval.evaluate(None, RUN, TRUTH, 5)
    assert isinstance(wrong_type.value, TypeError)
    with pytest.raises(ConfigError, match="needs the training interactions, train="):
        sparkeval.evaluate(None, RUN, TRUTH, "Coverage@10", compat="replay")
    with pytest.raises(ConfigError, match="needs a reference run among the runs evaluated"):
        sparkeval.evaluate(None, RUN, TRUTH, "Unexpectedness@10", compat="replay")


#: near-duplicate pairs over RUN's docs: i3 ~ i1 (twice, in both orientations), a self
#: pair, i4 ~ i2 (never in one ranking) and i5 ~ i9 (i9 is in no run)
PAIRS = pd.DataFrame(
    {
        "doc_a": ["i3", "i1", "i2", "i4", "i5"],
        "doc_b": ["i1", "i3", "i2", "i2", "i9"],
    }
)


def test_near_duplicate_flags_in_process_by_hand() -> None:
    """Run a ranks u1's i1 (3.0) above i3 (1.0), run b i3 (2.0) above i1 (1.0): one
    flagged row each. Run a's AP on u1 (relevant i1 and i3 of R = 2) falls from
    (1/1 + 2/3) / 2 to 1/2, as i3 gains nothing."""
    ev = sparkeval.evaluate(None, RUN, TRUTH, ["AP", "NearDup@3"], near_duplicates=PAIRS)
    assert ev.report["near_duplicates"] == {
        "pairs_read": 5,
        "self_pairs_ignored": 1,
        "repeated_pairs": 1,
        "distinct_pairs": 3,
        "rows_flagged": {"a": 1, "b": 1},
    }
    rows = ev.per_query.set_index(["run_id", "query_id", "measure"])["value"]
    assert rows[("a", "u1", "AP")] == 0.5
    assert rows[("a", "u1", "NearDup@3")] == pytest.approx(1 / 3)
    plain = sparkeval.evaluate(None, RUN, TRUTH, ["AP"])
    assert plain.per_query.set_index(["run_id", "query_id"])["value"][("a", "u1")] == (
        pytest.approx((1 + 2 / 3) / 2)
    )


@pytest.mark.spark
def test_near_duplicates_are_the_same_in_process_and_on_spark(spark) -> None:
    measures = [*TREC, "NearDup@2"]
    local = sparkeval.evaluate(None, RUN, TRUTH, measures, near_duplicates=PAIRS)
    frames = _spark_frame(spark, RUN), _spark_frame(spark, TRUTH)
    pairs = spark.createDataFrame(PAIRS)
    _assert_same(local, sparkeval.evaluate(spark, *frames, measures, near_duplicates=pairs))


def test_bad_near_duplicate_pairs_are_named_in_process() -> None:
    with pytest.raises(InputError, match="missing column\\(s\\) 'doc_b'"):
        sparkeval.evaluate(None, RUN, TRUTH, "AP", near_duplicates=PAIRS[["doc_a"]])
    empty = PAIRS.assign(doc_b=["i1", "", "i2", None, "i9"])
    with pytest.raises(InputError, match="pair row with a missing or empty doc_b"):
        sparkeval.evaluate(None, RUN, TRUTH, "AP", near_duplicates=empty)
    with pytest.raises(InputError, match="id column doc_a has type double"):
        sparkeval.evaluate(None, RUN, TRUTH, "AP", near_duplicates=PAIRS.assign(doc_a=1.5))
