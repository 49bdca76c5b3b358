"""cwl_eval's C/W/L measures against ir_measures' cwl_eval provider, query by query.

Random collections hold grades -1..3, retrieved docs without a qrels entry, queries
without a relevant doc, judged queries the run leaves empty, rankings from one doc to
past cwl_eval's depth of 1000 and score ties. ir_measures sorts each query's docs by
score only (a stable sort), so the run reaches it already in sparkeval's order (score
descending, then doc id descending) and both read the same rankings.
"""

from __future__ import annotations

import math
import random
import re

import pandas as pd
import pytest

from sparkeval.engine.worker.assemble import EvalOptions, evaluate_frames
from sparkeval.formats import measure_column
from sparkeval.measures.names import parse_measure

ir_measures = pytest.importorskip("ir_measures", reason="the test extra installs ir_measures")
pytest.importorskip("cwl", reason="ir_measures computes these measures through cwl_eval")

#: grade ranges (min_rel, max_rel): the usual 0..3, grades clipped above and below, a
#: negative min_rel (a judged grade 0 then has positive gain, an unjudged doc none)
RANGES = [(0, 3), (0, 1), (1, 3), (0, 2), (-1, 3), (2, 3)]
#: the families with their parameters apart from the grade range
FORMS = [
    "SDCG@1",
    "SDCG@5",
    "SDCG@20",
    "SDCG@1500",
    "NERR8@1",
    "NERR8@3",
    "NERR8@20",
    "NERR8@1200",
    "NERR9@2",
    "NERR9@10",
    "NERR9@100",
    "NERR9@1100",
    "NERR10",
    "NERR10(p=0.5)",
    "NERR10(p=0.99)",
    "NERR10(p=0)",
    "NERR10(p=1)",
    "NERR11",
    "NERR11(T=0.25)",
    "NERR11(T=3)",
    "INST",
    "INST(T=0.3)",
    "INST(T=2)",
    "INST(T=5.5)",
    "INSQ",
    "INSQ(T=0.5)",
    "INSQ(T=4)",
    "BPM@1",
    "BPM@10",
    "BPM(T=2)@5",
    "BPM(T=3)@30",
    "BPM(T=0.5)@1100",
    "BPM(T=1.7)@20",
]


def forms_and_ranges() -> list[tuple[str, tuple[int, int]]]:
    """Each form with the grade range 0..3 and one other, in turn (cwl_eval's own
    computation takes a while per measure)."""
    others = RANGES[1:]
    return [
        (form, grade_range)
        for i, form in enumerate(FORMS)
        for grade_range in (RANGES[0], others[i % len(others)])
    ]


def with_range(form: str, low: int, high: int) -> str:
    """``form`` with the grade range written into its parameters, as ir_measures spells it."""
    family, _, cutoff = form.partition("@")
    grade_range = (f"min_rel={low}," if low != 0 else "") + f"max_rel={high}"
    if "(" in family:
        family = family[:-1] + "," + grade_range + ")"
    else:
        family += f"({grade_range})"
    return family + (f"@{cutoff}" if cutoff else "")


def collection(seed: int, queries: int = 40) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(run, qrels) frames, the run's rows in sparkeval's rank order per query."""
    rng = random.Random(seed)
    run_rows, qrels_rows = [], []
    for q in range(queries):
        qid = f"q{q:02d}"
        pool = [f"d{i:04d}" for i in range(rng.choice([8, 30, 60, 1300]))]
        no_relevant = rng.random() < 0.15
        for doc in rng.sample(pool, rng.randint(1, min(len(pool), 80))):
            grade = rng.choice([-1, 0, 0, 1, 1, 2, 3, 3])
            qrels_rows.append((qid, doc, min(grade, 0) if no_relevant else grade))
        if rng.random() < 0.1:
            continue  # judged, not retrieved: an empty ranking
        if len(pool) > 1000:
            # past the depth: the relevant docs the run ranks last count for nothing
            judged = {d for qq, d, g in qrels_rows if qq == qid and g > 0}
            pool = sorted(pool, key=lambda d: (d in judged, rng.random()))
        retrieved = rng.sample(pool, rng.randint(1, len(pool))) if len(pool) <= 1000 else pool
        scores = [rng.randrange(0, 12) / 4.0 for _ in retrieved]
        if len(pool) > 1000:
            scores = [float(len(retrieved) - i) for i in range(len(retrieved))]
        ranked = sorted(
            zip(retrieved, scores, strict=True), key=lambda x: (x[1], x[0]), reverse=True
        )
        run_rows += [("run", qid, doc, score) for doc, score in ranked]
    run = pd.DataFrame(run_rows, columns=["run_id", "query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    return run, qrels


def their_measure(name: str):
    """ir_measures' measure of ``name`` (its parser reads no negative number: a negative
    min_rel is given to the parsed measure)."""
    low = re.search(r"min_rel=(-\d+),", name)
    if low is None:
        return ir_measures.parse_measure(name)
    return ir_measures.parse_measure(name.replace(low.group(0), ""))(min_rel=int(low.group(1)))


def theirs(
    run: pd.DataFrame, qrels: pd.DataFrame, names: list[str]
) -> dict[tuple[str, str], float]:
    """{(name, query): value} of ir_measures' cwl_eval provider."""
    measures = {their_measure(name): name for name in names}
    scored = [
        ir_measures.ScoredDoc(q, d, s)
        for q, d, s in run[["query_id", "doc_id", "score"]].itertuples(index=False)
    ]
    judged = [ir_measures.Qrel(q, d, int(g)) for q, d, g in qrels.itertuples(index=False)]
    return {
        (measures[m.measure], m.query_id): float(m.value)
        for m in ir_measures.cwl_eval.iter_calc(list(measures), judged, scored)
    }


def ours(run: pd.DataFrame, qrels: pd.DataFrame, names: list[str]) -> dict[tuple[str, str], float]:
    """{(name, query): value} of sparkeval in process (every judged query evaluated)."""
    measures = [parse_measure(name) for name in names]
    wide = evaluate_frames(run, qrels, measures, EvalOptions(queries="qrels"))
    return {
        (name, q): float(value)
        for i, name in enumerate(names)
        for q, value in zip(wide["query_id"], wide[measure_column(i)], strict=True)
    }


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_query_matches_ir_measures_cwl_eval(seed: int) -> None:
    run, qrels = collection(seed)
    names = [with_range(form, *grade_range) for form, grade_range in forms_and_ranges()]
    expected = theirs(run, qrels, names)
    got = ours(run, qrels, names)
    assert set(got) == set(expected)
    bad = [
        (key, got[key], want)
        for key, want in expected.items()
        if not math.isclose(got[key], want, rel_tol=1e-9, abs_tol=1e-9)
    ]
    assert len(expected) >= 40 * 2 * len(FORMS)
    assert not bad, f"{len(bad)} of {len(expected)} values differ, e.g. {bad[:10]}"


def test_the_collections_hold_the_edge_cases() -> None:
    """Each seed's collection has what the comparison is meant to cover."""
    for seed in (1, 2, 3):
        run, qrels = collection(seed)
        lengths = run.groupby("query_id").size()
        assert lengths.max() > 1000 and lengths.min() < 5
        assert set(qrels["query_id"]) - set(run["query_id"])  # empty rankings
        best = qrels.groupby("query_id")["relevance"].max()
        assert (best <= 0).any()
        assert (
            not run.merge(qrels, how="left", on=["query_id", "doc_id"])["relevance"].notna().all()
        )
        assert run.duplicated(["query_id", "score"]).any()  # ties
