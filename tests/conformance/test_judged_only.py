"""``judged_only=True`` (trec_eval -J) against pytrec_eval and ir_measures, in process.

trec_eval's -J removes from each ranking every doc without a grade >= 0 in the qrels
(a doc outside the qrels, and a doc the qrels list with a negative grade) before any
measure is computed, and closes up the ranks. The random collections here hold many
such docs, tied scores, negative grades, rankings that condense to nothing and cutoffs
beyond the condensed length; expected values come from pytrec_eval run with
``judged_docs_only_flag=True`` and from ir_measures, never from sparkeval.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sparkeval.engine.worker.assemble import EvalOptions, evaluate_frames
from sparkeval.errors import ConfigError
from sparkeval.formats import measure_column
from sparkeval.measures.names import parse_measure, parse_measures
from tests.random_collection import to_pytrec

pytrec_eval = pytest.importorskip("pytrec_eval")

#: sparkeval measure (judged_only added) -> pytrec_eval key
PAIRS = {
    "P@1": "P_1",
    "P@3": "P_3",
    "P@10": "P_10",
    "P@50": "P_50",
    "R@3": "recall_3",
    "R@10": "recall_10",
    "AP": "map",
    "AP@5": "map_cut_5",
    "AP@50": "map_cut_50",
    "RR": "recip_rank",
    "Rprec": "Rprec",
    "Success@1": "success_1",
    "Success@5": "success_5",
    "nDCG": "ndcg",
    "nDCG@3": "ndcg_cut_3",
    "nDCG@10": "ndcg_cut_10",
    "IPrec(recall=0)": "iprec_at_recall_0.00",
    "IPrec(recall=0.5)": "iprec_at_recall_0.50",
    "IPrec(recall=1)": "iprec_at_recall_1.00",
    "SetP": "set_P",
    "SetRelP": "set_relative_P",
    "SetF": "set_F",
    "SetAP": "set_map",
}
PYTREC_MEASURES = {
    "P.1,3,10,50",
    "recall.3,10",
    "map",
    "map_cut.5,50",
    "recip_rank",
    "Rprec",
    "success.1,5",
    "ndcg",
    "ndcg_cut.3,10",
    "iprec_at_recall",
    "set_P",
    "set_relative_P",
    "set_F",
    "set_map",
    "num_ret",
}


def judged_only(name: str) -> str:
    """``name`` with ``judged_only=True`` added to its parameters."""
    head, at, cut = name.partition("@")
    if head.endswith(")"):
        return f"{head[:-1]},judged_only=True){at}{cut}"
    return f"{head}(judged_only=True){at}{cut}"


def collection(seed: int, queries: int = 25) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(run, qrels): grades -2..3, many retrieved docs outside the qrels, score ties.

    Besides the random queries: ``all-unjudged`` retrieves only docs outside the qrels,
    ``all-negative`` only docs judged with a negative grade (both condense to nothing),
    ``short`` condenses to a single judged doc.
    """
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows = [], []
    for q in range(queries):
        qid = f"q{q:02d}"
        pool = [f"d{q}-{i:02d}" for i in range(60)]
        judged = rng.choice(60, size=int(rng.integers(1, 40)), replace=False)
        for i in judged:
            qrels_rows.append((qid, pool[i], int(rng.choice([-2, -1, 0, 0, 1, 1, 2, 3]))))
        ret = rng.choice(60, size=int(rng.integers(1, 45)), replace=False)
        for i in ret:
            run_rows.append(("run", qid, pool[i], float(rng.integers(0, 8)) / 2))
    qrels_rows += [("all-unjudged", "j1", 1), ("all-unjudged", "j2", 0)]
    run_rows += [("run", "all-unjudged", f"u{i}", float(i)) for i in range(4)]
    qrels_rows += [("all-negative", f"n{i}", -1 - i % 2) for i in range(3)]
    qrels_rows += [("all-negative", "r1", 2)]
    run_rows += [("run", "all-negative", f"n{i}", 1.0) for i in range(3)]
    qrels_rows += [("short", "s1", 1), ("short", "s2", 3), ("short", "s3", -1)]
    run_rows += [("run", "short", d, s) for d, s in (("x", 3.0), ("s3", 2.0), ("s1", 1.0))]
    run = pd.DataFrame(run_rows, columns=["run_id", "query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    return run, qrels


def judged_count(run: pd.DataFrame, qrels: pd.DataFrame, query_id: str) -> int:
    """How many of the query's retrieved docs have a grade >= 0: its condensed length."""
    judged = qrels[(qrels.query_id == query_id) & (qrels.relevance >= 0)]
    return int(run[run.query_id == query_id].doc_id.isin(judged.doc_id).sum())


def ours(
    run: pd.DataFrame, qrels: pd.DataFrame, names: list[str], rel_level: int
) -> dict[tuple[str, str], float]:
    """{(query, name): value} computed in process."""
    measures = parse_measures(names)
    wide = evaluate_frames(run, qrels, measures, EvalOptions(queries="both", rel_level=rel_level))
    return {
        (row["query_id"], name): float(row[measure_column(i)])
        for _, row in wide.iterrows()
        for i, name in enumerate(names)
    }


def pytrec(
    run: pd.DataFrame, qrels: pd.DataFrame, rel_level: int, condensed: bool
) -> dict[str, dict[str, float]]:
    q, r = to_pytrec(run, qrels, "run")
    evaluator = pytrec_eval.RelevanceEvaluator(
        q, PYTREC_MEASURES, relevance_level=rel_level, judged_docs_only_flag=condensed
    )
    return evaluator.evaluate(r)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("rel_level", [1, 2])
def test_judged_only_matches_trec_eval_minus_j(seed: int, rel_level: int) -> None:
    run, qrels = collection(seed)
    names = [judged_only(n) for n in PAIRS] + list(PAIRS)
    got = ours(run, qrels, names, rel_level)
    with_j = pytrec(run, qrels, rel_level, condensed=True)
    without_j = pytrec(run, qrels, rel_level, condensed=False)
    assert with_j["all-unjudged"]["num_ret"] == 0 == with_j["all-negative"]["num_ret"]
    differ = 0
    for qid in with_j:
        for name, key in PAIRS.items():
            expected = with_j[qid][key]
            if math.isnan(expected):
                # trec_eval's interpolated precision of an empty ranking at a cut of 0
                # relevant docs is 0/0; sparkeval gives an empty ranking 0, as everywhere
                assert key.startswith("iprec") and with_j[qid]["num_ret"] == 0
                expected = 0.0
            assert got[(qid, judged_only(name))] == pytest.approx(expected, abs=1e-12), (
                qid,
                name,
            )
            assert got[(qid, name)] == pytest.approx(without_j[qid][key], abs=1e-12)
            differ += abs(expected - without_j[qid][key]) > 1e-9
    assert differ > 50  # the condensed rankings give other values: the test can tell


def test_negative_grades_leave_the_ranking_under_minus_j() -> None:
    # order by score: x (not in the qrels), b (-1), c (0), e (-2), a (1), d (2);
    # trec_eval -J keeps c, a, d: the docs with a grade >= 0
    qrels = {"q": {"a": 1, "b": -1, "c": 0, "d": 2, "e": -2}}
    run = {"q": {"x": 6.0, "b": 5.0, "c": 4.0, "e": 3.0, "a": 1.0, "d": 0.5}}
    measures = {"num_ret", "P_2", "recip_rank", "map"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, measures, judged_docs_only_flag=True).evaluate(
        run
    )["q"]
    assert expected == pytest.approx(
        {"num_ret": 3, "P_2": 1 / 2, "recip_rank": 1 / 2, "map": (1 / 2 + 2 / 3) / 2}
    )
    run_df = pd.DataFrame(
        [("r", "q", d, s) for d, s in run["q"].items()],
        columns=["run_id", "query_id", "doc_id", "score"],
    )
    qrels_df = pd.DataFrame(
        [("q", d, g) for d, g in qrels["q"].items()], columns=["query_id", "doc_id", "relevance"]
    )
    names = ["P(judged_only=True)@2", "RR(judged_only=True)", "AP(judged_only=True)"]
    got = ours(run_df.assign(run_id="run"), qrels_df, names, 1)
    assert [got[("q", n)] for n in names] == pytest.approx([1 / 2, 1 / 2, (1 / 2 + 2 / 3) / 2])


def test_hand_derived_condensed_values() -> None:
    # ranking: u (unjudged), g2, u, g0, g1 (pooled -1 grade), g3; R = 2 at level 2
    # condensed: g2, g0, g3 -> P@2 = 1/2, AP = (1/1 + 2/3) / 2, nDCG@2 over gains 2, 0
    run = pd.DataFrame(
        [("run", "q", d, float(6 - i)) for i, d in enumerate(["u1", "a", "u2", "b", "c", "d"])],
        columns=["run_id", "query_id", "doc_id", "score"],
    )
    qrels = pd.DataFrame(
        [("q", "a", 2), ("q", "b", 0), ("q", "c", -1), ("q", "d", 3), ("q", "e", 1)],
        columns=["query_id", "doc_id", "relevance"],
    )
    names = [
        "P(judged_only=True)@2",
        "AP(judged_only=True)",
        "nDCG(judged_only=True)@2",
        "SetP(judged_only=True)",
        "P(judged_only=True)@10",
    ]
    got = ours(run, qrels, names, 2)
    idcg2 = 3 + 2 / np.log2(3)
    assert [got[("q", n)] for n in names] == pytest.approx(
        [1 / 2, (1 + 2 / 3) / 2, 2 / idcg2, 2 / 3, 2 / 10]
    )


ir_measures = pytest.importorskip("ir_measures", reason="the test extra installs ir_measures")

#: ir_measures names ir_measures computes (through pytrec_eval) with judged_only=True
IR_MEASURES_NAMES = [
    "P(judged_only=True)@5",
    "P(rel=2,judged_only=True)@10",
    "R(judged_only=True)@10",
    "AP(judged_only=True)",
    "AP(judged_only=True)@10",
    "AP(rel=2,judged_only=True)",
    "RR(judged_only=True)",
    "Rprec(judged_only=True)",
    "Success(judged_only=True)@3",
    "nDCG(judged_only=True)",
    "nDCG(judged_only=True)@10",
    "nDCG(gains={0:0,1:1,2:3,3:7},judged_only=True)@10",
    "IPrec(judged_only=True)@0.5",
    "SetP(judged_only=True)",
    "SetP(relative=True,judged_only=True)",
    "SetF(beta=0.5,judged_only=True)",
    "SetAP(judged_only=True)",
]


@pytest.mark.parametrize("seed", [4, 5])
def test_judged_only_matches_ir_measures(seed: int) -> None:
    run, qrels = collection(seed)
    got = ours(run, qrels, IR_MEASURES_NAMES, 1)
    ir_run = run.drop(columns="run_id")
    seen = 0
    # one name per call: ir_measures hands nDCG and nDCG(gains=...) to one pytrec_eval
    # evaluator, which holds one gain map for both (which one depends on set order)
    for name in IR_MEASURES_NAMES:
        for metric in ir_measures.iter_calc([ir_measures.parse_measure(name)], qrels, ir_run):
            expected = metric.value
            if math.isnan(expected):  # trec_eval's 0/0 for an empty ranking, see above
                assert name.startswith("IPrec") and judged_count(run, qrels, metric.query_id) == 0
                expected = 0.0
            assert got[(metric.query_id, name)] == pytest.approx(expected, abs=1e-12), (
                metric.query_id,
                name,
            )
            seen += 1
    assert seen == len(IR_MEASURES_NAMES) * qrels["query_id"].nunique()


def test_canonical_names_spell_judged_only_as_ir_measures_does() -> None:
    assert parse_measure("P(judged_only=True)@10").name == "P(judged_only=True)@10"
    assert parse_measure("P(judged_only=true,rel=2)@10").name == "P(rel=2,judged_only=True)@10"
    assert parse_measure("MAP(judged_only=1)@10").name == "AP(judged_only=True)@10"
    assert parse_measure("nDCG(judged_only=False)@10").name == "nDCG@10"
    assert parse_measure("nDCG(judged_only=True)@10").trec_name() is None  # -J is run-wide
    assert parse_measure("ndcg_cut_10").name == "nDCG@10"


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("Bpref(judged_only=True)", "not offered for Bpref; it is for P, R, AP"),
        ("P(judged_only=maybe)@5", "judged_only='maybe' is not a valid switch"),
        ("infAP(judged_only=yes)", "judged_only='yes' is not a valid switch"),
    ],
)
def test_judged_only_refusals_name_the_value(typed: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_measure(typed)


def test_judged_only_is_refused_when_ranks_are_positions() -> None:
    run = pd.DataFrame(
        [("run", "q", "a", -1.0), ("run", "q", "b", -3.0)],
        columns=["run_id", "query_id", "doc_id", "score"],
    )
    qrels = pd.DataFrame([("q", "a", 1)], columns=["query_id", "doc_id", "relevance"])
    with pytest.raises(ConfigError, match="P\\(judged_only=True\\)@5: judged_only=True"):
        evaluate_frames(
            run, qrels, parse_measures("P(judged_only=True)@5"), EvalOptions(ranks="position")
        )
