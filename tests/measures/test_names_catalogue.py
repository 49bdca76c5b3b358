"""Measure names: all_trec, trec_eval's parameter syntax, round trips, and the catalogue."""

from __future__ import annotations

import pytest

from sparkeval.cli import run_argv
from sparkeval.measures import REGISTRY
from sparkeval.measures.intent_aware_names import CATALOGUE as INTENT_AWARE
from sparkeval.measures.names import (
    ALL_TREC,
    OFFICIAL,
    parse_measure,
    parse_measures,
    parse_trec_request,
    split_measure_list,
)
from sparkeval.measures.rating import RATING_ERRORS

CANONICAL = [
    "IPrec(recall=0.1)",
    "Rprec_mult(mult=5)",
    "nDCG(gain=exp)@10",
    "nDCG(gains=1:3;2:9)",
    "Utility(weights=2;-1;0;0)",
    "11pt(recalls=0.2;0.5;0.8)",
    "ERR(gmax=3)@20",
    "pFound(pbreak=0.2)@10",
    "F(beta=0.5)@10",
    "RC(weight=log)",
    "RBP(p=0.8)",
    "RBP(p=0.8,rel=2)",
    "RBP(p=0.9,rel=1)",  # p stays in the name: with rel, it must be given
    "AP(rel=2)@5",
    "CG(gain=exp)@5",
    "DCG(gain=jarvelin)",
    "Judged@10",
    "WTA",
    "AUC",
    "KendallTau",
    "SpearmanRho",
    "SetF(beta=2)",
    "Unjudged@20",
    "RelP@10",
    "RnDCG(gains=1:2)",
    "SDCG(max_rel=3)@10",
    "NERR10(p=0.8,min_rel=1,max_rel=3)",
    "BPM(T=2,max_rel=3)@20",
]


def test_all_trec_is_complete_and_in_order() -> None:
    ms = parse_measures("all_trec")
    assert [m.trec_name() for m in ms] == list(ALL_TREC)
    assert [m.trec_name() for m in parse_measures("official")] == list(OFFICIAL)


@pytest.mark.parametrize("name", CANONICAL)
def test_canonical_round_trip(name: str) -> None:
    m = parse_measure(name)
    assert m.name == name
    assert parse_measure(m.name) == m
    trec = m.trec_name()
    if trec is not None and "=" not in trec and "," not in trec:
        assert parse_measure(trec) == m


def test_every_trec_name_round_trips() -> None:
    for m in parse_measures("all_trec"):
        assert parse_measure(m.trec_name()) == m
        assert parse_measure(m.name) == m


@pytest.mark.parametrize(
    ("request_text", "names", "trec"),
    [
        ("P.5,7,3", ["P@3", "P@5", "P@7"], ["P_3", "P_5", "P_7"]),
        ("recall.20,2000", ["R@20", "R@2000"], ["recall_20", "recall_2000"]),
        (
            "ndcg_cut.10,20,23.4",
            ["nDCG@10", "nDCG@20", "nDCG@23"],
            ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"],
        ),
        (
            "success.2,5,20",
            ["Success@2", "Success@5", "Success@20"],
            ["success_2", "success_5", "success_20"],
        ),
        (
            "Rprec_mult.5.0,0.2,0.35",
            ["Rprec_mult(mult=0.2)", "Rprec_mult(mult=0.35)", "Rprec_mult(mult=5)"],
            ["Rprec_mult_0.20", "Rprec_mult_0.35", "Rprec_mult_5.00"],
        ),
        (
            "iprec_at_recall..10,.20,.25",
            ["IPrec(recall=0.1)", "IPrec(recall=0.2)", "IPrec(recall=0.25)"],
            ["iprec_at_recall_0.10", "iprec_at_recall_0.20", "iprec_at_recall_0.25"],
        ),
        ("utility.2,-1,0,0", ["Utility(weights=2;-1;0;0)"], ["utility_2,-1,0,0"]),
        ("11pt_avg..25,.5,.75", ["11pt(recalls=0.25;0.5;0.75)"], ["11pt_avg_.25,.5,.75"]),
        ("ndcg.1=3,2=9,4=4.5", ["nDCG(gains=1:3;2:9;4:4.5)"], ["ndcg_1=3,2=9,4=4.5"]),
        ("unj.3", ["Unjudged@3"], ["unj_3"]),
        # trec_eval prints set_F_ and the parameter as given; beta = 1 is the default
        ("set_F.0.5", ["SetF(beta=0.5)"], ["set_F_0.5"]),
        ("set_F.1.0", ["SetF"], ["set_F_1.0"]),
        ("set_F.2", ["SetF(beta=2)"], ["set_F_2"]),
    ],
)
def test_trec_parameter_syntax(request_text: str, names: list[str], trec: list[str]) -> None:
    ms = parse_trec_request(request_text)
    assert [m.name for m in ms] == names
    assert [m.trec_name() for m in ms] == trec
    assert [m.name for m in parse_measures(request_text + " map")] == [*names, "AP"]


@pytest.mark.parametrize(
    "bad",
    [
        "P.5,5",
        "P.0,5",
        "IPrec",
        "IPrec(recall=2)",
        "nDCG(gain=cubic)",
        "ndcg.1=x",
        "utility.1,2",
        "Rprec_mult(mult=-1)",
        "RBP(p=1.5)",
        "RBP(rel=2)",  # ir_measures' p defaults to 0.8, trec_eval's to 0.9
        "set_F.0.5,2",  # trec_eval would silently use only 0.5
        "set_F.x",
        "SetF(beta=-1)",
        "nDCG(foo=1)",
        "WTA@5",
        "P",
    ],
)
def test_invalid_requests(bad: str) -> None:
    with pytest.raises(ValueError):
        for m in parse_measures(bad):
            if m.family == "Utility":
                from sparkeval.measures import RankedBatch

                m.compute(RankedBatch.from_lists([[1]], [[1]]), 1)


def test_split_measure_list() -> None:
    assert split_measure_list("P.5,7,3 map,ndcg.1=3,2=9, nDCG@10,AP(rel=2,x=1)") == [
        "P.5,7,3",
        "map",
        "ndcg.1=3,2=9",
        "nDCG@10",
        "AP(rel=2,x=1)",
    ]
    assert split_measure_list("utility.2,-1,0,0,P@5") == ["utility.2,-1,0,0", "P@5"]
    assert split_measure_list("11pt_avg..25,.5,.75") == ["11pt_avg..25,.5,.75"]
    assert split_measure_list("P_5,P_10") == ["P_5", "P_10"]


def _run_command(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert run_argv(["measures", *argv]) == 0
    return capsys.readouterr().out


def test_measures_command_text(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run_command(capsys)
    for fam in REGISTRY.values():
        assert fam.description in out
    assert "iprec_at_recall_<recall>" in out and "RMSE_per_user" in out
    assert "ERR-IA@k (ir_measures ERR_IA@k" in out and "--subtopic-qrels" in out


def test_measures_command_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run_command(capsys, "--format", "markdown")
    rows = [line for line in out.splitlines() if line.startswith("| `")]
    assert len(rows) == len(REGISTRY) + len(RATING_ERRORS) + len(INTENT_AWARE)
    assert "| `alpha-nDCG@k` | `alpha_nDCG@k` |" in out
    assert all(line.count(" | ") >= 3 for line in rows)
    one = _run_command(capsys, "nDCG", "--format", "markdown")
    assert "`ndcg_cut_<k>`" in one and "RMSE" not in one


def test_unknown_family_is_one_short_line() -> None:
    from sparkeval.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        run_argv(["measures", "nDGC"])
    assert str(info.value) == (
        "unknown measure family 'nDGC'; did you mean nDCG, RnDCG or DCG? "
        "('sparkeval measures' without a name lists them all)"
    )
