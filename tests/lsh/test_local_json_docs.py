"""``near-duplicates`` of JSON Lines docs and of non-ASCII text without a JVM.

The local engine reads JSON Lines as Spark's JSON reader does (or hands the file to
Spark), and shingles the text of the scripts in
:data:`~sparkeval.lsh.text_units.LOCAL_RANGES` as Spark SQL does: each Spark case is
run once on each engine and every output file compared byte for byte; the table of
every code point those ranges hold is checked against Spark SQL's own shingles.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.errors import EXIT_INPUT, EXIT_OK, InputError
from sparkeval.io.direct_input import NotDirect
from sparkeval.lsh.local_json_docs import json_doc_columns, read_json_docs
from sparkeval.lsh.text_units import LOCAL_RANGES, local_text_problem, text_shingles
from tests.jobs import run_on_engine, tree

#: near copies in several scripts: case (Latin accents, Greek, Cyrillic, full-width
#: Latin, ``İ``), punctuation outside ASCII (dashes, ellipses, CJK and Arabic commas,
#: a no-break space), combining accents (not letters: they split words on both
#: engines), final and medial sigma as given (a capital sigma is left to Spark)
TEXTS = {
    "u1": "Ünïcode Çafé — ДОМ большой «дом» ΑΘΉΝΑ σοφία ς",
    "u2": "ünïcode çafé… дом БОЛЬШОЙ дом\u00a0ΑΘΉΝΑ σοφία ς",
    "u3": "unïcode çafé дом большой дом sofia σοφία",
    "u4": "Cafe\u0301 ĲSSELMEER İstanbul ǅemal ＡＢＣ ａｂｃ",
    "u5": "cafe\u0301 ĳsselmeer i\u0307stanbul ǆemal ａｂｃ ＡＢＣ",
    "c1": "東京タワー、東京スカイツリー。大阪城と京都の寺。",
    "c2": "東京タワー 東京スカイツリー 大阪城と京都の寺",
    "h1": "שלום עולם، مرحبا بالعالم ١٢٣ ٤٥٦",
    "h2": "שלום עולם مرحبا بالعالم ١٢٣ ٤٥٦!",
    "k1": "안녕하세요 세계 ＡＢＣ abc",
    "k2": "안녕하세요 세계 abc ＡＢＣ",
}

CASES = {
    "jsonl-word-minhash": "--docs docs.jsonl --threshold 0.4 --k 2",
    "jsonl-char-simhash": "--docs docs.jsonl.gz --method simhash --shingle char --k 3 "
    "--threshold 20",
    "jsonl-tokens-simhash": "--docs tokens.jsonl --method simhash --threshold 12",
}


def _lines(records: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """``docs.jsonl`` (:data:`TEXTS` with a null text, a missing one, columns of mixed
    and nested types Spark widens to text, a blank line and CRLF endings),
    ``docs.jsonl.gz`` (the same texts without the extras) and ``tokens.jsonl``
    (integer ids, integer tokens, weights of integers and fractions)."""
    directory = tmp_path_factory.mktemp("local-json-docs")
    records = [{"doc_id": doc, "text": text} for doc, text in TEXTS.items()]
    extras = [
        {"doc_id": "n1", "text": None, "note": 1.5},
        {"doc_id": "n2", "note": {"x": [1, "a"]}},
    ]
    text = _lines(records[:4]) + "\n" + _lines(records[4:] + extras)
    (directory / "docs.jsonl").write_bytes(text.replace("\n", "\r\n").encode())
    with gzip.open(directory / "docs.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write(_lines(records))
    tokens = [
        {"id": 7, "tokens": [1, 2, 3, 4, 5, 6], "weights": [1, 2.5, 0.5, 1, 3, 1]},
        {"id": -3, "tokens": [1, 2, 3, 4, 5, 7], "weights": [1, 2.5, 0.5, 1, 3, -1]},
        {"id": 12, "tokens": [1, 2, 3, 4, 5, 6, 6], "weights": [1, 2.5, 0.5, 1, 3, 1, 1]},
        {"id": 40, "tokens": [], "weights": []},
        {"id": 2**40, "tokens": [9], "weights": [4.0]},
    ]
    (directory / "tokens.jsonl").write_text(_lines(tokens))
    return directory


def _near_duplicates(directory: Path, out: str, engine: str, options: str):
    return run_on_engine("near-duplicates", directory, out, engine, *options.split())


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(CASES))
def test_json_lines_and_non_ascii_docs_give_the_bytes_of_spark(inputs: Path, case: str) -> None:
    spark = _near_duplicates(inputs, f"spark-{case}", "spark", CASES[case])
    local = _near_duplicates(inputs, f"local-{case}", "local", CASES[case])
    assert spark.returncode == local.returncode == EXIT_OK, spark.stderr + local.stderr
    assert "[read]" in local.stderr
    shown = local.stdout.replace(f"local-{case}", "OUT")
    assert shown == spark.stdout.replace(f"spark-{case}", "OUT")
    assert tree(inputs / f"local-{case}") == tree(inputs / f"spark-{case}")
    summary = json.loads((inputs / f"local-{case}" / "summary.json").read_text())
    assert summary["counts"]["pairs"] > 0


def test_json_lines_docs_are_read_here(inputs: Path, tmp_path: Path) -> None:
    """Without Spark: the pairs worked out from the texts, with word 2-shingles."""
    out = tmp_path / "out"
    result = _near_duplicates(inputs, str(out), "local", CASES["jsonl-word-minhash"])
    assert result.returncode == EXIT_OK, result.stderr
    rows = pq.read_table(out / "pairs.parquet").to_pylist()
    pairs = {(p["doc_a"], p["doc_b"]): p["jaccard"] for p in rows}
    # c1 and c2: the same three words (CJK punctuation and spaces split them alike);
    # h1 and h2 the same five (the Arabic comma is no letter, the Arabic-Indic digits
    # are numbers); u4 and u5: the same words once lower-cased (ĳ, i and U+0307, ǆ)
    assert pairs[("c1", "c2")] == 1.0 and pairs[("h1", "h2")] == 1.0
    assert pairs[("u4", "u5")] == 1.0
    # k1: 안녕하세요 세계 / 세계 ａｂｃ / ａｂｃ abc; k2: 안녕하세요 세계 / 세계 abc /
    # abc ａｂｃ (ＡＢＣ lower-cases to ａｂｃ, another word than abc): 1 of 5
    assert ("k1", "k2") not in pairs
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["sets"] == len(TEXTS) + 2 and summary["counts"]["empty_sets"] == 2


def test_text_shingles_of_non_ascii_text_worked_out_by_hand() -> None:
    # İ lower-cases to i and U+0307 (a mark: it splits the word); ＡＢＣ to ａｂｃ;
    # the no-break space is no letter and no Java whitespace
    assert text_shingles("İSTANBUL ＡＢＣ", "word", 1) == ["i", "stanbul", "ａｂｃ"]
    assert text_shingles("Ä\u00a0B", "char", 2) == ["ä\u00a0", "\u00a0b"]
    assert local_text_problem(pa.array(["ΣΟΦΊΑ"]), {}) == "the character 'Σ' (U+03A3)"
    assert local_text_problem(pa.array(["ç"]), {"LANG": "tr_TR.UTF-8"}) == (
        "the locale LANG=tr_TR.UTF-8 (Java lower-cases by it)"
    )
    assert local_text_problem(pa.array(["I"]), {"LANG": "tr_TR.UTF-8"}) is None


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "d.jsonl"
    path.write_text(text)
    return str(path)


def test_json_values_are_typed_as_spark_types_them(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"b": 1, "id": 3, "text": "x y"}\n\n{"id": -4, "a": [1]}\n')
    docs = read_json_docs(path)
    assert docs.names == ["a", "b", "id", "text"]  # Spark's schema: sorted by name
    columns = json_doc_columns(docs, {"doc_id": "id", "text": "text"}, path)
    assert columns["doc_id"].type == pa.int64() and columns["doc_id"].to_pylist() == [3, -4]
    assert columns["text"].to_pylist() == ["x y", None]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{'doc_id': 'a', 'text': 'b'}", "a line that Spark's JSON parser may read"),
        ('{"doc_id": "a", "text": "b"} more', "text after the JSON object"),
        ('[{"doc_id": "a", "text": "b"}]', "a line of null or a JSON array"),
        ("null", "a line of null or a JSON array"),
        ('{"doc_id": "a", "text": "b", "w": NaN}', "the number NaN"),
        ('{"doc_id": "a", "text": "b", "text": "c"}', "a key given twice in one object"),
        ('{"doc_id": "a", "Text": "b"}', "two keys that differ only in case"),
    ],
)
def test_lines_spark_may_read_otherwise_go_to_spark(tmp_path: Path, line: str, reason: str) -> None:
    path = _write(tmp_path, '{"doc_id": "z", "text": "ok"}\n' + line + "\n")
    with pytest.raises(NotDirect, match=reason):
        read_json_docs(path)


@pytest.mark.parametrize(
    ("records", "column"),
    [
        ([{"doc_id": "a"}, {"doc_id": 1}], "doc_id"),
        ([{"doc_id": 1.5}], "doc_id"),
        ([{"doc_id": True}], "doc_id"),
        ([{"doc_id": 2**63}], "doc_id"),
        ([{"doc_id": "a", "text": 2}], "text"),
        ([{"doc_id": "a", "text": {"x": "y"}}], "text"),
    ],
)
def test_values_of_uncertain_spark_type_go_to_spark(
    tmp_path: Path, records: list[dict], column: str
) -> None:
    path = _write(tmp_path, _lines(records))
    docs = read_json_docs(path)
    with pytest.raises(NotDirect, match=f"column {column} holds other values"):
        json_doc_columns(docs, {"doc_id": "doc_id", "text": "text"}, path)


@pytest.mark.parametrize(
    "line", ['{"doc_id": "a2", "text": "y"', "hello", "42", '{"doc_id": "a", "text": "b",}']
)
def test_a_line_spark_refuses_is_an_error_naming_the_line(tmp_path: Path, line: str) -> None:
    path = _write(tmp_path, '{"doc_id": "a1", "text": "x"}\n\n' + line + "\n")
    with pytest.raises(InputError) as raised:
        read_json_docs(path)
    # the message of the Spark run (the readers' check of a JSON Lines input)
    expected = f"{path}:3: malformed line {line!r}: expected one JSON object per line"
    assert str(raised.value) == expected


@pytest.mark.spark
def test_a_bad_json_line_gets_the_message_of_spark(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text('{"doc_id": "a1", "text": "x"}\n{"doc_id": "a2", "te\n')
    options = "--docs bad.jsonl --threshold 0.5"
    spark = _near_duplicates(tmp_path, "spark-bad", "spark", options)
    local = _near_duplicates(tmp_path, "local-bad", "local", options)
    assert spark.returncode == local.returncode == EXIT_INPUT, spark.stderr + local.stderr
    assert local.stderr.splitlines()[-1] == spark.stderr.splitlines()[-1]
    assert local.stderr.splitlines()[-1].endswith(
        """bad.jsonl:2: malformed line '{"doc_id": "a2", "te': expected one JSON object per line"""
    )
    assert not (tmp_path / "spark-bad").exists() and not (tmp_path / "local-bad").exists()


@pytest.mark.slow
@pytest.mark.spark
def test_every_local_character_is_shingled_as_spark_sql_shingles_it(spark) -> None:
    """Each code point of :data:`LOCAL_RANGES`, upper and lower case beside ASCII
    letters, whitespace and digits, in word and char shingles of Spark SQL."""
    from sparkeval.lsh.shingles import shingle_table

    chars = [chr(c) for lo, hi in LOCAL_RANGES for c in range(lo, hi + 1)]
    local = set(chars)
    texts = [f"Q{c}r {c}\t{c.upper() if set(c.upper()) <= local else c}9" for c in chars]
    rows = pa.table({"i": list(range(len(texts))), "text": texts})
    docs = spark.createDataFrame(rows.to_pandas())
    for kind, k in (("word", 1), ("char", 2)):
        found = shingle_table(docs, "text", kind, k, keep=("i",)).toPandas()
        by_row = dict(zip(found["i"], found["shingles"], strict=True))
        wrong = [t for i, t in enumerate(texts) if list(by_row[i]) != text_shingles(t, kind, k)]
        assert wrong == [], [hex(ord(t[1])) for t in wrong[:20]]
