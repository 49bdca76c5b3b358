"""Hand-derived values for the core trec_eval kernels (no Spark).

Running example, one query, rank order: rel = [1, -1, 0, 2, 1] (grades; -1 = not in
qrels), qrels grades {2, 1, 1, 1, 0, -1} so R = 4 at level 1, 1 at level 2.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from sparkeval.measures import RankedBatch
from sparkeval.measures.names import parse_measure, parse_measures

RELS = [[1, -1, 0, 2, 1]]
QRELS = [[2, 1, 1, 1, 0, -1]]


def value(name: str, rels=RELS, qrels=QRELS, rel_level: int = 1) -> float:
    batch = RankedBatch.from_lists(rels, qrels)
    return float(parse_measure(name).compute(batch, rel_level)[0])


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("P@1", 1.0),  # d1 relevant
        ("P@5", 3 / 5),  # d1, d4, d5
        ("P@10", 3 / 10),  # still divided by 10
        ("R@2", 1 / 4),
        ("R@5", 3 / 4),
        # AP = (1/1 + 2/4 + 3/5) / 4
        ("AP", (1 + 2 / 4 + 3 / 5) / 4),
        # AP@4 = (1/1 + 2/4) / 4  (still divided by R)
        ("AP@4", (1 + 2 / 4) / 4),
        ("RR", 1.0),
        ("Rprec", 2 / 4),  # top R=4: d1, d4 relevant
        ("Success@1", 1.0),
        ("NumRet", 5.0),
        ("NumRel", 4.0),
        ("NumRelRet", 3.0),
        # level 2: only d4 relevant, R = 1
        ("AP(rel=2)", 1 / 4),
        ("RR(rel=2)", 1 / 4),
        ("P(rel=2)@5", 1 / 5),
        ("Rprec(rel=2)", 0.0),
    ],
)
def test_hand_derived(name: str, expected: float) -> None:
    assert value(name) == pytest.approx(expected, abs=1e-12)


def test_ndcg_hand_derived() -> None:
    # DCG = 1/log2(2) + 0 + 0 + 2/log2(5) + 1/log2(6)
    dcg = 1 + 2 / math.log2(5) + 1 / math.log2(6)
    # ideal: grades 2,1,1,1 at ranks 1..4
    idcg = 2 + 1 / math.log2(3) + 1 / math.log2(4) + 1 / math.log2(5)
    assert value("nDCG") == pytest.approx(dcg / idcg, abs=1e-12)
    # cut at 3: DCG@3 = 1; IDCG@3 = 2 + 1/log2(3) + 1/2
    assert value("nDCG@3") == pytest.approx(1 / (2 + 1 / math.log2(3) + 0.5), abs=1e-12)
    # relevance level does not change nDCG (trec_eval ignores -l there)
    assert value("nDCG", rel_level=2) == pytest.approx(dcg / idcg, abs=1e-12)


def test_set_f_weighs_recall_unsquared_and_f_at_k_squared() -> None:
    # running example: n = 5, h = 3, R = 4, so P = 3/5 and R = 3/4 (P@5 and R@5 alike)
    # SetF(beta=x) is trec_eval's m_set_F.c: (1+x) P R / (x P + R); at x = 0.5:
    # 1.5 * 9/20 / (3/10 + 3/4) = (27/40) / (21/20) = 9/14
    for name in ("SetF(beta=0.5)", "set_F_0.5", "SetF(rel=1,beta=0.5)"):
        assert value(name) == pytest.approx(9 / 14, abs=1e-12), name
    # F(beta=b)@k is the classic F_b: (1+b^2) P R / (b^2 P + R); at b = 0.5, k = 5:
    # 1.25 * 9/20 / (3/20 + 3/4) = (9/16) / (9/10) = 5/8, what SetF gives at x = b^2
    assert value("F(beta=0.5)@5") == pytest.approx(5 / 8, abs=1e-12)
    assert value("SetF(beta=0.25)") == pytest.approx(5 / 8, abs=1e-12)
    # x = 2: 3 * 9/20 / (6/5 + 3/4) = (27/20) / (39/20) = 9/13; classic b = 2: 5 * 9/20 /
    # (12/5 + 3/4) = (9/4) / (63/20) = 5/7
    assert value("SetF(beta=2)") == pytest.approx(9 / 13, abs=1e-12)
    assert value("F(beta=2)@5") == pytest.approx(5 / 7, abs=1e-12)
    # beta = 1 is F1 in both: 2 * 9/20 / (27/20) = 2/3
    for name in ("SetF", "SetF(beta=1)", "F@5", "F(beta=1)@5"):
        assert value(name) == pytest.approx(2 / 3, abs=1e-12), name


def test_recommender_spellings_hand_derived() -> None:
    # running example: hits in the top 3 = 1 (d1), R = 4. ranx's f1@k = 2 P R / (P + R) with
    # P = hits/k = 1/3 and R = hits/R = 1/4: 2 * (1/12) / (7/12) = 2/7
    for name in ("f1@3", "F1@3", "F@3"):
        assert value(name) == pytest.approx(2 / 7, abs=1e-12), name
    # hit_rate@k, HitRatio@k, hit@k: 1 if a relevant doc is in the top k, else 0
    rels, qrels = [[0, -1, 1], [0, 0, 0]], [[1, 0], [1, 0]]
    for name in ("hit_rate@2", "HitRatio@2", "hit@2"):
        assert [value(name, [r], [q]) for r, q in zip(rels, qrels, strict=True)] == [0, 0]
    for name in ("hit_rate@3", "HitRatio@3", "hit@3"):
        assert [value(name, [r], [q]) for r, q in zip(rels, qrels, strict=True)] == [1, 0]


def test_ir_measures_rel_and_cutoff_spellings_hand_derived() -> None:
    # NumRet(rel=l): retrieved docs with grade >= l; rel = [1, -1, 0, 2, 1]
    assert value("NumRet(rel=1)") == 3.0  # d1, d4, d5
    assert value("NumRet(rel=2)") == 1.0  # d4
    assert value("NumRet(rel=0)") == 4.0  # every judged doc but the unjudged d2
    assert value("NumRet(rel=2)", rel_level=1) == value("NumRelRet(rel=2)")
    # Judged(cutoff=k): judged docs in the top k / min(k, n): d1 and d3 of the top 3
    assert value("Judged(cutoff=3)") == pytest.approx(2 / 3, abs=1e-12)
    assert value("Judged(cutoff=10)") == pytest.approx(4 / 5, abs=1e-12)


def test_binary_rbp_with_rel_hand_derived() -> None:
    # RBP(p, rel=l) = (1 - p) sum_i [grade_i >= l] p^(i-1); rel = [1, -1, 0, 2, 1]
    assert value("RBP(p=0.5,rel=2)") == pytest.approx(0.5 * 0.5**3, abs=1e-12)  # d4
    # d1, d4, d5: 0.5 * (1 + 1/8 + 1/16) = 19/32, whatever the run's relevance level
    assert value("RBP(p=0.5,rel=1)", rel_level=2) == pytest.approx(19 / 32, abs=1e-12)
    # rel=0: every judged doc (d1, d3, d4, d5): 0.5 * (1 + 1/4 + 1/8 + 1/16) = 23/32
    assert value("RBP(p=0.5,rel=0)") == pytest.approx(23 / 32, abs=1e-12)
    # a negative grade counts as grade 0: judged at rel=0, not relevant at rel=1
    assert value("RBP(p=0.5,rel=0)", [[-2, 1]], [[1, -1]]) == pytest.approx(0.75, abs=1e-12)
    assert value("RBP(p=0.5,rel=1)", [[-2, 1]], [[1, -1]]) == pytest.approx(0.25, abs=1e-12)
    # without rel, trec_eval's graded gain, grade / 2 (the largest grade): 0.5 * (1/2 +
    # (2/2) / 8 + (1/2) / 16) = 21/64
    assert value("RBP(p=0.5)") == pytest.approx(21 / 64, abs=1e-12)


def test_rr_with_cutoff_and_no_relevant() -> None:
    rels = [[0, -1, 1], [0, 0]]
    qrels = [[1, 0, 0], [0]]
    b = RankedBatch.from_lists(rels, qrels)
    assert parse_measure("RR").compute(b, 1).tolist() == [1 / 3, 0.0]
    assert parse_measure("RR@2").compute(b, 1).tolist() == [0.0, 0.0]


def test_empty_ranking_and_r_zero_score_zero() -> None:
    b = RankedBatch.from_lists([[], [0, 0]], [[1, 1], []])
    for name in ("AP", "nDCG", "R@5", "Rprec", "RR", "P@5", "nDCG@10"):
        assert parse_measure(name).compute(b, 1).tolist() == [0.0, 0.0], name


def test_pooled_unjudged_is_not_relevant() -> None:
    # -2 = qrels grade < 0 (pooled, not judged): never relevant, never gains
    b = RankedBatch.from_lists([[-2, 1]], [[1, -1]])
    assert parse_measure("P@1").compute(b, 1)[0] == 0.0
    assert parse_measure("NumRel").compute(b, 1)[0] == 1.0


def _consistent_random_lists(seed: int, n: int = 40):
    """Random rankings whose grades come from the query's own qrels (so nDCG <= 1)."""
    rng = np.random.default_rng(seed)
    rels, qrels = [], []
    for _ in range(n):
        judged = list(rng.integers(-1, 4, size=int(rng.integers(0, 15))))
        pool = [g if g >= 0 else -2 for g in judged] + [-1] * int(rng.integers(0, 6))
        rng.shuffle(pool)
        rels.append(pool[: int(rng.integers(0, len(pool) + 1))])
        qrels.append(judged)
    return rels, qrels


def test_every_measure_is_independent_of_its_batch_neighbours() -> None:
    """A query's value is bit-identical alone or batched with any other queries."""
    from sparkeval.measures import REGISTRY

    rels, qrels = _consistent_random_lists(3)
    rng = np.random.default_rng(4)
    scores = [list(rng.integers(0, 6, size=len(r)) / 2.0) for r in rels]
    together = RankedBatch.from_lists(rels, qrels, scores)
    names = [m.name for m in parse_measures("all_trec")]
    names += [f"{fam.name}@5" for fam in REGISTRY.values() if fam.cutoff == "required"]
    names += [fam.name for fam in REGISTRY.values() if fam.cutoff != "required"]
    checked = 0
    for name in dict.fromkeys(names):
        try:
            m = parse_measure(name)
        except ValueError:  # a family that needs parameters; all_trec covers its forms
            continue
        checked += 1
        joint = m.compute(together, 1)
        alone = [
            m.compute(RankedBatch.from_lists([r], [q], [s]), 1)[0]
            for r, q, s in zip(rels, qrels, scores, strict=True)
        ]
        np.testing.assert_array_equal(joint, alone, err_msg=name)
    assert checked > 100


@pytest.mark.parametrize(
    ("name", "rels", "expected"),
    [
        # torchmetrics' documented example: preds 0.2, 0.3, 0.5 with targets T, F, T,
        # top_k=2: the two best are T (0.5) and F (0.3); its one negative is retrieved
        ("FallOut@2", [[1, 0, 1]], 1.0),
        # the running example: non-relevant d2 (unjudged) and d3 (grade 0); d2 in the top 2
        ("FallOut@2", RELS, 1 / 2),
        ("FallOut@1", RELS, 0.0),
        ("FallOut", RELS, 1.0),  # the whole ranking: every non-relevant doc
        # at level 2 only d4 is relevant: d1, d2, d3 of the four others are in the top 3
        ("FallOut(rel=2)@3", RELS, 3 / 4),
        ("FallOut@3", [[1, 2]], 0.0),  # no non-relevant doc: 0
    ],
)
def test_fall_out_hand_derived(name: str, rels, expected: float) -> None:
    assert value(name, rels=rels, qrels=[[2, 1, 1]] if rels != RELS else QRELS) == pytest.approx(
        expected, abs=1e-12
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # the running example: relevant (grade >= 1) docs at ranks 1, 4 and 5
        ("Hits@3", 1.0),
        ("hits@4", 2.0),  # ranx's spelling
        ("Hits", 3.0),  # the whole ranking: num_rel_ret
        ("Hits@10", 3.0),  # a cutoff past the ranking counts what is there
        ("Hits(rel=2)@5", 1.0),  # at level 2 only rank 4's doc
        # condensed: the unjudged doc at rank 2 removed, ranks 1, 3 and 4 are relevant
        ("Hits(judged_only=True)@3", 2.0),
    ],
)
def test_hits_hand_derived(name: str, expected: float) -> None:
    assert value(name) == expected


@pytest.mark.parametrize(
    ("name", "rels", "expected"),
    [
        # the running example at level 1: hit, miss, miss, hit, hit; at k = 5, h = 3,
        # m = 2 and the hits have 0, 2 and 2 misses above them: 1 - 4 / 6
        ("RocAuc@5", RELS, 1 / 3),
        ("RocAuc@4", RELS, 1 - 2 / 4),  # h = 2, m = 2, misses above: 0, 2
        ("RocAuc@3", RELS, 1.0),  # hit, miss, miss: no miss above the hit
        ("RocAuc@1", RELS, 1.0),  # one hit, no miss
        ("RocAuc(rel=2)@5", RELS, 1 - 3 / 4),  # only rank 4's doc: h = 1, m = 4, 3 above
        ("RocAuc@2", [[0, 1]], 0.0),  # miss, hit: every pair wrongly ordered
        ("RocAuc@3", [[0, 0]], 0.0),  # no hit in the top k
    ],
)
def test_replay_roc_auc_hand_derived(name: str, rels, expected: float) -> None:
    qrels = QRELS if rels == RELS else [[1, 0, 0]]
    assert value(name, rels=rels, qrels=qrels) == pytest.approx(expected, abs=1e-12)


def test_tie_averaged_ap_hand_derived() -> None:
    # grades 1, 0, 1, 0 with scores 3, 2, 2, 1 and R = 2: the tied run at ranks 2-3
    # ends at 3 with 2 relevant docs, so its relevant doc counts 2/3: (1 + 2/3) / 2;
    # in the ranking's order it counts 2/3 too (rank 3), and 1/2 if it came first
    rels, qrels, scores = [[1, 0, 1, 0]], [[1, 1, 0, 0]], [[3.0, 2.0, 2.0, 1.0]]
    batch = RankedBatch.from_lists(rels, qrels, scores)
    assert parse_measure("AP(ties=average)").compute(batch, 1)[0] == pytest.approx(5 / 6)
    swapped = RankedBatch.from_lists([[1, 1, 0, 0]], qrels, scores)
    assert parse_measure("AP").compute(swapped, 1)[0] == pytest.approx(1.0)
    # tie-averaged, the relevant doc at rank 2 shares the run's end, rank 3: (1 + 2/3) / 2
    assert parse_measure("AP(ties=average)").compute(swapped, 1)[0] == pytest.approx(5 / 6)
    # @2 cuts the run at rank 2: its relevant doc counts 2/2 there
    assert parse_measure("AP(ties=average)@2").compute(swapped, 1)[0] == pytest.approx(1.0)
