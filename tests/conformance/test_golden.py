"""Hand-derived values (derivations in the comments) and gdeval's ERR@20."""

from __future__ import annotations

import math

import pytest

from sparkeval.engine.worker.assemble import EvalOptions, evaluate_frames
from sparkeval.formats import measure_column
from sparkeval.measures import RankedBatch
from sparkeval.measures.names import parse_measure
from tests.conftest import shared_file
from tests.io.test_trec_files import read_qrels, read_run


def value(name: str, rels, qrels, rel_level: int = 1, scores=None) -> float:
    b = RankedBatch.from_lists([rels], [qrels], scores=None if scores is None else [scores])
    return float(parse_measure(name).compute(b, rel_level)[0])


def test_err() -> None:
    # grades 3, 0, 4 with gmax 4: R = (2^g - 1)/16 = 7/16, 0, 15/16
    # ERR = 1 * 7/16 + 1/2 * 0 * (9/16) + 1/3 * 15/16 * (9/16) * 1 = 7/16 + 135/768
    assert value("ERR", [3, 0, 4], [4, 3]) == pytest.approx(7 / 16 + 135 / 768)
    assert value("ERR@2", [3, 0, 4], [4, 3]) == pytest.approx(7 / 16)
    # gmax 2 clips grade 3 and 4 to 2: R = 3/4, 0, 3/4; ERR = 3/4 + 1/3 * 3/4 * 1/4
    assert value("ERR(gmax=2)", [3, 0, 4], [4, 3]) == pytest.approx(0.75 + 0.0625)
    # unjudged (-1) and negative-grade (-2) docs have R = 0
    assert value("ERR", [-1, -2, 1], [1]) == pytest.approx((1 / 3) * (1 / 16))


def test_pfound() -> None:
    # pRel = 7/16, 0, 15/16; pLook_1 = 1, pLook_2 = (9/16)(0.85) = 0.478125,
    # pLook_3 = 0.478125 * 1 * 0.85 = 0.40640625
    # pFound = 7/16 + 0 + 0.40640625 * 15/16 = 0.4375 + 0.381005859375
    assert value("pFound", [3, 0, 4], [4, 3]) == pytest.approx(0.818505859375)
    assert value("pFound@1", [3, 0, 4], [4, 3]) == pytest.approx(0.4375)
    # pbreak = 0: pLook_3 = 9/16, pFound = 7/16 + 9/16 * 15/16
    assert value("pFound(pbreak=0)", [3, 0, 4], [4]) == pytest.approx(7 / 16 + 135 / 256)


def test_rank_correlation_seed_example() -> None:
    # ranking pi = (1, 2, 3) with grades (1, 0, 1): pairs (1,2) correct, (1,3) equal,
    # (2,3) inverted -> 2 of 3 pairs agree
    assert value("RC", [1, 0, 1], [1, 1]) == pytest.approx(2 / 3)
    # position weights w(i) = 1/log2(i+1) of the upper doc: pairs (1,2), (1,3) weigh 1,
    # pair (2,3) weighs 1/log2(3); RC = 2 / (2 + 1/log2(3))
    w = 1 / math.log2(3)
    assert value("RC(weight=log)", [1, 0, 1], [1, 1]) == pytest.approx(2 / (2 + w))
    # the ideal order agrees on every pair; the reversed one only on tied pairs (2, 2)
    assert value("RC", [3, 2, 2, 0], [3, 2, 2]) == 1.0
    assert value("RC", [0, 2, 2, 3], [3, 2, 2]) == pytest.approx(1 / 6)


def test_wta() -> None:
    assert value("WTA", [1, 0], [1]) == 0.0
    assert value("WTA", [0, 1], [1]) == 1.0
    assert value("WTA", [1, 2], [2, 1], rel_level=2) == 1.0  # grade 1 < level 2
    assert value("WTA", [], [1]) == 1.0
    assert parse_measure("WTA").spec.higher_is_better is False


def test_dcg_gains() -> None:
    grades = [3, 2, 3, 0, 1, 2]
    # linear: 3/log2(2) + 2/log2(3) + 3/log2(4) + 0 + 1/log2(6) + 2/log2(7)
    linear = 3 + 2 / math.log2(3) + 3 / 2 + 1 / math.log2(6) + 2 / math.log2(7)
    # jarvelin (seed eq. 24.55): g_1 + sum_{i>=2} g_i/log2(i)
    #   = 3 + 2/log2(2) + 3/log2(3) + 0 + 1/log2(5) + 2/log2(6)
    jarvelin = 3 + 2 + 3 / math.log2(3) + 1 / math.log2(5) + 2 / math.log2(6)
    # exp: gains 2^g - 1 = 7, 3, 7, 0, 1, 3 with the log2(i+1) discount
    exp = 7 + 3 / math.log2(3) + 7 / 2 + 1 / math.log2(6) + 3 / math.log2(7)
    qrels = [3, 3, 2, 2, 1]
    assert value("DCG", grades, qrels) == pytest.approx(linear)
    assert value("DCG(gain=jarvelin)", grades, qrels) == pytest.approx(jarvelin)
    assert value("DCG(gain=exp)", grades, qrels) == pytest.approx(exp)
    assert value("CG@3", grades, qrels) == 8.0
    assert value("CG(gain=exp)@3", grades, qrels) == 17.0
    # ideal (jarvelin) of qrels 3,3,2,2,1: 3 + 3 + 2/log2(3) + 2/log2(4) + 1/log2(5)
    ideal = 3 + 3 + 2 / math.log2(3) + 1 + 1 / math.log2(5)
    assert value("nDCG(gain=jarvelin)", grades, qrels) == pytest.approx(jarvelin / ideal)


def test_grade_map_gains() -> None:
    # trec_eval ndcg.1=3,2=9: gains 0->0, 1->3, 2->9; ranking grades (1, 2, 0)
    # DCG = 3 + 9/log2(3); ideal over qrels (2, 1, 0) = 9 + 3/log2(3)
    got = value("nDCG(gains=1:3;2:9)", [1, 2, 0], [2, 1, 0])
    assert got == pytest.approx((3 + 9 / math.log2(3)) / (9 + 3 / math.log2(3)))


def test_f_at_k() -> None:
    # first 2 docs hold 1 of R = 4 relevant: P = 1/2, R = 1/4
    # F1 = 2 * 1/8 / (3/4) = 1/3; beta = 2: 5 * 1/8 / (4 * 1/2 + 1/4) = 0.625 / 2.25,
    # the seed's 1/(lam/P + (1-lam)/R) with lam = 1/(1+4) = 0.2: 1/(0.4 + 3.2)
    assert value("F@2", [1, 0, 1, 0], [1, 1, 1, 1]) == pytest.approx(1 / 3)
    assert value("F(beta=2)@2", [1, 0, 1, 0], [1, 1, 1, 1]) == pytest.approx(1 / 3.6)
    assert value("F@2", [0, 0, 1], [1]) == 0.0


def test_judged() -> None:
    # codes 1, -1 (not in qrels), -2 (negative grade: has a qrels entry), 0
    assert value("Judged@2", [1, -1, -2, 0], [1, -1, 0]) == 0.5
    assert value("Judged", [1, -1, -2, 0], [1, -1, 0]) == 0.75
    assert value("Judged@10", [1, -1, -2, 0], [1, -1, 0]) == 0.75  # over min(k, n)


def test_err_matches_gdeval() -> None:
    base = ("conformance", "trec_eval")
    # PEERS.md names qrels.test, but its values are those of the graded qrels.rel_level
    # (same docs, grades 0..4; 301 agrees on both, 302 and 303 only on the graded file)
    qrels = read_qrels(shared_file(*base, "qrels.rel_level"))
    run = read_run(shared_file(*base, "results.test"))
    m = parse_measure("ERR@20")
    wide = evaluate_frames(run, qrels, [m], EvalOptions(queries="both"))
    got = dict(zip(wide["query_id"], wide[measure_column(0)], strict=True))
    # PEERS.md: gdeval ERR@20, five decimals
    assert round(got["301"], 5) == 0.02750
    assert round(got["302"], 5) == 0.62412
    assert round(got["303"], 5) == 0.00987
