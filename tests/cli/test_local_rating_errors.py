"""``rating-errors`` without a JVM (``--engine local``, and ``auto`` on small local inputs).

Each case runs the command twice in this process, once on the tests' Spark session
(``--engine spark``) and once without it (``--engine local``), and compares the exit
codes, stdout and the files byte for byte (``summary.parquet`` by its rows without
``evaluated_at``, :func:`tests.jobs.tree`). The expected values themselves are checked
against independent formulas in ``tests/rating``; here the two engines must agree to
the bit.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT, EXIT_OK
from tests.jobs import run_without_java, tree

MEASURES = "RMSE,MAE,R2,ExpVar,MaxAE,TopL_AE(L=3),Lp(p=inf)"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """Predictions and ratings of 60 users in CSV, TSV, text and Parquet (a file, and a
    directory of two parts), with pairs on one side only in ``*_gaps`` files."""
    directory = tmp_path_factory.mktemp("local-ratings")
    rng = random.Random(11)
    pred_rows, truth_rows = [], []
    for user in range(60):
        for item in rng.sample(range(50), rng.randint(1, 9)):
            pred_rows.append((f"u{user:03d}", f"i{item}", round(rng.uniform(0.5, 5.0), 6)))
            truth_rows.append((f"u{user:03d}", f"i{item}", float(rng.randint(1, 5))))
    pred = pd.DataFrame(pred_rows, columns=["userID", "itemID", "prediction"])
    truth = pd.DataFrame(truth_rows, columns=["user", "item", "rating"])
    pred.to_csv(directory / "pred.csv", index=False)
    truth.to_csv(directory / "truth.tsv", sep="\t", index=False)
    with open(directory / "truth.txt", "w") as text:
        text.write("# user item rating timestamp\n")
        for user, item, rating in truth_rows:
            text.write(f"{user}\t{item}  {rating:g} 1700000000\n")
    numbered = pred.assign(userID=pred["userID"].str[1:].astype("int64"))
    numbered.to_parquet(directory / "pred_int_users.parquet", index=False)
    truth.assign(user=truth["user"].str[1:].astype("int64")).to_parquet(
        directory / "truth_int_users.parquet", index=False
    )
    parts = directory / "pred_parts"
    parts.mkdir()
    half = len(pred) // 2
    renamed = pred.rename(columns={"prediction": "p"})
    pq.write_table(pa.Table.from_pandas(renamed[:half]), parts / "part-0.parquet")
    pq.write_table(pa.Table.from_pandas(renamed[half:]), parts / "part-1.parquet")
    (parts / "_SUCCESS").write_text("")
    truth.astype({"rating": str}).to_parquet(directory / "truth_text_values.parquet")
    pred.iloc[3:].to_csv(directory / "pred_gaps.csv", index=False)
    truth.iloc[:-5].to_csv(directory / "truth_gaps.tsv", sep="\t", index=False)
    return directory


CASES = {
    "csv-and-tsv": ["--predictions", "pred.csv", "--truth", "truth.tsv"],
    "csv-and-text": ["--predictions", "pred.csv", "--truth", "truth.txt"],
    "integer-user-ids": [
        "--predictions", "pred_int_users.parquet", "--truth", "truth_int_users.parquet",
    ],
    "directory-and-text-values": [
        "--predictions", "pred_parts", "--truth", "truth_text_values.parquet",
        "--columns", "prediction=p",
    ],
    "pairs-skipped": [
        "--predictions", "pred_gaps.csv", "--truth", "truth_gaps.tsv", "--missing", "skip",
    ],
}  # fmt: skip


def _run(inputs: Path, capsys, out: str, engine: str, options: list[str]) -> tuple[int, str]:
    argv = ["rating-errors", *options, "--measures", MEASURES, "--out", str(inputs / out)]
    code = main([*argv, "--engine", engine])
    return code, capsys.readouterr().out


@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(CASES))
def test_local_and_spark_engines_write_the_same_bytes(
    spark, inputs: Path, capsys, monkeypatch, case: str
) -> None:
    monkeypatch.chdir(inputs)
    spark_code, spark_out = _run(inputs, capsys, f"spark-{case}", "spark", CASES[case])
    local_code, local_out = _run(inputs, capsys, f"local-{case}", "local", CASES[case])
    assert spark_code == local_code == EXIT_OK
    assert local_out == spark_out
    assert "RMSE_per_user" in local_out
    local, on_spark = tree(inputs / f"local-{case}"), tree(inputs / f"spark-{case}")
    assert sorted(local) == [
        "_SUCCESS", "per_user.parquet/part-00000.parquet", "summary.json", "summary.parquet",
    ]  # fmt: skip
    assert local == on_spark


def test_a_small_rating_job_starts_no_jvm_and_imports_no_pyspark(
    inputs: Path, tmp_path: Path
) -> None:
    options = ["--predictions", "pred.csv", "--truth", "truth.tsv", "--out", str(tmp_path / "out")]
    result = run_without_java("rating-errors", inputs, tmp_path, *options)  # no Java here
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stderr.splitlines()[-1] == "no pyspark"
    assert (tmp_path / "out" / "_SUCCESS").is_file()
    assert "RMSE" in result.stdout


@pytest.mark.parametrize(
    ("files", "missing", "why"),
    [
        (("pred_gaps.csv", "truth.tsv"), "error", "a pair on one side only"),
        (("pred_dup.csv", "truth.tsv"), "error", "a (user, item) pair given twice"),
        (("pred_text.csv", "truth.tsv"), "error", "a value that is not a plain decimal number"),
        (("pred.csv", "truth_none.tsv"), "skip", "no pair on both sides"),
    ],
)
def test_engine_local_refuses_what_spark_must_judge_and_writes_nothing(
    inputs: Path, capsys, files: tuple[str, str], missing: str, why: str
) -> None:
    pred = (inputs / "pred.csv").read_text()
    (inputs / "pred_dup.csv").write_text(pred + pred.splitlines()[1] + "\n")
    (inputs / "pred_text.csv").write_text(pred + "u999,i1,high\n")
    (inputs / "truth_none.tsv").write_text("user\titem\trating\nnobody\tnothing\t3\n")
    out = inputs / f"never-{files[0]}-{files[1]}"
    argv = ["rating-errors", "--predictions", str(inputs / files[0]), "--truth"]
    argv += [str(inputs / files[1]), "--out", str(out), "--engine", "local"]
    assert main([*argv, "--missing", missing]) == EXIT_INPUT
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("sparkeval rating-errors: error: --engine local: "), error
    assert why in error and error.endswith("use --engine spark (or auto)"), error
    assert not out.exists()


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        (["--measures", "Lp(p=3)"], "Lp(p=3)"),
        (["--format", "jsonl"], "JSON Lines"),
        (["--append-to", "db.history"], "--append-to a catalog table"),
    ],
)
def test_engine_local_names_what_needs_spark_before_any_work(
    inputs: Path, capsys, extra: list[str], why: str
) -> None:
    out = inputs / "never"
    argv = ["rating-errors", "--predictions", str(inputs / "pred.csv"), "--truth"]
    argv += [str(inputs / "truth.tsv"), "--out", str(out), "--engine", "local", *extra]
    assert main(argv) == EXIT_INPUT
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("sparkeval rating-errors: error: --engine local: "), error
    assert why in error
    assert not out.exists()


@pytest.mark.slow
@pytest.mark.spark
def test_auto_sends_what_spark_must_judge_to_spark_which_names_it(
    inputs: Path, tmp_path: Path
) -> None:
    shutil.copy(inputs / "pred_gaps.csv", tmp_path)
    shutil.copy(inputs / "truth.tsv", tmp_path)
    argv = [sys.executable, "-m", "sparkeval.cli", "rating-errors", "--predictions",
            "pred_gaps.csv", "--truth", "truth.tsv", "--out", "out"]  # fmt: skip
    result = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert result.returncode == EXIT_INPUT, result.stderr
    assert "a pair on one side only; the inputs are read by Spark instead" in result.stderr
    error = result.stderr.strip().splitlines()[-1]
    # Spark's message: the first missing pair by (user, item)
    assert error.startswith("sparkeval rating-errors: error: 3 true rating(s) have no prediction")
    assert not (tmp_path / "out").exists()
