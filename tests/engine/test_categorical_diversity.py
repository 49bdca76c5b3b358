"""RePlay's ``CategoricalDiversity@k`` in ``evaluate`` with an item -> category table
(``--item-categories``, ``item_categories=``).

Expected values: RePlay's docstring of ``replay.metrics.CategoricalDiversity``
(CategoricalDiversity@3 = 1.0, @5 = 0.8666666666666667, per user at 5 {1: 1.0, 2: 1.0,
3: 0.6}) and hand derivations written out in each test; Spark gives the in-process bits.
"""

from __future__ import annotations

import json
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import sparkeval
from sparkeval.diversity.category_values import local_category_per_user, local_category_value
from sparkeval.errors import ConfigError, InputError
from tests.jobs import CLI, job_env

#: RePlay's documented category recommendations: (user, category, rating); each row is
#: an item of its own here ("u-n"), whose category the table gives
DOCUMENTED = [
    (1, 3, 0.6), (1, 7, 0.5), (1, 10, 0.4), (1, 11, 0.3), (1, 2, 0.2),
    (2, 5, 0.6), (2, 8, 0.5), (2, 11, 0.4), (2, 1, 0.3), (2, 3, 0.2),
    (3, 4, 1.0), (3, 9, 0.5), (3, 2, 0.1),
]  # fmt: skip
RECS = pd.DataFrame(
    {
        "user_id": [u for u, _, _ in DOCUMENTED],
        "item_id": [f"{u}-{n}" for n, (u, _, _) in enumerate(DOCUMENTED)],
        "score": [s for _, _, s in DOCUMENTED],
    }
)
CATEGORIES = pd.DataFrame(
    {
        "item_id": [f"{u}-{n}" for n, (u, _, _) in enumerate(DOCUMENTED)],
        "category_id": [c for _, c, _ in DOCUMENTED],
    }
)
TRUTH = pd.DataFrame(
    {"user_id": [1, 2, 3], "item_id": ["1-0", "2-5", "3-10"], "relevance": [1, 1, 1]}
)


def test_replays_documented_values():
    """RePlay's docstring: CategoricalDiversity([3, 5]) gives 1.0 and
    0.8666666666666667: every top 3 has 3 categories; at 5 users 1 and 2 have 5, user
    3 has 3 of 5 (its list is shorter, still divided by 5)."""
    ev = sparkeval.evaluate_recommendations(
        None, RECS, TRUTH, "Precision@3,CategoricalDiversity@3,CategoricalDiversity@5",
        compat="replay", item_categories=CATEGORIES,
    )  # fmt: skip
    run = ev.report["runs"]["run"]
    assert run["measures"]["CategoricalDiversity@3"] == 1.0
    assert run["measures"]["CategoricalDiversity@5"] == 0.8666666666666667
    assert run["set_measures"]["CategoricalDiversity@5"] == {
        "k": 5, "users": 3, "rows_without_category": 0,
    }  # fmt: skip
    assert ev.report["parameters"]["item_categories"] == "a table"
    lists = RECS.rename(columns={"user_id": "query_id", "item_id": "doc_id"})
    lists = lists.astype({"query_id": str})[["query_id", "doc_id"]]
    cats = CATEGORIES.rename(columns={"item_id": "doc_id", "category_id": "category"})
    per_user = local_category_per_user(lists, cats.astype(str), 5)
    assert per_user["value"].tolist() == [1.0, 1.0, 0.6]


def test_edge_cases_by_hand():
    """k = 4 over a: [x, y, z] (x and y share category c; z has none in the table),
    b: [w] (category d, the list shorter than k), c: [v] (a null category): a has 1
    category / 4, b 1 / 4, c 0 / 4; mean 1/6; two rows without a category (z, v)."""
    lists = pd.DataFrame({"query_id": list("aaabc"), "doc_id": list("xyzwv")})
    cats = pd.DataFrame({"doc_id": list("xywv"), "category": ["c", "c", "d", None]})
    per_user = local_category_per_user(lists, cats, 4)
    assert per_user["value"].tolist() == [0.25, 0.25, 0.0]
    value = local_category_value(lists, cats, 4)
    assert value["value"] == float(Fraction(1, 2) / 3)
    assert value["rows_without_category"] == 2 and value["users"] == 3


def _cli(directory: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *argv], cwd=directory, env=job_env(), capture_output=True, text=True, timeout=600
    )


def test_the_local_engine_and_the_errors(tmp_path: Path):
    """``--item-categories cats.parquet`` on the local engine gives RePlay's value;
    without it the error names the option; an item with two category rows is an input
    error naming the file."""
    RECS.to_parquet(tmp_path / "recs.parquet", index=False)
    CATEGORIES.to_parquet(tmp_path / "cats.parquet", index=False)
    TRUTH.to_parquet(tmp_path / "truth.parquet", index=False)
    twice = pd.concat([CATEGORIES, CATEGORIES.head(1).assign(category_id=99)])
    twice.to_parquet(tmp_path / "twice.parquet", index=False)
    base = ("evaluate", "--engine", "local", "--run", "recs.parquet", "--qrels",
            "truth.parquet", "--measures", "P@3,CategoricalDiversity@5")  # fmt: skip
    done = _cli(tmp_path, *base, "--item-categories", "cats.parquet", "--out", "out")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["runs"]["recs"]["measures"]["CategoricalDiversity@5"] == 0.8666666666666667
    assert summary["parameters"]["item_categories"] == "cats.parquet"
    missing = _cli(tmp_path, *base, "--out", "refused")
    assert missing.returncode == 2
    assert "--item-categories PATH (key 'item_categories'" in missing.stderr
    doubled = _cli(tmp_path, *base, "--item-categories", "twice.parquet", "--out", "refused")
    assert doubled.returncode == 2
    assert "twice.parquet: an item has more than one category row" in doubled.stderr
    assert not (tmp_path / "refused").exists()
    with pytest.raises(ConfigError, match=r"item_categories= \(a path or a table\)"):
        sparkeval.evaluate_recommendations(None, RECS, TRUTH, "P@3,CategoricalDiversity@3")
    with pytest.raises(InputError, match="more than one category row"):
        sparkeval.evaluate_recommendations(
            None, RECS, TRUTH, "P@3,CategoricalDiversity@3", item_categories=twice
        )


@pytest.mark.spark
def test_spark_equals_in_process(spark):
    """On Spark DataFrames the value and counts equal the in-process ones to the bit
    (40 users, lists of 1 to 9 items over 8 categories, some items without one), and
    each user's value on Spark is the local one."""
    from sparkeval.diversity.category_values import spark_category_per_user

    rng = np.random.default_rng(5)
    rows = [
        (f"u{user}", int(item), round(float(rng.random()), 1))
        for user in range(40)
        for item in rng.choice(60, size=int(rng.integers(1, 10)), replace=False)
    ]
    recs = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    cats = pd.DataFrame({"item_id": np.arange(50), "category": rng.integers(0, 8, 50)})
    truth = recs.groupby("user_id").head(1)[["user_id", "item_id"]]
    measures = "Precision@4,CategoricalDiversity@4,CategoricalDiversity@7"
    held = sparkeval.evaluate_recommendations(
        None, recs, truth, measures, compat="replay", item_categories=cats
    )
    on_spark = sparkeval.evaluate_recommendations(
        spark, spark.createDataFrame(recs), spark.createDataFrame(truth), measures,
        compat="replay", item_categories=spark.createDataFrame(cats),
    )  # fmt: skip
    try:
        assert on_spark.report["runs"] == held.report["runs"]
    finally:
        on_spark.unpersist()
    assert (
        held.report["runs"]["run"]["set_measures"]["CategoricalDiversity@7"][
            "rows_without_category"
        ]
        > 0
    )
    lists = recs.rename(columns={"user_id": "query_id", "item_id": "doc_id"})[
        ["query_id", "doc_id"]
    ].astype(str)
    table = cats.rename(columns={"item_id": "doc_id"}).astype(str)
    local = local_category_per_user(lists, table, 9)
    found = (
        spark_category_per_user(spark.createDataFrame(lists), spark.createDataFrame(table), 9)
        .orderBy("query_id")
        .collect()
    )
    assert [r["query_id"] for r in found] == local["query_id"].tolist()
    assert [r["value"] for r in found] == local["value"].tolist()
