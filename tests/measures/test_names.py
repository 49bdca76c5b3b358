"""Measure names: canonical and trec_eval styles, sets and errors."""

from __future__ import annotations

import pytest

from sparkeval.errors import MeasureError
from sparkeval.measures.names import (
    ALL_TREC,
    OFFICIAL,
    SET_MEASURES,
    SETS,
    UnknownMeasureError,
    closest_measures,
    parse_measure,
    parse_measures,
    split_measure_list,
)


@pytest.mark.parametrize(
    ("text", "canonical", "trec"),
    [
        ("nDCG@10", "nDCG@10", "ndcg_cut_10"),
        ("ndcg_cut_10", "nDCG@10", "ndcg_cut_10"),
        ("ndcg", "nDCG", "ndcg"),
        ("map", "AP", "map"),
        ("MAP", "AP", "map"),
        ("AP@100", "AP@100", "map_cut_100"),
        ("map_cut_100", "AP@100", "map_cut_100"),
        ("P_5", "P@5", "P_5"),
        ("recall_100", "R@100", "recall_100"),
        ("recip_rank", "RR", "recip_rank"),
        ("MRR", "RR", "recip_rank"),
        ("Success@10", "Success@10", "success_10"),
        ("num_rel_ret", "NumRelRet", "num_rel_ret"),
        ("gm_map", "gm_map", "gm_map"),
        ("RR@10", "RR@10", None),
    ],
)
def test_names_round_trip(text: str, canonical: str, trec: str | None) -> None:
    m = parse_measure(text)
    assert m.name == canonical
    assert m.trec_name() == trec


def test_rel_parameter_and_trec_name() -> None:
    m = parse_measure("AP(rel=2)")
    assert m.name == "AP(rel=2)"
    assert m.trec_name(rel_level=1) is None  # trec_eval cannot express it beside -l 1
    assert m.trec_name(rel_level=2) == "map"  # ... but -l 2 does


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("P", "needs a cutoff"),
        ("P@0", "cutoff must be >= 1"),
        ("P@-3", "cutoff must be >= 1"),
        ("nDCG@ten", "not a whole number"),
        ("AP(x=1)", "unknown parameter"),
        ("AP(rel=-1)", "must be >= 0"),
        ("AP(rel=1.5)", "not a valid int"),
        ("NumRet@5", "takes no @k"),
        ("Bogus", "unknown measure 'Bogus'"),
        ("__import__('os')", "unknown measure"),
    ],
)
def test_bad_names_are_clear_errors(text: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=None) as info:
        parse_measure(text)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("typed", "closest"),
    [
        ("nDGC@10", ["nDCG@10", "RnDCG", "DCG@10"]),  # RnDCG takes no cutoff: none kept
        ("ndcg_cutt_5", ["ndcg_cut_5", "map_cut_5", "ndcg_score"]),  # trec_eval names keep the 5
        ("Succes(rel=2)@5", ["Success(rel=2)@5", "success_10", "AUC"]),
        ("Precison", ["Precision@10", "Rprec", "recip_rank"]),  # P needs a cutoff
        ("mapp", ["MAP", "GMAP", "PAP@10"]),  # distinct measures: not MAP, AP and map
        ("offical", ["official", "RocAuc@10", "Recall@10"]),  # sets too
        ("hit_rat@10", ["hit_rate@10", "Hits@10", "relative_P_10"]),  # one spelling of Success
    ],
)
def test_unknown_measure_is_one_short_line_with_the_closest_names(
    typed: str, closest: list[str]
) -> None:
    with pytest.raises(UnknownMeasureError) as info:
        parse_measure(typed)
    text = str(info.value)
    assert closest_measures(typed) == closest
    assert text == (
        f"unknown measure {typed!r}; did you mean {closest[0]}, {closest[1]} or {closest[2]}? "
        "('sparkeval measures' lists every measure)"
    )
    for suggestion in closest:  # each suggestion is valid
        assert suggestion in SETS or parse_measure(suggestion)


def test_no_measure_names_point_to_the_catalogue() -> None:
    for spec in ("", " , "):
        with pytest.raises(UnknownMeasureError, match="'sparkeval measures' lists every measure"):
            parse_measures(spec)


def test_sets_expand_in_trec_order_without_repeats() -> None:
    names = [m.trec_name() for m in parse_measures("official")]
    available = [n for n in OFFICIAL if n in names]
    assert names == available
    assert {"map", "P_10", "num_ret", "gm_map", "recip_rank", "Rprec"} <= set(names)
    all_trec = [m.trec_name() for m in parse_measures("all_trec, map, P_5")]
    assert len(all_trec) == len(set(all_trec))
    assert set(all_trec) <= set(ALL_TREC)


def test_split_keeps_parameters_together() -> None:
    assert split_measure_list("nDCG(gain=exp)@5, AP(rel=2) P@5") == [
        "nDCG(gain=exp)@5",
        "AP(rel=2)",
        "P@5",
    ]


SET = "a measure of the whole recommendation set"


@pytest.mark.parametrize(
    ("typed", "advice"),
    [
        ("RMSE", "a rating error: sparkeval rating-errors computes it"),
        ("mae", "a rating error: sparkeval rating-errors computes it"),
        ("Coverage@10", f"{SET}: sparkeval diversity computes it as catalog_coverage"),
        ("Novelty@10", f"{SET}: sparkeval diversity computes it as novelty"),
        ("ILD", f"{SET}: sparkeval diversity computes it as intra_list_diversity"),
        ("Personalization@10", f"{SET}: sparkeval diversity computes it as inter_user_diversity"),
        ("Surprisal@10", f"{SET}, which sparkeval does not compute"),
        ("MeanInvUserFreq@5", f"{SET}, which sparkeval does not compute"),
    ],
)
def test_a_measure_of_another_command_is_refused_naming_that_command(
    typed: str, advice: str
) -> None:
    with pytest.raises(UnknownMeasureError) as info:
        parse_measure(typed)
    assert str(info.value) == f"{typed!r} is {advice} ('sparkeval measures' lists every measure)"


def test_every_value_a_set_measure_names_is_one_diversity_reports() -> None:
    # the advice names values of sparkeval diversity's summary or per-user table
    reported = {"catalog_coverage", "novelty", "serendipity", "intra_list_diversity"}
    reported |= {"inter_user_diversity", "gini"}
    assert {v for v in SET_MEASURES.values() if v is not None} <= reported


def test_a_denominator_of_k_needs_a_cutoff() -> None:
    # RecTools' MAP(k, divide_by_k=True) divides by k: without @k there is no k
    assert parse_measure("AP(denom=k)@10").name == "AP(denom=k)@10"
    with pytest.raises(MeasureError, match=r"denom=k needs a cutoff, e\.g\. AP\(denom=k\)@10"):
        parse_measure("AP(denom=k)")
