"""``near-duplicates`` without a JVM (``--engine local``, and ``auto`` on small local docs).

Every case runs once on Spark (``--engine spark``) and once with the default engine,
which takes this process for these small Parquet docs. Compared: the exit code, stdout
(the output directory named alike), ``clusters.parquet`` and ``summary.json`` byte for
byte, ``summary.parquet`` by its rows without ``evaluated_at`` (:func:`tests.jobs.tree`)
and ``pairs.parquet`` by its schema and rows, then every file byte for byte: the Spark
driver collects small pair tables, sorts SimHash pairs (which Spark's joins leave
unsorted) as the local engine does, and writes them as it does, one part with pyarrow.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.errors import EXIT_INPUT, EXIT_OK
from tests.jobs import run_on_engine, run_without_java, tree

#: ASCII texts with near copies: case, punctuation, runs of whitespace (Java's ``\s``
#: and the ASCII controls that Python's ``\s`` takes and Java's does not), an empty and
#: a null text
FOX = "The quick brown fox jumps over the lazy dog near the river bank today"
TEXTS = {
    "a1": FOX,
    "a2": FOX.upper() + "!!",
    "a3": FOX.replace("lazy", "sleepy"),
    "a4": FOX.replace(" ", "\t \x0b") + "\x1c\x1d",
    "b1": "Numbers 12 and 345, mixed-case WORDS; and\r\nlines\fwith feeds",
    "b2": "numbers 12 and 345 mixed case words and lines with feeds",
    "b3": "  numbers 12 and 346 mixed case words and lines  with feeds ",
    "c1": "Completely different words stand here alone",
    "c2": "x",
    "e1": "",
    "e2": None,
}

CASES = {
    "word-minhash": "--docs docs.parquet --threshold 0.5",
    "char-minhash": "--docs docs.parquet --shingle char --k 5 --threshold 0.7 --num-perm 64",
    # a cap that skips table runs: every table's pairs, repeats removed (and a warning)
    "char-simhash-capped": "--docs docs.parquet --method simhash --shingle char --k 3 "
    "--threshold 16 --max-bucket 2",
    "tokens-weights-simhash": "--docs tokens.parquet --method simhash --threshold 12",
    "tokens-minhash": "--docs tokens.parquet --threshold 0.6 --bands 8 --rows 4 --num-perm 32",
    # no doc has a shingle: empty pairs and clusters tables
    "empty-texts": "--docs empty.parquet --threshold 0.5",
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """``docs.parquet`` (text ids, :data:`TEXTS`, two row groups), ``tokens.parquet``
    (integer ids in a column named ``id``, token arrays and their weights), a table
    whose texts have no word, one with a repeated id and one with non-ASCII text."""
    directory = tmp_path_factory.mktemp("local-near-duplicates")
    docs = pa.table({"doc_id": list(TEXTS), "text": list(TEXTS.values())})
    pq.write_table(docs, directory / "docs.parquet", row_group_size=6)
    tokens = [
        ["t1", "t2", "t3", "t4", "t5", "t6"],
        ["t1", "t2", "t3", "t4", "t5", "t7"],
        ["t1", "t2", "t3", "t4", "t5", "t6", "t6"],
        ["u1", "u2", "u3"],
        ["u1", "u2", "u3"],
        [],
        ["v9"],
    ]
    weights = [[1.0, 2.0, 0.5, 1.0, 3.0, 1.0], [1.0, 2.0, 0.5, 1.0, 3.0, -1.0],
               [1.0, 2.0, 0.5, 1.0, 3.0, 1.0, 1.0], [1, 1, 1], [2, 2, 2], [], [4.0]]  # fmt: skip
    table = pa.table(
        {
            "id": pa.array([7, -3, 12, 40, 41, 50, 2**40], pa.int64()),
            "tokens": pa.array(tokens, pa.list_(pa.string())),
            "weights": pa.array(weights, pa.list_(pa.float64())),
        }
    )
    pq.write_table(table, directory / "tokens.parquet")
    repeated = pa.table({"doc_id": ["z", "d2", "d1", "d2", "d1", "d1"], "text": ["a b c"] * 6})
    pq.write_table(repeated, directory / "repeated.parquet")
    unicode = pa.table({"doc_id": ["i1", "i2"], "text": ["İSTANBUL ŞEHRİ büyük", "istanbul şehri"]})
    pq.write_table(unicode, directory / "unicode.parquet")
    empty = pa.table({"doc_id": ["p", "q", "r"], "text": ["", None, "  ,. "]})
    pq.write_table(empty, directory / "empty.parquet")
    return directory


def _near_duplicates(
    directory: Path, out: str, engine: str, options: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_on_engine("near-duplicates", directory, out, engine, *options.split(), env=env)


@pytest.fixture(scope="module")
def on_spark(inputs: Path):
    """Each case's Spark run, run once for the module."""
    runs: dict[str, subprocess.CompletedProcess[str]] = {}

    def run(case: str) -> subprocess.CompletedProcess[str]:
        if case not in runs:
            runs[case] = _near_duplicates(inputs, f"spark-{case}", "spark", CASES[case])
        return runs[case]

    return run


def _pairs(directory: Path) -> pa.Table:
    return pq.read_table(directory / "pairs.parquet")


def _jaccards(directory: Path) -> dict[tuple, float]:
    return {(p["doc_a"], p["doc_b"]): p["jaccard"] for p in _pairs(directory).to_pylist()}


def _assert_same_outputs(local: Path, spark: Path, sorted_pairs: bool) -> None:
    """The files of two outputs alike (see the module text)."""
    local_files = {k: v for k, v in tree(local).items() if not k.startswith("pairs.parquet")}
    spark_files = {k: v for k, v in tree(spark).items() if not k.startswith("pairs.parquet")}
    assert local_files == spark_files
    assert set(local_files) == {"_SUCCESS", "clusters.parquet", "summary.json", "summary.parquet"}
    mine, theirs = _pairs(local), _pairs(spark)
    assert mine.schema.remove_metadata() == theirs.schema.remove_metadata()
    if sorted_pairs:
        theirs = theirs.sort_by([("doc_a", "ascending"), ("doc_b", "ascending")])
    assert mine.to_pylist() == theirs.to_pylist()
    assert [p.name for p in (local / "pairs.parquet").iterdir()] == ["part-00000.parquet"]


def _assert_same_bytes(local: Path, spark: Path) -> None:
    """Every file of the two outputs alike, byte for byte (:func:`tests.jobs.tree`)."""
    assert tree(local) == tree(spark)
    assert [p.name for p in (spark / "pairs.parquet").iterdir()] == ["part-00000.parquet"]


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(CASES))
def test_local_and_spark_engines_find_the_same_pairs(inputs: Path, on_spark, case: str) -> None:
    spark = on_spark(case)
    local = _near_duplicates(inputs, f"local-{case}", "auto", CASES[case])
    assert spark.returncode == local.returncode == EXIT_OK, spark.stderr + local.stderr
    assert "[read]" in local.stderr
    shown = local.stdout.replace(f"local-{case}", "OUT")
    assert shown == spark.stdout.replace(f"spark-{case}", "OUT")
    _assert_same_outputs(inputs / f"local-{case}", inputs / f"spark-{case}", "simhash" in case)
    _assert_same_bytes(inputs / f"local-{case}", inputs / f"spark-{case}")
    summary = json.loads((inputs / f"local-{case}" / "summary.json").read_text())
    if case == "empty-texts":
        assert summary["counts"]["pairs"] == 0 and summary["counts"]["empty_sets"] == 3
    else:
        assert summary["counts"]["pairs"] > 0
    if "capped" in case:
        assert summary["skipped_by_max_bucket"]["buckets"] > 0 and "warning" in local.stdout


def test_the_cases_find_the_pairs_worked_out_by_hand(inputs: Path, tmp_path: Path) -> None:
    """Local runs alone: the pairs each case must find (and that the empty texts never
    pair), worked out from the texts."""
    word = _near_duplicates(inputs, str(tmp_path / "word"), "local", CASES["word-minhash"])
    assert word.returncode == EXIT_OK, word.stderr
    pairs = [(p["doc_a"], p["doc_b"]) for p in _pairs(tmp_path / "word").to_pylist()]
    # a1, a2 and a4 have the same 12 word 3-shingles (case, punctuation and the
    # whitespace runs are not words); a3 changes 3 of them: 9 / 15 = 0.6;
    # b1 and b2 are the same 9 shingles, b3 changes 3 of them: 6 / 12, exactly 0.5
    assert pairs == [("a1", "a2"), ("a1", "a3"), ("a1", "a4"), ("a2", "a3"), ("a2", "a4"),
                     ("a3", "a4"), ("b1", "b2"), ("b1", "b3"), ("b2", "b3")]  # fmt: skip
    jaccard = _jaccards(tmp_path / "word")
    assert jaccard[("a1", "a3")] == 0.6 and jaccard[("b2", "b3")] == 0.5
    summary = json.loads((tmp_path / "word" / "summary.json").read_text())
    assert summary["counts"]["sets"] == len(TEXTS) and summary["counts"]["empty_sets"] == 2
    tokens = _near_duplicates(inputs, str(tmp_path / "tokens"), "local", CASES["tokens-minhash"])
    assert tokens.returncode == EXIT_OK, tokens.stderr
    found = _jaccards(tmp_path / "tokens")
    # {t1..t6} and {t1..t5, t7}: 5 / 7; the repeated t6 counts once (Jaccard 1)
    assert found == {(-3, 7): 5 / 7, (-3, 12): 5 / 7, (7, 12): 1.0, (40, 41): 1.0}
    clusters = pq.read_table(tmp_path / "tokens" / "clusters.parquet").to_pylist()
    assert {(c["doc_id"], c["cluster_id"], c["cluster_size"]) for c in clusters} == {
        (-3, -3, 3), (7, -3, 3), (12, -3, 3), (40, 40, 2), (41, 40, 2)}  # fmt: skip


@pytest.mark.spark
def test_a_repeated_doc_id_gets_the_same_message_on_both_engines(inputs: Path) -> None:
    options = "--docs repeated.parquet --threshold 0.5"
    spark = _near_duplicates(inputs, "spark-repeated", "spark", options)
    local = _near_duplicates(inputs, "local-repeated", "local", options)
    assert spark.returncode == local.returncode == EXIT_INPUT, spark.stderr + local.stderr
    message = "repeated.parquet: doc id d1 appears 3 times; each doc may appear once"
    assert local.stderr.splitlines()[-1] == spark.stderr.splitlines()[-1]
    assert message in local.stderr.splitlines()[-1]
    assert not [p for p in inputs.iterdir() if p.name.endswith("-repeated")]


@pytest.mark.spark
def test_non_ascii_text_runs_here_as_on_spark(inputs: Path) -> None:
    options = "--docs unicode.parquet --threshold 0.3 --k 1"
    spark = _near_duplicates(inputs, "spark-unicode", "spark", options)
    auto = _near_duplicates(inputs, "auto-unicode", "auto", options)
    assert spark.returncode == auto.returncode == EXIT_OK, spark.stderr + auto.stderr
    assert "read by Spark instead" not in auto.stderr and "[read]" in auto.stderr
    # Java lower-cases İ to i and a dot above (U+0307), as Python does: i1's words are
    # not i2's
    assert auto.stdout.startswith("near-duplicates (minhash): 0 pairs, 0 clusters")
    _assert_same_bytes(inputs / "auto-unicode", inputs / "spark-unicode")


def test_engine_local_refuses_what_it_does_not_read_by_name(inputs: Path, tmp_path: Path) -> None:
    (inputs / "docs.jsonl").write_text("{'doc_id': 'd1', 'text': 'a b c'}\n")
    csv = _near_duplicates(
        inputs, str(tmp_path / "csv"), "local", "--docs docs.jsonl --threshold 1"
    )
    assert csv.returncode == EXIT_INPUT
    assert "--engine local: docs.jsonl:1: a line that Spark's JSON parser may read" in csv.stderr
    pq.write_table(pa.table({"doc_id": ["s"], "text": ["ᲐᲑ y"]}), inputs / "super.parquet")
    superscript = _near_duplicates(
        inputs, str(tmp_path / "super"), "local", "--docs super.parquet --threshold 1"
    )
    assert superscript.returncode == EXIT_INPUT
    assert (
        "super.parquet: column text holds text with the character 'Ა' (U+1C90), which Java "
        "and Python may lower-case or split differently"
    ) in superscript.stderr
    table = pa.table({"doc_id": [1.5, 2.5], "text": ["a b", "a b"]})
    pq.write_table(table, inputs / "float_ids.parquet")
    floats = _near_duplicates(
        inputs, str(tmp_path / "floats"), "local", "--docs float_ids.parquet --threshold 1"
    )
    assert floats.returncode == EXIT_INPUT
    assert "float_ids.parquet: column doc_id of type double" in floats.stderr
    assert not (tmp_path / "csv").exists() and not (tmp_path / "floats").exists()
    assert not (tmp_path / "super").exists()


@pytest.mark.spark
def test_small_docs_start_no_jvm_and_import_no_pyspark(
    inputs: Path, on_spark, tmp_path: Path
) -> None:
    options = [*CASES["word-minhash"].split(), "--out", str(tmp_path / "out")]
    result = run_without_java("near-duplicates", inputs, tmp_path, *options)
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stderr.splitlines()[-1] == "no pyspark"
    assert on_spark("word-minhash").returncode == EXIT_OK
    _assert_same_outputs(tmp_path / "out", inputs / "spark-word-minhash", sorted_pairs=False)


#: plain CSV and TSV docs (no quotes, no carriage returns): near copies by case,
#: punctuation and runs of spaces; ids that are numbers to a type inference (``007``
#: and ``7`` stay two ids); an empty text (null to Spark's CSV reader)
TEXT_DOCS = {
    "007": FOX,
    "7": FOX.upper() + "!!",
    "a3": FOX.replace("lazy", "sleepy"),
    "a5": FOX.replace(" ", "   "),
    "b2": "numbers 12 and 345 mixed case words and lines with feeds",
    "b4": "Numbers 12 and 345; mixed-case WORDS and lines with FEEDS.",
    "c1": "Completely different words stand here alone",
    "c2": "x",
    "e1": "",
}
#: a text with commas, read as one field in TSV
TSV_ONLY = {"t1": "numbers, 12 and 345, mixed case words and lines with feeds"}

TEXT_CASES = {
    "csv-word-minhash": "--docs docs_text.csv --threshold 0.5",
    "csv-char-minhash": "--docs docs_text.csv --shingle char --k 5 --threshold 0.7",
    "tsv-char-simhash": "--docs docs_text.tsv --method simhash --shingle char --k 3 --threshold 16",
}


def _write_text_docs(directory: Path) -> None:
    csv = "".join(f"{doc},{text}\n" for doc, text in TEXT_DOCS.items())
    (directory / "docs_text.csv").write_text("doc_id,text\n" + csv)
    rows = {**TEXT_DOCS, **TSV_ONLY}
    tsv = "".join(f"{doc}\t{text}\n" for doc, text in rows.items())
    (directory / "docs_text.tsv").write_text("id\ttext\n" + tsv)
    (directory / "docs_quoted.csv").write_text(f'doc_id,text\nq1,"{FOX}"\nq2,{FOX}\n')


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(TEXT_CASES))
def test_csv_and_tsv_docs_give_the_pairs_of_spark(inputs: Path, case: str) -> None:
    _write_text_docs(inputs)
    options = TEXT_CASES[case]
    spark = _near_duplicates(inputs, f"spark-{case}", "spark", options)
    local = _near_duplicates(inputs, f"local-{case}", "local", options)
    assert spark.returncode == local.returncode == EXIT_OK, spark.stderr + local.stderr
    assert "[read]" in local.stderr
    shown = local.stdout.replace(f"local-{case}", "OUT")
    assert shown == spark.stdout.replace(f"spark-{case}", "OUT")
    _assert_same_outputs(inputs / f"local-{case}", inputs / f"spark-{case}", "simhash" in case)
    summary = json.loads((inputs / f"local-{case}" / "summary.json").read_text())
    assert summary["counts"]["pairs"] > 0


def test_csv_docs_are_read_here_as_text(inputs: Path, tmp_path: Path) -> None:
    """Without a JVM: ids ``007`` and ``7`` stay two ids, the near copies pair (worked
    out from the texts), the empty text has no shingle; a quoted field is refused by
    name under ``--engine local``."""
    _write_text_docs(inputs)
    options = ["--docs", "docs_text.csv", "--threshold", "0.5", "--out", str(tmp_path / "out")]
    result = run_without_java("near-duplicates", inputs, tmp_path, *options)
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stderr.splitlines()[-1] == "no pyspark"
    pairs = {(p["doc_a"], p["doc_b"]) for p in _pairs(tmp_path / "out").to_pylist()}
    # 007, 7 and a5 share all 12 word 3-shingles, a3 9 of 15 with each; b2 and b4 the
    # same 9 words
    assert pairs == {("007", "7"), ("007", "a3"), ("007", "a5"), ("7", "a3"), ("7", "a5"),
                     ("a3", "a5"), ("b2", "b4")}  # fmt: skip
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["counts"]["sets"] == len(TEXT_DOCS) and summary["counts"]["empty_sets"] == 1
    quoted = _near_duplicates(
        inputs, str(tmp_path / "quoted"), "local", "--docs docs_quoted.csv --threshold 1"
    )
    assert quoted.returncode == EXIT_INPUT
    assert "--engine local: docs_quoted.csv: a double quote" in quoted.stderr
    assert not (tmp_path / "quoted").exists()
