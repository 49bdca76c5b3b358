"""The intent-aware measures against ``pyndeval`` (TREC's ndeval.c, as ir_measures
runs it): per query and as means, on random collections with tied scores, several
subtopics per query, graded judgements, unjudged run docs and queries in only one of
the run and the subtopic qrels.

pyndeval ranks by score descending, then doc id ascending, scores only the queries of
both inputs and stops at cutoff 20. It gives nNRBP = NaN for a query without a
relevant doc (0 / 0); sparkeval gives 0 there (its documented choice).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

pyndeval = pytest.importorskip("pyndeval")

from sparkeval.evaluation.intent_aware import results_by_run, values_by_run  # noqa: E402
from sparkeval.measures.intent_aware_names import intent_aware_measure  # noqa: E402

CUTS = (1, 2, 3, 5, 10, 20)
PEER_NAMES = [
    *(f"{name}@{k}" for name in ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG") for k in CUTS),
    *(f"{name}@{k}" for name in ("P-IA", "strec") for k in CUTS),
    "NRBP",
    "nNRBP",
    "MAP-IA",
]


def _collection(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A run (query_id, doc_id, score) and subtopic qrels (query_id, subtopic_id,
    doc_id, relevance) drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    qrels_rows, run_rows = [], []
    for q in range(6):
        query = f"q{q}"
        docs = [f"d{d}" for d in rng.choice(60, size=int(rng.integers(3, 25)), replace=False)]
        subtopics = [f"s{s}" for s in range(int(rng.integers(1, 6)))]
        if q != 5:  # q5: in the run only
            for doc in docs:
                for sub in subtopics:
                    if rng.random() < 0.35:
                        qrels_rows.append((query, sub, doc, int(rng.integers(0, 3))))
        if q == 4:  # in the qrels only
            continue
        pool = [f"d{d}" for d in range(60)]
        retrieved = rng.choice(pool, size=int(rng.integers(1, 30)), replace=False)
        for doc in retrieved:
            run_rows.append((query, str(doc), float(rng.integers(0, 6))))  # many ties
    for q in range(5):  # every query but q5 has subtopic qrels
        if not any(r[0] == f"q{q}" for r in qrels_rows):
            qrels_rows.append((f"q{q}", "s0", "d1", 1))
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "subtopic_id", "doc_id", "relevance"])
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    return run, qrels


def _peer(run, qrels, rel, alpha, beta):
    evaluator = pyndeval.RelevanceEvaluator(
        list(qrels.itertuples(index=False, name=None)),
        PEER_NAMES,
        relevance_level=rel,
        alpha=alpha,
        beta=beta,
    )
    ordered = run.sort_values("query_id", kind="stable")
    return evaluator.evaluate(list(ordered.itertuples(index=False, name=None)))


def _ours(name: str, alpha: float, beta: float, rel: int) -> str:
    base, _, cut = name.partition("@")
    params = [f"rel={rel}"]
    if base not in ("P-IA", "strec", "MAP-IA"):
        params.append(f"alpha={alpha}")
    if base in ("NRBP", "nNRBP"):
        params.append(f"beta={beta}")
    return f"{base}({','.join(params)})" + (f"@{cut}" if cut else "")


SETTINGS = [(seed, 0.5, 0.5, 1) for seed in range(16)]
SETTINGS += [(100 + seed, 0.3, 0.8, 1) for seed in range(8)]
SETTINGS += [(200 + seed, 0.7, 0.25, 2) for seed in range(8)]
SETTINGS += [(300 + seed, alpha, 1.0, 1) for seed, alpha in enumerate((0.0, 1.0, 0.0, 1.0))]


@pytest.mark.parametrize(("seed", "alpha", "beta", "rel"), SETTINGS)
def test_per_query_and_means_match_pyndeval(seed, alpha, beta, rel):
    run, qrels = _collection(seed)
    peer = _peer(run, qrels, rel, alpha, beta)
    measures = [intent_aware_measure(_ours(n, alpha, beta, rel)) for n in PEER_NAMES]
    assert all(m is not None for m in measures)
    for query in sorted(set(run["query_id"])):
        single = {"r": run[run["query_id"] == query].reset_index(drop=True)}
        ours = values_by_run(single, qrels, measures, None)["r"]  # type: ignore[arg-type]
        if query not in peer:
            assert ours[measures[0].name]["queries"] == 0  # type: ignore[union-attr]
            continue
        for name, measure in zip(PEER_NAMES, measures, strict=True):
            expected = peer[query][name]
            if name == "nNRBP" and math.isnan(expected):
                expected = 0.0  # no relevant doc: 0 / 0 in ndeval, 0 here
            got = ours[measure.name]["value"]  # type: ignore[union-attr]
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-12), (query, name)
    means = values_by_run({"r": run}, qrels, measures, None)["r"]  # type: ignore[arg-type]
    scored = sorted(peer)
    for name, measure in zip(PEER_NAMES, measures, strict=True):
        values = [peer[q][name] for q in scored]
        values = [0.0 if math.isnan(v) else v for v in values]
        block = means[measure.name]  # type: ignore[union-attr]
        assert block["queries"] == len(scored)
        assert block["value"] == pytest.approx(float(np.mean(values)), rel=1e-9, abs=1e-12)
    run_queries, qrels_queries = set(run["query_id"]), set(qrels["query_id"])
    assert block["run_only"] == len(run_queries - qrels_queries) == 1  # q5
    assert block["qrels_only"] == len(qrels_queries - run_queries) == 1  # q4


@pytest.mark.parametrize(("seed", "alpha", "beta", "rel"), SETTINGS[::4])
def test_per_query_rows_match_pyndeval(seed, alpha, beta, rel):
    """The rows of ``per_query_intent_aware.parquet`` (one per scored query and measure,
    sorted by query then the measures' order) hold pyndeval's per-query values."""
    run, qrels = _collection(seed)
    peer = _peer(run, qrels, rel, alpha, beta)
    measures = [intent_aware_measure(_ours(n, alpha, beta, rel)) for n in PEER_NAMES]
    results = results_by_run({"r": run}, qrels, measures, None)  # type: ignore[arg-type]
    rows = results.table(measures, "canonical").to_pylist()  # type: ignore[arg-type]
    expected = [
        (query, measure.name, 0.0 if math.isnan(peer[query][name]) else peer[query][name])
        for query in sorted(peer)
        for name, measure in zip(PEER_NAMES, measures, strict=True)  # type: ignore[union-attr]
    ]
    assert [(r["run_id"], r["query_id"], r["measure"]) for r in rows] == [
        ("r", q, m) for q, m, _ in expected
    ]
    for row, (query, name, value) in zip(rows, expected, strict=True):
        assert row["value"] == pytest.approx(value, rel=1e-9, abs=1e-12), (query, name)


IR_MEASURES_NAMES = [
    "alpha_nDCG(alpha=0.5, judged_only=False)@20",
    "alpha_nDCG(alpha=0.3)@10",
    "alpha_DCG@5",
    "ERR_IA@20",
    "nERR_IA@20",
    "P_IA@10",
    "StRecall@20",
    "AP_IA",
    "NRBP(alpha=0.5,beta=0.5)",
    "nNRBP(beta=0.8)",
    "nERR_IA(rel=2)@10",
]


@pytest.mark.parametrize("seed", range(4))
def test_ir_measures_spellings_match_ir_measures(seed):
    """Each ir_measures spelling, parsed and computed by ir_measures (its pyndeval
    provider), against sparkeval's value under the same name: the mean over the
    queries of both inputs (ir_measures also yields 0 for a query of the qrels that the
    run lacks, as ndeval -c averages; sparkeval, as ndeval by default, leaves it out)."""
    ir_measures = pytest.importorskip("ir_measures")
    run, qrels = _collection(seed)
    peer_qrels = qrels.rename(columns={"subtopic_id": "iteration"})
    from sparkeval.measures.intent_aware_names import split_intent_aware

    for name in IR_MEASURES_NAMES:
        measure = ir_measures.parse_measure(name.replace(" ", ""))
        per_query = {
            m.query_id: m.value for m in ir_measures.pyndeval.iter_calc([measure], peer_qrels, run)
        }
        in_run = set(run["query_id"])
        values = [0.0 if math.isnan(v) else v for q, v in per_query.items() if q in in_run]
        ours = split_intent_aware([name])[1]
        block = values_by_run({"r": run}, qrels, ours, None)["r"][ours[0].name]
        assert block["queries"] == len(values), name
        assert block["value"] == pytest.approx(float(np.mean(values)), rel=1e-9), name
