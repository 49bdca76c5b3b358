"""One alias table and one format detection for every command's inputs.

A recommendation table with columns ``topic``/``iid``/``score`` written as ``.tsv``
reads the same in ``evaluate`` (as a run) and ``similar-users`` (as user lists).
"""

from __future__ import annotations

import json

import pytest

from sparkeval.cli import main
from sparkeval.io.columns import DOC_ALIASES, QRELS_ALIASES, RATING_ALIASES, RUN_ALIASES

pytestmark = pytest.mark.spark


def test_every_table_kind_takes_its_names_from_one_table() -> None:
    assert RUN_ALIASES["query_id"] == QRELS_ALIASES["query_id"]
    assert set(RUN_ALIASES["query_id"]) == set(RATING_ALIASES["user_id"])
    assert set(RUN_ALIASES["doc_id"]) == set(RATING_ALIASES["item_id"])
    assert set(RUN_ALIASES["doc_id"]) <= set(DOC_ALIASES["doc_id"])


def test_topic_and_tsv_read_alike_in_evaluate_and_similar_users(spark, tmp_path) -> None:
    run = tmp_path / "recs.tsv"
    # users a and b share items 1..4 of 5 and 4 (Jaccard 4/5); c shares nothing
    lines = ["topic\tiid\tscore"]
    lines += [f"a\t{i}\t{1.0 - i / 10}" for i in range(1, 6)]
    lines += [f"b\t{i}\t{1.0 - i / 10}" for i in range(1, 5)]
    lines += ["c\t9\t0.5"]
    run.write_text("\n".join(lines) + "\n")
    qrels = tmp_path / "truth.tsv"
    qrels.write_text("topic\tiid\tgrade\na\t1\t1\nb\t5\t1\nc\t9\t1\n")

    out = tmp_path / "eval"
    argv = ["evaluate", "--run", str(run), "--qrels", str(qrels), "--measures", "P@1,RR"]
    assert main([*argv, "--out", str(out), "--queries", "both", "--master", "local[2]"]) == 0
    measures = json.loads((out / "summary.json").read_text())["runs"]["recs"]["measures"]
    # P@1: a's first item 1 is relevant, b's first item 1 is not, c's 9 is: 2/3
    # RR: a 1, b 0 (item 5 not retrieved), c 1: 2/3
    assert measures == {"P@1": pytest.approx(2 / 3), "RR": pytest.approx(2 / 3)}

    pairs_out = tmp_path / "similar"
    argv = ["similar-users", "--run", str(run), "--threshold", "0.8", "--out", str(pairs_out)]
    assert main([*argv, "--master", "local[2]"]) == 0
    import pandas as pd

    pairs = pd.read_parquet(pairs_out / "pairs.parquet")
    # the run named as evaluate names it
    assert pairs.to_dict("records") == [
        {"run_id": "recs", "user_a": "a", "user_b": "b", "jaccard": 0.8}
    ]
