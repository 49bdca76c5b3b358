"""The tie rules (``ties``): how documents with the same score are ordered, in process.

``doc-id`` (the default, trec_eval's): tied scores by doc id descending; ``rank``: by
the run's own rank column ascending, then doc id descending; ``input-order``: in the
order of the table's rows, then doc id descending.  Every expected value is derived
by hand from the lists written out in the comments (one relevant doc per query).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import sparkeval
from sparkeval.engine.worker.assemble import EvalOptions, evaluate_tables
from sparkeval.errors import ConfigError, InputError
from sparkeval.formats import TIE_KEY
from sparkeval.measures.names import parse_measures

#: q1: three docs tied at 1.0, ranked a, b, c; q2: the scores order x above y whatever
#: the ranks say; q3: three docs tied, m and n sharing rank 5, o ranked 6; written in
#: the row order a, b, c, x, y, m, o, n
RUN = pd.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2", "q3", "q3", "q3"],
        "doc_id": ["a", "b", "c", "x", "y", "m", "o", "n"],
        "score": [1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0, 1.0],
        "rank": [1, 2, 3, 2, 1, 5, 6, 5],
    }
)
QRELS = pd.DataFrame(
    {"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "y", "m"], "relevance": [1, 1, 1]}
)
MEASURES = ["AP", "P@1", "nDCG@3"]
#: nDCG@3 of a single relevant doc at position 1, 2, 3 (ideal: it at position 1)
AT = {1: 1.0, 2: 1 / math.log2(3), 3: 1 / math.log2(4)}

#: the position of each query's relevant doc under each rule:
#: doc-id:      q1 c, b, a (a at 3); q2 x, y (2); q3 o, n, m (m at 3)
#: rank:        q1 a, b, c (1);      q2 x, y (2); q3 n, m (rank 5, doc id desc), o (m at 2)
#: input-order: q1 a, b, c (1);      q2 x, y (2); q3 m, o, n (m at 1)
POSITIONS = {
    "doc-id": {"q1": 3, "q2": 2, "q3": 3},
    "rank": {"q1": 1, "q2": 2, "q3": 2},
    "input-order": {"q1": 1, "q2": 2, "q3": 1},
}


def expected(rule: str) -> dict[str, dict[str, float]]:
    """{measure: {query: value}}: AP = 1 / position, P@1 = [position 1], nDCG@3 = AT."""
    at = POSITIONS[rule]
    return {
        "AP": {q: 1 / p for q, p in at.items()},
        "P@1": {q: float(p == 1) for q, p in at.items()},
        "nDCG@3": {q: AT[p] for q, p in at.items()},
    }


def per_query(ev) -> dict[tuple[str, str], float]:
    """{(measure, query): value} of an evaluation's per-query rows."""
    return {(r.measure, r.query_id): r.value for r in ev.per_query.itertuples(index=False)}


def flat(values: dict[str, dict[str, float]]) -> dict[tuple[str, str], float]:
    return {(m, q): v for m, by_query in values.items() for q, v in by_query.items()}


def means(ev) -> dict[str, float]:
    return dict(zip(ev.summary["measure"], ev.summary["value"], strict=True))


@pytest.mark.parametrize("rule", ["doc-id", "rank", "input-order"])
def test_each_rule_orders_the_tied_scores_as_derived_by_hand(rule: str) -> None:
    ev = sparkeval.evaluate(None, RUN, QRELS, MEASURES, ties=rule)
    want = expected(rule)
    assert per_query(ev) == pytest.approx(flat(want))
    assert means(ev) == pytest.approx(
        {m: float(np.mean(list(v.values()))) for m, v in want.items()}
    )


def test_the_default_is_the_doc_id_rule_to_the_bit() -> None:
    default = sparkeval.evaluate(None, RUN, QRELS, MEASURES)
    named = sparkeval.evaluate(None, RUN, QRELS, MEASURES, ties="doc-id")
    assert default.report == named.report
    assert default.per_query.equals(named.per_query)
    assert means(default)["AP"] == pytest.approx((1 / 3 + 1 / 2 + 1 / 3) / 3)


def test_an_arrow_table_keeps_its_row_order_across_chunks() -> None:
    # the same rows in two record batches: the second chunk's rows come after the first's
    table = pa.Table.from_pandas(RUN, preserve_index=False)
    chunked = pa.Table.from_batches(table.to_batches(max_chunksize=4))
    assert chunked.column("doc_id").num_chunks == 2
    ev = sparkeval.evaluate(None, chunked, QRELS, MEASURES, ties="input-order")
    assert per_query(ev) == pytest.approx(flat(expected("input-order")))


def test_the_rule_is_recorded_in_the_report() -> None:
    ties = {
        rule: sparkeval.evaluate(None, RUN, QRELS, ["AP"], ties=rule).report["compat"]["ties"]
        for rule in ("doc-id", "rank", "input-order")
    }
    assert ties["doc-id"].startswith("score descending, tied scores by doc id descending")
    assert ties["rank"].startswith("score descending, tied scores by the run's rank ascending")
    assert ties["input-order"].startswith(
        "score descending, tied scores in the order of the input rows"
    )


def test_a_profile_keeps_doc_id_by_default_and_takes_the_rule_asked_for() -> None:
    recs = RUN.rename(columns={"query_id": "user_id", "doc_id": "item_id"})
    truth = QRELS.drop(columns="relevance").rename(
        columns={"query_id": "user_id", "doc_id": "item_id"}
    )
    for rule in ("doc-id", "input-order"):
        keywords = {} if rule == "doc-id" else {"ties": rule}
        ev = sparkeval.evaluate_recommendations(
            None, recs, truth, ["Precision@1"], compat="rectools", **keywords
        )
        got = dict(zip(ev.per_query["query_id"], ev.per_query["value"], strict=True))
        assert got == expected(rule)["P@1"]
        said = {
            "doc-id": "by doc id descending (trec_eval's order)",
            "input-order": "(ties input-order)",
        }
        assert said[rule] in ev.report["compat"]["ties"]


def test_rank_is_refused_by_name_without_a_rank_column() -> None:
    with pytest.raises(ConfigError, match=r"ties rank .* has none .* columns are: query_id"):
        sparkeval.evaluate(None, RUN.drop(columns="rank"), QRELS, ["AP"], ties="rank")


def test_a_rank_that_is_not_a_number_is_named() -> None:
    bad = RUN.assign(rank=[1.0, 2.0, float("nan"), 1, 2, 3, 4, 5])
    with pytest.raises(InputError, match="row 3: column rank value nan is not a finite number"):
        sparkeval.evaluate(None, bad, QRELS, ["AP"], ties="rank")


@pytest.mark.parametrize("value", ["docid", "score", 1])
def test_an_unknown_rule_is_refused_naming_the_rules(value) -> None:
    with pytest.raises(ConfigError, match="ties must be one of doc-id, rank, input-order"):
        sparkeval.evaluate(None, RUN, QRELS, ["AP"], ties=value)


def test_near_duplicate_flags_take_only_the_doc_id_rule() -> None:
    pairs = pd.DataFrame({"doc_a": ["a"], "doc_b": ["b"]})
    with pytest.raises(ConfigError, match="ties rank: near-duplicate pairs"):
        sparkeval.evaluate(None, RUN, QRELS, ["AP"], ties="rank", near_duplicates=pairs)


def test_a_rank_only_run_reads_the_same_under_every_rule() -> None:
    # no score column: the score is -rank, so tied scores are tied ranks (q3's m and n)
    ranks = RUN.drop(columns="score")
    got = {
        rule: per_query(sparkeval.evaluate(None, ranks, QRELS, ["AP"], ties=rule))
        for rule in ("doc-id", "rank")
    }
    # q1 a, b, c; q2 y (rank 1), x; q3 n, m (rank 5, doc id descending), o
    assert got["doc-id"] == got["rank"] == flat({"AP": {"q1": 1.0, "q2": 1.0, "q3": 0.5}})


def _worker_run(with_tie: bool) -> pa.Table:
    run = {
        "run_id": ["r"] * 3,
        "query_id": ["q"] * 3,
        "doc_id": ["a", "b", "c"],
        "score": [1.0, 1.0, 1.0],
    }
    if with_tie:
        run[TIE_KEY] = [2.0, None, 1.0]
    return pa.table(run)


def test_the_worker_refuses_a_rule_whose_keys_it_was_not_given() -> None:
    qrels = pa.table({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]})
    measures = parse_measures(["AP"])
    with pytest.raises(ConfigError, match="ties rank: the run rows carry no _tie column"):
        evaluate_tables(_worker_run(False), qrels, measures, EvalOptions(ties="rank"))
    with pytest.raises(InputError, match="run row with empty rank"):
        evaluate_tables(_worker_run(True), qrels, measures, EvalOptions(ties="rank"))
