"""Seeded random collections with exact score ties, for differential tests."""

from __future__ import annotations

import numpy as np
import pandas as pd


def random_collection(
    seed: int, queries: int = 30, docs: int = 60
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A run (two runs) and graded qrels with ties, unjudged docs and edge queries.

    * scores are multiples of 0.25 in [0, 5): many exact ties;
    * grades -1..3; some retrieved docs are not in the qrels;
    * a query with R = 0, a query only in the run, a query only in the qrels,
      a query with a single retrieved doc.
    """
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows = [], []
    for q in range(queries):
        qid = f"q{q:02d}"
        pool = [f"d{q}-{d:03d}" for d in range(docs)]
        judged = rng.random(docs) < 0.6
        grades = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3], size=docs)
        if q == 1:
            grades = np.zeros(docs, dtype=int)  # R = 0
        if q != 2:  # q02 only in the run
            qrels_rows += [(qid, pool[d], int(grades[d])) for d in range(docs) if judged[d]]
        if q == 3:
            continue  # q03 only in the qrels
        for run_id in ("A", "B"):
            n = 1 if q == 4 else int(rng.integers(5, docs))
            chosen = rng.choice(docs, size=n, replace=False)
            scores = rng.integers(0, 20, size=n) / 4.0
            pairs = zip(chosen, scores, strict=True)
            run_rows += [(run_id, qid, pool[d], float(s)) for d, s in pairs]
    run = pd.DataFrame(run_rows, columns=["run_id", "query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    return run, qrels


def to_pytrec(run: pd.DataFrame, qrels: pd.DataFrame, run_id: str):
    """(qrels dict, run dict) in pytrec_eval's shape."""
    q: dict[str, dict[str, int]] = {}
    for row in qrels.itertuples():
        q.setdefault(row.query_id, {})[row.doc_id] = int(row.relevance)
    r: dict[str, dict[str, float]] = {}
    for row in run[run.run_id == run_id].itertuples():
        r.setdefault(row.query_id, {})[row.doc_id] = float(row.score)
    return q, r
