"""``evaluate`` without a JVM (``--engine local``, and ``auto`` on small local inputs).

The outputs are compared byte for byte with a run of the same command on Spark
(``--engine spark``): the files, stdout and the exit code. ``summary.parquet`` is
compared by its rows without ``evaluated_at`` (the time of the run).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from sparkeval.demo_data import generate
from sparkeval.errors import EXIT_INPUT
from tests.jobs import CLI, job_env, run_on_engine, run_without_java, tree, without_java

MEASURES = "official,nDCG@10,P@5,RR,Rprec,bpref,ERR@20"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """Two TREC runs and qrels; the same as Parquet and CSV."""
    directory = tmp_path_factory.mktemp("local-engine")
    generate(directory, queries=40, pool=80, depth=30)
    run = pd.read_csv(
        directory / "run_strong.txt",
        sep=" ",
        header=None,
        names=["query_id", "q0", "doc_id", "rank", "score", "tag"],
        dtype={"query_id": str, "doc_id": str},
    )
    run[["query_id", "doc_id", "score"]].to_parquet(directory / "strong.parquet")
    run[["query_id", "doc_id", "score"]].to_csv(directory / "strong.csv", index=False)
    _near_duplicate_pairs(run, directory)
    return directory


def _near_duplicate_pairs(run: pd.DataFrame, directory: Path) -> None:
    """Pairs of the strong run's docs at ranks 1 and 3 and at ranks 4 and 2 of 20
    queries (one flagged row each), repeated reversed, and a self pair: as text
    (``pairs.txt``, with a comment and a blank line) and as a Parquet directory of two
    parts (``pairs.parquet``)."""
    ranked = run.sort_values(["query_id", "rank"])
    firsts = ranked.groupby("query_id").nth(0).head(20)["doc_id"].tolist()
    thirds = ranked.groupby("query_id").nth(2).head(20)["doc_id"].tolist()
    fourths = ranked.groupby("query_id").nth(3).head(20)["doc_id"].tolist()
    seconds = ranked.groupby("query_id").nth(1).head(20)["doc_id"].tolist()
    pairs = pd.DataFrame(
        {
            "doc_a": [*firsts, *fourths, thirds[0], firsts[0]],
            "doc_b": [*thirds, *seconds, firsts[0], firsts[0]],
        }
    )
    lines = ["# doc_a doc_b", "", *(f"{a}\t{b}" for a, b in pairs.itertuples(index=False))]
    (directory / "pairs.txt").write_text("\n".join(lines) + "\n")
    parts = directory / "pairs.parquet"
    parts.mkdir()
    pairs.iloc[:20].to_parquet(parts / "part-00000.parquet", index=False)
    pairs.iloc[20:].to_parquet(parts / "part-00001.parquet", index=False)


def _evaluate(
    directory: Path, out: str, engine: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_on_engine("evaluate", directory, out, engine, *extra, env=env)


CASES = {
    "trec-two-runs": "--run run_strong.txt run_weak.txt --qrels qrels.txt",
    "parquet-per-query": "--run strong.parquet --qrels qrels.txt --per-query",
    "csv-trec-names": "--run strong.csv --qrels qrels.txt --names trec",
    "depth-and-level": "--run run_medium.txt --qrels qrels.txt --depth 10 --rel-level 2",
    "queries-union": "--run strong.parquet run_weak.txt --qrels qrels.txt --queries union",
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.spark
def test_local_and_spark_engines_write_the_same_bytes(inputs: Path, case: str) -> None:
    options = [*CASES[case].split(), "--measures", MEASURES]
    spark = _evaluate(inputs, f"spark-{case}", "spark", *options)
    local = _evaluate(inputs, f"local-{case}", "auto", *options)
    assert spark.returncode == local.returncode == 0, spark.stderr + local.stderr
    assert "inputs read by this process, without Spark" in local.stderr
    assert "inputs read by this process" not in spark.stderr
    assert local.stdout == spark.stdout
    assert tree(inputs / f"local-{case}") == tree(inputs / f"spark-{case}")


@pytest.mark.slow
@pytest.mark.parametrize("pairs", ["pairs.txt", "pairs.parquet"])
@pytest.mark.spark
def test_near_duplicate_pairs_give_the_same_bytes_on_both_engines(inputs: Path, pairs: str) -> None:
    """The local engine flags the rows as Spark does: the same files and table."""
    options = ["--run", "run_strong.txt", "run_weak.txt", "--qrels", "qrels.txt"]
    options += ["--near-duplicates", pairs, "--measures", f"{MEASURES},NearDup@10"]
    spark = _evaluate(inputs, f"spark-{pairs}", "spark", *options)
    local = _evaluate(inputs, f"local-{pairs}", "auto", *options)
    assert spark.returncode == local.returncode == 0, spark.stderr + local.stderr
    assert "inputs read by this process, without Spark" in local.stderr
    assert local.stdout == spark.stdout
    assert tree(inputs / f"local-{pairs}") == tree(inputs / f"spark-{pairs}")
    summary = json.loads((inputs / f"local-{pairs}" / "summary.json").read_text())
    counts = summary["near_duplicates"]
    assert (counts["pairs_read"], counts["self_pairs_ignored"], counts["repeated_pairs"]) == (
        42,
        1,
        1,
    )
    assert counts["rows_flagged"]["strong"] >= 40  # the 40 pairs' lower-ranked docs at least


def test_a_pairs_line_for_sparks_readers_is_named_by_engine_local(
    inputs: Path, tmp_path: Path
) -> None:
    (tmp_path / "bad_pairs.txt").write_text("d1 d2\nd3\n")
    argv = [*CLI, "evaluate", "--run", "strong.parquet", "--qrels", "qrels.txt", "--measures",
            "AP", "--out", str(tmp_path / "never"), "--engine", "local",
            "--near-duplicates", str(tmp_path / "bad_pairs.txt")]  # fmt: skip
    result = subprocess.run(argv, cwd=inputs, env=job_env(), capture_output=True, text=True)
    assert result.returncode == EXIT_INPUT, result.stderr
    assert "a pairs line without two doc ids" in result.stderr
    assert not (tmp_path / "never").exists()


def test_a_small_run_starts_no_jvm_and_imports_no_pyspark(inputs: Path, tmp_path: Path) -> None:
    env = without_java(tmp_path)
    options = [
        "--run", "run_strong.txt", "--qrels", "qrels.txt", "--measures", MEASURES,
        "--out", str(tmp_path / "out"),
    ]  # fmt: skip
    result = run_without_java("evaluate", inputs, tmp_path, *options)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[-1] == "no pyspark"
    assert (tmp_path / "out" / "_SUCCESS").is_file()
    # the same environment cannot start Spark: the run above did not need it
    spark = _evaluate(
        inputs, str(tmp_path / "spark"), "spark", "--run", "run_strong.txt", "--qrels",
        "qrels.txt", "--measures", "AP", env=env,
    )  # fmt: skip
    assert spark.returncode != 0 and not (tmp_path / "spark").exists()


@pytest.mark.spark
def test_a_malformed_line_gets_the_same_message_and_exit_code(inputs: Path) -> None:
    """The direct readers leave a malformed line to Spark's readers, which name its line:
    ``auto`` goes to Spark for it; ``local`` refuses, naming the file."""
    (inputs / "bad_run.txt").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 one r\n")
    options = ["--run", "bad_run.txt", "--qrels", "qrels.txt", "--measures", "AP"]
    results = {engine: _evaluate(inputs, f"bad-{engine}", engine, *options)
               for engine in ("spark", "auto", "local")}  # fmt: skip
    errors = {
        engine: [line for line in r.stderr.splitlines() if line.startswith("sparkeval evaluate:")]
        for engine, r in results.items()
    }
    assert {engine: r.returncode for engine, r in results.items()} == dict.fromkeys(
        results, EXIT_INPUT
    )
    assert (
        errors["auto"]
        == errors["spark"]
        == [
            "sparkeval evaluate: error: bad_run.txt:2: malformed line 'q1 Q0 d2 2 one r': "
            "expected 'qid Q0 docno rank score tag' with a numeric score"
        ]
    )
    assert errors["local"] == [
        "sparkeval evaluate: error: --engine local: bad_run.txt: a value that is not a plain "
        "decimal number, which Spark's readers judge; use --engine spark (or auto)"
    ]
    assert not [engine for engine in results if (inputs / f"bad-{engine}").exists()]


@pytest.mark.spark
def test_a_value_for_spark_readers_sends_auto_to_spark_and_refuses_local(
    inputs: Path,
) -> None:
    frame = pd.DataFrame({"query_id": ["q1", None], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]})
    frame.to_parquet(inputs / "null_query.parquet")
    options = ["--run", "null_query.parquet", "--qrels", "qrels.txt", "--measures", "AP"]
    auto = _evaluate(inputs, "null-auto", "auto", *options)
    local = _evaluate(inputs, "null-local", "local", *options)
    assert "the inputs are read by Spark instead" in auto.stderr
    assert auto.returncode == EXIT_INPUT  # Spark's readers name the null id
    assert local.returncode == EXIT_INPUT
    assert (
        local.stderr.strip()
        .splitlines()[-1]
        .startswith("sparkeval evaluate: error: --engine local:")
    )
    assert not (inputs / "null-local").exists()


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        (["--where", "score > 1"], "--where"),
        (["--reader", "spark"], "--reader spark"),
        (["--relevance", "all"], "relevance rule"),
    ],
)
def test_engine_local_names_what_needs_spark_before_any_work(
    inputs: Path, extra: list[str], why: str
) -> None:
    argv = [*CLI, "evaluate", "--run", "strong.parquet", "--qrels", "qrels.txt", "--measures",
            "AP", "--out", "never", "--engine", "local", *extra]  # fmt: skip
    result = subprocess.run(argv, cwd=inputs, env=job_env(), capture_output=True, text=True)
    assert result.returncode == EXIT_INPUT
    assert result.stderr.startswith("sparkeval evaluate: error: --engine local: ")
    assert why in result.stderr
    assert not (inputs / "never").exists()


@pytest.mark.spark
def test_a_null_run_id_names_its_file_in_both_engines(inputs: Path) -> None:
    frame = pd.DataFrame(
        {
            "run_id": ["a", None],
            "query_id": ["q1", "q1"],
            "doc_id": ["d1", "d2"],
            "score": [1.0, 2.0],
        }
    )
    frame.to_parquet(inputs / "null_run_id.parquet")
    options = ["--run", "null_run_id.parquet", "--qrels", "qrels.txt", "--measures", "AP"]
    for engine in ("spark", "auto"):  # auto: the direct readers leave nulls to Spark's
        result = _evaluate(inputs, f"null-run-{engine}", engine, *options)
        assert result.returncode == EXIT_INPUT, result.stderr
        assert (
            result.stderr.strip()
            .splitlines()[-1]
            .startswith("sparkeval evaluate: error: null_run_id.parquet: run row with empty run_id")
        ), (engine, result.stderr[-1000:])
