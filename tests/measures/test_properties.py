"""Property tests (hypothesis): bounds, ideal rankings, cutoffs, monotonicity, row order."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparkeval.engine.worker.assemble import EvalOptions, evaluate_frames
from sparkeval.measures import RankedBatch
from sparkeval.measures.names import parse_measure, parse_measures
from tests.random_collection import random_collection

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

UNIT = [
    "AP",
    "AP@5",
    "nDCG",
    "nDCG@5",
    "nDCG(gain=exp)@10",
    "nDCG(gain=jarvelin)",
    "ERR",
    "ERR@3",
    "pFound",
    "P@5",
    "R@5",
    "RR",
    "Bpref",
    "SetP",
    "SetR",
    "SetF",
    "SetAP",
    "SetRelP",
    "RelP@5",
    "binG",
    "nDCG_rel",
    "RnDCG",
    "IPrec(recall=0.3)",
    "11pt",
    "Rprec",
    "Rprec_mult(mult=1.5)",
    "Success@3",
    "Judged@5",
    "Unjudged@5",
    "RBP",
    "RBP_resid",
    "AUC",
    "RC",
    "RC(weight=log)",
    "F@5",
    "WTA",
    "gm_map",
]


@st.composite
def query(draw, max_qrels: int = 12):
    """(ranking codes, qrels grades) of one consistent query."""
    grades = draw(st.lists(st.integers(-1, 3), min_size=1, max_size=max_qrels))
    picked = draw(st.permutations(range(len(grades))))
    n_pick = draw(st.integers(0, len(grades)))
    codes = [grades[i] if grades[i] >= 0 else -2 for i in picked[:n_pick]]
    for _ in range(draw(st.integers(0, 4))):
        codes.insert(draw(st.integers(0, len(codes))), -1)
    return codes, grades


def compute(name: str, queries, scores=None) -> np.ndarray:
    rels = [q[0] for q in queries]
    qrels = [q[1] for q in queries]
    return parse_measure(name).compute(RankedBatch.from_lists(rels, qrels, scores), 1)


@SETTINGS
@given(st.lists(query(), min_size=1, max_size=6))
def test_bounds(queries) -> None:
    for name in UNIT:
        v = compute(name, queries)
        v = v[~np.isnan(v)]
        assert ((v >= -1e-12) & (v <= 1 + 1e-12)).all(), (name, v)
    for name in ("KendallTau", "SpearmanRho"):
        v = compute(name, queries, [list(range(len(q[0]), 0, -1)) for q in queries])
        v = v[~np.isnan(v)]
        assert ((v >= -1 - 1e-12) & (v <= 1 + 1e-12)).all(), (name, v)


@SETTINGS
@given(st.lists(st.integers(-1, 3), min_size=1, max_size=15))
def test_ideal_ranking_scores_one(grades) -> None:
    ideal = sorted((g for g in grades if g >= 0), reverse=True)
    queries = [(ideal, grades)]
    has_gain = any(g > 0 for g in grades)
    for name in ("nDCG", "nDCG@3", "nDCG(gain=exp)", "nDCG(gain=jarvelin)@5", "RnDCG", "nDCG_rel"):
        assert compute(name, queries)[0] == pytest.approx(1.0 if has_gain else 0.0), name
    has_rel = any(g >= 1 for g in grades)
    for name in ("AP", "Bpref", "RR", "Rprec", "RelP@3", "IPrec(recall=1)", "11pt"):
        assert compute(name, queries)[0] == pytest.approx(1.0 if has_rel else 0.0), name
    if len(ideal) >= 2:
        assert compute("RC", queries)[0] == 1.0


@SETTINGS
@given(st.lists(query(), min_size=1, max_size=5), st.integers(0, 20))
def test_cutoff_beyond_length_is_no_cutoff(queries, extra) -> None:
    k = max(max(len(q[0]) for q in queries), max(len(q[1]) for q in queries), 1) + extra
    for family in ("nDCG", "AP", "ERR", "pFound", "CG", "DCG", "RR", "Judged"):
        np.testing.assert_allclose(
            compute(f"{family}@{k}", queries),
            compute(family, queries),
            rtol=1e-12,
            atol=1e-15,
            err_msg=family,
        )


@SETTINGS
@given(query(), st.data())
def test_moving_a_better_doc_up_never_hurts(q, data) -> None:
    codes, grades = q
    if len(codes) < 2:
        return
    i = data.draw(st.integers(0, len(codes) - 2))
    if max(codes[i + 1], 0) <= max(codes[i], 0):
        return
    swapped = [*codes[:i], codes[i + 1], codes[i], *codes[i + 2 :]]
    for name in ("nDCG", "nDCG@3", "AP", "AP@4", "ERR", "pFound", "DCG", "RR", "Bpref"):
        before = compute(name, [(codes, grades)])[0]
        after = compute(name, [(swapped, grades)])[0]
        assert after >= before - 1e-12, (name, codes, swapped, before, after)


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10_000))
def test_row_order_does_not_matter(seed) -> None:
    run, qrels = random_collection(seed, queries=8, max_docs=15, runs=2)
    measures = parse_measures("all_trec ERR@10 pFound RC AUC KendallTau SpearmanRho Judged@5")
    opts = EvalOptions(queries="qrels")
    a = evaluate_frames(run, qrels, measures, opts)
    rng = np.random.default_rng(seed)
    b = evaluate_frames(
        run.sample(frac=1, random_state=rng.integers(1 << 31)),
        qrels.sample(frac=1, random_state=rng.integers(1 << 31)),
        measures,
        opts,
    )
    cols = [c for c in a.columns if c.startswith("m")]
    np.testing.assert_allclose(a[cols].to_numpy(), b[cols].to_numpy(), rtol=1e-12, atol=1e-15)
