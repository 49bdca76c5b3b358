"""Hand-derived values for PartialAUC, PAP and RecallAtFixedPrecision (no Spark).

Running example, one query, rank order: rel = [1, -1, 0, 2, 1] (grades; -1 = not in
qrels), qrels grades {2, 1, 1, 1, 0, -1}: at level 1 the relevant docs sit at positions
1, 4 and 5 (c = 1, 1, 1, 2, 3), R = 4 (one relevant doc is not retrieved) and the
ranking holds 2 non-relevant docs (positions 2 and 3).
"""

from __future__ import annotations

import math

import pytest

from sparkeval.errors import MeasureError
from sparkeval.measures import RankedBatch
from sparkeval.measures.names import parse_measure

RELS = [[1, -1, 0, 2, 1]]
QRELS = [[2, 1, 1, 1, 0, -1]]


def value(name: str, rels=RELS, qrels=QRELS) -> float:
    batch = RankedBatch.from_lists(rels, qrels)
    return float(parse_measure(name).compute(batch, 1)[0])


@pytest.mark.parametrize(
    ("name", "rels", "qrels", "expected"),
    [
        # non-relevant docs above the relevant ones at 1, 4, 5: 0, 2, 2
        # k = 1: max(0, 1 - 0) + 0 + 0 = 1, / (1 * 4)
        ("PartialAUC@1", RELS, QRELS, 1 / 4),
        # k = 2: 2 + 0 + 0, / (2 * 4)
        ("PartialAUC@2", RELS, QRELS, 2 / 8),
        # k = 3: 3 + 1 + 1, / (3 * 4); the missing relevant doc counts 0
        ("PartialAUC@3", RELS, QRELS, 5 / 12),
        ("pAUC@3", RELS, QRELS, 5 / 12),
        # at level 2 only d4 is relevant (R = 1), below 3 non-relevant docs: max(0, 4 - 3) / 4
        ("PartialAUC(rel=2)@4", RELS, QRELS, 1 / 4),
        ("PartialAUC(rel=2)@3", RELS, QRELS, 0.0),
        # k = 2: 2 non-relevant docs are enough though a relevant doc is missing
        ("PartialAUC(insufficient_handling=exclude)@2", RELS, QRELS, 2 / 8),
        # k = 3: a relevant doc is missing and 2 < 3 non-relevant docs: undefined
        ("PartialAUC(insufficient_handling=exclude)@3", RELS, QRELS, math.nan),
        # PAP: beta = min(R, k); k = 1: the first relevant doc, 1 / (1 * 1)
        ("PAP@1", RELS, QRELS, 1.0),
        # k = 2: the first two relevant docs, 2 + 0, / (2 * 2)
        ("PAP@2", RELS, QRELS, 2 / 4),
        # k = 3: 3 + 1 + 1, / (3 * 3)
        ("PAP@3", RELS, QRELS, 5 / 9),
        ("PAP(insufficient_handling=exclude)@3", RELS, QRELS, math.nan),
        # every relevant doc retrieved: the k non-relevant docs missing from the ranking
        # rank below it, k / (k * 1), and the query is not excluded
        ("PartialAUC(insufficient_handling=exclude)@5", [[1, 0]], [[1, 0]], 1.0),
        ("PAP(insufficient_handling=exclude)@5", [[1, 0]], [[1, 0]], 1.0),
        # no relevant doc (R = 0): 0
        ("PartialAUC@2", [[0, -1]], [[0]], 0.0),
        ("PAP@2", [[0, -1]], [[0]], 0.0),
        # an empty ranking: 0, or undefined when insufficient rankings are excluded
        ("PartialAUC@2", [[]], [[1]], 0.0),
        ("PAP(insufficient_handling=exclude)@2", [[]], [[1]], math.nan),
        # PAP stops after k relevant docs: R = 3, k = 2, ranking [1, 1, 0, 1]:
        # 2 + 2 over the first two, / (2 * 2), where PartialAUC also counts the third
        # (1 non-relevant doc above it): (2 + 2 + 1) / (2 * 3)
        ("PAP@2", [[1, 1, 0, 1]], [[1, 1, 1]], 1.0),
        ("PartialAUC@2", [[1, 1, 0, 1]], [[1, 1, 1]], 5 / 6),
    ],
)
def test_partial_auc_hand_derived(name: str, rels, qrels, expected: float) -> None:
    got = value(name, rels, qrels)
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("name", "rels", "qrels", "expected"),
    [
        # precision c_i / i = 1, 1/2, 1/3, 1/2, 3/5; recall c_i / 4 = 1/4, 1/4, 1/4, 1/2, 3/4
        ("RecallAtFixedPrecision(min_precision=0.6)", RELS, QRELS, 3 / 4),  # i = 5
        ("RecallAtFixedPrecision(min_precision=0.6)@4", RELS, QRELS, 1 / 4),  # i = 1
        ("RecallAtFixedPrecision(min_precision=0.5)@4", RELS, QRELS, 2 / 4),  # i = 4
        ("RecallAtFixedPrecision(min_precision=1)", RELS, QRELS, 1 / 4),  # i = 1
        ("RecallAtFixedPrecision", RELS, QRELS, 3 / 4),  # min_precision 0: R
        ("RecallAtFixedPrecision@3", RELS, QRELS, 1 / 4),  # min_precision 0: R@3
        ("RecallAtFixedPrecision(min_precision=0.6)", RELS, QRELS, 3 / 4),
        # at level 2: d4 alone is relevant (R = 1), precision 1/4 at i = 4
        ("RecallAtFixedPrecision(min_precision=0.25,rel=2)", RELS, QRELS, 1.0),
        ("RecallAtFixedPrecision(min_precision=0.3,rel=2)", RELS, QRELS, 0.0),
        # no prefix reaches the precision: 0
        ("RecallAtFixedPrecision(min_precision=0.7)", [[0, 1]], [[1]], 0.0),
        # positions past a short ranking add nothing: [1, 0], R = 2, @5 -> 1/2 at i = 1
        ("RecallAtFixedPrecision(min_precision=0.5)@5", [[1, 0]], [[1, 1]], 1 / 2),
        # R = 0: empty_target_action neg (default) 0, pos 1, skip undefined
        ("RecallAtFixedPrecision(min_precision=0.5)", [[0]], [[0]], 0.0),
        ("RecallAtFixedPrecision(empty_target_action=pos)", [[0]], [[0]], 1.0),
        ("RecallAtFixedPrecision(empty_target_action=skip)", [[0]], [[0]], math.nan),
        # an empty ranking with R > 0: 0 whatever the action
        ("RecallAtFixedPrecision(empty_target_action=pos)", [[]], [[1]], 0.0),
    ],
)
def test_recall_at_fixed_precision_hand_derived(name: str, rels, qrels, expected: float) -> None:
    got = value(name, rels, qrels)
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-12)


def test_many_queries_at_once_match_one_at_a_time() -> None:
    rels = [[1, -1, 0, 2, 1], [], [0, 0, 1], [1, 1, 0, 1], [0]]
    qrels = [[2, 1, 1, 1, 0, -1], [1], [1, 1], [1, 1, 1], [0]]
    names = [
        "PartialAUC@2", "PAP@2", "PartialAUC(insufficient_handling=exclude)@3",
        "RecallAtFixedPrecision(min_precision=0.4)@4",
    ]  # fmt: skip
    batch = RankedBatch.from_lists(rels, qrels)
    for name in names:
        together = parse_measure(name).compute(batch, 1).tolist()
        alone = [value(name, [r], [q]) for r, q in zip(rels, qrels, strict=True)]
        assert together == pytest.approx(alone, abs=1e-12, nan_ok=True), name


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("PartialAUC(insufficient_handling=raise)@3", "insufficient_handling='raise' is not"),
        ("PAP(insufficient_handling=strange)@3", "is not one of: ignore, exclude"),
        ("PartialAUC", "needs a cutoff"),
        ("PAP", "needs a cutoff"),
        ("RecallAtFixedPrecision(empty_target_action=error)", "'error' is not offered"),
        ("RecallAtFixedPrecision(min_precision=1.5)", "must be <= 1"),
        ("RecallAtFixedPrecision(min_precision=-0.1)", "must be >= 0"),
    ],
)
def test_refused_parameters(text: str, fragment: str) -> None:
    with pytest.raises(MeasureError) as info:
        parse_measure(text)
    assert fragment in str(info.value)
