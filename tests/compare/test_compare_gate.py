"""Gate conditions: parsing (no eval) and evaluation on hand-made comparison rows."""

from __future__ import annotations

import math

import pytest

from sparkeval.compare.gate import drop_of, evaluate_gate, parse_condition
from sparkeval.compare.pipeline import canonical_measure
from sparkeval.errors import ConfigError


def test_parse_forms() -> None:
    c = parse_condition("nDCG@10 < 0.30")
    assert (c.measure, c.kind, c.op, c.threshold, c.p_field) == ("nDCG@10", "mean", "<", 0.3, None)
    c = parse_condition("  AP(rel=2)>=.5 ")
    assert (c.measure, c.op, c.threshold) == ("AP(rel=2)", ">=", 0.5)
    c = parse_condition("nDCG@10 drop > 1% p<0.05")
    assert (c.kind, c.threshold, c.relative, c.p_field, c.p_op, c.p_threshold) == (
        "drop",
        0.01,
        True,
        "p_randomization_holm",
        "<",
        0.05,
    )
    c = parse_condition("map drop >= 0.01 p_ttest<=0.1", canonical_measure)
    assert (c.measure, c.relative, c.p_field, c.p_op) == ("AP", False, "p_ttest_holm", "<=")
    c = parse_condition("ndcg_cut_10 <= 1e-1", canonical_measure)
    assert (c.measure, c.threshold) == ("nDCG@10", 0.1)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "nDCG@10",
        "nDCG@10 == 0.3",
        "nDCG@10 < abc",
        "nDCG@10 < 30%",  # percent only for drops
        "nDCG@10 < 0.3 p<0.05",  # p only for drops
        "nDCG@10 drop > 1% p<2",
        "nDCG@10 drop > 1% q<0.05",
        "__import__('os').system('true') < 1",
        "nDCG@10 < 0.3; rm -rf /",
    ],
)
def test_bad_conditions_are_config_errors(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_condition(text)


def test_unknown_measure_with_canonicaliser() -> None:
    def strict(name: str) -> str:
        raise ValueError(f"unknown measure {name!r}")

    with pytest.raises(ConfigError, match="unknown measure"):
        parse_condition("Foo@3 < 0.2", strict)


def test_drop_direction_and_relative() -> None:
    assert drop_of(0.45, 0.5, True, False) == pytest.approx(0.05)
    assert drop_of(0.45, 0.5, True, True) == pytest.approx(0.1)
    # lower is better (an error measure): going up is a drop
    assert drop_of(0.6, 0.5, False, True) == pytest.approx(0.2)
    assert drop_of(0.4, 0.5, False, False) == pytest.approx(-0.1)
    assert drop_of(0.0, 0.0, True, True) == 0.0
    assert drop_of(-0.1, 0.0, True, True) == math.inf


ROWS = [
    # A: mean 0.50 vs 0.60 (drop 0.10, 16.7%), significant by randomization only
    {
        "run_id": "A",
        "measure": "nDCG@10",
        "mean": 0.50,
        "baseline_mean": 0.60,
        "p_randomization_holm": 0.01,
        "p_ttest_holm": 0.2,
    },
    # B: mean 0.595 vs 0.60 (drop 0.005, 0.83%), not significant
    {
        "run_id": "B",
        "measure": "nDCG@10",
        "mean": 0.595,
        "baseline_mean": 0.60,
        "p_randomization_holm": 0.7,
        "p_ttest_holm": 0.6,
    },
]
MEANS = {"A": {"nDCG@10": 0.52}, "B": {"nDCG@10": 0.61}, "base": {"nDCG@10": 0.1}}


def _gate(*texts: str) -> list[dict]:
    conds = [parse_condition(t) for t in texts]
    return evaluate_gate(conds, ROWS, MEANS, lambda m: True, runs=["A", "B"])


def test_gate_mean_condition_uses_each_runs_own_mean() -> None:
    fails = _gate("nDCG@10 < 0.55")
    assert [f["run_id"] for f in fails] == ["A"]
    assert fails[0]["value"] == 0.52
    assert "nDCG@10 mean 0.52 < 0.55" in fails[0]["message"]
    assert _gate("nDCG@10 < 0.5") == []  # the baseline's 0.1 is not gated


def test_gate_drop_conditions() -> None:
    assert [f["run_id"] for f in _gate("nDCG@10 drop > 1%")] == ["A"]
    assert [f["run_id"] for f in _gate("nDCG@10 drop > 0.5%")] == ["A", "B"]
    assert [f["run_id"] for f in _gate("nDCG@10 drop > 0.001")] == ["A", "B"]
    assert [f["run_id"] for f in _gate("nDCG@10 drop > 0.5% p<0.05")] == ["A"]
    assert _gate("nDCG@10 drop > 0.5% p_ttest<0.05") == []
    fails = _gate("nDCG@10 drop > 1% p<0.05")
    assert fails[0]["value"] == pytest.approx(1 / 6)
    assert "drop 16.7% > 1%" in fails[0]["message"]
    assert "p_randomization_holm 0.01 < 0.05" in fails[0]["message"]


def test_gate_undefined_values_fail() -> None:
    rows = [
        {
            "run_id": "C",
            "measure": "AP",
            "mean": math.nan,
            "baseline_mean": math.nan,
            "p_randomization_holm": math.nan,
            "p_ttest_holm": math.nan,
        }
    ]
    conds = [parse_condition("AP drop > 0.01"), parse_condition("AP < 0.2")]
    fails = evaluate_gate(conds, rows, {"C": {"AP": math.nan}}, lambda m: True, runs=["C"])
    assert len(fails) == 2
    assert "no paired queries" in fails[0]["message"]
    assert "undefined" in fails[1]["message"]
