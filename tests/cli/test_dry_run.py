"""``--dry-run`` checks config, measures, inputs (schemas only) and the output target,
then exits 0 or 2 without starting a JVM, reading data rows or writing anything."""

from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.jobs import job_env

#: runs the CLI in a fresh interpreter and reports whether it started a Spark JVM
PROBE = (
    "import sys\n"
    "from sparkeval.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "spark = sys.modules.get('pyspark')\n"
    "started = spark is not None and spark.SparkContext._active_spark_context is not None\n"
    "print('jvm started' if started else 'no jvm', file=sys.stderr)\n"
    "sys.exit(code)\n"
)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 3.0 r\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    table = pa.table({"qid": ["q1"], "docno": ["d1"], "prediction": [1.0]})
    pq.write_table(table.drop(["prediction"]), tmp_path / "no_score.parquet")
    pq.write_table(table, tmp_path / "recs.parquet")
    return tmp_path


def dry_run(files: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE, *argv, "--dry-run"],
        cwd=files,
        env=job_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def evaluate(run: str = "run.txt", qrels: str = "qrels.txt", measures: str = "AP,nDCG@10"):
    return ["evaluate", "--run", run, "--qrels", qrels, "--measures", measures, "--out", "out"]


def test_a_good_config_passes_without_a_jvm_and_writes_nothing(files: Path) -> None:
    result = dry_run(files, *evaluate())
    assert result.returncode == 0, result.stderr
    assert "ok  measures: AP, nDCG@10" in result.stdout
    assert "ok  run.txt: TREC text, 6 fields" in result.stdout
    assert "no jvm" in result.stderr
    assert sorted(p.name for p in files.iterdir()) == [
        "no_score.parquet", "qrels.txt", "recs.parquet", "run.txt",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (evaluate(run="missing.txt"), "missing.txt: no such file or directory"),
        (evaluate(run="no_score.parquet"), "missing column 'score'"),
        (evaluate(measures="nDCG@ten"), "measure 'nDCG@ten'"),
        (evaluate(qrels="run.txt"), "is this a run file given as qrels?"),
        (["similar-users", "--run", "gone.csv", "--threshold", "0.5", "--out", "o"], "gone.csv"),
    ],
)
def test_each_problem_is_exit_2_without_a_jvm(files: Path, argv: list[str], fragment: str):
    result = dry_run(files, *argv)
    assert result.returncode == 2, result.stderr
    assert fragment in result.stderr.splitlines()[0], result.stderr
    assert "no jvm" in result.stderr


def test_an_occupied_output_is_exit_2(files: Path) -> None:
    (files / "out").mkdir()
    (files / "out" / "old.txt").write_text("an earlier result\n")
    result = dry_run(files, *evaluate())
    assert result.returncode == 2
    assert "pass --overwrite" in result.stderr


def test_an_output_being_written_is_exit_2_naming_the_writer(files: Path) -> None:
    with open(files / ".out.lock", "w") as lock:
        lock.write("process 4242 on builder\n")
        lock.flush()
        fcntl.flock(lock, fcntl.LOCK_EX)
        result = dry_run(files, *evaluate(), "--overwrite")
    assert result.returncode == 2
    assert "is being written by process 4242 on builder" in result.stderr


def test_another_command_checks_its_inputs_too(files: Path) -> None:
    result = dry_run(files, "similar-users", "--run", "recs.parquet", "--threshold", "0.5")
    assert result.returncode == 2  # --out is required
    result = dry_run(
        files, "similar-users", "--run", "recs.parquet", "--threshold", "0.5", "--out", "o"
    )
    assert result.returncode == 0, result.stderr
    assert "ok  recs.parquet: parquet, columns qid, docno, prediction" in result.stdout


@pytest.fixture
def lists(files: Path) -> Path:
    """Run, training and item feature tables of the list commands, good and bad."""
    runs = pa.table({"run_id": ["A", "B"], "user": ["u1", "u2"], "item": ["i1", "i2"]})
    pq.write_table(runs, files / "runs.parquet")
    pq.write_table(runs.drop(["run_id"]), files / "one_run.parquet")
    pq.write_table(pa.table({"user": ["u1"], "item": [1.5]}), files / "float_items.parquet")
    pq.write_table(pa.table({"user": ["u1"], "item": ["i1"]}), files / "train.parquet")
    vectors = pa.array([[1.0, 0.0]], pa.list_(pa.float64()))
    pq.write_table(pa.table({"item_id": ["i1"], "vector": vectors}), files / "features.parquet")
    pq.write_table(pa.table({"item_id": ["i1"], "tags": ["a b"]}), files / "tags.parquet")
    pq.write_table(pa.table({"item_id": ["i1"], "features": ["a b"]}), files / "text.parquet")
    (files / "features.csv").write_text("item_id,features\ni1,1\n")
    (files / "features.jsonl").write_text('{"item_id": "i1", "labels": "a"}\n')
    (files / "labels.jsonl").write_text('{"item_id": "i1", "labels": ["a", "b"]}\n')
    return files


def diversity(*extra: str) -> list[str]:
    return ["diversity", "--run", "runs.parquet", "--train", "train.parquet", *extra, "--out", "o"]


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (
            diversity("--item-features", "tags.parquet"),
            "tags.parquet: missing column 'features' for this table (accepted names: features, "
            "feature, vector, labels); columns are: item_id, tags",
        ),
        (
            diversity("--item-features", "text.parquet"),
            "text.parquet: column features (features) must be an array (a numeric vector or "
            "labels), got string",
        ),
        (diversity("--item-features", "features.csv"), "features.csv: column features"),
        (diversity("--item-features", "features.jsonl"), "got a JSON string on line 1"),
        (diversity("--similarity", "cosine"), "--similarity cosine needs --item-features"),
        (diversity("--train", "run.txt"), "run.txt: not a table"),
        (diversity("--k", "3"), "runs.parquet: missing column 'score'"),
        (diversity("--run", "float_items.parquet"), "id column item has type double"),
        (
            diversity("--run", "one_run.parquet", "--run-id", "A"),
            "--run-id A given but one_run.parquet has no run_id column",
        ),
        (
            ["similar-users", "--run", "recs.parquet", "--threshold", "0.5", "--run-id", "A"],
            "--run-id A given but recs.parquet has no run_id column",
        ),
        (
            ["similar-users", "--run", "runs.parquet", "--threshold", "0.5"],
            "runs.parquet: missing column 'score'",
        ),
    ],
)
def test_the_list_commands_check_what_their_read_checks(lists: Path, argv: list[str], fragment):
    """What the real run refuses once Spark has started is refused here before it."""
    result = dry_run(lists, *argv, *([] if "--out" in argv else ["--out", "o"]))
    assert result.returncode == 2, result.stdout + result.stderr
    assert fragment in result.stderr.splitlines()[0], result.stderr
    assert "no jvm" in result.stderr


def test_the_list_commands_pass_what_their_read_takes(lists: Path) -> None:
    result = dry_run(lists, *diversity("--item-features", "features.parquet"))
    assert result.returncode == 0, result.stderr
    assert (
        "ok  runs.parquet: parquet, columns run_id, user, item "
        "(query_id=user, doc_id=item, run_id=run_id)" in result.stdout
    )
    assert "ok  features.parquet: parquet, columns item_id, vector (doc_id=item_id, " in (
        result.stdout
    )
    result = dry_run(lists, *diversity("--item-features", "labels.jsonl", "--run-id", "B"))
    assert result.returncode == 0, result.stderr
    assert "ok  labels.jsonl: jsonl" in result.stdout


def test_quiet_leaves_only_the_results(files: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *evaluate(measures="P@1"), "--quiet"],
        cwd=files,
        env=job_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "sparkeval:" not in result.stderr
    assert result.stdout.splitlines()[-1].startswith("P@1")
