"""The API's frames hold what they document, and no internal column (``_order``)."""

from __future__ import annotations

import pytest

from sparkeval import evaluate, rating_errors

pytestmark = pytest.mark.spark


def test_per_query_frames_have_only_their_documented_columns(spark) -> None:
    run = spark.createDataFrame(
        [("q1", "d1", 2.0), ("q1", "d2", 1.0), ("q2", "d1", 1.0)],
        "query_id string, doc_id string, score double",
    )
    qrels = spark.createDataFrame(
        [("q1", "d2", 1), ("q2", "d1", 1)], "query_id string, doc_id string, relevance int"
    )
    for buckets in (None, 2):  # evaluated in the driver, and by the workers
        ev = evaluate(spark, run, qrels, ["AP", "P@1"], buckets=buckets)
        try:
            assert ev.per_query.columns == ["run_id", "query_id", "measure", "value"]
            assert ev.ordered_per_query.columns == ["run_id", "query_id", "measure", "value"]
        finally:
            ev.unpersist()


def test_per_user_frames_have_only_their_documented_columns(spark) -> None:
    pred = spark.createDataFrame(
        [("u1", "i1", 4.0), ("u2", "i1", 2.0)], "user_id string, item_id string, prediction double"
    )
    truth = spark.createDataFrame(
        [("u1", "i1", 5.0), ("u2", "i1", 2.0)], "user_id string, item_id string, rating double"
    )
    errors = rating_errors(spark, pred, truth, "RMSE,MAE")
    try:
        assert errors.per_user.columns == ["user_id", "measure", "value"]
        rows = [tuple(r) for r in errors.ordered_per_user.collect()]
        # per user, the requests' order: RMSE then MAE; |4 - 5| = 1, |2 - 2| = 0
        assert rows == [
            ("u1", "RMSE", 1.0),
            ("u1", "MAE", 1.0),
            ("u2", "RMSE", 0.0),
            ("u2", "MAE", 0.0),
        ]
    finally:
        errors.unpersist()
