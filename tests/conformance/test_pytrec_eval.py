"""Differential tests against pytrec_eval (trec_eval 9.x in-process) on random data.

Every trec measure that pytrec_eval computes per query is compared on every
query, except iprec_at_recall and 11pt_avg, whose recall cut-offs trec_eval 10
rounds differently (those are covered by the trec_eval 10 files).
"""

from __future__ import annotations

import math

import pytest

from sparkeval.engine.worker.assemble import EvalOptions, evaluate_frames
from sparkeval.formats import measure_column
from sparkeval.measures.names import parse_measures
from tests.random_collection import random_collection

pytrec_eval = pytest.importorskip("pytrec_eval")

TREC_MEASURES = {
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "Rprec",
    "bpref",
    "recip_rank",
    "P",
    "recall",
    "infAP",
    "Rprec_mult",
    "utility",
    "binG",
    "G",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
}
OURS = "all_trec"
EXCLUDED_PREFIXES = ("iprec_at_recall", "11pt_avg", "gm_", "rbp", "unj")


def _expected(run, qrels, rel_level: int, measures: set[str] = TREC_MEASURES):
    qrel = {}
    for q, d, g in qrels.itertuples(index=False):
        qrel.setdefault(q, {})[d] = int(g)
    ranking = {}
    for _, q, d, s in run.itertuples(index=False):
        ranking.setdefault(q, {})[d] = float(s)
    evaluator = pytrec_eval.RelevanceEvaluator(qrel, measures, relevance_level=rel_level)
    return evaluator.evaluate(ranking)


@pytest.mark.parametrize(("seed", "rel_level"), [(1, 1), (2, 1), (3, 2), (4, 1), (5, 3)])
def test_matches_pytrec_eval(seed: int, rel_level: int) -> None:
    run, qrels = random_collection(seed, queries=40)
    expected = _expected(run, qrels, rel_level)
    measures = [
        m
        for m in parse_measures(OURS)
        if m.spec.per_query and not m.trec_name(rel_level).startswith(EXCLUDED_PREFIXES)
    ]
    wide = evaluate_frames(run, qrels, measures, EvalOptions(queries="both", rel_level=rel_level))
    wide = wide[wide["evaluated"]]
    assert set(wide["query_id"]) == set(expected)
    compared = 0
    bad = []
    for i, m in enumerate(measures):
        name = m.trec_name(rel_level)
        for q, value in zip(wide["query_id"], wide[measure_column(i)], strict=True):
            want = expected[q][name]
            compared += 1
            if not math.isclose(value, want, rel_tol=1e-9, abs_tol=1e-9):
                bad.append((name, q, value, want))
    assert compared >= 40 * 75
    assert not bad, f"{len(bad)} of {compared} values differ, e.g. {bad[:10]}"


@pytest.mark.parametrize("beta", ["0.25", "0.5", "1", "2"])
@pytest.mark.parametrize("rel_level", [1, 2])
def test_set_f_beta_is_trec_evals_unsquared_weight(beta: str, rel_level: int) -> None:
    # pytrec_eval reads -m set_F.<beta> (and reports it as set_F): (1+beta) P R / (beta P + R)
    run, qrels = random_collection(11, queries=40)
    expected = _expected(run, qrels, rel_level, {f"set_F.{beta}"})
    names = [f"set_F.{beta}", f"SetF(beta={beta})", f"set_F_{beta}"]
    measures = [m for name in names for m in parse_measures(name)]
    assert {m.name for m in measures} == {"SetF" if beta == "1" else f"SetF(beta={beta})"}
    wide = evaluate_frames(run, qrels, measures, EvalOptions(queries="both", rel_level=rel_level))
    wide = wide[wide["evaluated"]]
    assert set(wide["query_id"]) == set(expected)
    for i in range(len(measures)):
        for q, value in zip(wide["query_id"], wide[measure_column(i)], strict=True):
            assert value == pytest.approx(expected[q]["set_F"], rel=1e-12, abs=1e-12), (q, names[i])


@pytest.mark.parametrize("base", ["ndcg_cut", "map_cut", "success", "Rprec_mult", "relative_P"])
def test_bare_trec_names_take_trec_evals_default_parameters(base: str) -> None:
    # pytrec_eval asked for the bare name computes every default parameter of trec_eval
    # (iprec_at_recall's values are compared with trec_eval's outputs elsewhere, as
    # EXCLUDED_PREFIXES says; its defaults are checked by name below)
    run, qrels = random_collection(12, queries=30)
    expected = _expected(run, qrels, 1, {base})
    measures = parse_measures(base)
    wide = evaluate_frames(run, qrels, measures, EvalOptions(queries="both"))
    wide = wide[wide["evaluated"]]
    names = {m.trec_name(1) for m in measures}
    assert names == set(next(iter(expected.values())))  # the same names, every default
    bad = []
    for i, m in enumerate(measures):
        for q, value in zip(wide["query_id"], wide[measure_column(i)], strict=True):
            want = expected[q][m.trec_name(1)]
            if not math.isclose(value, want, rel_tol=1e-9, abs_tol=1e-9):
                bad.append((m.trec_name(1), q, value, want))
    assert not bad, bad[:10]


def test_bare_iprec_at_recall_is_trec_evals_default_usage() -> None:
    # trec_eval's help: "Default usage: -m iprec_at_recall.0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1"
    explicit = parse_measures("iprec_at_recall.0,.1,.2,.3,.4,.5,.6,.7,.8,.9,1")
    assert parse_measures("iprec_at_recall") == explicit
    assert [m.trec_name(1) for m in explicit][::5] == [
        "iprec_at_recall_0.00",
        "iprec_at_recall_0.50",
        "iprec_at_recall_1.00",
    ]
