"""Helpers of the peer conformance modules (``test_peer_*.py``): the peers' fixtures as
frames, and sparkeval's values of them, computed in this process (no JVM).

Each module transcribes the input data and the expected values of a peer's published
tests; these helpers only shape the data and read sparkeval's values back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import pytest

from sparkeval.engine.api import evaluate, evaluate_recommendations


def ranking(lists: Mapping[Any, Sequence[Any]]) -> pd.DataFrame:
    """A run in which each query's docs come in the order given: the first scores highest.

    Example: ``ranking({"q1": ["d3", "d1"]})`` gives d3 the score 2 and d1 the score 1.
    """
    rows = [
        (str(q), str(doc), float(len(docs) - i))
        for q, docs in lists.items()
        for i, doc in enumerate(docs)
    ]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


def scored(scores: Mapping[Any, Mapping[Any, float]]) -> pd.DataFrame:
    """A run from ``{query: {doc: score}}``."""
    rows = [(str(q), str(d), float(s)) for q, docs in scores.items() for d, s in docs.items()]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


def judged(grades: Mapping[Any, Mapping[Any, int]]) -> pd.DataFrame:
    """Qrels from ``{query: {doc: grade}}``."""
    rows = [(str(q), str(d), int(g)) for q, docs in grades.items() for d, g in docs.items()]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def relevant(items: Mapping[Any, Sequence[Any]]) -> pd.DataFrame:
    """Qrels in which every listed doc has grade 1."""
    return judged({q: dict.fromkeys(docs, 1) for q, docs in items.items()})


def trec_text(qrels: str, run: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Qrels (``query 0 doc grade``) and a run (``query Q0 doc rank score tag``) written
    in trec_eval's formats, as frames (the run keeps its scores; trec_eval ignores ranks)."""
    q = [line.split() for line in qrels.strip().splitlines() if line.strip()]
    r = [line.split() for line in run.strip().splitlines() if line.strip()]
    return (
        pd.DataFrame(
            [(a[0], a[2], float(a[4])) for a in r], columns=["query_id", "doc_id", "score"]
        ),
        pd.DataFrame(
            [(a[0], a[2], int(a[3])) for a in q], columns=["query_id", "doc_id", "relevance"]
        ),
    )


def _by_query(frame: pd.DataFrame) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for row in frame.itertuples(index=False):
        out.setdefault(str(row.measure), {})[str(row.query_id)] = float(row.value)
    return out


def _means(ev: Any) -> dict[str, float]:
    [run] = ev.report["runs"].values()
    return {name: (float("nan") if v is None else float(v)) for name, v in run["measures"].items()}


def values(
    run: Any, qrels: Any, measures: Sequence[str], **keywords: Any
) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """``({name: {query: value}}, {name: mean})`` of :func:`sparkeval.evaluate` in this
    process, keyed by the names as requested."""
    ev = evaluate(None, run, qrels, list(measures), names="requested", **keywords)
    return _by_query(ev.per_query), _means(ev)


def rec_values(
    recs: Any, truth: Any, measures: Sequence[str], **keywords: Any
) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """The same for :func:`sparkeval.evaluate_recommendations` (a profile's names)."""
    ev = evaluate_recommendations(None, recs, truth, list(measures), names="requested", **keywords)
    return _by_query(ev.per_query), _means(ev)


def close(got: float, want: float, abs_tol: float = 1e-6) -> None:
    """``got`` equals the peer's ``want`` within the peer's tolerance."""
    assert got == pytest.approx(want, abs=abs_tol)
