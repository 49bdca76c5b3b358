"""Every numeric cell of trec_eval 10's expected outputs, through the pure-pandas path.

Each case runs ``evaluate_frames`` + ``summarise_frame`` on a trec_eval test
input and compares every per-query and ``all`` value that trec_eval printed to
four decimals.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from sparkeval.engine.worker.assemble import (
    EvalOptions,
    evaluate_frames,
    measure_column,
    summarise_frame,
)
from sparkeval.measures.names import parse_measures
from tests.conftest import shared_file

TOL = 5.01e-5
SKIP = {"runid", "num_q", "relstring"}

MEAS_PARAMS = (
    "iprec_at_recall..10,.20,.25,.75,.50 P.5,7,3 recall.20,2000 Rprec_mult.5.0,0.2,0.35 "
    "utility.2,-1,0,0 11pt_avg..25,.5,.75 ndcg.1=3,2=9,4=4.5 ndcg_cut.10,20,23.4 "
    "success.2,5,20"
)


def _lines(path: Path) -> list[list[str]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        out.append(line.split())
    return out


def read_qrels(path: Path) -> pd.DataFrame:
    rows = [(f[0], f[2], int(f[3])) for f in _lines(path)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def read_run(path: Path) -> pd.DataFrame:
    rows = [(f[5], f[0], f[2], float(f[4])) for f in _lines(path)]
    return pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"])


def read_expected(path: Path) -> dict[tuple[str, str], str]:
    expected = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, query, value = (part.strip() for part in line.split("\t"))
        if name not in SKIP and not name.startswith("relstring"):
            expected[(name, query)] = value
    return expected


@dataclass(frozen=True)
class Case:
    out: str
    qrels: str
    run: str
    measures: str
    queries: str = "both"
    rel_level: int = 1
    depth: int | None = None


CASES = {
    "aq": Case("out.test.aq", "qrels.test", "results.test", "all_trec"),
    "aqc": Case("out.test.aqc", "qrels.test", "results.trunc", "all_trec", queries="qrels"),
    "aqcM": Case("out.test.aqcM", "qrels.test", "results.trunc", "all_trec", "qrels", depth=100),
    "aql": Case("out.test.aql", "qrels.rel_level", "results.test", "all_trec", rel_level=2),
    "comment": Case("out.comment.test", "qrels.comment.test", "results.comment.test", "official"),
    "test": Case("out.test", "qrels.test", "results.test", "official"),
    "with_comments": Case("out.test", "qrels.test.with-comments", "results.test", "official"),
    "meas_params": Case("out.test.meas_params", "qrels.test", "results.test", MEAS_PARAMS),
}


@cache
def computed(key: str) -> tuple[dict[tuple[str, str], float], set[str], dict[tuple[str, str], str]]:
    case = CASES[key]
    base = ("conformance", "trec_eval")
    qrels = read_qrels(shared_file(*base, case.qrels))
    run = read_run(shared_file(*base, case.run))
    expected = read_expected(shared_file(*base, case.out))
    measures = parse_measures(case.measures)
    options = EvalOptions(queries=case.queries, rel_level=case.rel_level, depth=case.depth)
    wide = evaluate_frames(run, qrels, measures, options)
    summary = summarise_frame(wide, measures)
    (run_id,) = summary
    values: dict[tuple[str, str], float] = {}
    counts = set()
    evaluated = wide[wide["evaluated"]]
    for i, m in enumerate(measures):
        name = m.trec_name(case.rel_level)
        if m.spec.aggregate == "sum":
            counts.add(name)
        values[(name, "all")] = summary[run_id][m.name]
        if m.spec.per_query:
            column = evaluated[measure_column(i)]
            for query, value in zip(evaluated["query_id"], column, strict=True):
                values[(name, str(query))] = float(value)
    return values, counts, expected


@pytest.mark.parametrize("key", sorted(CASES))
def test_every_cell(key: str) -> None:
    values, counts, expected = computed(key)
    assert expected, "no expected cells read"
    missing = sorted(set(expected) - set(values))
    assert not missing, f"cells trec_eval printed that we did not compute: {missing[:10]}"
    bad = []
    for cell, text in sorted(expected.items()):
        got = values[cell]
        ok = got == float(text) if cell[0] in counts else abs(got - float(text)) <= TOL
        if not ok:
            bad.append((cell, text, got))
    assert not bad, f"{len(bad)} of {len(expected)} cells differ, e.g. {bad[:12]}"


@pytest.mark.parametrize("key", ["aq", "meas_params"])
def test_no_extra_cells(key: str) -> None:
    """Per-query cells we print are exactly trec_eval's (names included)."""
    values, _, expected = computed(key)
    assert set(values) == set(expected)


def test_demo_files_are_plain_trec(tmp_path) -> None:
    """Other tools' readers take the demo files: no comment lines, 6 fields a run line
    (``qid Q0 docno rank score tag``), 4 a qrels line (``qid iter docno rel``)."""
    from sparkeval.demo_data import generate

    paths = generate(tmp_path, queries=5)
    for path, fields in [(paths.qrels, 4), *((run, 6) for run in paths.runs)]:
        lines = path.read_text().splitlines()
        assert lines and all(len(line.split(" ")) == fields for line in lines), path
        assert not any(line.startswith("#") for line in lines), path
