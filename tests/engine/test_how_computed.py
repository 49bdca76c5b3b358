"""Every result says how it was computed: what each requested name computes (every
parameter spelled out), the relevance rule and the tie order, in ``summary.json``
(``compat``) and in a status line. Expected definitions are written out by hand from
the measure catalogue (``sparkeval measures AP``: trec_eval's AP divides by R; MLlib's
``meanAveragePrecisionAt`` by min(R, k); RecTools' NDCG by the DCG of a full top k)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import sparkeval
from sparkeval.cli import main

RUN = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]})
QRELS = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d2"], "relevance": [2]})
NAMES = ["MAP@10", "P@1", "nDCG@10"]


NDCG = "nDCG(gain=linear,ideal=qrels,ties=order)@10"
TOP_K_NDCG = "nDCG(gain=linear,ideal=k,ties=order)@10"


@pytest.mark.parametrize(
    ("keywords", "definitions"),
    [
        ({}, ["AP(denom=R,ties=order,rel=1)@10", "P(rel=1)@1", NDCG]),
        ({"rel_level": 2}, ["AP(denom=R,ties=order,rel=2)@10", "P(rel=2)@1", NDCG]),
        ({"compat": "mllib"}, ["AP(denom=min_k,ties=order,rel=1)@10", "P(rel=1)@1", NDCG]),
        ({"compat": "rectools"}, ["AP(denom=R,ties=order,rel=1)@10", "P(rel=1)@1", TOP_K_NDCG]),
    ],
    ids=["trec", "rel-level-2", "mllib", "rectools"],
)  # fmt: skip
def test_each_name_is_recorded_with_its_definition(keywords, definitions) -> None:
    compat = sparkeval.evaluate(None, RUN, QRELS, NAMES, **keywords).report["compat"]
    assert compat["definitions"] == dict(zip(NAMES, definitions, strict=True))
    assert compat["ties"].startswith("score descending, tied scores by doc id descending")
    assert ("each rank is the position" in compat["ties"]) == (keywords.get("compat") == "rectools")


def test_the_command_says_how_it_computed_in_a_status_line_and_the_summary(
    tmp_path: Path, capsys
) -> None:
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d2 2\n")
    argv = ["evaluate", "--run", str(tmp_path / "run.txt"), "--qrels", str(tmp_path / "qrels.txt")]
    out = tmp_path / "out"
    code = main([*argv, "--measures", "MAP@10,P@1", "--out", str(out), "--engine", "local"])
    assert code == 0
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if "measures as computed" in x)
    definitions = "MAP@10 = AP(denom=R,ties=order,rel=1)@10, P@1 = P(rel=1)@1"
    assert f"{definitions}; relevance: grade; ties: score" in line
    compat = json.loads((out / "summary.json").read_text())["compat"]
    ap = "AP(denom=R,ties=order,rel=1)@10"
    assert compat["definitions"] == {"MAP@10": ap, "P@1": "P(rel=1)@1"}
