"""RePlay's aggregation modes under ``compat="replay"``: ``NDCG-Median@k`` and
``NDCG-ConfidenceInterval@k`` (RePlay's ``mode=Median()`` and
``mode=ConfidenceInterval(alpha=0.95)``), on every engine.

Expected values: hand derivations with the standard library (``statistics.median``,
``statistics.stdev``, ``statistics.NormalDist``) of per-user values derived by hand,
and RePlay's own numbers (tests/metrics/test_metrics.py::test_descriptors); RePlay's
docstring examples are in tests/conformance/test_peer_replay.py. Spark (the driver's
and the distributed plan) gives the in-process bits.
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sparkeval
from sparkeval.compat import plan_compat
from sparkeval.engine.aggregation_modes import half_width, median, wide_values
from sparkeval.errors import ConfigError
from tests.jobs import CLI, job_env

Z95 = statistics.NormalDist().inv_cdf(0.975)  # 1.959963984540054

#: four users: u1 hits at rank 1 (P@2 1/2, nDCG@2 1, RR@2 1), u2 at ranks 1 and 2 (P@2 1,
#: nDCG@2 1, RR@2 1), u3 at rank 2 of 2 relevant (P@2 1/2, nDCG@2 (1/log2 3) / (1 +
#: 1/log2 3), RR@2 1/2), u4 no hit (0)
RECS = pd.DataFrame(
    {
        "user_id": ["u1", "u1", "u2", "u2", "u3", "u3", "u4", "u4"],
        "item_id": ["a", "b", "a", "c", "b", "a", "b", "c"],
        "score": [2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0],
    }
)
TRUTH = pd.DataFrame(
    {
        "user_id": ["u1", "u2", "u2", "u3", "u3", "u4"],
        "item_id": ["a", "a", "c", "a", "d", "d"],
    }
)
NDCG_U3 = (1 / math.log2(3)) / (1 + 1 / math.log2(3))


def test_median_by_hand() -> None:
    assert median(np.array([0.3, 0.1, 0.2])) == 0.2
    assert median(np.array([0.0, 1.0, 0.25, 0.5])) == (0.25 + 0.5) / 2  # even: the middle two
    assert median(np.array([0.7])) == 0.7
    assert median(np.zeros(0)) is None


def test_half_width_by_hand() -> None:
    values = [0.5, 1.0, 0.5, 0.0]
    want = Z95 * statistics.stdev(values) / math.sqrt(4)  # stdev: ddof 1
    assert half_width(np.array(values), 0.95) == pytest.approx(want, rel=1e-15)
    assert half_width(np.array([0.4]), 0.95) == 0.0  # one user: RePlay's polars and Spark paths
    assert half_width(np.zeros(0), 0.95) is None


def test_half_width_of_replays_descriptor_test() -> None:
    """test_metrics.py::test_descriptors: ConfidenceInterval(alpha=0.05) of Precision@5
    per user 1.0, 1.0, 0.6 is 0.00836 (abs 1e-5)."""
    assert half_width(np.array([1.0, 1.0, 0.6]), 0.05) == pytest.approx(0.00836, abs=1e-5)


def test_wide_values_leave_out_undefined_and_unevaluated_rows() -> None:
    wide = pa.table(
        {
            "run_id": ["a", "a", "a", "b"],
            "query_id": ["q1", "q2", "q3", "q1"],
            "evaluated": [True, True, False, True],
            "m0": [0.5, None, 0.25, 1.0],
        }
    )
    [got] = wide_values(wide, [0]).values()
    assert {k: v.tolist() for k, v in got.items()} == {"a": [0.5], "b": [1.0]}


def test_even_number_of_users_in_process() -> None:
    names = ["NDCG-Median@2", "Precision-ConfidenceInterval@2", "MRR-Median@2", "NDCG@2"]
    ev = sparkeval.evaluate_recommendations(None, RECS, TRUTH, names, compat="replay")
    run = ev.report["runs"]["run"]
    ndcg = [1.0, 1.0, NDCG_U3, 0.0]
    assert run["measures"]["NDCG-Median@2"] == pytest.approx(statistics.median(ndcg), abs=1e-15)
    precision = [0.5, 1.0, 0.5, 0.0]
    want = Z95 * statistics.stdev(precision) / 2
    assert run["measures"]["Precision-ConfidenceInterval@2"] == pytest.approx(want, rel=1e-14)
    assert run["measures"]["MRR-Median@2"] == statistics.median([1.0, 1.0, 0.5, 0.0])
    assert run["modes"]["Precision-ConfidenceInterval@2"] == {
        "measure": "P@2", "values": 4, "alpha": 0.95,
    }  # fmt: skip
    assert run["ci95"]["NDCG-Median@2"] is None and run["undefined"]["NDCG-Median@2"] == 0
    # the modes have no per-user rows; their base measures do
    assert set(ev.per_query["measure"]) == {"nDCG@2", "P@2", "RR@2"}
    assert list(ev.summary["measure"]) == [
        "nDCG@2", "P@2", "RR@2", "NDCG-Median@2", "Precision-ConfidenceInterval@2",
        "MRR-Median@2",
    ]  # fmt: skip
    assert list(ev.summary["queries"])[-3:] == [4, 4, 4]
    assert ev.report["parameters"]["modes"] == names[:3]
    definitions = ev.report["compat"]["definitions"]
    assert definitions["NDCG-Median@2"].startswith("median of the per-user values of nDCG(")
    assert "ConfidenceInterval(alpha=0.95)" in definitions["Precision-ConfidenceInterval@2"]


def test_names_requested_keep_the_spelling_typed() -> None:
    ev = sparkeval.evaluate_recommendations(
        None, RECS, TRUTH, "ndcg-median@2,HitRate@2", compat="replay", names="requested"
    )
    assert list(ev.summary["measure"]) == ["nDCG@2", "HitRate@2", "ndcg-median@2"]
    assert ev.report["compat"]["measures"]["ndcg-median@2"] == "NDCG-Median@2"
    # canonical names: RePlay's own, whatever the case typed
    canonical = sparkeval.evaluate_recommendations(
        None, RECS, TRUTH, "ndcg-median@2,HitRate@2", compat="replay"
    )
    assert list(canonical.summary["measure"]) == ["nDCG@2", "Success@2", "NDCG-Median@2"]


def test_modes_beside_the_measures_of_the_recommendation_set() -> None:
    ev = sparkeval.evaluate_recommendations(
        None, RECS, TRUTH, "NDCG-Median@2,Coverage@2", compat="replay", train=TRUTH
    )
    assert list(ev.summary["measure"]) == ["nDCG@2", "NDCG-Median@2", "Coverage@2"]


def test_plan_and_refusals() -> None:
    plan = plan_compat("replay", ["HitRate-Median@5", "MAP-ConfidenceInterval@5"])
    assert [m.name for m in plan.measures] == ["Success@5", "AP(denom=min_k)@5"]
    assert [(m.name, m.mode, m.base.name) for m in plan.modes] == [
        ("HitRate-Median@5", "median", "Success@5"),
        ("MAP-ConfidenceInterval@5", "confidence_interval", "AP(denom=min_k)@5"),
    ]
    with pytest.raises(ConfigError, match=r"'Foo-Median@5' under --compat replay: unknown"):
        plan_compat("replay", ["Foo-Median@5"])
    with pytest.raises(ConfigError, match="unknown measure 'NDCG-Median@5'"):
        plan_compat("trec", ["NDCG-Median@5"])  # a RePlay spelling, under its profile only


def _evaluate(directory: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            *CLI, "evaluate", "--run", "recs.parquet", "--qrels", "truth.parquet",
            "--compat", "replay", "--relevance", "grade", "--measures",
            "NDCG-Median@2,NDCG-ConfidenceInterval@2", *extra,
        ],
        cwd=directory, env=job_env(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def test_cli_local_engine(tmp_path: Path) -> None:
    """``evaluate --engine local`` (grades read as they are) asked for the modes alone:
    stdout, summary.json, summary.parquet, and per_query.parquet without mode rows; the
    dry run names the modes with their base measure."""
    RECS.to_parquet(tmp_path / "recs.parquet", index=False)
    TRUTH.assign(rating=1).to_parquet(tmp_path / "truth.parquet", index=False)
    dry = _evaluate(tmp_path, "--dry-run", "--out", "dry")
    assert dry.returncode == 0, dry.stderr
    assert "measures: nDCG@2, NDCG-Median@2 (of nDCG@2), NDCG-ConfidenceInterval@2" in dry.stdout
    result = _evaluate(tmp_path, "--engine", "local", "--out", "out")
    assert result.returncode == 0, result.stderr
    cells = [line.split("\t") for line in result.stdout.splitlines()]
    shown = {cell[0].strip(): cell[2] for cell in cells}  # name, "all", value
    assert float(shown["NDCG-Median@2"]) == pytest.approx((NDCG_U3 + 1) / 2, abs=1e-4)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    ndcg = [1.0, 1.0, NDCG_U3, 0.0]
    want = Z95 * statistics.stdev(ndcg) / 2
    measures = summary["runs"]["recs"]["measures"]
    assert measures["NDCG-ConfidenceInterval@2"] == pytest.approx(want, rel=1e-14)
    per_query = pq.read_table(tmp_path / "out" / "per_query.parquet").to_pandas()
    assert set(per_query["measure"]) == {"nDCG@2"}
    rows = pq.read_table(tmp_path / "out" / "summary.parquet").to_pandas()
    assert list(rows["measure"]) == ["nDCG@2", "NDCG-Median@2", "NDCG-ConfidenceInterval@2"]


def _random_recs(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """30 users (an even count) with 8 recommendations each and 1..5 truth items."""
    rng = np.random.default_rng(seed)
    rows, truth = [], []
    for user in range(30):
        items = rng.choice(40, size=8, replace=False)
        rows += [(f"u{user}", f"i{i}", round(float(rng.random()), 2)) for i in items]
        truth += [(f"u{user}", f"i{i}") for i in rng.choice(40, size=rng.integers(1, 6))]
    recs = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    truth_frame = pd.DataFrame(truth, columns=["user_id", "item_id"]).drop_duplicates()
    return recs, truth_frame


MODE_NAMES = [
    f"{metric}-{mode}@5"
    for metric in ("NDCG", "MAP", "Precision", "Recall", "HitRate", "MRR", "RocAuc")
    for mode in ("Median", "ConfidenceInterval")
]


@pytest.mark.spark
def test_spark_gives_the_in_process_bits(spark, monkeypatch) -> None:
    from sparkeval.engine.plans import driver_plan

    recs, truth = _random_recs(3)
    local = sparkeval.evaluate_recommendations(None, recs, truth, MODE_NAMES, compat="replay")
    want = local.report["runs"]["run"]
    frames = spark.createDataFrame(recs), spark.createDataFrame(truth)
    in_driver = sparkeval.evaluate_recommendations(spark, *frames, MODE_NAMES, compat="replay")
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1)  # the same inputs, distributed
    distributed = sparkeval.evaluate_recommendations(
        spark, *frames, MODE_NAMES, compat="replay", buckets=3
    )
    try:
        for ev in (in_driver, distributed):
            run = ev.report["runs"]["run"]
            assert run["measures"] == want["measures"]  # the same bits
            assert run["modes"] == want["modes"]
            got = ev.summary.toPandas()
            assert got.to_dict("list") == local.summary.to_dict("list")
    finally:
        in_driver.unpersist()
        distributed.unpersist()
