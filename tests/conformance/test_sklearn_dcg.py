"""scikit-learn's ``dcg_score`` / ``ndcg_score`` against sparkeval's ``dcg_score@k`` and
``ndcg_score@k`` (``DCG(ties=average)``, ``nDCG(ideal=run,ties=average)``), in process.

Each query is one scikit-learn sample: its items are the query's retrieved docs,
``y_true`` their grades (0 for a doc outside the qrels), ``y_score`` their scores. The
scores lie on a coarse grid, so most rankings hold long runs of tied scores, some
straddling the cutoff; expected values come from scikit-learn, never from sparkeval.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sparkeval.engine.worker.assemble import EvalOptions, evaluate_frames
from sparkeval.formats import measure_column
from sparkeval.measures.names import parse_measure, parse_measures

sklearn_metrics = pytest.importorskip("sklearn.metrics")

LOG_BASES = (2.0, math.e, 10.0, 1.5, 0.5)
CUTOFFS = (None, 1, 3, 5, 20)


def collection(seed: int, queries: int = 40) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(run, qrels): 2..30 docs per query, grades 0..4, unjudged docs, many tied scores;
    some queries with no relevant doc retrieved (ideal DCG 0), some with all scores tied."""
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows = [], []
    for q in range(queries):
        qid = f"q{q:02d}"
        n = int(rng.integers(2, 31))
        levels = int(rng.integers(1, 6))  # 1 level: every score tied
        no_rel = rng.random() < 0.15
        for i in range(n):
            doc = f"d{i:02d}"
            run_rows.append(("run", qid, doc, float(rng.integers(0, levels)) / 2))
            if rng.random() < 0.7:
                grade = 0 if no_rel else int(rng.choice([0, 0, 1, 2, 3, 4]))
                qrels_rows.append((qid, doc, grade))
        qrels_rows.append((qid, "not-retrieved", 4))  # only in the qrels: not a sample item
    run = pd.DataFrame(run_rows, columns=["run_id", "query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    return run, qrels


def samples(run: pd.DataFrame, qrels: pd.DataFrame) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{query: (y_true, y_score)}, one row each, in the run's row order."""
    grades = {(r.query_id, r.doc_id): r.relevance for r in qrels.itertuples()}
    out: dict[str, tuple[list[float], list[float]]] = {}
    for r in run.itertuples():
        truth, score = out.setdefault(r.query_id, ([], []))
        truth.append(float(grades.get((r.query_id, r.doc_id), 0)))
        score.append(r.score)
    return {q: (np.array([t]), np.array([s])) for q, (t, s) in out.items()}


def ours(run: pd.DataFrame, qrels: pd.DataFrame, names: list[str]) -> dict[tuple[str, str], float]:
    """{(query, name): value} computed in process."""
    wide = evaluate_frames(run, qrels, parse_measures(names), EvalOptions(queries="both"))
    return {
        (row["query_id"], name): float(row[measure_column(i)])
        for _, row in wide.iterrows()
        for i, name in enumerate(names)
    }


def at(name: str, k: int | None) -> str:
    return name if k is None else f"{name}@{k}"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_dcg_score_with_tie_averaging_and_log_bases(seed: int) -> None:
    run, qrels = collection(seed)
    names = {(b, k): at(f"dcg_score(log_base={b!r})", k) for b in LOG_BASES for k in CUTOFFS}
    got = ours(run, qrels, list(names.values()))
    tied = 0
    for qid, (y_true, y_score) in samples(run, qrels).items():
        tied += len(np.unique(y_score)) < y_score.shape[1]
        for (b, k), name in names.items():
            expected = sklearn_metrics.dcg_score(y_true, y_score, k=k, log_base=b)
            assert got[(qid, name)] == pytest.approx(expected, rel=1e-12, abs=1e-12), (qid, name)
    assert tied > 30


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_ndcg_score_with_tie_averaging(seed: int) -> None:
    run, qrels = collection(seed)
    names = {k: at("ndcg_score", k) for k in CUTOFFS}
    got = ours(run, qrels, list(names.values()))
    zero_ideal = 0
    for qid, (y_true, y_score) in samples(run, qrels).items():
        zero_ideal += not y_true.any()
        for k, name in names.items():
            expected = sklearn_metrics.ndcg_score(y_true, y_score, k=k)
            assert got[(qid, name)] == pytest.approx(expected, rel=1e-12, abs=1e-12), (qid, name)
    assert zero_ideal > 0  # queries whose ideal DCG is 0 score 0, as in scikit-learn


@pytest.mark.parametrize("seed", [7, 8])
def test_ignore_ties_true_is_the_ranking_order_when_scores_are_distinct(seed: int) -> None:
    run, qrels = collection(seed)
    run = run.assign(score=run.score + np.arange(len(run)) * 1e-6)  # no ties left
    names = ["ndcg_score(ignore_ties=True)@5", "dcg_score(ignore_ties=True,log_base=10)@5"]
    got = ours(run, qrels, names)
    for qid, (y_true, y_score) in samples(run, qrels).items():
        expected = [
            sklearn_metrics.ndcg_score(y_true, y_score, k=5, ignore_ties=True),
            sklearn_metrics.dcg_score(y_true, y_score, k=5, log_base=10, ignore_ties=True),
        ]
        assert [got[(qid, n)] for n in names] == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_tie_averaging_changes_the_value() -> None:
    # one run of three tied docs, grades 3, 0, 0 in doc id descending order, k = 2:
    # averaged: mean gain 1 times (1 + 1/log2(3)); in order: 3 * 1
    run = pd.DataFrame(
        [("run", "q", d, 1.0) for d in ("c", "b", "a")],
        columns=["run_id", "query_id", "doc_id", "score"],
    )
    qrels = pd.DataFrame(
        [("q", "c", 3), ("q", "b", 0)], columns=["query_id", "doc_id", "relevance"]
    )
    got = ours(run, qrels, ["dcg_score@2", "DCG@2", "ndcg_score@2", "nDCG(ideal=run)@2"])
    assert got[("q", "dcg_score@2")] == pytest.approx(1 + 1 / math.log2(3))
    assert got[("q", "DCG@2")] == pytest.approx(3.0)
    assert got[("q", "ndcg_score@2")] == pytest.approx((1 + 1 / math.log2(3)) / 3)
    assert got[("q", "nDCG(ideal=run)@2")] == pytest.approx(1.0)


def test_negative_grades_and_unjudged_docs_have_gain_zero() -> None:
    # trec_eval's reading of a negative grade (pooled, not judged): gain 0, as a doc
    # outside the qrels; scikit-learn's ndcg_score refuses negative grades altogether
    run = pd.DataFrame(
        [("run", "q", d, s) for d, s in (("a", 3.0), ("b", 2.0), ("c", 1.0))],
        columns=["run_id", "query_id", "doc_id", "score"],
    )
    qrels = pd.DataFrame(
        [("q", "a", -1), ("q", "c", 2)], columns=["query_id", "doc_id", "relevance"]
    )
    got = ours(run, qrels, ["dcg_score", "ndcg_score"])
    assert got[("q", "dcg_score")] == pytest.approx(2 / 2)  # grade 2 at rank 3: 2/log2(4)
    assert got[("q", "ndcg_score")] == pytest.approx(0.5)  # ideal: 2 at rank 1


def test_one_doc_and_empty_rankings() -> None:
    # scikit-learn refuses a sample of one item; here it is the formula: 1 when it is
    # relevant (DCG = IDCG), 0 when not; a query the run does not answer scores 0
    run = pd.DataFrame(
        [("run", "one", "a", 1.0), ("run", "zero", "b", 1.0)],
        columns=["run_id", "query_id", "doc_id", "score"],
    )
    qrels = pd.DataFrame(
        [("one", "a", 2), ("zero", "b", 0), ("empty", "c", 1)],
        columns=["query_id", "doc_id", "relevance"],
    )
    measures = parse_measures(["ndcg_score@3", "dcg_score@3"])
    wide = evaluate_frames(run, qrels, measures, EvalOptions(queries="qrels"))
    values = {r.query_id: (r.m0, r.m1) for r in wide.itertuples()}
    assert values == {"one": (1.0, 2.0), "zero": (0.0, 0.0), "empty": (0.0, 0.0)}


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        ("ndcg_score@10", "nDCG(ideal=run,ties=average)@10"),
        ("ndcg_score(k=10)", "nDCG(ideal=run,ties=average)@10"),
        ("NDCG_SCORE@5", "nDCG(ideal=run,ties=average)@5"),
        ("ndcg_score(ignore_ties=True)@5", "nDCG(ideal=run)@5"),
        ("dcg_score@10", "DCG(ties=average)@10"),
        ("dcg_score(log_base=10,k=3)", "DCG(log_base=10,ties=average)@3"),
        ("dcg_score(ignore_ties=True)", "DCG"),
        ("DCG(log_base=2)", "DCG"),
        ("nDCG(ignore_ties=False)@10", "nDCG(ties=average)@10"),
    ],
)
def test_scikit_learn_spellings(typed: str, canonical: str) -> None:
    assert parse_measure(typed).name == canonical


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("ndcg_score(log_base=10)@5", "log_base=10 is not offered on nDCG"),
        ("DCG(gain=jarvelin,log_base=10)", "log_base=10 is not offered with gain=jarvelin"),
        ("dcg_score(log_base=0)", "log_base=0 must be > 0"),
        ("dcg_score(log_base=-2)", "log_base=-2 must be > 0"),
        ("dcg_score(ignore_ties=maybe)", "ignore_ties='maybe' is not a valid switch"),
        ("dcg_score(ties=order,ignore_ties=False)", "ignore_ties=False contradicts ties=order"),
        ("ndcg_score(sample_weight=2)", "unknown parameter.*sample_weight"),
        ("dcg_score(k=5)@3", "cutoff=5 contradicts @3"),
    ],
)
def test_values_that_cannot_be_honoured_are_refused(typed: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_measure(typed)
