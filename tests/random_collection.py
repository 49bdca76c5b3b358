"""Seeded random collections for differential and property tests.

Grades -1..3 (negative = pooled but unjudged), run docs outside the qrels, exact
score ties on a coarse grid of values exactly representable in float32, queries
with no relevant doc, and a query with an empty qrels grade list is avoided
(trec_eval drops such queries when reading).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def random_collection(
    seed: int, queries: int = 30, max_docs: int = 40, runs: int = 1, edge_queries: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(run frame, qrels frame) with columns as ``evaluate_frames`` expects.

    With ``edge_queries`` three more queries test the query policies: ``only-run``
    (not judged), ``only-qrels`` (not retrieved by any run) and ``one-doc`` (a
    single retrieved doc).
    """
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows = [], []
    for q in range(queries):
        qid = f"q{q:03d}"
        pool = [f"d{q}-{i:03d}" for i in range(max_docs + 10)]
        n_judged = int(rng.integers(1, max_docs))
        judged = rng.choice(len(pool), size=n_judged, replace=False)
        no_rel = rng.random() < 0.15
        for i in judged:
            grade = int(rng.choice([-1, 0, 0, 0, 1, 1, 2, 3]))
            if no_rel:
                grade = min(grade, 0)
            qrels_rows.append((qid, pool[i], grade))
        for r in range(runs):
            n_ret = int(rng.integers(1, max_docs))
            ret = rng.choice(len(pool), size=n_ret, replace=False)
            scores = rng.integers(0, 12, size=n_ret) / 4.0
            for i, s in zip(ret, scores, strict=True):
                run_rows.append((f"run{r}", qid, pool[i], float(s)))
    if edge_queries:
        for r in range(runs):
            run_rows += [(f"run{r}", "only-run", f"x{i}", float(i % 3)) for i in range(5)]
            run_rows.append((f"run{r}", "one-doc", "y1", 1.0))
        qrels_rows += [("only-qrels", f"z{i}", i % 3) for i in range(6)]
        qrels_rows += [("one-doc", "y1", 1), ("one-doc", "y2", 2)]
    run = pd.DataFrame(run_rows, columns=["run_id", "query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    return run, qrels


def to_pytrec(run: pd.DataFrame, qrels: pd.DataFrame, run_id: str):
    """(qrels dict, run dict of one run) in pytrec_eval's shape."""
    q: dict[str, dict[str, int]] = {}
    for row in qrels.itertuples():
        q.setdefault(row.query_id, {})[row.doc_id] = int(row.relevance)
    r: dict[str, dict[str, float]] = {}
    for row in run[run.run_id == run_id].itertuples():
        r.setdefault(row.query_id, {})[row.doc_id] = float(row.score)
    return q, r
