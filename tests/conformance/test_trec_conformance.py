"""`sparkeval evaluate --names trec` reproduces trec_eval's own test outputs.

Runs the real CLI (in-process, on the session's local Spark) on trec_eval's test
files and compares every cell of the expected output for the measures this version
implements (``runid`` and ``relstring`` are not numeric measures).
"""

from __future__ import annotations

import json

import pytest

from sparkeval.cli import main
from sparkeval.measures.names import UnknownMeasureError, parse_measure
from tests.conftest import shared_file
from tests.trec_output import parse_table, read_table

pytestmark = pytest.mark.spark

CASES = {
    # expected file: (qrels, run, extra options)
    "out.test.aq": ("qrels.test", "results.test", ["--measures", "all_trec", "--per-query"]),
    "out.test.aqc": (
        "qrels.test",
        "results.trunc",
        ["--measures", "all_trec", "--per-query", "--queries", "qrels"],
    ),
    "out.test.aqcM": (
        "qrels.test",
        "results.trunc",
        ["--measures", "all_trec", "--per-query", "--queries", "qrels", "--depth", "100"],
    ),
    "out.test.aql": (
        "qrels.rel_level",
        "results.test",
        ["--measures", "all_trec", "--per-query", "--rel-level", "2"],
    ),
    "out.comment.test": (
        "qrels.comment.test",
        "results.comment.test",
        ["--measures", "official", "--queries", "both"],
    ),
    "out.test.meas_params": (
        "qrels.test",
        "results.test",
        [
            "--per-query",
            "--measures",
            "iprec_at_recall..10,.20,.25,.75,.50 P.5,7,3 recall.20,2000 "
            "Rprec_mult.5.0,0.2,0.35 utility.2,-1,0,0 11pt_avg..25,.5,.75 "
            "ndcg.1=3,2=9,4=4.5 ndcg_cut.10,20,23.4 success.2,5,20",
        ],
    ),
    "out.test": ("qrels.test.with-comments", "results.test", ["--measures", "official"]),
}


def implemented(measure: str) -> bool:
    try:
        parse_measure(measure)
    except (UnknownMeasureError, ValueError):
        return False
    return True


@pytest.mark.parametrize("expected_name", sorted(CASES))
def test_reproduces_trec_eval_output(expected_name, spark, tmp_path, capsys) -> None:
    qrels, run, options = CASES[expected_name]
    expected = read_table(shared_file("conformance", "trec_eval", expected_name))
    out = tmp_path / "out"
    code = main(
        [
            "evaluate",
            "--run",
            str(shared_file("conformance", "trec_eval", run)),
            "--qrels",
            str(shared_file("conformance", "trec_eval", qrels)),
            "--names",
            "trec",
            "--out",
            str(out),
            *options,
        ]
    )
    assert code == 0
    ours = parse_table(capsys.readouterr().out)
    compared = 0
    for (measure, query), want in expected.items():
        if measure in ("runid", "relstring") or not (measure == "num_q" or implemented(measure)):
            continue
        assert (measure, query) in ours, f"missing {measure} {query}"
        assert ours[(measure, query)] == want, (
            f"{measure} {query}: {ours[(measure, query)]} != {want}"
        )
        compared += 1
    assert compared >= 15  # official-only files have one line per measure
    summary = json.loads((out / "summary.json").read_text())
    if ("num_q", "all") in expected:
        run_id = expected[("runid", "all")]
        assert summary["runs"][run_id]["queries"]["evaluated"] == int(expected[("num_q", "all")])
    assert (out / "per_query.parquet").is_dir() and (out / "_SUCCESS").exists()


@pytest.mark.parametrize("qrels", ["qrels.test", "qrels.test.with-comments"])
def test_trec_eval_preset_is_byte_identical_to_trec_eval(qrels, spark, tmp_path, capsys) -> None:
    """trec_eval's own quick test: ``trec_eval QRELS results.test | diff - out.test``."""
    expected = shared_file("conformance", "trec_eval", "out.test").read_text()
    code = main(
        [
            "evaluate",
            "--trec-eval",
            "--run",
            str(shared_file("conformance", "trec_eval", "results.test")),
            "--qrels",
            str(shared_file("conformance", "trec_eval", qrels)),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 0
    assert capsys.readouterr().out == expected
