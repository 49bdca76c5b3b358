"""Hand-derived values of cwl_eval's C/W/L measures (no Spark).

Running example, one query, rank order: grades [1, 0, 2] with max_rel = 3, so the gains
are g = [1/3, 0, 2/3]; cwl_eval reads 1000 ranks, the 997 past the ranking of gain 0.
W_i = P_i / sum_{j<=1000} P_j with P_i = prod_{j<i} C_j, and the value is sum_i W_i g_i.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sparkeval.measures import RankedBatch
from sparkeval.measures.names import parse_measure

RELS = [[1, 0, 2]]
QRELS = [[2, 1, 0]]
FAMILIES = ("SDCG", "NERR8", "NERR9", "NERR10", "NERR11", "INST", "INSQ", "BPM")


def value(name: str, rels=RELS, qrels=QRELS) -> float:
    batch = RankedBatch.from_lists(rels, qrels)
    return float(parse_measure(name).compute(batch, 1)[0])


def test_sdcg_hand_derived() -> None:
    # SDCG@2 = (1/3 / log2 2 + 0) / (1 + 1/log2 3): the DCG of two docs of gain 1 below
    assert value("SDCG(max_rel=3)@2") == pytest.approx((1 / 3) / (1 + 1 / math.log2(3)), abs=1e-12)
    # @5, past the ranking: (1/3 + (2/3) / log2 4) / sum_{i<=5} 1 / log2(i+1)
    full = sum(1 / math.log2(i + 1) for i in range(1, 6))
    assert value("SDCG(max_rel=3)@5") == pytest.approx((1 / 3 + 1 / 3) / full, abs=1e-12)
    # min_rel=1: gains (1-1)/2, 0 (grade 0 clipped to 1), (2-1)/2; SDCG@3 = (1/2) / 2 / sum
    full = 1 + 1 / math.log2(3) + 0.5
    assert value("SDCG(min_rel=1,max_rel=3)@3") == pytest.approx(0.25 / full, abs=1e-12)


def test_nerr_hand_derived() -> None:
    # NERR8@5: Q = prod_{j<i} (1 - g_j) = [1, 2/3, 2/3, 2/9, 2/9] on ranks 1..5 (4 and 5
    # padding): (1/3 + (2/3)(2/3)) / (1 + 2/3 + 2/3 + 2/9 + 2/9) = (7/9) / (25/9)
    assert value("NERR8(max_rel=3)@5") == pytest.approx(7 / 25, abs=1e-12)
    # NERR8@2: ranks 1, 2 only: (1/3) / (1 + 2/3)
    assert value("NERR8(max_rel=3)@2") == pytest.approx(1 / 5, abs=1e-12)
    # NERR9@5: P_i = Q_i / i = [1, 1/3, 2/9, 1/18, 2/45]: (1/3 + (2/9)(2/3)) / (149/90)
    assert value("NERR9(max_rel=3)@5") == pytest.approx((13 / 27) / (149 / 90), abs=1e-12)
    # NERR10(p=0.5): P_i = 0.5^(i-1) Q_i = [1, 1/3, 1/6] then (2/9) 0.5^(i-1) to rank 1000,
    # summing to (2/9)(1/4)(1 - 2^-997): (1/3 + (1/6)(2/3)) / (1 + 1/3 + 1/6 + 1/18)
    assert value("NERR10(p=0.5,max_rel=3)") == pytest.approx(2 / 7, abs=1e-12)
    # NERR11(T=1): P_i = (2 / (i + 1))^2 Q_i = [1, 4/9 * 2/3, 1/4 * 2/3], then (2/9)(2/(i+1))^2
    tail = (2 / 9) * sum((2 / (i + 1)) ** 2 for i in range(4, 1001))
    num = 1 / 3 + (1 / 6) * (2 / 3)
    assert value("NERR11(max_rel=3)") == pytest.approx(num / (1 + 8 / 27 + 1 / 6 + tail), abs=1e-12)


def test_insq_and_inst_hand_derived() -> None:
    # INSQ(T=1): P_i = (2 / (i + 1))^2 whatever the gains: (1/3 + (1/4)(2/3)) / sum_{i<=1000}
    norm = sum((2 / (i + 1)) ** 2 for i in range(1, 1001))
    assert value("INSQ(max_rel=3)") == pytest.approx(0.5 / norm, abs=1e-12)
    # INST(T=1): G = [1/3, 1/3, 1], C_i = ((i + 2 - G_i - 1) / (i + 2 - G_i))^2 =
    # (5/8)^2, (8/11)^2, (3/4)^2, then (i / (i + 1))^2 on the padding (G stays 1), so
    # P = [1, 25/64, 25/121, (225/1936)(4/i)^2 for i >= 4]
    norm = 1 + 25 / 64 + 25 / 121 + (225 / 1936) * sum((4 / i) ** 2 for i in range(4, 1001))
    assert value("INST(max_rel=3)") == pytest.approx((57 / 121) / norm, abs=1e-12)


def test_bpm_hand_derived() -> None:
    # grades [1, 0, 2, 3]: gains [1/3, 0, 2/3, 1], G = [1/3, 1/3, 1, 2]
    rels, qrels = [[1, 0, 2, 3]], [[3, 2, 1, 0]]
    assert value("BPM(max_rel=3)@10", rels, qrels) == pytest.approx(1 / 3, abs=1e-12)  # s = 3
    assert value("BPM(max_rel=3)@2", rels, qrels) == pytest.approx(1 / 6, abs=1e-12)  # s = k
    # G never reaches T = 3: the user reads all k = 10 ranks, the padding included
    assert value("BPM(T=3,max_rel=3)@10", rels, qrels) == pytest.approx(2 / 10, abs=1e-12)
    assert value("BPM(T=0.2,max_rel=3)@10", rels, qrels) == pytest.approx(1 / 3, abs=1e-12)


def test_gains_of_negative_grades_and_docs_without_judgement() -> None:
    # a negative grade counts as 0 (judged), a doc without a qrels entry has gain 0: with
    # min_rel = -1 the first has gain (0 + 1) / 4, the second none
    assert value("SDCG(min_rel=-1,max_rel=3)@1", [[-2]], [[-1]]) == pytest.approx(0.25)
    assert value("SDCG(min_rel=-1,max_rel=3)@1", [[-1]], [[-1]]) == 0.0
    assert value("SDCG(min_rel=-1,max_rel=3)@1", [[0]], [[0]]) == pytest.approx(0.25)
    # grades above max_rel are clipped to it
    assert value("SDCG(max_rel=2)@1", [[3]], [[3]]) == 1.0


def test_ranks_past_1000_are_not_read() -> None:
    ones = [[1] * 1001]
    assert value("SDCG(max_rel=1)@1001", ones, [[1]]) == pytest.approx(1.0, abs=1e-12)
    last = [[0] * 1000 + [1]]
    for name in (
        "SDCG(max_rel=1)@1001",
        "NERR10(max_rel=1)",
        "INST(max_rel=1)",
        "BPM(max_rel=1)@2000",
    ):
        assert value(name, last, [[1, 0]]) == 0.0, name


@pytest.mark.parametrize("family", FAMILIES)
def test_empty_rankings_and_no_relevant_docs_score_0(family: str) -> None:
    name = family + "(max_rel=3)" + ("@5" if family in ("SDCG", "NERR8", "NERR9", "BPM") else "")
    batch = RankedBatch.from_lists([[], [0, -1, -2], [3]], [[3, 1], [0, -1], [3]])
    values = parse_measure(name).compute(batch, 1)
    assert values[0] == 0.0 and values[1] == 0.0 and values[2] > 0


@pytest.mark.parametrize("family", FAMILIES)
def test_each_query_is_independent_of_its_batch_neighbours(family: str) -> None:
    rng = np.random.default_rng(7)
    rels = [
        list(rng.choice([-2, -1, 0, 1, 2, 3], size=int(rng.integers(0, 30)))) for _ in range(40)
    ]
    qrels = [[3, 2, 1, 0] for _ in rels]
    cut = "@7" if family in ("SDCG", "NERR8", "NERR9", "BPM") else ""
    m = parse_measure(f"{family}(max_rel=3){cut}")
    joint = m.compute(RankedBatch.from_lists(rels, qrels), 1)
    alone = [
        m.compute(RankedBatch.from_lists([r], [q]), 1)[0] for r, q in zip(rels, qrels, strict=True)
    ]
    np.testing.assert_array_equal(joint, alone)


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        ("SDCG(max_rel=3)@10", "SDCG(max_rel=3)@10"),
        ("SDCG(dcg=log2,max_rel=3)@10", "SDCG(max_rel=3)@10"),
        ("sdcg(cutoff=10,max_rel=3)", "SDCG(max_rel=3)@10"),
        ("NERR8(min_rel=0,max_rel=2)@5", "NERR8(max_rel=2)@5"),
        ("NERR9(min_rel=1,max_rel=3)@5", "NERR9(min_rel=1,max_rel=3)@5"),
        ("NERR10(p=0.8,max_rel=3)", "NERR10(p=0.8,max_rel=3)"),
        ("NERR10(p=0.9,max_rel=3)", "NERR10(max_rel=3)"),
        ("NERR11(T=2,max_rel=3)", "NERR11(T=2,max_rel=3)"),
        ("INST(T=3,max_rel=3)", "INST(T=3,max_rel=3)"),
        ("INSQ(T=1.0,max_rel=1)", "INSQ(max_rel=1)"),
        ("BPM(T=1,cutoff=20,max_rel=3)", "BPM(max_rel=3)@20"),
        ("BPM(T=2,max_rel=3)@20", "BPM(T=2,max_rel=3)@20"),
    ],
)
def test_ir_measures_spellings(typed: str, canonical: str) -> None:
    assert parse_measure(typed).name == canonical
    assert parse_measure(canonical).name == canonical


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("SDCG@10", "SDCG needs parameter(s) max_rel="),  # as in ir_measures
        ("INST(T=3)", "INST needs parameter(s) max_rel="),
        ("SDCG(max_rel=3)", "SDCG needs a cutoff"),
        ("NERR10(max_rel=3)@10", "NERR10 takes no @k cutoff"),
        ("INSQ(min_rel=3,max_rel=3)", "min_rel=3 must be below max_rel=3"),
        ("BPM(min_rel=2,max_rel=1)@5", "min_rel=2 must be below max_rel=1"),
        ("INST(T=0,max_rel=3)", "T=0 must be > 0"),
        ("NERR10(p=1.5,max_rel=3)", "p=1.5 must be <= 1"),
        ("SDCG(dcg=exp-log2,max_rel=3)@5", "SDCG's only dcg is log2"),
    ],
)
def test_refused_spellings(typed: str, why: str) -> None:
    with pytest.raises(ValueError, match=why.replace("(", r"\(").replace(")", r"\)")):
        parse_measure(typed)
