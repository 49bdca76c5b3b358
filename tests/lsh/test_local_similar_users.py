"""``similar-users`` without a JVM (``--engine local``, and ``auto`` on small local inputs).

Each case runs the command on Spark (``--engine spark``, whose driver searches these
small runs with the numpy stages and writes ``pairs.parquet`` with pyarrow) and with
``auto`` (the local engine): the files are compared byte for byte (``summary.parquet``
by its rows without ``evaluated_at``, ``timings.json`` not at all), and stdout and the
exit code must be equal. The local engine must not import pyspark.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.errors import EXIT_INPUT, EXIT_OK
from tests.jobs import run_on_engine, run_without_java, tree


def _lists(rng: np.random.Generator, run: str) -> pd.DataFrame:
    """One run's lists: 90 users drawing 6 to 12 items from one of five tastes of 14
    items (and one from anywhere); a tenth of the users copy another's list (identical
    sets), a tenth copy it but for one item. Scores have one decimal: many ties."""
    tastes = [rng.choice(70, size=14, replace=False) for _ in range(5)]
    lists: list[np.ndarray] = []
    for user in range(90):
        kind = rng.random()
        if user > 10 and kind < 0.1:
            items = lists[int(rng.integers(user))].copy()
        elif user > 10 and kind < 0.2:
            items = lists[int(rng.integers(user))].copy()
            spare = np.setdiff1d(np.arange(70), items)
            items[0] = rng.choice(spare)
        else:
            taste = tastes[int(rng.integers(5))]
            own = rng.choice(taste, size=int(rng.integers(5, 12)), replace=False)
            items = np.union1d(own, rng.choice(70, size=1))
        lists.append(items)
    rows = [
        (run, 1000 + user, 7 * int(item), round(float(rng.random()), 1))
        for user, items in enumerate(lists)
        for item in items
    ]
    return pd.DataFrame(rows, columns=["run_id", "query_id", "doc_id", "score"])


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """Three runs as one Parquet table with a run id column and integer ids (user
    int64, item int32; rows shuffled, row groups of 400), the same rows as CSV (ids as
    text) and as JSON Lines, run ``a`` as a TREC file; a run with a repeated item, one
    with a NaN score and one with unsigned ids."""
    directory = tmp_path_factory.mktemp("local-similar-users")
    rng = np.random.default_rng(11)
    table = pd.concat([_lists(rng, run) for run in ("a", "b", "c")], ignore_index=True)
    table = table.sample(frac=1.0, random_state=3).reset_index(drop=True)
    schema = pa.schema(
        [
            ("run_id", pa.string()),
            ("query_id", pa.int64()),
            ("doc_id", pa.int32()),
            ("score", pa.float64()),
        ]
    )
    arrow = pa.Table.from_pandas(table, schema=schema, preserve_index=False)
    pq.write_table(arrow, directory / "runs.parquet", row_group_size=400)
    table.to_csv(directory / "runs.csv", index=False)
    table.head(300).to_json(directory / "runs.jsonl", orient="records", lines=True)
    run_a = table[table["run_id"] == "a"].sort_values(["query_id", "score"], ascending=False)
    run_a = run_a.assign(rank=run_a.groupby("query_id").cumcount() + 1)
    lines = [f"u{r.query_id} Q0 i{r.doc_id} {r.rank} {r.score} a\n" for r in run_a.itertuples()]
    (directory / "run_a.txt").write_text("".join(lines))
    repeated = arrow.slice(0, 500)
    pq.write_table(pa.concat_tables([repeated, repeated.slice(123, 1)]), directory / "rep.parquet")
    scores = arrow.column("score").to_numpy().copy()
    scores[42] = np.nan
    pq.write_table(arrow.set_column(3, "score", pa.array(scores)), directory / "nan.parquet")
    unsigned = arrow.set_column(1, "query_id", arrow.column("query_id").cast(pa.uint32()))
    pq.write_table(unsigned, directory / "unsigned.parquet")
    return directory


def _similar_users(
    directory: Path, out: str, engine: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_on_engine("similar-users", directory, out, engine, *extra, env=env)


CASES = {
    # one run (the file's tag), identical lists only
    "trec-identical": "--run run_a.txt --threshold 1.0",
    # every run of the table in one call; integer ids; the top 8 by score, ties by
    # the item id's text descending
    "parquet-every-run-k": "--run runs.parquet --threshold 0.4 --k 8",
    # one run of three; hot buckets skipped (a warning on stdout)
    "parquet-run-id-max-bucket": "--run runs.parquet --run-id b --threshold 0.3 --max-bucket 3",
    # text ids, a cut with tied scores, explicit banding and seed
    "csv-k-banding": "--run runs.csv --threshold 0.5 --k 5 --bands 16 --rows 4 --seed 9",
}


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(CASES))
def test_local_and_spark_engines_write_the_same_bytes(inputs: Path, case: str) -> None:
    options = CASES[case].split()
    spark = _similar_users(inputs, f"spark-{case}", "spark", *options)
    local = _similar_users(inputs, f"local-{case}", "auto", *options)
    assert spark.returncode == local.returncode == EXIT_OK, spark.stderr + local.stderr
    assert "searched in the driver" in spark.stderr  # Spark's driver wrote with pyarrow
    assert "searched here" in local.stderr  # auto ran the local engine
    # the same lines but for the output directory each names
    assert local.stdout.replace(f"/local-{case}", "/OUT") == spark.stdout.replace(
        f"/spark-{case}", "/OUT"
    )
    assert f"/local-{case}" in local.stdout
    found = tree(inputs / f"local-{case}")
    assert "pairs.parquet/part-00000.parquet" in found
    assert found == tree(inputs / f"spark-{case}")
    pairs = pq.read_table(inputs / f"local-{case}" / "pairs.parquet")
    assert pairs.num_rows > 0  # the case compares pairs, not two empty tables


def test_every_run_cut_and_banding_as_asked(inputs: Path, tmp_path: Path) -> None:
    """The local engine's outputs of the three-run case, by hand: a run per id, each
    pair once with user_a < user_b, Jaccard >= T of the top-8 sets."""
    out = tmp_path / "every"
    result = _similar_users(inputs, str(out), "local", *CASES["parquet-every-run-k"].split())
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stdout.startswith("similar-users: 3 runs, Jaccard >= 0.4")
    pairs = pq.read_table(out / "pairs.parquet" / "part-00000.parquet")
    assert pairs.schema.field("user_a").type == pa.int64()
    rows = pd.read_parquet(inputs / "runs.parquet")
    rows["text"] = rows["doc_id"].astype(str)
    rows = rows.sort_values(["score", "text"], ascending=False, kind="stable")
    top = rows.groupby(["run_id", "query_id"]).head(8)
    sets = {key: set(group["doc_id"]) for key, group in top.groupby(["run_id", "query_id"])}
    for run, a, b, jaccard in zip(*pairs.to_pydict().values(), strict=True):
        left, right = sets[(run, a)], sets[(run, b)]
        assert a < b
        assert jaccard == len(left & right) / len(left | right) >= 0.4
    assert pairs.column("run_id").to_pylist() == sorted(pairs.column("run_id").to_pylist())
    assert set(pairs.column("run_id").to_pylist()) == {"a", "b", "c"}


@pytest.mark.spark
def test_a_repeated_item_is_named_alike_by_both_engines(inputs: Path) -> None:
    options = ["--run", "rep.parquet", "--threshold", "0.5"]
    spark = _similar_users(inputs, "spark-rep", "spark", *options)
    local = _similar_users(inputs, "local-rep", "local", *options)
    assert spark.returncode == local.returncode == EXIT_INPUT, spark.stderr + local.stderr
    assert local.stderr.splitlines()[-1] == spark.stderr.splitlines()[-1]
    assert "appears 2 times in the list of user" in local.stderr
    assert not [p for p in inputs.iterdir() if p.name.endswith("-rep")]


@pytest.mark.spark
def test_a_nan_score_under_a_cut_goes_to_spark(inputs: Path) -> None:
    """``auto`` leaves a NaN score under ``--k`` to Spark, which names it; ``--engine
    local`` refuses it by name."""
    options = ["--run", "nan.parquet", "--threshold", "0.5", "--k", "5"]
    auto = _similar_users(inputs, "auto-nan", "auto", *options)
    local = _similar_users(inputs, "local-nan", "local", *options)
    assert auto.returncode == local.returncode == EXIT_INPUT, auto.stderr + local.stderr
    assert "score is missing or NaN" in auto.stderr.splitlines()[-1]
    assert local.stderr.splitlines()[-1] == (
        "sparkeval similar-users: error: --engine local: nan.parquet: a NaN score under "
        "--k, which Spark's readers judge; use --engine spark (or auto)"
    )
    assert not [p for p in inputs.iterdir() if p.name.endswith("-nan")]


@pytest.mark.parametrize(
    ("run", "named"),
    [
        ("runs.jsonl", "only Parquet, TREC, CSV and TSV inputs are read without Spark"),
        ("unsigned.parquet", "unsigned.parquet: column query_id of type uint32 (Spark reads"),
    ],
)
def test_engine_local_names_what_needs_spark(
    inputs: Path, tmp_path: Path, run: str, named: str
) -> None:
    result = _similar_users(
        inputs, str(tmp_path / "never"), "local", "--run", run, "--threshold", "0.5"
    )
    assert result.returncode == EXIT_INPUT
    last = result.stderr.splitlines()[-1]
    assert last.startswith("sparkeval similar-users: error: --engine local: ")
    assert named in last
    assert not (tmp_path / "never").exists()


def test_a_run_id_not_in_the_table_is_named(inputs: Path, tmp_path: Path) -> None:
    options = ["--run", "runs.csv", "--run-id", "z", "--threshold", "0.5"]
    result = _similar_users(inputs, str(tmp_path / "never"), "local", *options)
    assert result.returncode == EXIT_INPUT
    assert result.stderr.splitlines()[-1] == (
        "sparkeval similar-users: error: --run-id z: runs.csv holds no such run (a, b, c)"
    )
    assert not (tmp_path / "never").exists()


def test_a_small_run_starts_no_jvm_and_imports_no_pyspark(inputs: Path, tmp_path: Path) -> None:
    options = [*CASES["parquet-every-run-k"].split(), "--out", str(tmp_path / "out")]
    result = run_without_java("similar-users", inputs, tmp_path, *options)
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stderr.splitlines()[-1] == "no pyspark"
    assert (tmp_path / "out" / "_SUCCESS").is_file()
