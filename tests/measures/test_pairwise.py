"""AUC, Kendall's tau-b and Spearman's rho against scikit-learn and scipy, query by query."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from sparkeval.engine.worker.assemble import EvalOptions, evaluate_frames
from sparkeval.formats import measure_column
from sparkeval.measures import RankedBatch
from sparkeval.measures.names import parse_measures
from tests.random_collection import random_collection

sklearn_metrics = pytest.importorskip("sklearn.metrics")


def _per_query(seed: int, rel_level: int):
    run, qrels = random_collection(seed, queries=60, max_docs=30)
    measures = parse_measures("AUC KendallTau SpearmanRho")
    wide = evaluate_frames(run, qrels, measures, EvalOptions(queries="both", rel_level=rel_level))
    wide = wide[wide["evaluated"]]
    joined = run.merge(qrels, on=["query_id", "doc_id"], how="left")
    joined["grade"] = joined["relevance"].fillna(0).clip(lower=0)
    by_query = {q: g for q, g in joined.groupby("query_id")}
    for row in wide.itertuples(index=False):
        docs = by_query[row.query_id]
        yield (
            docs["score"].to_numpy(),
            docs["grade"].to_numpy(float),
            {m.name: getattr(row, measure_column(i)) for i, m in enumerate(measures)},
        )


@pytest.mark.parametrize(("seed", "rel_level"), [(11, 1), (12, 2), (13, 1)])
def test_against_scipy_and_sklearn(seed: int, rel_level: int) -> None:
    checked = {"AUC": 0, "KendallTau": 0, "SpearmanRho": 0}
    for scores, grades, got in _per_query(seed, rel_level):
        labels = (grades >= rel_level).astype(int)
        if 0 < labels.sum() < len(labels):
            assert got["AUC"] == pytest.approx(sklearn_metrics.roc_auc_score(labels, scores))
            checked["AUC"] += 1
        else:
            assert math.isnan(got["AUC"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tau = stats.kendalltau(scores, grades, variant="b").statistic
            rho = stats.spearmanr(scores, grades).statistic
        for name, want in (("KendallTau", tau), ("SpearmanRho", rho)):
            if np.isnan(want):
                assert math.isnan(got[name]), (name, got[name])
            else:
                assert got[name] == pytest.approx(want, abs=1e-12)
                checked[name] += 1
    assert min(checked.values()) >= 20, checked


def test_constant_and_tiny_inputs_are_null() -> None:
    b = RankedBatch.from_lists(
        [[1], [1, 1, 1], [0, 2], [1, 0]],
        [[1], [1, 1, 1], [2], [1]],
        scores=[[1.0], [3.0, 2.0, 1.0], [5.0, 5.0], [2.0, 1.0]],
    )
    values = {m.name: m.compute(b, 1) for m in parse_measures("AUC KendallTau SpearmanRho RC")}
    assert np.isnan(values["KendallTau"][:3]).all() and values["KendallTau"][3] == 1.0
    assert np.isnan(values["SpearmanRho"][:3]).all() and values["SpearmanRho"][3] == 1.0
    # AUC: one class only in the first two; tied scores give 1/2
    assert np.isnan(values["AUC"][:2]).all()
    assert values["AUC"][2] == 0.5 and values["AUC"][3] == 1.0
    assert np.isnan(values["RC"][0]) and values["RC"][1] == 1.0
