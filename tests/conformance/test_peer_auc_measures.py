"""PartialAUC, PAP and RecallAtFixedPrecision against their peers' published values,
computed in this process (no Spark).

RecTools (MobileTeleSystems/RecTools): the per-user values of tests/metrics/test_auc.py
and the docstring examples of rectools/metrics/auc.py, under ``compat="rectools"`` (ranks
are positions; an empty position is a non-relevant item). torchmetrics
(Lightning-AI/torchmetrics): the docstring examples of
src/torchmetrics/retrieval/precision_recall_curve.py and
src/torchmetrics/functional/retrieval/precision_recall_curve.py.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from sparkeval.compat import plan_compat
from sparkeval.engine.api import evaluate_recommendations
from sparkeval.errors import ConfigError, MeasureError
from sparkeval.measures.names import parse_measure


def _per_user(ev) -> dict[str, list[float]]:
    frame = ev.per_query
    frame = frame.assign(user=frame["query_id"].astype(int)).sort_values("user")
    return {
        name: frame[frame["measure"] == name]["value"].tolist()
        for name in frame["measure"].unique()
    }


def _rectools(reco: dict, interactions: dict, names: str):
    return evaluate_recommendations(
        None,
        pd.DataFrame(reco),
        pd.DataFrame(interactions),
        names,
        compat="rectools",
        names="requested",
    )


def _assert_values(got: list[float], expected: list[float], name: str) -> None:
    assert len(got) == len(expected), name
    for g, e in zip(got, expected, strict=True):
        if math.isnan(e):
            assert math.isnan(g), name
        else:
            assert g == pytest.approx(e, abs=1e-12), name


# --- RecTools tests/metrics/test_auc.py: TestPartialAUC.test_calc and TestPAP.test_calc ---
#: reco and interactions of both test_calc cases (users 1..5)
AUC_RECO = {
    "user": [1, 2, 3, 3, 3, 4, 5, 5, 5, 5],
    "item": [1, 2, 1, 2, 3, 1, 1, 2, 3, 5],
    "rank": [9, 1, 1, 2, 3, 1, 3, 7, 9, 1],
}
AUC_INTERACTIONS = {
    "user": [1, 2, 3, 3, 3, 4, 5, 5, 5, 5],
    "item": [1, 1, 1, 2, 3, 1, 1, 2, 3, 4],
}
NAN = math.nan
#: the parametrised expectations; an excluded user (RecTools drops it from the per-user
#: series) is undefined here (NaN), left out of the mean as RecTools leaves it out
AUC_EXPECTED = {
    "PartialAUC@1": [0, 0, 1, 1, 0],
    "PartialAUC@3": [0, 0, 1, 1, 1 / 12],
    "PartialAUC(insufficient_handling=exclude)@1": [0, 0, 1, 1, 0],
    "PartialAUC(insufficient_handling=exclude)@3": [0, NAN, 1, 1, 1 / 12],  # user 2 excluded
    "PAP@1": [0, 0, 1, 1, 0],
    "PAP@3": [0, 0, 1, 1, 1 / 9],
    "PAP(insufficient_handling=exclude)@1": [0, 0, 1, 1, 0],
    "PAP(insufficient_handling=exclude)@3": [0, NAN, 1, 1, 1 / 9],  # user 2 excluded
}
# By hand, user 5 at k = 3: positions 1 (item 5), 2 (empty), 4-6 and 8 (empty) are
# non-relevant; item 1 at position 3 has 2 of them above it: 3 - 2 = 1; items 2 (position
# 7) and 3 (position 9) have 5 and 6 above: 0; item 4 is not recommended: 0. PartialAUC:
# 1 / (3 * 4 interactions); PAP: 1 / (3 * min(4, 3)). User 2 (one non-relevant item, its
# interaction not recommended) has fewer than k = 3 non-relevant items: excluded. User 1's
# item at rank 9 has 8 empty positions above it: 0, and is not excluded (8 >= 3).


def test_rectools_partial_auc_and_pap_test_calc() -> None:
    ev = _rectools(AUC_RECO, AUC_INTERACTIONS, ",".join(AUC_EXPECTED))
    got = _per_user(ev)
    for name, expected in AUC_EXPECTED.items():
        _assert_values(got[name], expected, name)
    # RecTools' calc: the mean of the users kept
    [run] = ev.report["runs"].values()
    for name, expected in AUC_EXPECTED.items():
        kept = [v for v in expected if not math.isnan(v)]
        assert run["measures"][name] == pytest.approx(sum(kept) / len(kept), abs=1e-12), name
        assert run["undefined"][name] == len(expected) - len(kept), name


# --- RecTools tests/metrics/test_auc.py: test_when_duplicates_in_interactions_* -----------
# RecTools drops duplicated interactions; sparkeval refuses a doc judged twice, so the
# interactions below are the fixtures' with each duplicate given once.
DUP_RECO = {"user": [1, 1, 1, 2, 2, 2], "item": [1, 2, 3, 1, 2, 3], "rank": [1, 2, 3, 4, 5, 6]}
DUP_SUFFICIENT = {"user": [1, 1, 2, 2, 2], "item": [1, 2, 1, 2, 3]}
DUP_INSUFFICIENT = {"user": [1, 1, 2, 2, 2, 1], "item": [1, 2, 1, 2, 3, 10]}
#: TestPAP's own reco for its insufficient case ("this one is actually useful")
PAP_DUP_RECO = {"user": [1, 2, 2, 2], "item": [1, 1, 2, 3], "rank": [1, 4, 5, 6]}


@pytest.mark.parametrize("handling", ["ignore", "exclude"])
@pytest.mark.parametrize("k", [1, 3])
def test_rectools_duplicates_sufficient(k: int, handling: str) -> None:
    # TestPartialAUC / TestPAP.test_when_duplicates_in_interactions_sufficient: [1, 0]
    names = [f"PartialAUC(insufficient_handling={handling})@{k}"]
    names.append(f"PAP(insufficient_handling={handling})@{k}")
    got = _per_user(_rectools(DUP_RECO, DUP_SUFFICIENT, ",".join(names)))
    for name in names:
        _assert_values(got[name], [1, 0], name)


@pytest.mark.parametrize("handling", ["ignore", "exclude"])
def test_rectools_partial_auc_duplicates_insufficient(handling: str) -> None:
    # TestPartialAUC.test_when_duplicates_in_interactions_insufficient, k = 1: [2/3, 0]
    # for both handlings (user 1 has 1 non-relevant item, item 3, which is enough for k = 1)
    name = f"PartialAUC(insufficient_handling={handling})@1"
    got = _per_user(_rectools(DUP_RECO, DUP_INSUFFICIENT, name))
    _assert_values(got[name], [2 / 3, 0], name)


def test_rectools_pap_duplicates_insufficient() -> None:
    # TestPAP.test_when_duplicates_in_interactions_insufficient, k = 2: ignore [1/2, 0];
    # exclude keeps user 2 alone ([0]): user 1 misses items 2 and 10 and has no
    # non-relevant item
    names = "PAP(insufficient_handling=ignore)@2,PAP(insufficient_handling=exclude)@2"
    got = _per_user(_rectools(PAP_DUP_RECO, DUP_INSUFFICIENT, names))
    _assert_values(got["PAP(insufficient_handling=ignore)@2"], [1 / 2, 0], "ignore")
    _assert_values(got["PAP(insufficient_handling=exclude)@2"], [NAN, 0], "exclude")


# --- RecTools rectools/metrics/auc.py: the PartialAUC and PAP docstring examples ---------
DOC_RECO = {
    "user": [1, 1, 2, 2, 2, 3, 3],
    "item": [1, 2, 3, 1, 2, 3, 2],
    "rank": [1, 2, 1, 2, 3, 1, 2],
}
DOC_INTERACTIONS = {"user": [1, 1, 2, 2, 3, 3], "item": [1, 2, 1, 3, 1, 2]}
DOC_EXPECTED = {
    "PartialAUC@1": [1.0, 1.0, 0.0],
    "PartialAUC@3": [1.0, 1.0, 0.33333333],
    "PartialAUC(insufficient_handling=exclude)@3": [1.0, 1.0, NAN],  # array([1., 1.])
    "PAP@1": [1.0, 1.0, 0.0],
    "PAP@3": [1.0, 1.0, 0.33333333],
    "PAP(insufficient_handling=exclude)@3": [1.0, 1.0, NAN],
}


def test_rectools_docstring_examples() -> None:
    got = _per_user(_rectools(DOC_RECO, DOC_INTERACTIONS, ",".join(DOC_EXPECTED)))
    for name, expected in DOC_EXPECTED.items():
        for g, e in zip(got[name], expected, strict=True):
            assert (math.isnan(g) and math.isnan(e)) or g == pytest.approx(e, abs=1e-8), name


# --- RecTools tests/metrics/test_scoring.py: TestCalcMetrics.test_success ----------------
def test_rectools_calc_metrics_means() -> None:
    # "pauc@1": 0.25, "pauc@2": 0.375, "pap@1": 0.25, "pap@2": 0.375 over the users of the
    # interactions (1, 2, 4, 5; user 3 has recommendations only, user 4 none)
    reco = {"user": [1, 1, 2, 3, 5], "item": [1, 2, 1, 1, 1], "rank": [1, 2, 1, 1, 2]}
    interactions = {"user": [1, 1, 2, 4, 5], "item": [1, 2, 2, 1, 1]}
    ev = _rectools(reco, interactions, "PartialAUC@1,PartialAUC@2,PAP@1,PAP@2")
    [run] = ev.report["runs"].values()
    expected = {"PartialAUC@1": 0.25, "PartialAUC@2": 0.375, "PAP@1": 0.25, "PAP@2": 0.375}
    for name, want in expected.items():
        assert run["measures"][name] == pytest.approx(want, abs=1e-12), name
    assert run["queries"]["evaluated"] == 4


def test_rectools_profile_maps_the_names() -> None:
    plan = plan_compat("rectools", ["PartialAUC@10", "PAP(insufficient_handling=exclude)@10"])
    assert plan.mapping == {
        "PartialAUC@10": "PartialAUC@10",
        "PAP(insufficient_handling=exclude)@10": "PAP(insufficient_handling=exclude)@10",
    }
    default = plan_compat("rectools", ["PartialAUC(insufficient_handling=ignore)@10"])
    assert default.mapping == {"PartialAUC(insufficient_handling=ignore)@10": "PartialAUC@10"}
    assert plan.definitions(1)["PartialAUC@10"] == (
        "PartialAUC(insufficient_handling=ignore,rel=1)@10"
    )
    with pytest.raises(ConfigError, match="no equivalent in compat profile 'rectools'"):
        plan_compat("rectools", ["PartialAUC(rel=2)@10"])
    with pytest.raises(ConfigError, match="no equivalent in compat profile 'rectools'"):
        plan_compat("rectools", ["RecallAtFixedPrecision(min_precision=0.5)@10"])
    with pytest.raises(ConfigError, match="insufficient_handling='raise' is not offered"):
        plan_compat("rectools", ["PAP(insufficient_handling=raise)@10"])
    with pytest.raises(MeasureError, match="needs a cutoff"):
        parse_measure("PartialAUC")


# --- torchmetrics: RetrievalRecallAtFixedPrecision ---------------------------------------
#: the class docstring example: indexes [0, 0, 0, 0, 1, 1, 1], preds [0.4, 0.01, 0.5, 0.6,
#: 0.2, 0.3, 0.5], target [True, False, False, True, True, False, True]
TM_RUN = {
    "user": ["0", "0", "0", "0", "1", "1", "1"],
    "item": ["a", "b", "c", "d", "e", "f", "g"],
    "score": [0.4, 0.01, 0.5, 0.6, 0.2, 0.3, 0.5],
}
TM_TRUTH = {"user": ["0", "0", "1", "1"], "item": ["a", "d", "e", "g"]}


def _torchmetrics(names: str):
    return evaluate_recommendations(
        None, pd.DataFrame(TM_RUN), pd.DataFrame(TM_TRUTH), names, relevance="all"
    )


def test_torchmetrics_recall_at_fixed_precision_example() -> None:
    # RetrievalRecallAtFixedPrecision(min_precision=0.8) -> (tensor(0.5000), tensor(1)).
    # Both queries rank relevant, non-relevant, relevant (query 0 then a non-relevant doc):
    # precision 1 at k = 1 with recall 1/2 each; the mean is 0.5 as torchmetrics' value of
    # the query-averaged curve
    ev = _torchmetrics("RecallAtFixedPrecision(min_precision=0.8)")
    got = _per_user(ev)["RecallAtFixedPrecision(min_precision=0.8)"]
    assert got == pytest.approx([0.5, 0.5], abs=1e-12)
    [run] = ev.report["runs"].values()
    assert run["measures"]["RecallAtFixedPrecision(min_precision=0.8)"] == pytest.approx(0.5)


def test_torchmetrics_own_name_is_not_taken_for_the_per_query_mean() -> None:
    # torchmetrics' RetrievalRecallAtFixedPrecision is the best recall of the
    # query-averaged curve, not a mean of per-query values: its name is not accepted
    with pytest.raises(MeasureError, match="RecallAtFixedPrecision"):
        parse_measure("RetrievalRecallAtFixedPrecision(min_precision=0.8)")


def test_torchmetrics_curve_example() -> None:
    # RetrievalPrecisionRecallCurve(max_k=4) on the same data: precisions [1, 0.5, 0.6667,
    # 0.5], recalls [0.5, 0.5, 1, 1] (each query alike). The largest recall whose precision
    # reaches 0.6 is 1 (k = 3), reaching 0.7 it is 0.5 (k = 1); with max_k = 2, 0.5
    names = (
        "RecallAtFixedPrecision(min_precision=0.6)@4,RecallAtFixedPrecision(min_precision=0.7)@4,"
        "RecallAtFixedPrecision(min_precision=0.6)@2"
    )
    got = _per_user(_torchmetrics(names))
    assert got["RecallAtFixedPrecision(min_precision=0.6)@4"] == pytest.approx([1.0, 1.0])
    assert got["RecallAtFixedPrecision(min_precision=0.7)@4"] == pytest.approx([0.5, 0.5])
    assert got["RecallAtFixedPrecision(min_precision=0.6)@2"] == pytest.approx([0.5, 0.5])


def test_torchmetrics_functional_curve_example() -> None:
    # retrieval_precision_recall_curve(preds [0.2, 0.3, 0.5], target [True, False, True],
    # max_k=2): precisions [1, 0.5], recalls [0.5, 0.5]: the recall at precision >= 0.5
    # within k <= 2 is 0.5, at precision >= 0.6 also 0.5 (k = 1)
    run = pd.DataFrame({"user": ["1"] * 3, "item": ["x", "y", "z"], "score": [0.2, 0.3, 0.5]})
    truth = pd.DataFrame({"user": ["1", "1"], "item": ["x", "z"]})
    names = (
        "RecallAtFixedPrecision(min_precision=0.5)@2,RecallAtFixedPrecision(min_precision=0.6)@2"
    )
    ev = evaluate_recommendations(None, run, truth, names, relevance="all")
    got = _per_user(ev)
    for name in names.split(","):
        assert got[name] == pytest.approx([0.5]), name


# --- RecTools tests/metrics/test_classification.py: TestAccuracy and TestMCC --------------
#: RECO and INTERACTIONS of the module (k = 2, CATALOG = range(10)); the users are those of
#: the interactions, 1, 3, 4 and 5 (user 5 has no recommendations)
CLASSIFICATION_RECO = {
    "user": [1, 1, 1, 2, 2, 3, 4],
    "item": [1, 2, 3, 1, 2, 1, 1],
    "rank": [1, 2, 3, 1, 2, 1, 1],
}
CLASSIFICATION_INTERACTIONS = {"user": [1, 1, 1, 3, 4, 5], "item": [4, 2, 3, 1, 2, 2]}


def test_rectools_accuracy_and_mcc_per_user() -> None:
    ev = _rectools(
        CLASSIFICATION_RECO,
        CLASSIFICATION_INTERACTIONS,
        "Accuracy(catalog=10)@2,MCC(catalog=10)@2",
    )
    got = _per_user(ev)
    # TestAccuracy.test_calc; TestMCC.test_calc (its comment: tp 1,1,0,0; tn 6,8,7,7;
    # fp 1,1,2,2; fn 2,0,1,1)
    _assert_values(got["Accuracy(catalog=10)@2"], [0.7, 0.9, 0.7, 0.7], "Accuracy")
    _assert_values(got["MCC(catalog=10)@2"], [1 / 21**0.5, 2 / 3, -1 / 6, -1 / 6], "MCC")
    [run] = ev.report["runs"].values()
    assert run["measures"]["Accuracy(catalog=10)@2"] == pytest.approx(0.75, abs=1e-12)


def test_mcc_is_zero_when_a_factor_is_zero_and_undefined_for_too_small_a_catalog() -> None:
    reco = {"user": [1, 1, 2, 2], "item": [1, 2, 1, 2], "rank": [1, 2, 1, 2]}
    interactions = {"user": [1, 1, 2], "item": [1, 2, 9]}
    names = "MCC(catalog=10)@2,MCC(catalog=2)@2,Accuracy(catalog=2)@2"
    got = _per_user(_rectools(reco, interactions, names))
    # catalog 10: user 1 has TP 2, FP 0, FN 0, TN 8: 16 / sqrt(2*2*8*8) = 1; user 2 has
    # TP 0, FP 2, FN 1, TN 7: -2 / sqrt(2*1*9*8) = -1/6
    _assert_values(got["MCC(catalog=10)@2"], [1.0, -1 / 6], "MCC")
    # catalog 2: user 1 has TN 0, so (TN+FP)(TN+FN) = 0 and MCC is 0, as RecTools gives
    # for a zero denominator; accuracy (2 + 0) / 2 = 1. User 2 would have TN = 2 - 2 - 1
    # = -1: undefined
    _assert_values(got["MCC(catalog=2)@2"], [0.0, math.nan], "MCC")
    _assert_values(got["Accuracy(catalog=2)@2"], [1.0, math.nan], "Accuracy")


def test_rectools_accuracy_and_mcc_need_their_catalog() -> None:
    with pytest.raises(MeasureError, match="catalog"):
        parse_measure("MCC@10")
    with pytest.raises(MeasureError, match="needs a cutoff"):
        parse_measure("Accuracy(catalog=10)")
    plan = plan_compat("rectools", ["MCC(catalog=500)@10", "Accuracy(catalog=500)@5"])
    assert plan.mapping == {
        "MCC(catalog=500)@10": "MCC(catalog=500)@10",
        "Accuracy(catalog=500)@5": "Accuracy(catalog=500)@5",
    }
