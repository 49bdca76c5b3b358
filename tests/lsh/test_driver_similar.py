"""similar-users of small runs in the driver: the same pairs, values and statistics as
the Spark stages (both run here on a real local session), and exact against brute force."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.cli import run_argv
from sparkeval.engine.plans import driver_plan
from sparkeval.errors import ConfigError, InputError
from sparkeval.io.lists import top_k
from sparkeval.lsh import driver_sets
from sparkeval.lsh.driver_sets import set_rows, similar_sets_in_driver
from sparkeval.lsh.driver_users import top_k_rows
from sparkeval.lsh.options import LshOptions
from sparkeval.lsh.similar import similar_sets

pytestmark = pytest.mark.spark


def _rows(seed: int, users: int = 240, catalogue: int = 40) -> list[tuple[int, int]]:
    """(user, item) rows: random lists, every seventh a copy of the one before, every
    eleventh the one before with one item dropped, and one repeated row."""
    rng = np.random.default_rng(seed)
    lists: list[list[int]] = []
    for u in range(users):
        if u and u % 7 == 0:
            lists.append(list(lists[-1]))
        elif u and u % 11 == 0 and len(lists[-1]) > 1:
            lists.append(lists[-1][:-1])
        else:
            lists.append([int(x) for x in rng.choice(catalogue, rng.integers(1, 9), replace=False)])
    rows = [(u, item) for u, items in enumerate(lists) for item in items]
    return [*rows, rows[3]]


def _brute_force(rows, threshold: Fraction) -> dict[tuple, float]:
    sets: dict = {}
    for user, item in rows:
        sets.setdefault(user, set()).add(item)
    out = {}
    for a, b in itertools.combinations(sorted(sets), 2):
        j = Fraction(len(sets[a] & sets[b]), len(sets[a] | sets[b]))
        if j >= threshold:
            out[(a, b)] = float(j)
    return out


CASES = [
    ("text", None, "0.5", LshOptions()),
    ("int", 3, "0.6", LshOptions(num_perm=16, bands=8, rows=2)),
    ("text", 2, "0.75", LshOptions(num_perm=64, scheme="affine64")),
    ("int", None, "0.3", LshOptions(scheme="legacy", seed=7)),
]


@pytest.mark.parametrize(("ids", "cap", "threshold", "lsh"), CASES)
def test_driver_search_equals_the_spark_stages(spark, monkeypatch, ids, cap, threshold, lsh):
    from pyspark.sql import functions as F

    monkeypatch.setattr(driver_sets, "VERIFY_CHUNK", 50)  # candidates verified in chunks

    rows = _rows(len(threshold) + (cap or 0))
    if ids == "text":  # text ids whose byte order differs from their numbers' order
        rows = [(f"u{u}", f"i{i}") for u, i in rows]
    table = pa.table({"id": [r[0] for r in rows], "item": [r[1] for r in rows]})
    params = lsh.banding(threshold)
    ours = similar_sets_in_driver(
        set_rows(table["id"], table["item"]), threshold, lsh.hasher(), params, cap
    )
    sets = spark.createDataFrame(table.to_pandas()).groupBy("id").agg(F.collect_list("item"))
    theirs = similar_sets(sets.toDF("id", "items"), threshold, lsh.hasher(), params, max_bucket=cap)
    spark_pairs = sorted(tuple(r) for r in theirs.pairs.collect())
    spark_stats = theirs.stats
    theirs.release()
    columns = (ours.pairs.column(c).to_pylist() for c in ("a", "b", "jaccard"))
    pairs = list(zip(*columns, strict=True))
    assert pairs == spark_pairs
    assert list(ours.stats) == list(spark_stats)  # the same keys in the same order
    assert {k: v for k, v in ours.stats.items() if k != "timings_s"} == {
        k: v for k, v in spark_stats.items() if k != "timings_s"
    }
    assert set(ours.stats["timings_s"]) == set(spark_stats["timings_s"])
    truth = _brute_force(rows, Fraction(threshold))
    found = {(a, b): j for a, b, j in pairs}
    assert all(truth[key] == value for key, value in found.items())  # every pair exact
    assert ours.stats["identical_groups"] > 0 and ours.stats["candidate_pairs"] > 0
    if cap is not None:
        assert ours.stats["skipped_buckets"] > 0
    else:  # banded for recall 0.99 at the threshold; pairs above it are likelier still
        assert len(found) >= 0.95 * len(truth)


def test_top_k_rows_rank_as_spark(spark):
    rng = np.random.default_rng(3)
    users = np.repeat(np.arange(30), 12)
    items = np.tile([7, 99, 100, 1000, 5, 55, 500, 9, 90, 900, 3, 30], 30)
    scores = rng.choice([0.5, 1.0, 2.0, -0.0, 0.0], size=len(users))
    frame = pd.DataFrame({"query_id": users, "doc_id": items, "score": scores})
    table = pa.Table.from_pandas(frame, preserve_index=False)
    for k in (1, 3, 12):
        kept = table.take(top_k_rows(table, k))
        ours = sorted(zip(*(kept.column(c).to_pylist() for c in frame), strict=True))
        theirs = sorted(tuple(r) for r in top_k(spark.createDataFrame(frame), k).collect())
        assert ours == theirs
    # ties by the item's text descending: "99" > "1000" > "100"
    tie = pa.table({"query_id": ["u"] * 3, "doc_id": [100, 99, 1000], "score": [1.0] * 3})
    assert top_k_rows(tie, 2).to_pylist() == [1, 2]


def _run_command(run_path, out, *extra) -> dict:
    argv = ["similar-users", "--run", str(run_path), "--out", str(out), "--master", "local[2]"]
    assert run_argv([*argv, "--threshold", "0.5", *extra]) == 0
    return json.loads((out / "summary.json").read_text())


@pytest.mark.parametrize("extra", [[], ["--k", "4", "--run-id", "B"], ["--k", "3"]])
def test_the_command_gives_the_same_outputs_both_ways(spark, tmp_path, capsys, monkeypatch, extra):
    rows = _rows(9)
    rng = np.random.default_rng(9)
    frame = pd.DataFrame(
        {
            "user_id": [f"user{u}" for u, _ in rows[:-1]],  # no repeated row here
            "item_id": [i for _, i in rows[:-1]],
            "score": rng.choice([1.0, 2.0, 3.0], size=len(rows) - 1),
        }
    )
    if extra:  # two runs in one table, with ties in the scores that the cut must break
        other = frame.assign(score=rng.choice([1.0, 2.0, 3.0], size=len(frame)))
        frame = pd.concat([frame.assign(run_id="A"), other.assign(run_id="B")])
    run_path = tmp_path / "run.parquet"
    frame.to_parquet(run_path)
    in_driver = _run_command(run_path, tmp_path / "driver", *extra)
    assert "searched in the driver" in capsys.readouterr().err
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", 0)  # every input is "large"
    on_spark = _run_command(run_path, tmp_path / "spark", *extra)
    assert "searched in the driver" not in capsys.readouterr().err
    assert in_driver == on_spark  # summary.json holds no timings
    schemas = [
        pq.read_schema(next((tmp_path / n / "pairs.parquet").iterdir()))
        for n in ("driver", "spark")
    ]
    assert schemas[0].remove_metadata() == schemas[1].remove_metadata()  # nullability too
    # a run after another in the files; a table without run ids is one run named by its file
    written = [pd.read_parquet(tmp_path / name / "pairs.parquet") for name in ("driver", "spark")]
    assert all(frame["run_id"].is_monotonic_increasing for frame in written)
    runs = ["B"] if "--run-id" in extra else ["A", "B"] if extra else ["run"]
    assert sorted(in_driver["runs"]) == sorted(set(written[0]["run_id"])) == runs
    counts = [run["counts"]["pairs"] for run in in_driver["runs"].values()]
    assert len(written[0]) == sum(counts) and min(counts) > 0
    pairs = [
        frame.sort_values(["run_id", "user_a", "user_b"], ignore_index=True) for frame in written
    ]
    pd.testing.assert_frame_equal(pairs[0], pairs[1])


@pytest.mark.parametrize("k", [None, 3])
def test_the_api_gives_the_same_pairs_both_ways(spark, monkeypatch, k):
    from sparkeval.lsh.similar_users import find_similar_users

    rows = _rows(12)  # with a repeated row: a DataFrame's rows are taken as they are
    scores = np.random.default_rng(12).choice([1.0, 2.0], size=len(rows))
    run = spark.createDataFrame(
        pd.DataFrame(rows, columns=["query_id", "doc_id"]).assign(score=scores)
    )
    results, spark_tables_cached = [], []
    for driver_bytes in (driver_plan.DRIVER_BYTES, 0):  # the driver, then the Spark stages
        monkeypatch.setattr(driver_plan, "DRIVER_BYTES", driver_bytes)
        result, parameters = find_similar_users(run, "0.6", k=k)
        pairs = sorted(tuple(r) for r in result.pairs.collect())
        stats = {key: v for key, v in result.stats.items() if key != "timings_s"}
        spark_tables_cached.append(len(result._cached))  # the Spark stages cache four
        result.release()
        results.append((pairs, stats, parameters, result.pairs.schema))
    assert spark_tables_cached == [0, 4]
    assert results[0] == results[1]
    assert len(results[0][0]) > 0 and results[0][3].names == ["user_a", "user_b", "jaccard"]


def test_too_many_candidates_for_the_driver_go_to_the_spark_stages(
    spark, tmp_path, capsys, monkeypatch
):
    run_path = tmp_path / "run.parquet"
    rows = _rows(4)[:-1]
    pd.DataFrame(rows, columns=["query_id", "doc_id"]).assign(score=1.0).to_parquet(run_path)
    expected = _run_command(run_path, tmp_path / "driver")
    monkeypatch.setattr(driver_sets, "MAX_BUCKET_PAIRS", 10)
    assert _run_command(run_path, tmp_path / "spark") == expected
    assert "too many for the driver: searching with Spark" in capsys.readouterr().err


def test_driver_path_errors_name_the_problem(spark, tmp_path):
    two_runs = tmp_path / "two.parquet"
    pd.DataFrame(
        {"run_id": ["A", "B"], "query_id": [1, 1], "doc_id": [4, 5], "score": [1.0, 0.5]}
    ).to_parquet(two_runs)
    with pytest.raises(ConfigError, match=r"--run-id C: .* holds no such run \(A, B\)"):
        _run_command(two_runs, tmp_path / "o1", "--run-id", "C")
    one_run = tmp_path / "one.parquet"
    pd.DataFrame({"query_id": [1, 2], "doc_id": [4, 4], "score": [1.0, 0.5]}).to_parquet(one_run)
    with pytest.raises(ConfigError, match=r"--run-id X given but .* has no run_id column"):
        _run_command(one_run, tmp_path / "o2", "--run-id", "X")
    repeated = tmp_path / "repeated.parquet"
    pd.DataFrame(
        {"query_id": ["a", "b", "b"], "doc_id": ["x", "y", "y"], "score": [1.0, 0.5, 0.2]}
    ).to_parquet(repeated)
    with pytest.raises(InputError, match="item y appears 2 times in the list of user b;"):
        _run_command(repeated, tmp_path / "o3", "--k", "1")
    pd.DataFrame(
        {"run_id": ["A", "B", "B"], "query_id": "b", "doc_id": "y", "score": [1.0, 0.5, 0.2]}
    ).to_parquet(repeated)  # once in run A, twice in run B
    with pytest.raises(InputError, match="item y appears 2 times in the list of user b of run B"):
        _run_command(repeated, tmp_path / "o4")
    assert not any((tmp_path / name).exists() for name in ("o1", "o2", "o3", "o4"))


def test_runs_the_driver_does_not_take_go_to_the_spark_stages(spark, tmp_path, capsys):
    nulls = tmp_path / "nulls.parquet"
    pd.DataFrame(
        {"query_id": ["a", "a", "b", "b"], "doc_id": ["x", None, "x", "z"], "score": 1.0}
    ).to_parquet(nulls)
    summary = _run_command(nulls, tmp_path / "o")
    assert "searched in the driver" not in capsys.readouterr().err
    assert summary["counts"]["users"] == 2
    pairs = pd.read_parquet(tmp_path / "o" / "pairs.parquet")
    assert pairs.to_dict("records") == [
        {"run_id": "nulls", "user_a": "a", "user_b": "b", "jaccard": 0.5}
    ]
    # two runs: A's null goes to the Spark stages, B is searched in the driver
    two = tmp_path / "two.parquet"
    pd.DataFrame(
        {
            "run_id": ["A"] * 4 + ["B"] * 4,
            "query_id": ["a", "a", "b", "b", "c", "c", "d", "d"],
            "doc_id": ["x", None, "x", "z", "x", "y", "x", "y"],
            "score": 1.0,
        }
    ).to_parquet(two)
    summary = _run_command(two, tmp_path / "o2")
    assert "run B: 4 run rows: searched in the driver" in capsys.readouterr().err
    assert {run: block["counts"]["pairs"] for run, block in summary["runs"].items()} == {
        "A": 1,
        "B": 1,
    }
    pairs = pd.read_parquet(tmp_path / "o2" / "pairs.parquet")
    assert pairs.to_dict("records") == [
        {"run_id": "A", "user_a": "a", "user_b": "b", "jaccard": 0.5},
        {"run_id": "B", "user_a": "c", "user_b": "d", "jaccard": 1.0},
    ]


def _near_duplicates(docs_path, out, *extra) -> dict:
    argv = ["near-duplicates", "--docs", str(docs_path), "--method", "minhash"]
    argv += ["--threshold", "0.6", "--out", str(out), "--master", "local[2]", *extra]
    assert run_argv(argv) == 0
    return json.loads((out / "summary.json").read_text())


def _docs(seed: int) -> pd.DataFrame:
    """Texts from a 30-word vocabulary, edited copies, an exact copy and empty texts."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(30)]
    texts = [" ".join(rng.choice(words, rng.integers(3, 12))) for _ in range(80)]
    for i in range(0, 80, 8):  # an edited copy: one word replaced
        edited = texts[i].split()
        edited[rng.integers(len(edited))] = "zz"
        texts.append(" ".join(edited))
    texts += [texts[5], "", "  "]
    return pd.DataFrame({"doc_id": [f"d{i:03d}" for i in range(len(texts))], "text": texts})


def test_near_duplicates_give_the_same_outputs_both_ways(spark, tmp_path, capsys, monkeypatch):
    docs_path = tmp_path / "docs.parquet"
    _docs(4).to_parquet(docs_path)
    in_driver = _near_duplicates(docs_path, tmp_path / "driver", "--k", "2")
    assert "docs: searched in the driver" in capsys.readouterr().err
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", 0)
    on_spark = _near_duplicates(docs_path, tmp_path / "spark", "--k", "2")
    assert "searched in the driver" not in capsys.readouterr().err
    assert in_driver == on_spark
    assert in_driver["counts"]["empty_sets"] == 2 and in_driver["counts"]["identical_pairs"] == 1
    for name in ("pairs.parquet", "clusters.parquet"):
        tables = [pq.read_table(tmp_path / side / name) for side in ("driver", "spark")]
        assert tables[0].schema.remove_metadata() == tables[1].schema.remove_metadata()
        keys = [(c, "ascending") for c in tables[0].column_names]
        assert tables[0].sort_by(keys).equals(tables[1].sort_by(keys))
    assert in_driver["counts"]["pairs"] > 1


def test_near_duplicates_of_token_arrays_and_repeated_ids(spark, tmp_path, capsys, monkeypatch):
    rng = np.random.default_rng(8)
    tokens = [list(rng.choice(20, rng.integers(2, 7))) for _ in range(60)]
    tokens += [[*tokens[3][:-1], 99], tokens[7], []]
    docs = pd.DataFrame({"doc_id": np.arange(len(tokens)), "tokens": tokens})
    docs_path = tmp_path / "tokens.parquet"
    docs.to_parquet(docs_path)
    outputs = []
    for driver_bytes, out in ((driver_plan.DRIVER_BYTES, "driver"), (0, "spark")):
        monkeypatch.setattr(driver_plan, "DRIVER_BYTES", driver_bytes)
        outputs.append(_near_duplicates(docs_path, tmp_path / out))
    assert outputs[0] == outputs[1] and outputs[0]["counts"]["pairs"] > 0
    assert "searched in the driver" in capsys.readouterr().err
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", 16 << 20)
    pd.concat([docs, docs.head(1)]).to_parquet(docs_path)  # a doc id twice is refused
    with pytest.raises(InputError, match=r"tokens.parquet: doc id 0 appears 2 times"):
        _near_duplicates(docs_path, tmp_path / "repeated")
    assert not (tmp_path / "repeated").exists()
