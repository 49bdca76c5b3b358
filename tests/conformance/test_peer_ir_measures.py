"""ir_measures (terrierteam/ir_measures): the fixed expectations of its published tests,
through the same ir_measures names in sparkeval (trec profile).

Sources, named in each case: tests/test_pytrec_eval.py (its pytrec_eval provider),
tests/test_ranx.py (its ranx provider), tests/test_gdeval.py (gdeval: nDCG with the
exponential gain, which sparkeval spells ``nDCG(dcg=exp-log2)``, and ERR),
tests/test_judged.py, tests/test_accuracy.py (its Accuracy is sparkeval's AUC) and
tests/test_cwl_eval.py (the C/W/L measures of its cwl_eval provider, on its cwl.qrels and
cwl.run).
Tolerances are the peer's: ``assertEqual`` (compared within 1e-12), ``places=4``
(5e-5), ``delta=0.0001``; gdeval prints 5 decimals, which its test compares exactly
(compared within half a unit of the 5th decimal).

Not transcribed: tests/test_compat.py (``Compat``, which sparkeval does not compute; its
data are files of the repository), tests/test_measures.py (no expected values) and the
judged-only comparisons of test_pytrec_eval.py::test_judged_only (between providers, see
test_judged_only.py).
"""

from __future__ import annotations

import math

import pytest

from sparkeval.errors import MeasureError
from sparkeval.measures.names import parse_measures
from tests.conformance.peer_cases import close, trec_text, values

EXACT = 1e-12
PLACES4 = 5e-5
RUN_A = """
0 0 D0 1 0.8 run
0 0 D2 2 0.7 run
0 0 D1 3 0.3 run
0 0 D3 4 0.4 run
0 0 D4 5 0.1 run
1 0 D1 1 0.8 run
1 0 D3 2 0.7 run
1 0 D4 3 0.3 run
1 0 D2 4 0.4 run
"""
RUN_B = """
0 0 D0 1 0.8 run
0 0 D2 2 0.7 run
0 0 D1 3 0.3 run
0 0 D3 4 0.4 run
0 0 D4 5 0.1 run
1 0 D1 1 0.8 run
1 0 D4 2 0.7 run
1 0 D3 3 0.3 run
1 0 D2 4 0.4 run
"""
FIXTURES_A_QRELS = "0 0 D0 0\n0 0 D1 1\n0 0 D2 1\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 2\n1 0 D5 2"
FIXTURES = {
    # test_pytrec_eval.py::test_NumRet, test_NumQ; test_gdeval.py; test_judged.py
    "A": (FIXTURES_A_QRELS, RUN_A),
    # test_pytrec_eval.py::test_NumRel
    "NumRel": ("0 0 D0 0\n0 0 D1 1\n0 0 D2 1\n0 0 D3 2\n0 0 D4 0\n"
               "1 0 D0 1\n1 0 D3 2\n1 0 D5 0", RUN_A),
    # test_pytrec_eval.py::test_Success, test_SetP, test_SetR, test_SetAP, test_SetF
    "Set": ("0 0 D0 0\n0 0 D1 1\n0 0 D2 2\n0 0 D3 2\n0 0 D4 0\n"
            "1 0 D0 1\n1 0 D3 2\n1 0 D5 0", RUN_B),
    # test_pytrec_eval.py::test_IPrec
    "IPrec": ("0 0 D0 1\n0 0 D1 1\n0 0 D2 2\n0 0 D3 2\n0 0 D4 0\n"
              "1 0 D0 1\n1 0 D3 2\n1 0 D5 0", RUN_B),
    # test_pytrec_eval.py::test_infAP, test_nDCG
    "infAP": ("0 0 D0 1\n0 0 D1 -1\n0 0 D2 0\n0 0 D3 2\n0 0 D4 0\n"
              "1 0 D0 1\n1 0 D3 2\n1 0 D4 -1\n1 0 D5 0", RUN_B),
    # test_pytrec_eval.py::test_P
    "P": ("0 0 D0 -1\n0 0 D1 1\n0 0 D3 2\n0 0 D4 1\n1 0 D0 1\n1 0 D3 0\n1 0 D4 -1",
          RUN_B.replace("1 0 D4 2 0.7", "1 0 D0 2 0.7")),
    # test_aggregate.py::test_P: fixture A, query 1 also ranking D0 last
    "aggregate": (FIXTURES_A_QRELS, RUN_A + "1 0 D0 5 0.1 run\n"),
    # test_ranx.py::test_P: query 0 of fixture A
    "ranx": ("0 0 D0 0\n0 0 D1 1\n0 0 D2 1\n0 0 D3 2\n0 0 D4 0",
             "\n".join(RUN_A.strip().splitlines()[:5])),
}  # fmt: skip

#: (test, fixture, ir_measures name, query 0, query 1 (None: one query), aggregate, tol)
CASES = [
    ("test_pytrec_eval.py::test_NumRet", "A", "NumRet", 5, 4, 9, EXACT),
    ("test_pytrec_eval.py::test_NumRet", "A", "NumRet(rel=1)", 3, 1, 4, EXACT),
    ("test_pytrec_eval.py::test_NumRet", "A", "NumRet(rel=2)", 1, 1, 2, EXACT),
    ("test_pytrec_eval.py::test_NumRet", "A", "NumRet(rel=3)", 0, 0, 0, EXACT),
    ("test_pytrec_eval.py::test_NumQ", "A", "NumQ", 1, 1, 2, EXACT),
    ("test_pytrec_eval.py::test_NumRel", "NumRel", "NumRel", 3, 2, 5, EXACT),
    ("test_pytrec_eval.py::test_Success", "Set", "Success@2", 1, 0, 0.5, EXACT),
    ("test_pytrec_eval.py::test_Success", "Set", "Success(rel=2)@2", 1, 0, 0.5, EXACT),
    ("test_pytrec_eval.py::test_Success", "Set", "Success(rel=3)@2", 0, 0, 0, EXACT),
    ("test_pytrec_eval.py::test_SetP", "Set", "SetP(rel=1)", 0.6, 0.25, 0.425, EXACT),
    ("test_pytrec_eval.py::test_SetP", "Set", "SetRelP(rel=1)", 1.0, 0.5, 0.75, EXACT),
    ("test_pytrec_eval.py::test_SetP", "Set", "SetP(rel=2)", 0.4, 0.25, 0.325, EXACT),
    ("test_pytrec_eval.py::test_SetP", "Set", "SetRelP(rel=2)", 1.0, 1.0, 1.0, EXACT),
    ("test_pytrec_eval.py::test_SetP", "Set", "SetP(rel=3)", 0, 0, 0, EXACT),
    ("test_pytrec_eval.py::test_SetR", "Set", "SetR(rel=1)", 1.0, 0.5, 0.75, EXACT),
    ("test_pytrec_eval.py::test_SetR", "Set", "SetR(rel=2)", 1.0, 1.0, 1.0, EXACT),
    ("test_pytrec_eval.py::test_SetR", "Set", "SetR(rel=3)", 0, 0, 0, EXACT),
    ("test_pytrec_eval.py::test_SetAP", "Set", "SetAP(rel=1)", 0.6, 0.125, 0.3625, EXACT),
    ("test_pytrec_eval.py::test_SetAP", "Set", "SetAP(rel=2)", 0.4, 0.25, 0.325, EXACT),
    ("test_pytrec_eval.py::test_SetAP", "Set", "SetAP(rel=3)", 0, 0, 0, EXACT),
    ("test_pytrec_eval.py::test_SetF", "Set", "SetF(rel=1)", 0.75, 0.33333, 0.5417, PLACES4),
    ("test_pytrec_eval.py::test_SetF", "Set", "SetF(rel=1, beta=0.5)", 0.6923, 0.3, 0.49615,
     PLACES4),
    ("test_pytrec_eval.py::test_SetF", "Set", "SetF(rel=1, beta=2.0)", 0.81818, 0.375, 0.59659,
     PLACES4),
    ("test_pytrec_eval.py::test_SetF", "Set", "SetF(rel=3)", 0, 0, 0, EXACT),
    ("test_pytrec_eval.py::test_IPrec", "IPrec", "IPrec@0.25", 1.0, 0.25, 0.625, EXACT),
    ("test_pytrec_eval.py::test_IPrec", "IPrec", "IPrec@0.5", 1.0, 0.25, 0.625, EXACT),
    ("test_pytrec_eval.py::test_IPrec", "IPrec", "IPrec@0.75", 1.0, 0, 0.5, EXACT),
    ("test_pytrec_eval.py::test_IPrec", "IPrec", "IPrec(rel=2)@0.1", 0.6666666, 0.25, 0.4583,
     PLACES4),
    ("test_pytrec_eval.py::test_IPrec", "IPrec", "IPrec(rel=2)@0.25", 0.6666666, 0.25, 0.4583,
     PLACES4),
    ("test_pytrec_eval.py::test_IPrec", "IPrec", "IPrec(rel=2)@0.5", 0.6666666, 0.25, 0.4583,
     PLACES4),
    ("test_pytrec_eval.py::test_IPrec", "IPrec", "IPrec(rel=2)@0.75", 0.6666666, 0.25, 0.4583,
     PLACES4),
    ("test_pytrec_eval.py::test_infAP", "infAP", "AP", 0.8333, 0.125, 0.47916666666666663,
     PLACES4),
    ("test_pytrec_eval.py::test_infAP", "infAP", "infAP", 0.8333, 0.1875, 0.510416, PLACES4),
    ("test_pytrec_eval.py::test_infAP", "infAP", "AP(rel=2)", 0.33333, 0.25, 0.2917, PLACES4),
    ("test_pytrec_eval.py::test_infAP", "infAP", "infAP(rel=2)", 0.33333, 0.375, 0.3542,
     PLACES4),
    ("test_pytrec_eval.py::test_nDCG", "infAP", "nDCG", 0.76018, 0.32739, None, PLACES4),
    ("test_pytrec_eval.py::test_nDCG", "infAP", "nDCG@3", 0.76018, 0.0, None, PLACES4),
    ("test_pytrec_eval.py::test_nDCG", "infAP", "nDCG(gains={0:1,1:4})", 0.97177, 0.14949,
     None, PLACES4),
    ("test_pytrec_eval.py::test_P", "P", "P@4", 0.5, 0.25, None, PLACES4),
    ("test_pytrec_eval.py::test_P", "P", "P(judged_only=True)@4", 0.75, 0.25, None, PLACES4),
    ("test_judged.py::test_judged", "A", "Judged", 1.0, 1 / 4, None, 1e-4),
    ("test_judged.py::test_judged", "A", "Judged(cutoff=1000)", 1.0, 1 / 4, None, 1e-4),
    ("test_judged.py::test_judged", "A", "Judged(cutoff=10)", 1.0, 1 / 4, None, 1e-4),
    ("test_judged.py::test_judged", "A", "Judged(cutoff=3)", 1.0, 1 / 3, None, 1e-4),
    ("test_judged.py::test_judged", "A", "Judged(cutoff=1)", 1.0, 0.0, None, 1e-4),
    # gdeval's nDCG is the exponential gain (ir_measures' gdeval provider of nDCG@k)
    ("test_gdeval.py::test_nDCG", "A", "nDCG(dcg=exp-log2)@20", 0.6201, 0.35099, 0.485545,
     5e-6),
    ("test_gdeval.py::test_nDCG", "A", "nDCG(dcg=exp-log2)@2", 0.17377, 0.38685, 0.28031, 5e-6),
    ("test_gdeval.py::test_ERR", "A", "ERR@20", 0.10175, 0.09375, 0.09775, 5e-6),
    ("test_gdeval.py::test_ERR", "A", "ERR@2", 0.03125, 0.09375, 0.0625, 5e-6),
    # test_aggregate.py::test_P asserts only the aggregate (and two per-query values);
    # by hand: query 0 ranks D1, D2, D3 in its top 5, query 1 D3 and D0
    ("test_aggregate.py::test_P", "aggregate", "P@5", 3 / 5, 2 / 5, 0.5, EXACT),
] + [
    ("test_ranx.py::test_P", "ranx", name, value, None, None, EXACT)
    for name, value in [
        ("P@5", 0.6), ("P(rel=2)@5", 0.2), ("SetP", 0.6),
        ("R@5", 1.0), ("R(rel=2)@5", 1.0), ("R@2", 0.3333333333333333), ("R(rel=2)@2", 0.0),
        ("SetR", 1.0),
        ("RR", 0.5), ("RR(rel=2)", 0.3333333333333333), ("RR@10", 0.5),
        ("RR(rel=2)@10", 0.3333333333333333), ("RR@2", 0.5), ("RR(rel=2)@2", 0.0),
        ("AP", 0.6388888888888888), ("AP(rel=2)", 0.3333333333333333),
        ("AP@10", 0.6388888888888888), ("AP(rel=2)@10", 0.3333333333333333),
        ("AP@2", 0.16666666666666666), ("AP(rel=2)@2", 0.0),
        ("Success@10", 1.0), ("Success(rel=2)@10", 1.0), ("Success@2", 1.0),
        ("Success(rel=2)@2", 0.0), ("NumRet(rel=1)", 3.0),
        ("nDCG", 0.6584645692843067), ("nDCG@5", 0.6584645692843067),
        ("nDCG@2", 0.23981246656813146),
        ("nDCG(dcg='exp-log2')", 0.6201040599710453),
        ("nDCG(dcg='exp-log2')@5", 0.6201040599710453),
        ("nDCG(dcg='exp-log2')@2", 0.17376534287144002),
        ("Rprec", 0.6666666666666666), ("Rprec(rel=2)", 0.0),
    ]
]  # fmt: skip


@pytest.mark.parametrize(
    ("fixture", "name", "q0", "q1", "aggregate", "tol"),
    [pytest.param(*c[1:], id=f"{c[0]}[{c[2]}]") for c in CASES],
)
def test_ir_measures_expectations(fixture, name, q0, q1, aggregate, tol) -> None:
    run, qrels = trec_text(*FIXTURES[fixture])
    per_query, means = values(run, qrels, [name])
    close(per_query[name]["0"], q0, tol)
    if q1 is not None:
        close(per_query[name]["1"], q1, tol)
    if aggregate is not None:
        close(means[name], aggregate, tol)


def test_set_measures_with_a_cutoff_are_refused() -> None:
    # test_ranx.py::test_P also asks its ranx provider for SetP(rel=2)@5 (0.2) and
    # SetR(rel=2)@5 (1.0); a set measure reads the whole ranking, and sparkeval refuses
    # the cutoff (a pinned difference, docs/measures.md) rather than guess its meaning
    for name in ("SetP(rel=2)@5", "SetR(rel=2)@5"):
        with pytest.raises(MeasureError, match="takes no @k cutoff"):
            parse_measures([name])


ACCURACY_QRELS = ("0 0 C0_1 0\n0 0 B0_1 1\n0 0 A0_1 2\n1 0 A1_1 2\n1 0 A1_2 2\n"
                  "1 0 B1_1 1\n1 0 C1_2 0\n2 0 B1_1 1")  # fmt: skip
ACCURACY_RUN = ("0 0 C0_1 1 0.4 run\n0 0 A0_1 2 0.3 run\n0 0 C0_2 3 0.2 run\n"
                "0 0 C0_3 4 0.1 run\n1 0 C1_1 1 0.8 run\n1 0 A1_1 2 0.7 run\n"
                "1 0 C1_2 3 0.6 run\n1 0 B1_1 4 0.5 run\n1 0 C1_3 5 0.4 run\n"
                "2 0 B1_1 2 0.2 run\n2 0 C1_1 3 0.1 run")  # fmt: skip


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        (1, {"0": 2 / 3, "1": 0.5 * (2 / 3 + 1 / 3), "2": 1.0}),
        # query 2 retrieves no doc of grade 2: ir_measures reports no value, AUC is undefined
        (2, {"0": 2 / 3, "1": 0.75, "2": None}),
    ],
    ids=["test_accuracy.py[Accuracy(rel=1)]", "test_accuracy.py[Accuracy(rel=2)]"],
)
def test_accuracy_is_auc(rel: int, expected: dict[str, float | None]) -> None:
    # ir_measures' Accuracy: 1 - (non-relevant docs above each relevant retrieved doc) /
    # (relevant x non-relevant retrieved), over the ranking (its own test_accuracy.py), which
    # is the share of (relevant, non-relevant) pairs in order: sparkeval's AUC where no
    # scores tie. The spelling is refused (sparkeval's Accuracy is RecTools'), naming AUC.
    name = f"AUC(rel={rel})"
    per_query, means = values(*trec_text(ACCURACY_QRELS, ACCURACY_RUN), [name])
    for q, want in expected.items():
        if want is None:
            assert math.isnan(per_query[name][q])
        else:
            close(per_query[name][q], want, 1e-9)
    defined = [v for v in expected.values() if v is not None]
    close(means[name], sum(defined) / len(defined), 1e-9)
    with pytest.raises(MeasureError, match=r"is AUC\(rel=l\)"):
        parse_measures([f"Accuracy(rel={rel})"])


# --- tests/test_cwl_eval.py::test_measures: its cwl.qrels and cwl.run -----------------
CWL_QRELS = """
T1 00 D1 1
T1 00 D2 0
T1 00 D3 1
T1 00 D4 1
T1 00 D7 1
T1 00 D8 0
T1 00 D9 1
T1 00 D10 0
T2 00 D1 1
T2 00 D2 1
T2 00 D5 1
T2 00 D6 0
T2 00 D7 1
T2 00 D8 1
T2 00 D9 1
T2 00 D10 0
T3 00 D4 0
T3 00 D5 0
T3 00 D6 1
T3 00 D7 1
T3 00 D8 1
T3 00 D9 0
T3 00 D10 1
"""
#: every query ranks D1..D10 with the scores 4.3, 4.2, 4.1, 3.9, ..., 3.3 (cwl.run; its
#: second column, which trec_eval's format ignores, varies from E1 to E3)
CWL_RUN = "\n".join(
    f"{q} E0 D{i} {i} {score} R1"
    for q in ("T1", "T2", "T3")
    for i, score in enumerate([4.3, 4.2, 4.1, 3.9, 3.8, 3.7, 3.6, 3.5, 3.4, 3.3], start=1)
)
CWL = {  # ir_measures name: T1, T2, T3 ("based on a manual execution of cwl-eval")
    "AP": (0.7087, 0.7438, 0.3068),
    "BPM(T=1.0, max_rel=1)@20": (1.0000, 1.0000, 0.1667),
    "BPM(T=2.0, max_rel=1)@10": (0.6667, 1.0000, 0.2857),
    "INSQ(T=1.0, max_rel=1)": (0.5872, 0.6629, 0.0880),
    "INSQ(T=2.0, max_rel=1)": (0.4513, 0.5068, 0.1292),
    "INST(T=1.0, max_rel=1)": (0.7934, 0.9226, 0.0888),
    "INST(T=2.0, max_rel=1)": (0.5994, 0.6924, 0.1397),
    "SDCG(max_rel=1)@10": (0.5645, 0.6531, 0.2848),
    "NERR8(max_rel=1)@10": (1.0000, 1.0000, 0.1667),
    "NERR9(max_rel=1)@10": (1.0000, 1.0000, 0.0680),
    "NERR10(p=0.8, max_rel=1)": (1.0000, 1.0000, 0.0888),
    "NERR11(T=2.0, max_rel=1)": (1.0000, 1.0000, 0.0691),
    "P@1": (1.0000, 1.0000, 0.0000),
    "P@10": (0.5000, 0.6000, 0.4000),
    "P@20": (0.2500, 0.3000, 0.2000),
    "P@5": (0.6000, 0.6000, 0.0000),
    "RBP(p=0.9, rel=1)": (0.3501, 0.3996, 0.1988),
    "RR": (1.0000, 1.0000, 0.1667),
}


@pytest.mark.parametrize("name", list(CWL), ids=[f"test_cwl_eval.py[{n}]" for n in CWL])
def test_cwl_eval(name: str) -> None:
    per_query, _ = values(*trec_text(CWL_QRELS, CWL_RUN), [name])
    for q, want in zip(("T1", "T2", "T3"), CWL[name], strict=True):
        close(per_query[name][q], want, 1e-4)  # the peer's delta
