"""scikit-learn (scikit-learn/scikit-learn): the fixed expectations of
sklearn/metrics/tests/test_ranking.py for ``dcg_score``, ``ndcg_score``,
``average_precision_score``, ``label_ranking_average_precision_score`` (LRAP),
``roc_auc_score`` and ``top_k_accuracy_score``, through sparkeval's names (trec profile).

A scikit-learn sample is a query whose items are its docs, every one judged (``y_true``
the grade, ``y_score`` the score). ``dcg_score`` / ``ndcg_score`` are sparkeval's
``dcg_score`` / ``ndcg_score`` spellings; LRAP and the per-sample
``average_precision_score`` (``average="samples"``, or a binary ``y_true``) are ``AP``
where no scores tie: each averages, over the relevant items, the share of relevant items
among those ranked at or above it. scikit-learn's values do not depend on which item is
which, so every case is computed twice, the items named in the order given and in the
reverse order; sparkeval orders tied scores by doc id, so the tie cases of
``average_precision_score`` and LRAP (which rank tied items together) are pinned gaps.
Tolerances: ``pytest.approx`` (relative 1e-6) and ``assert_almost_equal`` (7 decimals).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tests.conformance.peer_cases import judged, scored, values

NAMINGS = ("as_given", "reversed")


def _samples(y_true, y_score, naming: str):
    """(run, qrels) of a scikit-learn matrix: sample i is query s{i}, item j doc i{j}
    (``reversed``: item j is named by its distance from the last item)."""
    y_true, y_score = np.atleast_2d(y_true), np.atleast_2d(y_score)
    n = y_true.shape[1]

    def doc(j: int) -> str:
        return f"i{(j if naming == 'as_given' else n - 1 - j):03d}"

    run = {f"s{i}": {doc(j): float(s) for j, s in enumerate(row)} for i, row in enumerate(y_score)}
    qrels = {f"s{i}": {doc(j): int(g) for j, g in enumerate(row)} for i, row in enumerate(y_true)}
    return scored(run), judged(qrels)


def _batch(cases, name: str, naming: str) -> list[float]:
    """The mean over its samples of each (y_true, y_score, ...) case, in one evaluation."""
    run, qrels = [], []
    for c, (y_true, y_score, *_) in enumerate(cases):
        r, q = _samples(y_true, y_score, naming)
        run.append(r.assign(query_id=f"c{c}-" + r["query_id"]))
        qrels.append(q.assign(query_id=f"c{c}-" + q["query_id"]))
    per_query, _ = values(pd.concat(run), pd.concat(qrels), [name])
    return [
        float(np.mean([v for q, v in per_query[name].items() if q.startswith(f"c{c}-")]))
        for c in range(len(cases))
    ]


def _per_sample(y_true, y_score, name: str, naming: str = "as_given") -> list[float]:
    per_query, _ = values(*_samples(y_true, y_score, naming), [name])
    return [per_query[name][f"s{i}"] for i in range(len(np.atleast_2d(y_true)))]


def _mean(y_true, y_score, name: str, naming: str = "as_given") -> float:
    return float(np.mean(_per_sample(y_true, y_score, name, naming)))


# --- test_ndcg_toy_examples (ignore_ties True and False) ------------------------------
Y_TRUE_EYE = 3 * np.eye(7)[:5]
Y_SCORE = np.tile(np.arange(6, -1, -1), (5, 1))
Y_SCORE_NOISY = Y_SCORE + np.random.RandomState(0).uniform(-0.2, 0.2, size=Y_SCORE.shape)
DISCOUNTS = np.log2(np.arange(2, 7))
ALL_THREES = 3 * np.ones((5, 7))


@pytest.mark.parametrize("naming", NAMINGS)
@pytest.mark.parametrize("ignore_ties", [True, False])
def test_ndcg_toy_examples(ignore_ties: bool, naming: str) -> None:
    dcg = "dcg_score(ignore_ties=True)" if ignore_ties else "dcg_score"
    ndcg = "ndcg_score(ignore_ties=True)" if ignore_ties else "ndcg_score"
    dcg10 = f"dcg_score(log_base=10{', ignore_ties=True' if ignore_ties else ''})"
    per = _per_sample
    assert per(Y_TRUE_EYE, Y_SCORE, dcg, naming) == pytest.approx(3 / DISCOUNTS)
    assert per(Y_TRUE_EYE, Y_SCORE_NOISY, dcg, naming) == pytest.approx(3 / DISCOUNTS)
    assert per(Y_TRUE_EYE, Y_SCORE, ndcg, naming) == pytest.approx(1 / DISCOUNTS)
    assert per(Y_TRUE_EYE, Y_SCORE, dcg10, naming) == pytest.approx(3 / np.log10(np.arange(2, 7)))
    assert _mean(Y_TRUE_EYE, Y_SCORE, ndcg, naming) == pytest.approx((1 / DISCOUNTS).mean())
    assert _mean(Y_TRUE_EYE, Y_SCORE, dcg, naming) == pytest.approx((3 / DISCOUNTS).mean())
    expected_dcg = (3 / np.log2(np.arange(2, 9))).sum()
    assert per(ALL_THREES, Y_SCORE, dcg, naming) == pytest.approx(expected_dcg * np.ones(5))
    assert per(ALL_THREES, Y_SCORE, ndcg, naming) == pytest.approx(np.ones(5))
    assert _mean(ALL_THREES, Y_SCORE, dcg, naming) == pytest.approx(expected_dcg)
    assert _mean(ALL_THREES, Y_SCORE, ndcg, naming) == pytest.approx(1.0)


# --- test_ndcg_invariant --------------------------------------------------------------
@pytest.mark.parametrize("naming", NAMINGS)
def test_ndcg_invariant(naming: str) -> None:
    y_true = np.arange(70).reshape(7, 10)
    y_score = y_true + np.random.RandomState(0).uniform(-0.2, 0.2, size=y_true.shape)
    assert _mean(y_true, y_score, "ndcg_score", naming) == pytest.approx(1.0)
    assert _mean(y_true, y_score, "ndcg_score(ignore_ties=True)", naming) == pytest.approx(1.0)
    assert _mean(y_true, y_score + 1000, "ndcg_score", naming) == pytest.approx(1.0)


# --- test_dcg_ties --------------------------------------------------------------------
TIE_DISCOUNTS = 1 / np.log2(np.arange(2, 7))
TIE_TRUE = np.asarray([np.arange(5)])


@pytest.mark.parametrize("naming", NAMINGS)
def test_dcg_ties_averaged(naming: str) -> None:
    y_score = np.zeros(TIE_TRUE.shape)
    assert _per_sample(TIE_TRUE, y_score, "dcg_score", naming) == pytest.approx(
        [TIE_DISCOUNTS.sum() * TIE_TRUE.mean()]
    )
    y_score[0, 3:] = 1
    assert _per_sample(TIE_TRUE, y_score, "dcg_score", naming) == pytest.approx(
        [TIE_DISCOUNTS[:2].sum() * TIE_TRUE[0, 3:].mean()
         + TIE_DISCOUNTS[2:].sum() * TIE_TRUE[0, :3].mean()]
    )  # fmt: skip


def test_dcg_ties_ignored_is_an_order_of_the_tied_items() -> None:
    # A pinned difference: with ignore_ties=True scikit-learn takes the tied items in the
    # order its sort leaves them, which the test expects to be the last item first;
    # sparkeval's ignore_ties=True is ties=order, tied docs by doc id descending. Named
    # by position the two orders agree; named the other way round they do not.
    want = [(TIE_DISCOUNTS * TIE_TRUE[:, ::-1]).sum()]
    for y_score in (np.zeros(TIE_TRUE.shape), np.array([[0, 0, 0, 1, 1]])):
        name = "dcg_score(ignore_ties=True)"
        assert _per_sample(TIE_TRUE, y_score, name, "as_given") == pytest.approx(want)
        assert _per_sample(TIE_TRUE, y_score, name, "reversed") != pytest.approx(want)


def test_ndcg_of_a_single_document() -> None:
    # A pinned difference (docs/measures.md): test_ndcg_error_single_document expects
    # ndcg_score([[1]], [[1]]) to raise; sparkeval scores a one-doc ranking 1 (or 0)
    assert _per_sample([[1]], [[1]], "ndcg_score") == [1.0]


# --- test_precision_recall_curve_toydata: average_precision_score ---------------------
BINARY_AP = [
    ([0, 1], [0, 1], 1.0),
    ([0, 1], [1, 0], 0.5),
    ([1, 0], [1, 0], 1.0),
    ([0, 0], [0.25, 0.75], 0.0),  # "No positive class found in y_true"
    ([1, 1], [0.25, 0.75], 1.0),
]
SAMPLES_AP = [  # multilabel, average="samples"
    ([[0, 1], [0, 1]], [[0, 1], [0, 1]], 1.0),
    ([[0, 1], [0, 1]], [[0, 1], [1, 0]], 0.75),
    ([[1, 0], [0, 1]], [[0, 1], [1, 0]], 0.5),
    ([[0, 0], [0, 0]], [[0, 1], [0, 1]], 0.0),
    ([[1, 1], [1, 1]], [[0, 1], [0, 1]], 1.0),
]


@pytest.mark.parametrize("naming", NAMINGS)
@pytest.mark.parametrize(
    ("y_true", "y_score", "want"),
    [pytest.param(*c, id=f"binary {c[0]} {c[1]}") for c in BINARY_AP]
    + [pytest.param(*c, id=f"samples {c[0]} {c[1]}") for c in SAMPLES_AP],
)
def test_average_precision_toydata(y_true, y_score, want: float, naming: str) -> None:
    assert _mean(y_true, y_score, "AP", naming) == pytest.approx(want, abs=1e-7)


# scikit-learn ranks tied items together (one threshold: each gets the precision of the
# whole run of ties): AP(ties=average); plain AP orders tied scores by doc id, so its
# value depends on which item is which (both namings must give scikit-learn's value)
@pytest.mark.parametrize(
    ("y_true", "y_score", "want"),
    [
        pytest.param([1, 0], [1, 1], 0.5, id="toydata binary [1, 0] [1, 1]"),
        pytest.param([1, 0], [0.5, 0.5], 0.5, id="toydata binary [1, 0] [0.5, 0.5]"),
        pytest.param([[1, 0], [0, 1]], [[0.5, 0.5], [0.5, 0.5]], 0.5,
                     id="toydata samples [[1, 0], [0, 1]] ties"),
        # test_average_precision_constant_values: 25% positives, a constant score
        pytest.param([int(i % 4 == 0) for i in range(100)], [1.0] * 100, 0.25,
                     id="test_average_precision_constant_values"),
    ],
)  # fmt: skip
def test_average_precision_with_ties(y_true, y_score, want: float) -> None:
    for naming in NAMINGS:
        got = _mean(y_true, y_score, "AP(ties=average)", naming)
        assert got == pytest.approx(want, abs=1e-7)


# --- test_label_ranking_avp: check_lrap_toy, check_lrap_without_tie_and_increasing_score
LRAP_TOY = [
    ([[0, 1]], [[0.25, 0.75]], 1), ([[0, 1]], [[0.75, 0.25]], 1 / 2),
    ([[1, 1]], [[0.75, 0.25]], 1),
    ([[0, 0, 1]], [[0.25, 0.5, 0.75]], 1), ([[0, 1, 0]], [[0.25, 0.5, 0.75]], 1 / 2),
    ([[0, 1, 1]], [[0.25, 0.5, 0.75]], 1), ([[1, 0, 0]], [[0.25, 0.5, 0.75]], 1 / 3),
    ([[1, 0, 1]], [[0.25, 0.5, 0.75]], (2 / 3 + 1 / 1) / 2),
    ([[1, 1, 0]], [[0.25, 0.5, 0.75]], (2 / 3 + 1 / 2) / 2),
    ([[0, 0, 1]], [[0.75, 0.5, 0.25]], 1 / 3), ([[0, 1, 0]], [[0.75, 0.5, 0.25]], 1 / 2),
    ([[0, 1, 1]], [[0.75, 0.5, 0.25]], (1 / 2 + 2 / 3) / 2),
    ([[1, 0, 0]], [[0.75, 0.5, 0.25]], 1),
    ([[1, 0, 1]], [[0.75, 0.5, 0.25]], (1 + 2 / 3) / 2),
    ([[1, 1, 0]], [[0.75, 0.5, 0.25]], 1), ([[1, 1, 1]], [[0.75, 0.5, 0.25]], 1),
    ([[0, 0, 1]], [[0.5, 0.75, 0.25]], 1 / 3), ([[0, 1, 0]], [[0.5, 0.75, 0.25]], 1),
    ([[0, 1, 1]], [[0.5, 0.75, 0.25]], (1 + 2 / 3) / 2),
    ([[1, 0, 0]], [[0.5, 0.75, 0.25]], 1 / 2),
    ([[1, 0, 1]], [[0.5, 0.75, 0.25]], (1 / 2 + 2 / 3) / 2),
    ([[1, 1, 0]], [[0.5, 0.75, 0.25]], 1), ([[1, 1, 1]], [[0.5, 0.75, 0.25]], 1),
]  # fmt: skip
LRAP_TIES = [
    ([[1, 0]], [[0.5, 0.5]], 0.5), ([[0, 1]], [[0.5, 0.5]], 0.5),
    ([[0, 0, 1]], [[0.25, 0.5, 0.5]], 0.5), ([[0, 1, 0]], [[0.25, 0.5, 0.5]], 0.5),
    ([[1, 0, 1]], [[0.25, 0.5, 0.5]], (2 / 3 + 1 / 2) / 2),
    ([[1, 1, 0]], [[0.25, 0.5, 0.5]], (2 / 3 + 1 / 2) / 2),
    ([[1, 1, 0]], [[0.5, 0.5, 0.5]], 2 / 3), ([[1, 1, 1, 0]], [[0.5, 0.5, 0.5, 0.5]], 3 / 4),
]  # fmt: skip
#: check_lrap_toy's tie cases whose tied items are all relevant or all not: no order of
#: the ties changes the value
LRAP_TIES_UNAFFECTED = [
    ([[1, 1]], [[0.5, 0.5]], 1), ([[0, 1, 1]], [[0.25, 0.5, 0.5]], 1),
    ([[1, 0, 0]], [[0.25, 0.5, 0.5]], 1 / 3), ([[1, 1, 1]], [[0.25, 0.5, 0.5]], 1),
]  # fmt: skip


def _increasing_score_cases() -> list[tuple[np.ndarray, np.ndarray, float]]:
    """check_lrap_without_tie_and_increasing_score's cases and expected values."""
    cases = []
    for n_labels in range(2, 10):
        y_score = n_labels - (np.arange(n_labels).reshape((1, n_labels)) + 1)
        y_true = np.zeros((1, n_labels))
        y_true[0, 0] = y_true[0, -1] = 1  # first and last
        cases.append((y_true, y_score, (2 / n_labels + 1) / 2))
        for n_relevant in range(1, n_labels):
            for pos in range(n_labels - n_relevant):
                y_true = np.zeros((1, n_labels))
                y_true[0, pos : pos + n_relevant] = 1
                want = sum((r + 1) / ((pos + r + 1) * n_relevant) for r in range(n_relevant))
                cases.append((y_true, y_score, want))
    return cases


@pytest.mark.parametrize("naming", NAMINGS)
def test_lrap_toy_without_ties(naming: str) -> None:
    cases = LRAP_TOY + LRAP_TIES_UNAFFECTED
    for (y_true, _, want), got in zip(cases, _batch(cases, "AP", naming), strict=True):
        assert got == pytest.approx(want, abs=1e-7), y_true


@pytest.mark.parametrize("naming", NAMINGS)
def test_lrap_without_tie_and_increasing_score(naming: str) -> None:
    cases = _increasing_score_cases()
    assert len(cases) == 128
    for (y_true, _, want), got in zip(cases, _batch(cases, "AP", naming), strict=True):
        assert got == pytest.approx(want, abs=1e-7), y_true


@pytest.mark.parametrize(
    ("y_true", "y_score", "want"),
    [pytest.param(*c, id=f"check_lrap_toy {c[0]} {c[1]}") for c in LRAP_TIES]
    + [
        # check_lrap_only_ties: all scores tied, n_relevant consecutive relevant labels
        pytest.param([[1, 0]], [[1, 1]], 1 / 2, id="check_lrap_only_ties n_labels=2"),
        pytest.param([[0, 1, 1, 0, 0]], [[1] * 5], 2 / 5, id="check_lrap_only_ties n_labels=5"),
    ],
)
def test_lrap_with_ties(y_true, y_score, want: float) -> None:
    # LRAP with ties: each relevant label's share of relevant labels among those scored
    # at least as high, the precision at the end of its run of ties: AP(ties=average)
    for naming in NAMINGS:
        got = _mean(y_true, y_score, "AP(ties=average)", naming)
        assert got == pytest.approx(want, abs=1e-7)


def test_lrap_of_a_sample_without_relevant_labels() -> None:
    # test_lrap_sample_weighting_zero_labels: sample-wise LRAPs 0.5, 0.75 and 1.0, the
    # last for a sample without relevant labels, which LRAP (and
    # check_zero_or_all_relevant_labels) score 1. A pinned difference: AP of a query
    # without relevant docs is 0 (trec_eval).
    y_true = np.array([[1, 0, 0, 0], [1, 0, 0, 1], [0, 0, 0, 0]])
    y_score = np.array([[0.3, 0.4, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]])
    got = _per_sample(y_true, y_score, "AP")
    assert got[:2] == pytest.approx([0.5, 0.75])
    assert got[2] == 0.0
    for n_labels in range(2, 5):  # check_zero_or_all_relevant_labels: only relevant labels
        y_score = np.random.RandomState(0).uniform(size=(1, n_labels))
        assert _mean(np.ones((1, n_labels)), y_score, "AP") == 1.0
        assert _mean(np.ones((1, n_labels)), np.zeros((1, n_labels)), "AP") == 1.0
    assert not math.isnan(got[2])


# --- test_roc_curve_toydata: roc_auc_score, sparkeval's AUC (tied scores count 1/2) ----
ROC_AUC = [
    ([0, 1], [0, 1], 1.0),
    ([0, 1], [1, 0], 0.0),
    ([1, 0], [1, 1], 0.5),
    ([1, 0], [1, 0], 1.0),
    ([1, 0], [0.5, 0.5], 0.5),
]
ROC_AUC_SAMPLES = [  # multilabel, average="samples"
    ([[0, 1], [0, 1]], [[0, 1], [0, 1]], 1.0),
    ([[0, 1], [0, 1]], [[0, 1], [1, 0]], 0.5),
    ([[1, 0], [0, 1]], [[0, 1], [1, 0]], 0.0),
    ([[1, 0], [0, 1]], [[0.5, 0.5], [0.5, 0.5]], 0.5),
]


@pytest.mark.parametrize("naming", NAMINGS)
@pytest.mark.parametrize(
    ("y_true", "y_score", "want"),
    [pytest.param(*c, id=f"binary {c[0]} {c[1]}") for c in ROC_AUC]
    + [pytest.param(*c, id=f"samples {c[0]} {c[1]}") for c in ROC_AUC_SAMPLES],
)
def test_roc_auc_toydata(y_true, y_score, want: float, naming: str) -> None:
    assert _mean(y_true, y_score, "AUC", naming) == pytest.approx(want, abs=1e-7)


@pytest.mark.parametrize("y_true", [[0, 0], [1, 1]], ids=["no positive", "no negative"])
def test_roc_auc_of_one_class(y_true) -> None:
    # roc_auc_score raises ValueError on one class (test_roc_curve_toydata); sparkeval's
    # AUC is undefined there: null, left out of the mean and counted
    per_query, means = values(*_samples(y_true, [0.25, 0.75], "as_given"), ["AUC"])
    assert math.isnan(per_query["AUC"]["s0"])
    assert math.isnan(means["AUC"])


# --- test_top_k_accuracy_score*: top_k_accuracy_score is Success@k, the true class the
# one relevant item of its sample --------------------------------------------------------
def _one_hot(labels: list[int], n: int) -> np.ndarray:
    return np.eye(n, dtype=int)[labels]


TOP_K_SCORES = np.array(
    [[0.4, 0.3, 0.2, 0.1], [0.1, 0.3, 0.4, 0.2], [0.4, 0.1, 0.2, 0.3], [0.3, 0.2, 0.4, 0.1]]
)


@pytest.mark.parametrize("naming", NAMINGS)
@pytest.mark.parametrize(
    ("k", "want"),
    [
        pytest.param(1, 0.25, id="test_top_k_accuracy_score k=1"),
        pytest.param(2, 0.5, id="test_top_k_accuracy_score k=2"),
        pytest.param(3, 0.75, id="test_top_k_accuracy_score k=3"),
    ],
)
def test_top_k_accuracy_score(k: int, want: float, naming: str) -> None:
    got = _mean(_one_hot([0, 1, 2, 3], 4), TOP_K_SCORES, f"Success@{k}", naming)
    assert got == pytest.approx(want)


@pytest.mark.parametrize("k", [4, 5], ids=["k=4", "k=5"])
def test_top_k_accuracy_score_warning(k: int) -> None:
    # k at least the number of classes: a perfect score (scikit-learn warns)
    y_score = np.array(
        [[0.4, 0.3, 0.2, 0.1], [0.1, 0.4, 0.3, 0.2], [0.2, 0.1, 0.4, 0.3], [0.3, 0.2, 0.1, 0.4]]
    )
    for naming in NAMINGS:
        assert _mean(_one_hot([0, 1, 2, 3], 4), y_score, f"Success@{k}", naming) == 1


def test_top_k_accuracy_score_ties() -> None:
    # A pinned difference: scikit-learn takes the highest class index first among tied
    # scores; sparkeval takes the highest doc id first, so the two agree when the items
    # are named by their class index (and not when named the other way round)
    y_score = np.array([[5, 5, 7, 0], [1, 5, 5, 5], [0, 0, 3, 3], [1, 1, 1, 1]])
    y_true = _one_hot([0, 1, 2, 3], 4)
    for k, want in [(1, 0.25), (2, 0.5), (3, 1.0)]:
        assert _mean(y_true, y_score, f"Success@{k}", "as_given") == pytest.approx(want)
    assert _mean(y_true, y_score, "Success@1", "reversed") != pytest.approx(0.25)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_tie_averaged_ap_is_sklearns_on_random_ties(seed: int) -> None:
    # scikit-learn itself: per-sample average_precision_score and LRAP of scores drawn
    # from four values (many ties); every sample holds a relevant and an irrelevant label
    from sklearn.metrics import average_precision_score, label_ranking_average_precision_score

    rng = np.random.RandomState(seed)
    y_true = rng.randint(0, 2, size=(12, 9))
    y_true[:, 0], y_true[:, 1] = 1, 0
    y_score = rng.randint(0, 4, size=y_true.shape) / 4
    got = _per_sample(y_true, y_score, "AP(ties=average)")
    want = [average_precision_score(t, s) for t, s in zip(y_true, y_score, strict=True)]
    assert got == pytest.approx(want, abs=1e-12)
    lrap = label_ranking_average_precision_score(y_true, y_score)
    assert float(np.mean(got)) == pytest.approx(lrap, abs=1e-12)
