"""The measures of ``evaluate`` that compare each run with a reference run among the
runs evaluated (``--reference-run``): RecTools' ``Intersection@k`` (``--compat
rectools``) and RePlay's ``Unexpectedness@k`` (``--compat replay``).

Expected values: RePlay's docstring of ``replay.metrics.Unexpectedness``
(Unexpectedness@2 = 0.16666666666666666, @4 = 0.5, per user {0.5, 0, 0} and
{0.5, 0.5, 0.5}), RecTools' ``tests/metrics/test_intersection.py`` (the
``calc_intersection_metrics`` case, 0.75, and NaN for an empty reference), and hand
derivations written out in each test. The local engine, the in-process API and Spark
give the same bits.
"""

from __future__ import annotations

import json
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import sparkeval
from sparkeval.diversity.reference_values import (
    local_reference_per_user,
    local_reference_value,
)
from sparkeval.errors import ConfigError
from tests.jobs import CLI, job_env

#: RePlay's documented recommendations and base recommendations (Unexpectedness)
RECS = pd.DataFrame(
    {
        "user_id": [1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3],
        "item_id": [3, 7, 10, 11, 2, 5, 8, 11, 1, 3, 4, 9, 2],
        "score": [0.6, 0.5, 0.4, 0.3, 0.2, 0.6, 0.5, 0.4, 0.3, 0.2, 1.0, 0.5, 0.1],
    }
)
BASE = pd.DataFrame(
    {
        "user_id": [1, 1, 1, 2, 2, 2, 3, 3],
        "item_id": [3, 7, 2, 5, 8, 3, 4, 9],
        "score": [0.5, 0.5, 0.7, 0.6, 0.6, 0.3, 1.0, 0.5],
    }
)
TRUTH = pd.DataFrame({"user_id": [1, 2, 3], "item_id": [3, 1, 9], "relevance": [1, 1, 1]})
BOTH = pd.concat([RECS.assign(run_id="model"), BASE.assign(run_id="base")], ignore_index=True)


def _lists(frame: pd.DataFrame, k: int) -> pd.DataFrame:
    """``query_id, doc_id`` (text) of each user's top k by score (ties by id text
    descending)."""
    from sparkeval.evaluation.set_measures import ranked_cut

    rows = frame.rename(columns={"user_id": "query_id", "item_id": "doc_id"})
    ranked = ranked_cut(rows.astype({"query_id": str, "doc_id": str}))
    return ranked[ranked["_rank"] <= k][["query_id", "doc_id"]].reset_index(drop=True)


def test_replays_documented_unexpectedness():
    """RePlay's docstring: Unexpectedness([2, 4]) gives 0.16666666666666666 and 0.5,
    per user {1: 0.5, 2: 0.0, 3: 0.0} and {1: 0.5, 2: 0.5, 3: 0.5}. By hand at k = 2:
    user 1's {3, 7} against the base {2, 7} (7 and 3 tie at 0.5; the tie rule takes 7;
    RePlay's input order takes 3: either shares one item) is 1 - 1/2; users 2 and 3
    share both. At k = 4 every user shares 2 items: 1 - 2/4 (user 3's base has 2)."""
    ev = sparkeval.evaluate_recommendations(
        None, BOTH, TRUTH, "Precision@2,Unexpectedness@2,Unexpectedness@4", compat="replay",
        reference_run="base",
    )  # fmt: skip
    model = ev.report["runs"]["model"]
    assert model["measures"]["Unexpectedness@2"] == 0.16666666666666666
    assert model["measures"]["Unexpectedness@4"] == 0.5
    assert model["set_measures"]["Unexpectedness@2"] == {
        "k": 2, "users": 3, "users_absent_from_reference": 0,
    }  # fmt: skip
    assert ev.report["parameters"]["reference_run"] == "base"
    assert ev.report["compat"]["definitions"]["Unexpectedness@2"].startswith("RePlay's")
    for k, expected in ((2, [0.5, 0.0, 0.0]), (4, [0.5, 0.5, 0.5])):
        frame = local_reference_per_user("unexpectedness", _lists(RECS, k), _lists(BASE, k), k)
        assert frame["query_id"].tolist() == ["1", "2", "3"]
        assert frame["value"].tolist() == expected
    # the reference run's own row compares it with itself: at k = 4 its lists have 3,
    # 3 and 2 items, 1 - 3/4, 1 - 3/4, 1 - 2/4, mean 1/3
    assert ev.report["runs"]["base"]["measures"]["Unexpectedness@4"] == 1 / 3
    assert ev.report["runs"]["base"]["measures"]["Unexpectedness@2"] == 0.0


def test_rectools_documented_intersection():
    """RecTools' ``calc_intersection_metrics`` case: reco 1: [3, 2], 2: [1]; ref 1:
    [3, 5], 2: [1] gives 0.75 (with ref_k = 1 there; with ref_k = k = 2 the same by
    hand: user 1 |{3, 2} & {3, 5}| / 2 = 1/2, user 2 |{1} & {1}| / 1 = 1). The
    reference run's own row is 1 for every user (RecTools' value for reco is ref)."""
    reco = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [3, 2, 1], "rank": [1, 2, 1]})
    ref = pd.DataFrame({"user_id": [1, 1, 2], "item_id": [3, 5, 1], "rank": [1, 2, 1]})
    both = pd.concat([reco.assign(run_id="reco"), ref.assign(run_id="ref")])
    truth = pd.DataFrame({"user_id": [1, 2], "item_id": [3, 1]})
    ev = sparkeval.evaluate_recommendations(
        None, both, truth, "Precision@2,Intersection@2", compat="rectools", reference_run="ref"
    )
    assert ev.report["runs"]["reco"]["measures"]["Intersection@2"] == 0.75
    assert ev.report["runs"]["ref"]["measures"]["Intersection@2"] == 1.0
    assert ev.report["compat"]["definitions"]["Intersection@2"].startswith("RecTools'")


def test_an_empty_reference_gives_no_value():
    """RecTools' ``test_when_no_ref_reco``: an empty reference leaves no user and the
    mean NaN; Unexpectedness then scores each user 0 (RePlay's value for a user
    without base recommendations)."""
    lists = pd.DataFrame({"query_id": list("1112234"), "doc_id": list("1231211")})
    empty = pd.DataFrame({"query_id": [], "doc_id": []}, dtype=object)
    value = local_reference_value("intersection", lists, empty, 2)
    assert np.isnan(value["value"]) and value["users"] == 0
    assert local_reference_value("unexpectedness", lists, empty, 2) == {
        "value": 0.0, "users": 4, "users_absent_from_reference": 4,
    }  # fmt: skip


def test_edge_cases_by_hand():
    """k = 3 over lists a: [x, y, z], b: [x] (shorter than k), c: [w, v] (c absent
    from the reference), reference a: [y, q, x], b: [x, r, s], d: [x] (d has no list):

    * Intersection: a |{x, y}| / 3 = 2/3, b 1/1, c 0 (absent) — over a, b, c: 5/9;
    * Unexpectedness: a 1 - 2/3, b 1 - 1/3 (divided by k, not by |L_b| = 1), c 0
      (absent) — mean (1/3 + 2/3 + 0) / 3 = 1/3;
    * at k = 10 (larger than every list) the same items: Intersection 5/9,
      Unexpectedness a 1 - 2/10, b 1 - 1/10, c 0, mean 17/30."""
    lists = pd.DataFrame({"query_id": list("aaabcc"), "doc_id": list("xyzxwv")})
    ref = pd.DataFrame({"query_id": list("aaabbbd"), "doc_id": list("yqxxrsx")})
    inter = local_reference_per_user("intersection", lists, ref, 3)
    assert inter["query_id"].tolist() == ["a", "b", "c"]
    assert inter["value"].tolist() == [2 / 3, 1.0, 0.0]
    assert inter["_absent"].tolist() == [False, False, True]
    unexpected = local_reference_per_user("unexpectedness", lists, ref, 3)
    assert unexpected["value"].tolist() == [1 - 2 / 3, 1 - 1 / 3, 0.0]
    assert local_reference_value("intersection", lists, ref, 3)["value"] == 5 / 9
    value = local_reference_value("unexpectedness", lists, ref, 3)
    assert value["value"] == _exact_mean([1 - 2 / 3, 1 - 1 / 3, 0.0])  # the doubles' mean
    assert value["value"] == pytest.approx(1 / 3, rel=1e-15)
    assert (value["users"], value["users_absent_from_reference"]) == (3, 1)
    assert local_reference_value("intersection", lists, ref, 10)["value"] == 5 / 9
    far = local_reference_value("unexpectedness", lists, ref, 10)["value"]
    assert far == _exact_mean([1 - 2 / 10, 1 - 1 / 10, 0.0])
    assert far == pytest.approx(17 / 30, rel=1e-15)


def _exact_mean(values: list[float]) -> float:
    """The mean of doubles from their exact rational sum, rounded once."""
    return float(sum(Fraction(v) for v in values) / len(values))


def _cli(directory: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *argv], cwd=directory, env=job_env(), capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("reference-runs")
    RECS.to_parquet(directory / "model.parquet", index=False)
    BASE.to_parquet(directory / "base.parquet", index=False)
    TRUTH.to_parquet(directory / "truth.parquet", index=False)
    return directory


def test_the_local_engine_reads_the_reference_among_the_runs(two_runs):
    """``--run model.parquet base.parquet --reference-run base`` on the local engine
    gives RePlay's documented values, and the API's bits."""
    out = _cli(
        two_runs, "evaluate", "--engine", "local", "--run", "model.parquet", "base.parquet",
        "--qrels", "truth.parquet", "--reference-run", "base",
        "--measures", "Precision@2,Unexpectedness@2,Unexpectedness@4", "--out", "out",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    summary = json.loads((two_runs / "out" / "summary.json").read_text())
    assert summary["runs"]["model"]["measures"]["Unexpectedness@2"] == 0.16666666666666666
    assert summary["runs"]["model"]["measures"]["Unexpectedness@4"] == 0.5
    assert summary["runs"]["base"]["measures"]["Unexpectedness@4"] == 1 / 3
    assert summary["parameters"]["reference_run"] == "base"


def test_a_missing_or_unknown_reference_run_is_refused(two_runs):
    """Without --reference-run the error names the option (and the API keyword); an id
    that is not a run evaluated names the runs; a reference run without a measure that
    reads it is refused too."""
    base = ("evaluate", "--engine", "local", "--run", "model.parquet", "base.parquet",
            "--qrels", "truth.parquet", "--out", "refused")  # fmt: skip
    missing = _cli(two_runs, *base, "--measures", "P@2,Intersection@2")
    assert missing.returncode == 2
    assert "--reference-run RUN_ID (key 'reference_run'" in missing.stderr
    unknown = _cli(
        two_runs, *base, "--measures", "P@2,Unexpectedness@2",
        "--reference-run", "nope",
    )  # fmt: skip
    assert unknown.returncode == 2
    assert "--reference-run 'nope'" in unknown.stderr and "'base'" in unknown.stderr
    assert not (two_runs / "refused").exists()
    with pytest.raises(ConfigError, match=r"it needs a reference run.*reference_run="):
        sparkeval.evaluate_recommendations(
            None, BOTH, TRUTH, "Precision@2,Unexpectedness@2", compat="replay"
        )
    with pytest.raises(ConfigError, match="key 'reference_run': no measure asked for reads it"):
        sparkeval.evaluate_recommendations(None, BOTH, TRUTH, "P@2", reference_run="base")


def _random_runs() -> pd.DataFrame:
    """Two runs over 30 users with tied one-decimal scores, some users only in one."""
    rng = np.random.default_rng(11)
    rows = []
    for run, users in (("a", range(30)), ("b", range(5, 35))):
        for user in users:
            for item in rng.choice(np.arange(90, 130), size=int(rng.integers(1, 9)), replace=False):
                rows.append((run, f"u{user}", int(item), round(float(rng.random()), 1)))
    return pd.DataFrame(rows, columns=["run_id", "user_id", "item_id", "score"])


@pytest.mark.spark
def test_spark_equals_the_local_engine(spark):
    """On Spark DataFrames both measures equal the in-process values to the bit, their
    counts too (users absent from the reference, lists shorter than k), and each user's
    value on Spark is the local one."""
    from sparkeval.diversity.reference_values import spark_reference_per_user

    runs = _random_runs()
    truth = runs.groupby("user_id").head(1)[["user_id", "item_id"]].assign(relevance=1)
    for profile, measures in (
        ("rectools", "Precision@4,Intersection@4,Intersection@7"),
        ("replay", "Precision@4,Unexpectedness@4,Unexpectedness@7"),
    ):
        held = sparkeval.evaluate_recommendations(
            None, runs, truth, measures, compat=profile, reference_run="b"
        )
        on_spark = sparkeval.evaluate_recommendations(
            spark, spark.createDataFrame(runs), spark.createDataFrame(truth), measures,
            compat=profile, reference_run="b",
        )  # fmt: skip
        try:
            assert on_spark.report["runs"] == held.report["runs"]
        finally:
            on_spark.unpersist()
        counts = held.report["runs"]["a"]["set_measures"]
        assert all(block["users_absent_from_reference"] == 5 for block in counts.values())
    for kind in ("intersection", "unexpectedness"):
        lists = _lists(runs[runs["run_id"] == "a"], 4)
        ref = _lists(runs[runs["run_id"] == "b"], 4)
        local = local_reference_per_user(kind, lists, ref, 4)
        rows = (
            spark_reference_per_user(
                kind, spark.createDataFrame(lists), spark.createDataFrame(ref), 4
            )
            .orderBy("query_id")
            .collect()
        )
        assert [r["query_id"] for r in rows] == local["query_id"].tolist()
        assert [r["value"] for r in rows] == local["value"].tolist()
