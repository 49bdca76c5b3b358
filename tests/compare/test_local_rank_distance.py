"""``rank-distance`` without a JVM (``--engine local``, and ``auto`` on small local inputs).

The outputs are compared byte for byte with a run of the same command on Spark
(``--engine spark``): the files, stdout and the exit code; ``summary.parquet`` by its
rows without ``evaluated_at``. The local engine must not import pyspark.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.demo_data import generate
from sparkeval.errors import EXIT_INPUT, EXIT_OK
from tests.jobs import run_on_engine, run_without_java, tree


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """Three TREC runs; the same rows as one Parquet table with a run id column (rows
    shuffled, some scores tied) and as CSV; a run with a NaN score; JSON Lines."""
    directory = tmp_path_factory.mktemp("local-rank-distance")
    generate(directory, queries=30, pool=60, depth=25)
    frames = []
    for name in ("strong", "medium", "weak"):
        run = pd.read_csv(
            directory / f"run_{name}.txt",
            sep=" ",
            header=None,
            names=["query_id", "q0", "doc_id", "rank", "score", "run_id"],
            dtype={"query_id": str, "doc_id": str, "run_id": str},
        )
        frames.append(run[["run_id", "query_id", "doc_id", "score"]])
    table = pd.concat(frames, ignore_index=True).sample(frac=1.0, random_state=7)
    table["score"] = np.round(table["score"], 1)  # ties, broken by doc id
    table.to_parquet(directory / "runs.parquet", index=False, row_group_size=500)
    table.to_csv(directory / "runs.csv", index=False)
    table.head(200).to_json(directory / "runs.jsonl", orient="records", lines=True)
    broken = table.copy()
    broken.iloc[17, broken.columns.get_loc("score")] = np.nan
    broken.to_parquet(directory / "broken.parquet", index=False)
    return directory


def _rank_distance(
    directory: Path, out: str, engine: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_on_engine("rank-distance", directory, out, engine, *extra, env=env)


CASES = {
    "trec-three-runs": "--runs run_strong.txt run_medium.txt run_weak.txt --baseline strong "
    "--k 5 --depth 20",
    "parquet-ties-one-run": "--runs runs.parquet --baseline medium --run weak --k 10",
    "csv-rbo": "--runs runs.csv --baseline weak --k 3 --depth 8 --rbo-p 0.8",
}


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(CASES))
def test_local_and_spark_engines_write_the_same_bytes(inputs: Path, case: str) -> None:
    options = CASES[case].split()
    spark = _rank_distance(inputs, f"spark-{case}", "spark", *options)
    local = _rank_distance(inputs, f"local-{case}", "auto", *options)
    assert spark.returncode == local.returncode == EXIT_OK, spark.stderr + local.stderr
    assert local.stdout == spark.stdout
    assert tree(inputs / f"local-{case}") == tree(inputs / f"spark-{case}")


@pytest.mark.spark
def test_a_missing_score_gets_the_same_message_on_both_engines(inputs: Path) -> None:
    """A null score is left to Spark's readers by the direct ones: ``auto`` runs the
    command on Spark, whose message names the row, and ``--engine local`` refuses it by
    name; a NaN score is named alike by both engines."""
    options = ["--runs", "broken.parquet", "--baseline", "strong"]
    spark = _rank_distance(inputs, "spark-broken", "spark", *options)
    auto = _rank_distance(inputs, "auto-broken", "auto", *options)
    local = _rank_distance(inputs, "local-broken", "local", *options)
    assert spark.returncode == auto.returncode == local.returncode == EXIT_INPUT
    assert "broken.parquet: query" in spark.stderr
    assert auto.stderr.splitlines()[-1] == spark.stderr.splitlines()[-1]
    assert "column score has nulls, which Spark's readers judge" in local.stderr
    nan = pa.table(
        {
            "run_id": ["strong", "weak"],
            "query_id": ["q1", "q1"],
            "doc_id": ["d1", "d2"],
            "score": pa.array([1.0, float("nan")], pa.float64()),  # a NaN, not a null
        }
    )
    pq.write_table(nan, inputs / "nan.parquet")
    options = ["--runs", "nan.parquet", "--baseline", "strong"]
    spark = _rank_distance(inputs, "spark-nan", "spark", *options)
    local = _rank_distance(inputs, "local-nan", "local", *options)
    assert spark.returncode == local.returncode == EXIT_INPUT, spark.stderr + local.stderr
    assert local.stderr.splitlines()[-1] == spark.stderr.splitlines()[-1]
    assert "score is missing or NaN" in local.stderr
    left = [p.name for p in inputs.iterdir() if p.name.endswith(("-broken", "-nan"))]
    assert not left


def test_a_small_run_starts_no_jvm_and_imports_no_pyspark(inputs: Path, tmp_path: Path) -> None:
    options = [*CASES["trec-three-runs"].split(), "--out", str(tmp_path / "out")]
    result = run_without_java("rank-distance", inputs, tmp_path, *options)
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stderr.splitlines()[-1] == "no pyspark"
    assert (tmp_path / "out" / "_SUCCESS").is_file()


def test_engine_local_names_an_input_for_sparks_readers(inputs: Path, tmp_path: Path) -> None:
    options = ["--runs", "runs.jsonl", "--baseline", "strong"]
    result = _rank_distance(inputs, str(tmp_path / "never"), "local", *options)
    assert result.returncode == EXIT_INPUT
    assert result.stderr.startswith("sparkeval rank-distance: error: --engine local: ")
    assert "only Parquet, TREC, CSV and TSV inputs" in result.stderr
    assert not (tmp_path / "never").exists()
