"""Near-duplicate demotion and NearDup@k in the single-process evaluator.

The ``_dup`` flags are given here (the Spark flagging is tested in
``test_near_duplicates_spark.py``); every expected value is worked out by hand.

Query q1 of run r, in rank order (score desc, ties by doc id desc: y before x)::

    rank  doc  score  grade     _dup
    1     a    6      1         no
    2     b    5      2         yes  (near-duplicate of a)
    3     c    4      0         yes  (of b: judged non-relevant, stays 0)
    4     y    3      1         no
    5     x    3      unjudged  yes  (of y: not in the qrels, stays non-pool)
    6     z    1      1         no

The qrels also hold r1 (grade 1, not retrieved): R = 5 (a, b, y, z, r1), one judged
non-relevant doc (c).  With the flags b counts as grade 0.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sparkeval.engine.worker.assemble import EvalOptions, evaluate_frames
from sparkeval.errors import ConfigError
from sparkeval.measures.names import parse_measure, parse_measures
from sparkeval.measures.near_dup import demote_near_duplicates

# rows deliberately not in rank order: flags must follow their rows through the sort
RUN = pd.DataFrame(
    {
        "run_id": ["r"] * 6,
        "query_id": ["q1"] * 6,
        "doc_id": ["z", "x", "a", "c", "y", "b"],
        "score": [1.0, 3.0, 6.0, 4.0, 3.0, 5.0],
        "_dup": [False, True, False, True, False, True],
    }
)
QRELS = pd.DataFrame(
    {
        "query_id": ["q1"] * 6,
        "doc_id": ["a", "b", "c", "y", "z", "r1"],
        "relevance": [1, 2, 0, 1, 1, 1],
    }
)
MEASURES = "P@5,AP,nDCG@5,Bpref,NearDup@5,NearDup,NearDup@2,NumRel"


def values(
    run: pd.DataFrame, options: EvalOptions | None = None, names: str = MEASURES
) -> dict[str, float]:
    measures = parse_measures(names)
    row = evaluate_frames(run, QRELS, measures, options or EvalOptions()).iloc[0]
    return {m.name: float(row[f"m{i}"]) for i, m in enumerate(measures)}


def test_flagged_relevant_doc_gains_nothing() -> None:
    got = values(RUN)
    # relevant in the top 5 after demotion: a, y
    assert got["P@5"] == pytest.approx(2 / 5)
    # relevant ranks a@1, y@4, z@6: (1/1 + 2/4 + 3/6) / R=5
    assert got["AP"] == pytest.approx((1 + 0.5 + 0.5) / 5)
    # gains a1 b0 c0 y1 x0; ideal (unchanged) from grades 2,1,1,1,1 of the qrels
    dcg = 1 / math.log2(2) + 1 / math.log2(5)
    idcg = 2 + 1 / math.log2(3) + 1 / math.log2(4) + 1 / math.log2(5) + 1 / math.log2(6)
    assert got["nDCG@5"] == pytest.approx(dcg / idcg)
    # N = 1 (c), min(N, R) = 1: a@1 no non-relevant above -> 1; y@4 and z@6 have b, c
    # above (2, capped at 1) -> 1 - 1/1 = 0; (1 + 0 + 0) / 5
    assert got["Bpref"] == pytest.approx(1 / 5)
    assert got["NumRel"] == 5  # R unchanged


def test_same_rows_without_flags() -> None:
    got = values(RUN.drop(columns="_dup"), names="P@5,AP,Bpref")
    # no flags: a, b, y relevant in the top 5
    assert got["P@5"] == pytest.approx(3 / 5)
    # a@1 1/1, b@2 2/2, y@4 3/4, z@6 4/6
    assert got["AP"] == pytest.approx((1 + 1 + 0.75 + 4 / 6) / 5)
    # a@1 and b@2 -> 1 each; y@4, z@6 have c above -> 1 - 1/1 = 0
    assert got["Bpref"] == pytest.approx(2 / 5)


def test_all_false_flags_equal_no_flags() -> None:
    measures = parse_measures("P@5,AP,nDCG@5,Bpref,RR,Rprec,infAP,Judged@5")
    plain = evaluate_frames(RUN.drop(columns="_dup"), QRELS, measures)
    none_flagged = evaluate_frames(RUN.assign(_dup=False), QRELS, measures)
    pd.testing.assert_frame_equal(plain, none_flagged)


def test_near_dup_rate() -> None:
    got = values(RUN)
    assert got["NearDup@5"] == pytest.approx(3 / 5)  # b, c, x among a b c y x
    assert got["NearDup@10"] == pytest.approx(3 / 6)  # short list: min(10, 6) = 6
    assert got["NearDup@2"] == pytest.approx(1 / 2)  # a, b


def test_flags_are_cut_with_the_ranking() -> None:
    got = values(RUN, EvalOptions(depth=3))
    # kept a b c: b and c flagged; min(5, 3) = 3
    assert got["NearDup@5"] == pytest.approx(2 / 3)
    assert got["P@5"] == pytest.approx(1 / 5)  # only a


def test_empty_ranking_scores_zero_like_judged() -> None:
    qrels = pd.concat(
        [QRELS, pd.DataFrame({"query_id": ["q2"], "doc_id": ["a"], "relevance": [1]})]
    )
    measures = parse_measures("NearDup@5,Judged@5")
    wide = evaluate_frames(RUN, qrels, measures)
    q2 = wide[wide["query_id"] == "q2"].iloc[0]
    assert q2["evaluated"] and q2["ret_rows"] == 0
    assert (q2["m0"], q2["m1"]) == (0.0, 0.0)


def test_near_dup_without_flags_is_an_error() -> None:
    with pytest.raises(ConfigError, match="measure NearDup@5 needs near-duplicate pairs"):
        evaluate_frames(RUN.drop(columns="_dup"), QRELS, parse_measures("NearDup@5"))


def test_demotion_rule() -> None:
    rel = np.array([3, 1, 0, -1, -2, 2])
    dup = np.array([True, True, True, True, True, False])
    assert demote_near_duplicates(rel, dup).tolist() == [0, 0, 0, -1, -2, 2]
    assert demote_near_duplicates(rel, None) is rel


def test_near_dup_name_default_cutoff_and_direction() -> None:
    m = parse_measure("NearDup")
    assert (m.name, m.k) == ("NearDup@10", 10)
    assert parse_measure("NearDup@3").k == 3
    assert not m.spec.higher_is_better
    assert [x.name for x in parse_measures("NearDup,NearDup@10")] == ["NearDup@10"]
