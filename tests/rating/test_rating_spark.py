"""Rating errors on Spark: the Microsoft Recommenders fixture, numpy/sklearn on random
data, order independence, and bad input."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import explained_variance_score, mean_absolute_error, r2_score

from sparkeval import rating_errors
from sparkeval.cli import main
from sparkeval.errors import InputError

pytestmark = pytest.mark.spark

# PEERS.md, Microsoft Recommenders: rating_true and rating_pred
USERS = [1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 1]
TRUE_ITEMS = [3, 1, 4, 5, 6, 7, 2, 5, 6, 8, 9, 10, 11, 12, 13, 14, 1, 2]
RATINGS = [3, 5, 5, 3, 3, 1, 5, 5, 5, 4, 4, 3, 3, 3, 2, 1, 5, 4]
PRED_ITEMS = [12, 10, 3, 5, 11, 13, 4, 10, 7, 13, 1, 3, 5, 2, 11, 14, 3, 10]
PREDICTIONS = [12, 14, 13, 12, 11, 10, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 14, 13]


def test_recommenders_fixture_through_the_cli(tmp_path, spark, capsys) -> None:
    pd.DataFrame({"userID": USERS, "itemID": TRUE_ITEMS, "rating": RATINGS}).to_csv(
        tmp_path / "truth.csv", index=False
    )
    pd.DataFrame({"userID": USERS, "itemID": PRED_ITEMS, "prediction": PREDICTIONS}).to_csv(
        tmp_path / "pred.csv", index=False
    )
    out = tmp_path / "out"
    code = main(
        [
            "rating-errors",
            "--predictions",
            str(tmp_path / "pred.csv"),
            "--truth",
            str(tmp_path / "truth.csv"),
            "--out",
            str(out),
            "--measures",
            "RMSE,MAE,R2,ExpVar",
            "--missing",
            "skip",
            "--master",
            "local[2]",
        ]
    )
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    values = summary["measures"]
    # Recommenders joins the tables on (user, item) with an inner join: --missing skip
    assert values["RMSE"] == pytest.approx(7.254309, abs=5e-7)
    assert values["MAE"] == pytest.approx(6.375, abs=1e-12)
    assert values["R2"] == pytest.approx(-31.699029, abs=5e-7)
    assert values["ExpVar"] == pytest.approx(-6.4466, abs=5e-5)
    # 8 pairs in both tables; 18 rows on each side, so 10 on one side only
    assert summary["pairs"] == {
        "matched": 8,
        "predictions_only": 10,
        "truth_only": 10,
        "skipped": 20,
    }
    # matched |rating - prediction|: user 1 item 3 |3-14| = 11; user 2 item 5 |3-12| = 9;
    # user 3 items 5, 10, 13, 2, 11, 14 -> 3, 10, 9, 2, 3, 4; per-user MAE 11, 9, 31/6
    assert values["MAE_per_user"] == pytest.approx((11 + 9 + 31 / 6) / 3, abs=1e-12)
    assert summary["users"] == {"evaluated": 3}
    assert summary["undefined_users"]["R2_per_user"] == 2  # users 1 and 2 have one pair
    per_user = pd.read_parquet(out / "per_user.parquet")
    assert list(per_user.columns) == ["user_id", "measure", "value"]
    assert len(per_user) == 3 * 4
    mae = per_user[per_user.measure == "MAE"].set_index("user_id")["value"]
    assert mae.to_dict() == pytest.approx({"1": 11.0, "2": 9.0, "3": 31 / 6})
    assert "RMSE_per_user" in capsys.readouterr().out


def _random_tables(seed: int, n: int = 400) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    users = rng.integers(0, 40, size=n)
    items = rng.permutation(n * 3)[:n]  # distinct items, so (user, item) pairs are unique
    rating = np.round(rng.uniform(0.5, 5.0, size=n), 1)  # non-integer ratings
    pred = rating + rng.normal(0, 0.8, size=n)
    truth = pd.DataFrame(
        {"user_id": users.astype(str), "item_id": items.astype(str), "rating": rating}
    )
    preds = pd.DataFrame(
        {"user_id": users.astype(str), "item_id": items.astype(str), "prediction": pred}
    )
    return preds, truth


def _numpy_values(preds: pd.DataFrame, truth: pd.DataFrame) -> dict[str, float]:
    j = truth.merge(preds, on=["user_id", "item_id"])
    t, q = j["rating"].to_numpy(), j["prediction"].to_numpy()
    e = t - q
    out = {
        "RMSE": math.sqrt(float(np.mean(e**2))),
        "MAE": mean_absolute_error(t, q),
        "R2": r2_score(t, q),
        "ExpVar": explained_variance_score(t, q),
        "MaxAE": float(np.max(np.abs(e))),
        "TopL_AE(L=3)": float(np.sort(np.abs(e))[-3:].sum()),
        "Lp(p=3)": float(np.linalg.norm(e, 3)),
    }
    per_user: dict[str, list[float]] = {k: [] for k in out}
    for _, g in j.groupby("user_id"):
        tu, qu = g["rating"].to_numpy(), g["prediction"].to_numpy()
        eu = tu - qu
        per_user["RMSE"].append(math.sqrt(float(np.mean(eu**2))))
        per_user["MAE"].append(mean_absolute_error(tu, qu))
        if np.var(tu) > 0:
            per_user["R2"].append(r2_score(tu, qu))
            per_user["ExpVar"].append(explained_variance_score(tu, qu))
        per_user["MaxAE"].append(float(np.max(np.abs(eu))))
        per_user["TopL_AE(L=3)"].append(float(np.sort(np.abs(eu))[-3:].sum()))
        per_user["Lp(p=3)"].append(float(np.linalg.norm(eu, 3)))
    for name, values in per_user.items():
        base, _, param = name.partition("(")
        out[f"{base}_per_user" + (f"({param}" if param else "")] = float(np.mean(values))
    return out


MEASURES = "RMSE,MAE,R2,ExpVar,MaxAE,TopL_AE(L=3),Lp(p=3)"


def test_random_ratings_match_numpy_and_sklearn(spark) -> None:
    preds, truth = _random_tables(7)
    ev = rating_errors(
        spark, spark.createDataFrame(preds), spark.createDataFrame(truth), MEASURES, buckets=3
    )
    try:
        got = ev.report["measures"]
        want = _numpy_values(preds, truth)
        assert set(got) == set(want)
        for name, value in want.items():
            assert got[name] == pytest.approx(value, rel=1e-12, abs=1e-12), name
        assert ev.report["pairs"]["skipped"] == 0
    finally:
        ev.unpersist()


def test_values_do_not_depend_on_row_order_or_partitioning(spark) -> None:
    preds, truth = _random_tables(11, n=300)
    first = rating_errors(
        spark, spark.createDataFrame(preds), spark.createDataFrame(truth), MEASURES, buckets=2
    )
    shuffled = preds.sample(frac=1.0, random_state=3)
    second = rating_errors(
        spark,
        spark.createDataFrame(shuffled).repartition(5),
        spark.createDataFrame(truth.iloc[::-1]).repartition(3),
        MEASURES,
        buckets=7,
    )
    try:
        assert first.report["measures"] == second.report["measures"]  # bit for bit
    finally:
        first.unpersist()
        second.unpersist()


def test_missing_pairs_are_an_error_by_default(spark) -> None:
    pred = spark.createDataFrame(
        [("u1", "i1", 3.5), ("u1", "i2", 2.0)], "user string, item string, prediction double"
    )
    truth = spark.createDataFrame(
        [("u1", "i1", 4.0), ("u2", "i9", 1.0)], "user string, item string, rating double"
    )
    with pytest.raises(
        InputError,
        match=r"1 prediction\(s\) have no true rating "
        r"\(e\.g\. user u1 item i2\).*1 true rating\(s\) have no prediction "
        r"\(e\.g\. user u2 item i9\)",
    ):
        rating_errors(spark, pred, truth, "RMSE")
    ev = rating_errors(spark, pred, truth, "RMSE", missing="skip")
    assert ev.report["measures"]["RMSE"] == 0.5
    assert ev.report["pairs"] == {
        "matched": 1,
        "predictions_only": 1,
        "truth_only": 1,
        "skipped": 2,
    }
    ev.unpersist()


def test_duplicates_and_bad_values_name_the_pair(spark) -> None:
    schema_p = "user_id string, item_id string, prediction string"
    schema_t = "user_id string, item_id string, rating double"
    truth = spark.createDataFrame([("u1", "i1", 4.0)], schema_t)
    dup = spark.createDataFrame([("u1", "i1", "3"), ("u1", "i1", "2")], schema_p)
    with pytest.raises(InputError, match="predictions: duplicate pair user u1 item i1"):
        rating_errors(spark, dup, truth, "MAE")
    bad = spark.createDataFrame([("u1", "i1", "abc")], schema_p)
    with pytest.raises(
        InputError, match="user u1 item i1: column prediction value 'abc' is not a finite number"
    ):
        rating_errors(spark, bad, truth, "MAE")
    with pytest.raises(ValueError, match="unknown rating measure 'MSE'"):
        rating_errors(spark, dup, truth, "MSE")


def test_text_input_and_atomic_output(tmp_path, spark) -> None:
    (tmp_path / "pred.txt").write_text("# user item prediction\nu1 i1 3.5\nu1 i2 2.25 99\n")
    (tmp_path / "truth.txt").write_text("u1\ti1\t4\nu1\ti2\t2.0\t881250949\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep").write_text("previous")
    args = [
        "rating-errors",
        "--predictions",
        str(tmp_path / "pred.txt"),
        "--truth",
        str(tmp_path / "truth.txt"),
        "--out",
        str(out),
        "--measures",
        "MAE,MaxAE",
    ]
    assert main(args) == 2  # an existing non-empty output needs --overwrite
    assert (out / "keep").exists()
    assert main([*args, "--overwrite"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["measures"]["MAE"] == pytest.approx(0.375)  # (0.5 + 0.25) / 2
    assert summary["measures"]["MaxAE_per_user"] == 0.5
    assert not (out / "keep").exists()
