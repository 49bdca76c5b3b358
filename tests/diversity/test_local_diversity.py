"""``diversity`` without a JVM (``--engine local``, and ``auto`` on small local inputs).

Each case runs once on Spark (``--engine spark``, in this process's session: one JVM
for the module) and once in a subprocess on the local engine; the two must give the
same files byte for byte (``per_user.parquet``, which the Spark driver collects and
writes as the local engine does, and ``summary.json``, which holds no timings;
``summary.parquet`` by its rows without ``evaluated_at``), the same stdout and the same
exit code. Every value compares exactly:
the local engine adds the same fixed-point terms, takes Java's logarithm and sums
vectors left to right as Spark does. The local engine must not import pyspark.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT, EXIT_OK
from tests.jobs import run_on_engine, run_without_java, tree

USERS = [f"u{i:02d}" for i in range(20)]
ITEMS = [f"i{i:03d}" for i in range(60)]


def _runs(rng: np.random.Generator) -> pd.DataFrame:
    """Three runs of 20 users, lists of 3 to 11 items, scores rounded (ties), a
    relevance column (``rating``); run ``pop`` draws from the first 30 items."""
    rows = []
    for run in ("als", "pop", "rand"):
        for user in USERS:
            pool = ITEMS[:30] if run == "pop" else ITEMS
            for item in rng.choice(pool, int(rng.integers(3, 12)), replace=False):
                score = float(np.round(rng.random(), 1))
                rows.append((run, user, item, score, int(rng.integers(0, 4))))
    frame = pd.DataFrame(rows, columns=["run_id", "user_id", "item_id", "score", "rating"])
    return frame.sample(frac=1.0, random_state=3)


def _write_inputs(directory: Path) -> None:
    rng = np.random.default_rng(11)
    runs = _runs(rng)
    runs.to_parquet(directory / "runs.parquet", index=False, row_group_size=100)
    # a training user the lists do not have; items 55-59 never trained on
    train = pd.DataFrame(
        {"user_id": rng.choice([*USERS, "u99"], 300), "item_id": rng.choice(ITEMS[:55], 300)}
    )
    train.to_parquet(directory / "train.parquet", index=False)
    # numeric vectors: a zero vector; the last three items have none
    vectors = {item: rng.integers(0, 3, 6).astype(float) for item in ITEMS[:-3]}
    vectors[ITEMS[0]] = np.zeros(6)
    pd.DataFrame({"item_id": list(vectors), "features": list(vectors.values())}).to_parquet(
        directory / "vectors.parquet", index=False
    )
    # label sets, some empty
    names = ["comedy", "drama", "noir", "sf", "war"]
    labels = [list(rng.choice(names, int(rng.integers(0, 3)), replace=False)) for _ in ITEMS]
    pq.write_table(
        pa.table({"item_id": ITEMS, "labels": pa.array(labels, pa.list_(pa.string()))}),
        directory / "labels.parquet",
    )
    _write_integer_inputs(directory, runs)
    _write_bad_inputs(directory, runs)


def _write_integer_inputs(directory: Path, runs: pd.DataFrame) -> None:
    """Run ``als`` with integer ids (users int64, items int32: item 9 sorts after 10
    as text, which breaks the ties of the top-k cut), without relevance; training
    rows and int32 feature vectors by the same ids."""
    als = runs[runs["run_id"] == "als"]
    table = pa.table(
        {
            "user": pa.array(als["user_id"].str[1:].astype("int64")),
            "item": pa.array(als["item_id"].str[1:].astype("int32")),
            "score": pa.array(als["score"]),
        }
    )
    pq.write_table(table, directory / "als_int.parquet")
    train = pd.read_parquet(directory / "train.parquet")
    pq.write_table(
        pa.table(
            {
                "user": pa.array(train["user_id"].str[1:].astype("int64")),
                "item": pa.array(train["item_id"].str[1:].astype("int32")),
            }
        ),
        directory / "train_int.parquet",
    )
    rng = np.random.default_rng(5)
    vectors = [rng.integers(-1, 2, 4).astype(np.int32) for _ in range(55)]
    items = pa.array(range(55), pa.int32())
    table = pa.table({"item": items, "vector": pa.array(vectors, pa.list_(pa.int32()))})
    pq.write_table(table, directory / "vectors_int.parquet")


def _write_bad_inputs(directory: Path, runs: pd.DataFrame) -> None:
    """An item listed twice in one user's list; a NaN score; features that are not
    arrays; label features with a null label; a CSV run."""
    twice = pd.concat([runs, runs[runs["run_id"] == "pop"].head(1)], ignore_index=True)
    twice.to_parquet(directory / "twice.parquet", index=False)
    unscored = runs.copy()
    unscored.iloc[40, unscored.columns.get_loc("score")] = np.nan
    unscored.to_parquet(directory / "nan_score.parquet", index=False)
    flat = pd.DataFrame({"item_id": ITEMS, "features": np.linspace(0.0, 1.0, len(ITEMS))})
    flat.to_parquet(directory / "flat_features.parquet", index=False)
    pq.write_table(
        pa.table({"item_id": ["i001", "i002"], "labels": [["sf", None], ["war"]]}),
        directory / "null_label.parquet",
    )
    runs.head(50).to_csv(directory / "runs.csv", index=False)


CASES = {
    "lists-three-runs": "--run runs.parquet",
    "run-id-train-ties": "--run runs.parquet --run-id pop --train train.parquet --k 4",
    "cosine-missing-features": "--run runs.parquet --train train.parquet "
    "--item-features vectors.parquet --k 5",
    "jaccard-labels-sampled": "--run runs.parquet --item-features labels.parquet "
    "--similarity jaccard --exact-pair-limit 0 --sample-pairs 500",
    "integer-ids-jaccard": "--run als_int.parquet --train train_int.parquet "
    "--item-features vectors_int.parquet --similarity jaccard --k 6",
    "integer-ids-cosine": "--run als_int.parquet --train train_int.parquet "
    "--item-features vectors_int.parquet --k 3",
    "minhash-labels": "--run runs.parquet --train train.parquet --item-features labels.parquet "
    "--similarity minhash --seed 7",
    "minhash-vector-positions": "--run als_int.parquet --train train_int.parquet "
    "--item-features vectors_int.parquet --similarity minhash --k 6",
    "item-listed-twice": "--run twice.parquet --train train.parquet",
    "nan-score": "--run nan_score.parquet --k 3",
    "features-not-arrays": "--run runs.parquet --item-features flat_features.parquet",
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("local-diversity")
    _write_inputs(directory)
    return directory


def _in_session(directory: Path, argv: list[str]) -> dict[str, Any]:
    """A command line run in this process (on its Spark session under ``--engine
    spark``): exit code, stdout, the error line of stderr (or "")."""
    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.chdir(directory),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main(argv)
    return {"code": code, "stdout": out.getvalue(), "error": _error_line(err.getvalue())}


def _error_line(stderr: str) -> str:
    """The error of a command's stderr (its status lines left out), or ""."""
    errors = [line for line in stderr.splitlines() if line.startswith("sparkeval diversity: ")]
    return errors[-1] if errors else ""


@pytest.fixture(scope="module")
def on_spark(spark, inputs: Path) -> dict[str, dict[str, Any]]:
    """Every case run once on Spark."""
    return {
        case: _in_session(
            inputs, ["diversity", *options.split(), "--out", f"spark-{case}", "--engine", "spark"]
        )
        for case, options in CASES.items()
    }


def _local(directory: Path, out: str, engine: str, *options: str) -> subprocess.CompletedProcess:
    return run_on_engine("diversity", directory, out, engine, *options)


def _per_user(out: Path) -> pa.Table:
    return ds.dataset(out / "per_user.parquet").to_table()


def _assert_same_files(local: Path, spark: Path) -> None:
    """Every file of the two outputs alike, byte for byte (:func:`tests.jobs.tree`),
    ``per_user.parquet`` one part."""
    assert tree(local) == tree(spark)
    assert [p.name for p in (spark / "per_user.parquet").iterdir()] == ["part-00000.parquet"]


@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(CASES))
def test_local_and_spark_engines_give_the_same_outputs(
    inputs: Path, on_spark: dict[str, dict[str, Any]], case: str
) -> None:
    spark = on_spark[case]
    local = _local(inputs, f"local-{case}", "local", *CASES[case].split())
    assert local.returncode == spark["code"], local.stderr
    # the same lines but for the output directory's name
    assert local.stdout.replace(f"local-{case}", f"spark-{case}") == spark["stdout"]
    if spark["code"] != EXIT_OK:
        assert _error_line(local.stderr) == spark["error"] != ""
        assert not (inputs / f"local-{case}").exists()
        return
    mine, theirs = inputs / f"local-{case}", inputs / f"spark-{case}"
    local_table, spark_table = _per_user(mine), _per_user(theirs)
    # the types (the nullable flags too, with the bytes below)
    assert [(f.name, f.type) for f in local_table.schema] == [
        (f.name, f.type) for f in spark_table.schema
    ]
    assert local_table.to_pylist() == spark_table.to_pylist()  # rows, order, every bit
    assert (mine / "summary.json").read_bytes() == (theirs / "summary.json").read_bytes()
    _assert_same_files(mine, theirs)


@pytest.mark.spark
def test_the_cases_cover_what_they_are_named_for(on_spark: dict[str, dict[str, Any]]) -> None:
    """The outputs of the Spark runs hold what the cases are meant to compare."""
    assert on_spark["lists-three-runs"]["stdout"].startswith("diversity: 3 runs;")
    assert "have no --item-features row" in on_spark["cosine-missing-features"]["stdout"]
    assert "appears 2 times in the list of user" in on_spark["item-listed-twice"]["error"]
    assert "score is missing or NaN" in on_spark["nan-score"]["error"]
    assert "column features must be an array" in on_spark["features-not-arrays"]["error"]
    for case in ("item-listed-twice", "nan-score", "features-not-arrays"):
        assert on_spark[case]["code"] == EXIT_INPUT


@pytest.mark.slow
@pytest.mark.spark
def test_auto_sends_what_the_local_reader_leaves_to_spark(inputs: Path, tmp_path: Path) -> None:
    """A null label: ``auto`` runs the command on Spark (the same outputs as
    ``--engine spark``), ``--engine local`` refuses it by name and writes nothing."""
    options = ["--run", "runs.parquet", "--item-features", "null_label.parquet"]
    options += ["--similarity", "jaccard"]
    auto = _local(inputs, str(tmp_path / "auto"), "auto", *options)
    assert auto.returncode == EXIT_OK, auto.stderr
    assert "which Spark's readers judge" not in auto.stderr
    assert "null_label.parquet: a null features array or element" in auto.stderr
    local = _local(inputs, str(tmp_path / "never"), "local", *options)
    assert local.returncode == EXIT_INPUT
    assert local.stderr.startswith("sparkeval diversity: error: --engine local: ")
    assert "null_label.parquet: a null features array or element" in local.stderr
    assert not (tmp_path / "never").exists()


def test_a_csv_run_with_relevance_and_a_quote_is_refused_by_name(
    inputs: Path, tmp_path: Path
) -> None:
    """A CSV run with a relevance column is read here unless Spark's reader judges a
    byte of it (a double quote): ``--engine local`` then names it."""
    lines = (inputs / "runs.csv").read_text().splitlines()
    fields = lines[2].split(",")
    lines[2] = ",".join([fields[0], f'"{fields[1]}"', *fields[2:]])  # the same user, quoted
    (inputs / "quoted_runs.csv").write_text("\n".join(lines) + "\n")
    csv = _local(inputs, str(tmp_path / "csv"), "local", "--run", "quoted_runs.csv")
    assert csv.returncode == EXIT_INPUT
    assert "--engine local: quoted_runs.csv: a double quote" in csv.stderr
    assert not (tmp_path / "csv").exists()


def test_engine_local_refuses_feature_norms_that_overflow(tmp_path: Path) -> None:
    """Vectors of norm 1.4e200 make a product of norms of inf, so a cosine of NaN, which
    Spark's exact means count as a value: the local engine leaves them to Spark."""
    runs = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["a", "b"] * 2})
    runs.to_parquet(tmp_path / "two.parquet", index=False)
    huge = pd.DataFrame({"item_id": ["a", "b"], "features": [[1e200, 1e200], [1e200, 1e200]]})
    huge.to_parquet(tmp_path / "huge.parquet", index=False)
    options = ["--run", "two.parquet", "--item-features", "huge.parquet"]
    result = _local(tmp_path, str(tmp_path / "never"), "local", *options)
    assert result.returncode == EXIT_INPUT, result.stderr
    assert "item feature vectors whose norms overflow a product of doubles" in result.stderr
    assert not (tmp_path / "never").exists()


def test_a_small_run_starts_no_jvm_and_imports_no_pyspark(inputs: Path, tmp_path: Path) -> None:
    options = [*CASES["cosine-missing-features"].split(), "--out", str(tmp_path / "out")]
    result = run_without_java("diversity", inputs, tmp_path, *options)
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stderr.splitlines()[-1] == "no pyspark"
    assert (tmp_path / "out" / "_SUCCESS").is_file()
    assert pq.read_table(tmp_path / "out" / "per_user.parquet").num_rows == 3 * len(USERS)


@pytest.mark.spark
def test_the_local_logarithm_is_sparks_to_the_bit(spark) -> None:
    """Novelty and entropy take ``log2`` of shares: Spark's (Java's ``StrictMath``) and
    :func:`~sparkeval.information.strict_log2` agree on every value, where numpy's
    ``log2`` differs from Spark's in the last bit for some of them."""
    from pyspark.sql import functions as F

    from sparkeval.information import strict_log2

    rng = np.random.default_rng(2)
    counts = rng.integers(1, 10**6, 20_000)
    shares = np.concatenate(
        [counts / rng.integers(10**6, 10**9, 20_000), rng.random(20_000), [5e-324, 1e-310]]
    )
    frame = spark.createDataFrame(pd.DataFrame({"p": shares}))
    theirs = frame.select(F.log2("p").alias("l")).toPandas()["l"].to_numpy()
    assert np.array_equal(strict_log2(shares), theirs)
    assert not np.array_equal(np.log2(shares), theirs)  # the platform's log is not Java's


def _write_text_runs(directory: Path) -> None:
    """The runs of :func:`_runs` (without relevance) as CSV and TSV, run ``als`` as
    TREC text, the training rows and features of :func:`_write_inputs`."""
    _write_inputs(directory)
    runs = _runs(np.random.default_rng(11)).drop(columns="rating")
    runs.to_csv(directory / "text_runs.csv", index=False)
    runs.to_csv(directory / "text_runs.tsv", index=False, sep="\t")
    for name, kept in (("als.trec", ["als"]),):
        lines = [
            f"{row.user_id} Q0 {row.item_id} 0 {row.score} {row.run_id}\n"
            for row in runs[runs["run_id"].isin(kept)].itertuples()
        ]
        (directory / name).write_text("".join(lines))
    _write_text_tables(directory)


def _write_text_tables(directory: Path) -> None:
    """The runs with their relevance (``rating``, a few left empty: null) as TSV; the
    training rows as CSV and TSV, and as CSV with a malformed line (line 7 has an extra
    field)."""
    runs = _runs(np.random.default_rng(11)).astype({"rating": "object"})
    runs.iloc[[3, 17, 40], runs.columns.get_loc("rating")] = ""
    runs.to_csv(directory / "rel_runs.tsv", index=False, sep="\t")
    train = pd.read_parquet(directory / "train.parquet")
    train.to_csv(directory / "train.csv", index=False)
    train.to_csv(directory / "train.tsv", index=False, sep="\t")
    lines = (directory / "train.csv").read_text().splitlines()
    lines[6] += ",extra"
    (directory / "bad_train.csv").write_text("\n".join(lines) + "\n")


TEXT_CASES = {
    "csv-train-cosine": "--run text_runs.csv --train train.parquet "
    "--item-features vectors.parquet --k 5",
    "csv-no-cut": "--run text_runs.csv --train train.parquet",
    "tsv-run-id-jaccard": "--run text_runs.tsv --run-id pop --item-features labels.parquet "
    "--similarity jaccard --k 4",
    "trec-train-ties": "--run als.trec --train train.parquet --k 3",
    "csv-unknown-run-id": "--run text_runs.csv --run-id nope",
    "tsv-relevance-csv-train": "--run rel_runs.tsv --train train.csv "
    "--item-features vectors.parquet --k 4",
    "csv-train-malformed-line": "--run text_runs.csv --train bad_train.csv --k 3",
}


@pytest.fixture(scope="module")
def text_inputs(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("local-diversity-text")
    _write_text_runs(directory)
    return directory


@pytest.fixture(scope="module")
def text_on_spark(spark, text_inputs: Path) -> dict[str, dict[str, Any]]:
    """Every text case run once on Spark."""
    return {
        case: _in_session(
            text_inputs,
            ["diversity", *options.split(), "--out", f"spark-{case}", "--engine", "spark"],
        )
        for case, options in TEXT_CASES.items()
    }


@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(TEXT_CASES))
def test_text_runs_give_the_outputs_of_spark(
    text_inputs: Path, text_on_spark: dict[str, dict[str, Any]], case: str
) -> None:
    """TREC, CSV and TSV runs on the local engine: Spark's files, lines and errors."""
    spark = text_on_spark[case]
    local = _local(text_inputs, f"local-{case}", "local", *TEXT_CASES[case].split())
    assert local.returncode == spark["code"], local.stderr
    assert "which Spark's readers judge" not in local.stderr
    assert local.stdout.replace(f"local-{case}", f"spark-{case}") == spark["stdout"]
    if spark["code"] != EXIT_OK:
        assert _error_line(local.stderr) == spark["error"] != ""
        return
    mine, theirs = text_inputs / f"local-{case}", text_inputs / f"spark-{case}"
    local_table, spark_table = _per_user(mine), _per_user(theirs)
    assert [(f.name, f.type) for f in local_table.schema] == [
        (f.name, f.type) for f in spark_table.schema
    ]
    assert local_table.to_pylist() == spark_table.to_pylist()
    assert (mine / "summary.json").read_bytes() == (theirs / "summary.json").read_bytes()


@pytest.mark.spark
def test_the_text_cases_cover_what_they_are_named_for(
    text_on_spark: dict[str, dict[str, Any]],
) -> None:
    assert text_on_spark["csv-train-cosine"]["stdout"].startswith("diversity: 3 runs;")
    assert text_on_spark["tsv-run-id-jaccard"]["stdout"].startswith("diversity: 20 users,")
    assert text_on_spark["trec-train-ties"]["stdout"].startswith("diversity: 20 users,")
    assert "nope" in text_on_spark["csv-unknown-run-id"]["error"]
    relevance = text_on_spark["tsv-relevance-csv-train"]["stdout"]
    assert relevance.startswith("diversity: 3 runs;")
    malformed = text_on_spark["csv-train-malformed-line"]["error"]
    assert "bad_train.csv:7: malformed line 'u" in malformed
    assert malformed.endswith(
        ",extra': expected 2 comma separated fields (user_id, item_id) with balanced quotes"
    )


def test_a_csv_run_starts_no_jvm_and_imports_no_pyspark(text_inputs: Path, tmp_path: Path) -> None:
    options = ["--run", "text_runs.csv", "--train", "train.parquet", "--k", "5"]
    result = run_without_java("diversity", text_inputs, tmp_path, *options, "--out", "nojvm")
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stderr.splitlines()[-1] == "no pyspark"
    table = pq.read_table(text_inputs / "nojvm" / "per_user.parquet")
    assert table.num_rows == 3 * len(USERS)
    assert table.schema.field("query_id").type == pa.string()


def test_engine_local_refuses_csv_features_by_name(text_inputs: Path, tmp_path: Path) -> None:
    """Item features in CSV (never an array, typed by Spark's inference) stay with
    Spark's reader: named under ``--engine local``; CSV and TSV training rows do not."""
    pd.read_parquet(text_inputs / "vectors.parquet").head(3).to_csv(
        text_inputs / "vectors.csv", index=False
    )
    options = ["--run", "text_runs.csv", "--train", "train.tsv", "--item-features", "vectors.csv"]
    local = _local(text_inputs, str(tmp_path / "never"), "local", *options)
    assert local.returncode == EXIT_INPUT
    assert "--item-features only as Parquet" in local.stderr
    assert not (tmp_path / "never").exists()


def test_a_tsv_train_starts_no_jvm(text_inputs: Path, tmp_path: Path) -> None:
    """TSV training rows and a TSV run with a relevance column: read here, no pyspark;
    the same rows as from the Parquet training file."""
    options = ["--run", "rel_runs.tsv", "--k", "5", "--train"]
    result = run_without_java("diversity", text_inputs, tmp_path, *options, "train.tsv",
                              "--out", "nojvm-tsv")  # fmt: skip
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stderr.splitlines()[-1] == "no pyspark"
    assert "serendipity" in (text_inputs / "nojvm-tsv" / "summary.json").read_text()


def test_a_text_table_the_local_reader_leaves_to_spark_is_named(
    text_inputs: Path, tmp_path: Path
) -> None:
    """A quoted field in a CSV train, a blank-padded id: ``--engine local`` refuses
    each by name (``auto`` sends them to Spark's reader), never another value."""
    train = pd.read_parquet(text_inputs / "train.parquet")
    train.head(5).to_csv(text_inputs / "quoted_train.csv", index=False, quoting=1)
    padded = (text_inputs / "train.csv").read_text().replace(",i0", ", i0", 1)
    (text_inputs / "padded_train.csv").write_text(padded)
    for name, why in (
        ("quoted_train.csv", "quoted_train.csv: a double quote"),
        ("padded_train.csv", "column item_id has a value with surrounding whitespace"),
    ):
        options = ["--run", "text_runs.csv", "--train", name]
        local = _local(text_inputs, str(tmp_path / name), "local", *options)
        assert local.returncode == EXIT_INPUT, local.stderr
        assert "--engine local: " in local.stderr and why in local.stderr
        assert not (tmp_path / name).exists()


def test_a_malformed_training_line_is_named_by_file_and_line(
    text_inputs: Path, tmp_path: Path
) -> None:
    """Line 7 of a CSV train has 3 fields under a 2-column header: the local engine
    fails as Spark does (the file, the line, the record, what was expected; the
    Spark comparison is ``csv-train-malformed-line``) and writes nothing."""
    options = ["--run", "text_runs.csv", "--train", "bad_train.csv", "--k", "3"]
    local = _local(text_inputs, str(tmp_path / "never"), "local", *options)
    assert local.returncode == EXIT_INPUT, local.stderr
    line = (text_inputs / "bad_train.csv").read_text().splitlines()[6]
    assert _error_line(local.stderr).endswith(
        f"bad_train.csv:7: malformed line {line!r}: expected 2 comma separated fields "
        "(user_id, item_id) with balanced quotes"
    )
    assert not (tmp_path / "never").exists()
