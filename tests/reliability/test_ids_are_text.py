"""Ids read from CSV are text in every command: ``007`` and ``7``, ``01`` and ``1`` are
different users, items and documents, while the other columns keep the types Spark
infers (scores are numbers). Expected values are derived by hand in each test."""

from __future__ import annotations

import json
import math

import pyarrow.parquet as pq
import pytest

from sparkeval.cli import main

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def test_users_007_and_7_are_two_users_in_similar_users(tmp_path):
    # 007 lists {a, b}, 7 lists {c, d}, 8 lists {a, b}: one pair, (007, 8) at Jaccard 1.
    # Read as numbers, 007 and 7 would merge into one user {a, b, c, d}: a pair at 0.5.
    path = tmp_path / "run.csv"
    path.write_text("user_id,item_id,score\n007,a,1\n007,b,2\n7,c,1\n7,d,2\n8,a,1\n8,b,2\n")
    argv = ["similar-users", "--run", str(path), "--threshold", "0.5"]
    assert main([*argv, "--out", str(tmp_path / "out"), "--quiet"]) == 0
    pairs = pq.read_table(tmp_path / "out" / "pairs.parquet").to_pylist()
    assert pairs == [{"run_id": "run", "user_a": "007", "user_b": "8", "jaccard": 1.0}]


def test_docs_01_and_1_are_two_documents_in_near_duplicates(tmp_path):
    # 01 and 2 hold the same text, 1 another: the one pair is (01, 2).
    path = tmp_path / "docs.csv"
    fox = "the quick brown fox jumps over the lazy dog"
    path.write_text(f"doc_id,text\n01,{fox}\n1,completely different words here now\n2,{fox}\n")
    argv = ["near-duplicates", "--docs", str(path), "--threshold", "0.8"]
    assert main([*argv, "--out", str(tmp_path / "out"), "--quiet"]) == 0
    pairs = pq.read_table(tmp_path / "out" / "pairs.parquet").to_pylist()
    assert [(p["doc_a"], p["doc_b"]) for p in pairs] == [("01", "2")]


def test_items_01_and_1_are_two_items_in_diversity(tmp_path):
    # u1 gets items 01 and 1, u2 gets 01: two items, exposures 2 and 1, so the
    # distributional coverage (entropy of exposures, bits) is H(2/3, 1/3).
    path = tmp_path / "rec.csv"
    path.write_text("user_id,item_id,score\nu1,01,2\nu1,1,1\nu2,01,1\n")
    assert main(["diversity", "--run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    coverage = json.loads((tmp_path / "out" / "summary.json").read_text())["coverage"]
    assert coverage["recommended_items"] == 2
    entropy = -(2 / 3) * math.log2(2 / 3) - (1 / 3) * math.log2(1 / 3)
    assert coverage["distributional_coverage"] == pytest.approx(entropy, abs=1e-12)
