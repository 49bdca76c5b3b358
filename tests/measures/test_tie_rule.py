"""One tie rule for every command that ranks or cuts at k.

At equal score, the doc with the larger id *text* (byte order, trec_eval's ``strcmp``)
ranks first, whatever the id column's type: of integer items 99 and 100, "99" >
"100", so 99 ranks first and a cut at k = 1 keeps 99. Expected docs are derived by
hand from that rule.
"""

from __future__ import annotations

import pytest

import sparkeval
from sparkeval.compare.pipeline import with_tie_broken_rank
from sparkeval.compare.rank_distance import order_by_score_then_docid_desc
from sparkeval.io.lists import top_k
from sparkeval.lsh.similar_users import user_sets

pytestmark = pytest.mark.spark

#: (id type, tied doc ids of user 1, the doc that ranks first by hand)
CASES = [
    ("bigint", [100, 99], 99),  # "99" > "100"
    ("bigint", [5, 10, 7], 7),  # "7" > "5" > "10"
    ("string", ["100", "99"], "99"),
    ("string", ["B", "100", "a"], "a"),  # mixed: 'a' (0x61) > 'B' (0x42) > '1' (0x31)
    ("string", ["d10", "d9"], "d9"),
]


def _run(spark, kind: str, docs: list):
    rows = [("r", "u1", doc, 0.5) for doc in docs] + [("r", "u2", docs[0], 0.9)]
    return spark.createDataFrame(
        rows, f"run_id string, query_id string, doc_id {kind}, score double"
    )


@pytest.mark.parametrize(("kind", "docs", "first"), CASES)
def test_every_ranking_keeps_the_same_first_doc(spark, kind, docs, first) -> None:
    run = _run(spark, kind, docs)
    u1 = "query_id = 'u1'"

    # the numpy form (compare's rank distances per query)
    order = order_by_score_then_docid_desc([0.5] * len(docs), docs)
    assert docs[order[0]] == first

    # the Spark forms: compare's ranks, the --k cut of diversity and similar-users
    ranked = with_tie_broken_rank(run).where(u1).where("rank = 1").collect()
    assert [r.doc_id for r in ranked] == [first]
    assert [r.doc_id for r in top_k(run, 1).where(u1).collect()] == [first]
    assert user_sets(run, 1).where(u1).collect()[0]["items"] == [first]

    # evaluate: only the expected first doc is relevant, so P@1 is 1 exactly when it ranks first
    qrels = spark.createDataFrame(
        [("u1", str(d), int(d == first)) for d in docs],
        "query_id string, doc_id string, relevance int",
    )
    ev = sparkeval.evaluate(spark, run.where(u1), qrels, ["P@1"], queries="both")
    try:
        values = {r["measure"]: r["value"] for r in ev.summary.collect()}
    finally:
        ev.unpersist()
    assert values == {"P@1": 1.0}
