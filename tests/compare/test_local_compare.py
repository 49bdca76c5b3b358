"""``compare`` without a JVM (``--engine local``, and ``auto`` on small local inputs).

Each case runs the same command on Spark (``--engine spark``) and with ``auto`` (which
takes the local engine) and compares everything they wrote: ``comparison.parquet``,
``deltas.parquet``, ``rank_distance.parquet`` (which the Spark driver collects and
writes as the local engine does), ``summary.json``, ``report.html``, ``report.md`` byte
for byte, ``summary.parquet`` by its rows without ``evaluated_at``; stdout, the gate's
stderr lines and the exit code. The local engine must not import pyspark.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.errors import EXIT_GATE, EXIT_INPUT, EXIT_OK
from tests.jobs import CLI, collection, job_env, run_on_engine, run_without_java, tree

#: the outputs Spark's DataFrame writer writes (other bytes than pyarrow's, the same rows)
#: the tables the Spark driver collects and writes as the local engine does (at most
#: ``sparkeval.output.DRIVER_WRITE_ROWS`` rows)
DRIVER_WRITTEN = ("deltas.parquet", "rank_distance.parquet")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """An ``evaluate`` output of three TREC runs (30 queries, four measures); the same
    per-query rows with undefined values and missing queries as a directory of two
    Parquet parts; two runs of ten queries; a value that is NaN."""
    directory = tmp_path_factory.mktemp("local-compare")
    config = collection(directory)
    evaluate = [*CLI, "evaluate", "--engine", "local", "--config", str(config)]
    done = subprocess.run(
        [*evaluate, "--out", "eval"], cwd=directory, env=job_env(), capture_output=True, text=True
    )
    assert done.returncode == EXIT_OK, done.stderr
    rows = pd.read_parquet(directory / "eval" / "per_query.parquet")
    _undefined_and_unpaired(rows, directory / "holes")
    two = rows[rows["run_id"].isin(["strong", "weak"]) & (rows["query_id"] <= "q010")]
    two.to_parquet(directory / "two.parquet", index=False)
    nan = pa.Table.from_pandas(rows, preserve_index=False).to_pydict()
    where = (rows["run_id"] == "weak") & (rows["query_id"] == "q007") & (rows["measure"] == "AP")
    values = np.where(where, np.nan, rows["value"].to_numpy())
    nan["value"] = pa.array(values, pa.float64())  # a NaN, not a null (as pandas writes it)
    pq.write_table(pa.table(nan), directory / "nan.parquet")
    return directory


def _undefined_and_unpaired(rows: pd.DataFrame, directory: Path) -> None:
    """``rows`` with null values on some queries (on one side, or both), a query only
    the baseline has and one only a run has, written as two Parquet parts."""
    holes = rows.copy()
    undefined = holes["query_id"].isin(["q003", "q011"]) & (holes["measure"] == "AP")
    holes.loc[undefined & (holes["run_id"] != "medium"), "value"] = None
    holes.loc[(holes["query_id"] == "q020") & (holes["run_id"] == "strong"), "value"] = None
    holes = holes[~((holes["query_id"] == "q005") & (holes["run_id"] == "weak"))]
    holes = holes[~((holes["query_id"] == "q006") & (holes["run_id"] == "medium"))]
    directory.mkdir()
    table = pa.Table.from_pandas(holes, preserve_index=False)
    half = table.num_rows // 2
    pq.write_table(table.slice(0, half), directory / "part-00000.parquet")
    pq.write_table(table.slice(half), directory / "part-00001.parquet")


def _compare(
    directory: Path, out: str, engine: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_on_engine("compare", directory, out, engine, *extra, env=env)


CASES = {
    # two runs, ten queries: the randomization test enumerates every sign vector
    "two-runs-exact": "--per-query two.parquet --baseline weak --permutations 2048 "
    "--bootstrap 500 --seed 3",
    # three runs, undefined values and unpaired queries, Holm across the two runs,
    # Monte-Carlo randomization and bootstrap with a seed; rank distances and exposure
    "three-runs-holes-rank-distance": "--per-query holes --baseline medium "
    "--measures nDCG@10,AP,P@5 --permutations 700 --bootstrap 400 --seed 11 "
    "--runs run_strong.txt run_medium.txt run_weak.txt --k 5 --depth 12 --rbo-p 0.8 "
    "--fail-if nDCG@10<0.01 --extra-summary eval",
    # a failed gate under --quiet: exit code 3, one stderr line per failed condition
    "failed-gate-quiet": "--per-query eval --baseline strong --run weak "
    "--permutations 300 --bootstrap 200 --seed 7 --quiet "
    "--fail-if 'nDCG@10 drop > 1% p<0.5'",
}

#: each case's exit code
EXIT = {
    "two-runs-exact": EXIT_OK,
    "three-runs-holes-rank-distance": EXIT_OK,
    "failed-gate-quiet": EXIT_GATE,
}


@pytest.fixture(scope="module")
def engines(inputs: Path) -> dict[str, tuple[subprocess.CompletedProcess[str], ...]]:
    """Each case run once on Spark and once by ``auto`` (the local engine)."""
    import shlex

    ran = {}
    for case, options in CASES.items():
        argv = shlex.split(options)
        spark = _compare(inputs, f"spark-{case}", "spark", *argv)
        local = _compare(inputs, f"local-{case}", "auto", *argv)
        ran[case] = (spark, local)
    return ran


def _table(path: Path) -> pa.Table:
    """A Parquet output's rows, in their order, under its schema without metadata."""
    table = pq.read_table(path)
    return table.replace_schema_metadata(None)


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(CASES))
def test_local_and_spark_engines_write_the_same_outputs(
    inputs: Path, engines: dict, case: str
) -> None:
    spark, local = engines[case]
    assert spark.returncode == local.returncode == EXIT[case], spark.stderr + local.stderr
    assert local.stdout == spark.stdout
    assert len(local.stdout.splitlines()) > 1
    spark_out, local_out = inputs / f"spark-{case}", inputs / f"local-{case}"
    for name in DRIVER_WRITTEN:
        if (spark_out / name).exists():  # Spark's rows, collected and written by its driver
            assert _table(local_out / name).num_rows == _table(spark_out / name).num_rows > 0
    kept = tree(spark_out)  # every file byte for byte (summary.parquet by its rows)
    assert tree(local_out) == kept
    assert {"comparison.parquet", "summary.json", "report.html", "report.md"} <= set(kept)


@pytest.mark.slow
@pytest.mark.spark
def test_the_cases_cover_what_they_say(inputs: Path, engines: dict) -> None:
    """Undefined and unpaired queries, Holm over two runs, exact and Monte-Carlo
    randomization, rank distances, and the failed gate's one stderr line."""
    summary = json.loads(
        (inputs / "local-three-runs-holes-rank-distance" / "summary.json").read_text()
    )
    ap = summary["comparison"]["strong"]["AP"]
    # q003, q011 and q020 undefined for strong; q006 not in the baseline; q005 not in weak
    assert ap["n_undefined"] == 3 and ap["n_run_only"] == 1 and ap["n_baseline_only"] == 0
    weak = summary["comparison"]["weak"]["nDCG@10"]
    assert weak["n_baseline_only"] == 1 and weak["n_run_only"] == 1 and weak["n_undefined"] == 0
    assert summary["comparison"]["strong"]["nDCG@10"]["n_queries"] == 28
    assert summary["runs"]["weak"]["measures"]["AP"]["n_undefined"] == 2
    assert set(summary["rank_distance"]["runs"]) == {"strong", "weak"}
    assert summary["exposure"]["vs_baseline"]["weak"]["js"] > 0
    table = pd.read_parquet(inputs / "local-three-runs-holes-rank-distance" / "comparison.parquet")
    assert not table["randomization_exact"].any()
    held = table[table["measure"] == "P@5"]
    assert (held["p_randomization_holm"] >= held["p_randomization"]).all()
    assert (held["p_randomization_holm"] > held["p_randomization"]).any()
    two = pd.read_parquet(inputs / "local-two-runs-exact" / "comparison.parquet")
    assert two["randomization_exact"].all()
    spark, local = engines["failed-gate-quiet"]
    assert local.stderr == spark.stderr
    assert local.stderr.splitlines() == [
        "sparkeval compare: gate failed: " + _failure(inputs / "local-failed-gate-quiet")
    ]


def _failure(out: Path) -> str:
    failures = json.loads((out / "summary.json").read_text())["gate"]["failures"]
    assert len(failures) == 1
    return failures[0]["message"]


@pytest.mark.spark
def test_a_nan_value_and_a_duplicate_row_are_named_alike(inputs: Path) -> None:
    """A NaN value of a compared run is named by both engines; a NaN in a run that is
    not compared is no error on either; a duplicate row is named alike."""
    options = ["--per-query", "nan.parquet", "--baseline", "strong", "--permutations", "50"]
    spark = _compare(inputs, "spark-nan", "spark", *options, "--bootstrap", "50")
    local = _compare(inputs, "local-nan", "local", *options, "--bootstrap", "50")
    assert spark.returncode == local.returncode == EXIT_INPUT, spark.stderr + local.stderr
    assert local.stderr.splitlines()[-1] == spark.stderr.splitlines()[-1]
    assert "run weak query q007 measure AP: value NaN is not a finite number" in local.stderr
    others = [*options, "--run", "medium", "--bootstrap", "50"]
    spark = _compare(inputs, "spark-nan-elsewhere", "spark", *others)
    local = _compare(inputs, "local-nan-elsewhere", "local", *others)
    assert spark.returncode == local.returncode == EXIT_OK, spark.stderr + local.stderr
    assert local.stdout == spark.stdout
    rows = pd.read_parquet(inputs / "two.parquet")
    pd.concat([rows, rows.iloc[[4]]]).to_parquet(inputs / "twice.parquet", index=False)
    options = ["--per-query", "twice.parquet", "--baseline", "weak", "--quiet"]
    spark = _compare(inputs, "spark-twice", "spark", *options)
    local = _compare(inputs, "local-twice", "local", *options)
    assert spark.returncode == local.returncode == EXIT_INPUT
    assert local.stderr == spark.stderr
    assert "per-query table: duplicate rows for the same key (run_id=" in local.stderr
    left = [p.name for p in inputs.iterdir() if p.name.endswith(("-nan", "-twice"))]
    assert not left


def test_a_missing_column_and_an_unknown_baseline_are_named(inputs: Path, tmp_path: Path) -> None:
    rows = pd.read_parquet(inputs / "two.parquet").rename(columns={"value": "score"})
    rows.to_parquet(tmp_path / "renamed.parquet", index=False)
    result = _compare(
        tmp_path, "out", "local", "--per-query", "renamed.parquet", "--baseline", "weak"
    )
    assert result.returncode == EXIT_INPUT
    assert result.stderr.splitlines()[-1] == (
        "sparkeval compare: error: renamed.parquet: missing column(s) value; expected "
        "run_id, query_id, measure, value (found run_id, query_id, measure, score)"
    )
    result = _compare(
        inputs, str(tmp_path / "never"), "local", "--per-query", "eval", "--baseline", "nope"
    )
    assert result.returncode == EXIT_INPUT
    assert "baseline run 'nope' is not in the per-query table; runs: medium, strong, weak" in (
        result.stderr
    )
    assert not (tmp_path / "never").exists()


def test_engine_local_refuses_what_needs_spark_by_name(inputs: Path, tmp_path: Path) -> None:
    rows = pd.read_parquet(inputs / "two.parquet")
    rows["query_id"] = rows["query_id"].str[1:].astype(float)  # ids Spark's check refuses
    rows.to_parquet(tmp_path / "float-ids.parquet", index=False)
    result = _compare(
        tmp_path,
        str(tmp_path / "never"),
        "local",
        "--per-query",
        "float-ids.parquet",
        "--baseline",
        "weak",
    )
    assert result.returncode == EXIT_INPUT
    assert result.stderr.startswith("sparkeval compare: error: --engine local: ")
    assert "column query_id of type double, which Spark's readers judge" in result.stderr
    pd.DataFrame({"run_id": ["a"], "query_id": ["q"], "doc_id": ["d"], "score": [1.0]}).to_json(
        tmp_path / "runs.jsonl", orient="records", lines=True
    )
    result = _compare(
        inputs,
        str(tmp_path / "never"),
        "local",
        "--per-query",
        "eval",
        "--baseline",
        "weak",
        "--runs",
        str(tmp_path / "runs.jsonl"),
    )
    assert result.returncode == EXIT_INPUT
    assert "--engine local: only Parquet, TREC, CSV and TSV run tables" in result.stderr
    assert not (tmp_path / "never").exists()


def test_a_small_comparison_starts_no_jvm_and_imports_no_pyspark(
    inputs: Path, tmp_path: Path
) -> None:
    options = [
        "--per-query",
        "holes",
        "--baseline",
        "medium",
        "--permutations",
        "100",
        "--bootstrap",
        "100",
        "--run",
        "strong",
        "--runs",
        "run_strong.txt",
        "run_medium.txt",
    ]
    result = run_without_java("compare", inputs, tmp_path, *options, "--out", str(tmp_path / "out"))
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stderr.splitlines()[-1] == "no pyspark"
    assert (tmp_path / "out" / "_SUCCESS").is_file()
    assert (tmp_path / "out" / "rank_distance.parquet").is_dir()
