"""TREC text read by the Python workers: the same values as Spark's readers, bit for
bit, whatever the whitespace, line ends, comments, splits and compression; anything
doubtful is left to Spark's readers and gets their error."""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path

import pandas as pd
import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT, EXIT_OK
from sparkeval.io import direct_text
from sparkeval.io.direct import plan_direct_text
from sparkeval.io.direct_input import NotDirect
from tests.random_collection import random_collection

MEASURES = "nDCG@10,nDCG,AP,P@5,R@10,RR,ERR@10,Rprec,Bpref,NumRet,Judged@10"
#: separators and line ends that both readers must treat alike
GAPS = [" ", "\t", "  ", " \t ", "\x0b", "\x0c"]
ENDS = ["\n", "\r\n", "\n", "\r", "\n"]


def _awkward_text(rows: list[tuple], seed: int, extra: bool = True) -> str:
    """TREC lines with varied whitespace, line ends, comments, blank lines and (for runs)
    extra fields."""
    out = ["# a comment line\n", "\n"]
    for i, row in enumerate(rows):
        gap = GAPS[(i + seed) % len(GAPS)]
        line = gap.join(str(field) for field in row)
        if i % 7 == 0:
            line = "  " + line + " \t"
        if extra and i % 11 == 0:
            line += gap + "extra-field"
        out.append(line + ENDS[(i + seed) % len(ENDS)])
        if i % 13 == 0:
            out.append("   \n# another comment\n")
    return "".join(out)


def write_text_collection(directory: Path, seed: int, gzip_qrels: bool = False) -> dict:
    directory.mkdir(parents=True, exist_ok=True)
    run, qrels = random_collection(seed, queries=50, runs=2, edge_queries=True)
    paths = {"runs": []}
    for run_id, group in run.groupby("run_id"):
        scores = [f"{s:+.3e}" if i % 3 == 0 else f"{s}" for i, s in enumerate(group.score)]
        rows = [
            (q, "Q0", d, rank, score, run_id)
            for rank, (q, d, score) in enumerate(
                zip(group.query_id, group.doc_id, scores, strict=True)
            )
        ]
        path = directory / f"{run_id}.txt"
        path.write_bytes(_awkward_text(rows, seed).encode())
        paths["runs"].append(path)
    judged = [(q, 0, d, g) for q, d, g in qrels.itertuples(index=False)]
    text = _awkward_text(judged, seed + 1, extra=False)
    if gzip_qrels:
        paths["qrels"] = directory / "qrels.txt.gz"
        paths["qrels"].write_bytes(gzip.compress(text.encode()))
    else:
        paths["qrels"] = directory / "qrels.txt"
        paths["qrels"].write_bytes(text.encode())
    return paths


def _evaluate(paths: dict, out: Path, reader: str) -> int:
    argv = ["evaluate", *[a for p in paths["runs"] for a in ("--run", str(p))],
            "--qrels", str(paths["qrels"]), "--measures", MEASURES, "--out", str(out),
            "--reader", reader, "--buckets", "3"]  # fmt: skip
    return main(argv)


def error_lines_of_both_readers(paths: dict, tmp_path: Path, capsys, marker: str) -> list:
    """The lines holding ``marker`` that the evaluation printed with each reader (the
    workers', then Spark's); each must fail as bad input, with no output and no
    traceback."""
    messages = []
    for reader in ("auto", "spark"):
        out = tmp_path / f"out-{reader}"
        assert _evaluate(paths, out, reader) == EXIT_INPUT
        assert not out.exists()
        err = capsys.readouterr().err
        assert "Traceback" not in err
        messages.append([line for line in err.splitlines() if marker in line])
    return messages


def _results(out: Path) -> tuple[pd.DataFrame, dict]:
    summary = json.loads((out / "summary.json").read_text())
    summary.pop("inputs")
    return pd.read_parquet(out / "per_query.parquet"), summary


def test_ranges_cover_the_file_and_end_at_line_ends(tmp_path) -> None:
    path = tmp_path / "run.txt"
    data = "".join(f"q{i} Q0 d{i} {i} {i / 3} tag\n" for i in range(5000)).encode()
    path.write_bytes(data)
    ranges = direct_text.byte_ranges(str(path), chunk=4096)
    assert len(ranges) > 10 and ranges[0][0] == 0 and ranges[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    assert all(data[end - 1 : end] == b"\n" for _, end in ranges)


@pytest.mark.parametrize("parts", [1, 2, 3, 7])
@pytest.mark.parametrize("members", [1, 3])
def test_gzip_parts_start_at_line_starts_and_make_the_whole_text(tmp_path, parts, members) -> None:
    lines = [f"q{i} Q0 d{i} {i} {i / 7} tag{'x' * (i % 13)}\n" for i in range(30_000)]
    data = "".join(lines).encode()
    path = tmp_path / "run.txt.gz"
    # several members (as concatenated gzip files are): the trailer's length is the last
    # member's only, so the parts are uneven but must still make the text
    step = -(-len(data) // members)
    path.write_bytes(b"".join(gzip.compress(data[i : i + step]) for i in range(0, len(data), step)))
    pieces = [direct_text.read_gzip_part(str(path), i, parts) for i in range(parts)]
    assert b"".join(pieces) == data
    assert all(not p or (p.endswith(b"\n") and p[:1] == b"q") for p in pieces)
    if members == 1:  # the trailer is right: every part has lines, the first the most
        sizes = [len(p) for p in pieces]
        assert all(sizes) and sizes[0] == max(sizes)
    ranges = direct_text.byte_ranges(str(path), chunk=4096)
    assert ranges == [(i, direct_text.GZIP_PARTS) for i in range(direct_text.GZIP_PARTS)]
    read = [direct_text.read_text_range(str(path), *r) for r in ranges]
    assert b"".join(read) == data and all(read)


@pytest.mark.parametrize("cuts", [(1, 2), (3, 4), (4, 9), (5, 6), (30, 40)])
def test_a_long_line_across_both_cuts_leaves_its_part_empty(cuts) -> None:
    text = b"ab\n" + b"x" * 20 + b"\nlast\n"
    pieces = [text[i : i + 4] for i in range(0, len(text), 4)]
    parts = [
        direct_text._between_cuts(iter(pieces), start, end)
        for start, end in [(None, cuts[0]), cuts, (cuts[1], None)]
    ]
    assert b"".join(parts) == text

    def line_start(cut: int) -> int:  # by hand: just past the first newline at cut - 1 on
        found = text.find(b"\n", cut - 1)
        return len(text) if found < 0 else found + 1

    assert parts[1] == text[line_start(cuts[0]) : line_start(cuts[1])]


@pytest.mark.parametrize("damage", ["truncated", "flipped byte", "garbage after"])
def test_a_damaged_gzip_file_is_left_to_spark(tmp_path, damage) -> None:
    data = "".join(f"q{i} Q0 d{i} {i} {i / 7} tag\n" for i in range(20_000)).encode()
    packed = bytearray(gzip.compress(data))
    if damage == "truncated":
        packed = packed[: len(packed) * 2 // 3]
    elif damage == "flipped byte":
        packed[len(packed) // 2] ^= 0xFF
    else:
        packed += b"not gzip"
    path = tmp_path / "run.txt.gz"
    path.write_bytes(bytes(packed))
    with pytest.raises(NotDirect, match=r"run\.txt\.gz"):
        for part in range(direct_text.GZIP_PARTS):
            direct_text.read_text_range(str(path), part, direct_text.GZIP_PARTS)


def test_lines_parse_as_spark_splits_them() -> None:
    # by hand: trimmed of ASCII whitespace, split on its runs, comments and blanks skipped
    data = b"# c\n \t q1 \x0bQ0\td1  1 2.5 r \r\n\n   \nq2 Q0 d2 2 -1e-3 r extra\rq3 Q0 d3 3 +7 r"
    query, doc, score = direct_text.parse_text(data, "run", "run.txt")
    assert query.to_pylist() == ["q1", "q2", "q3"]
    assert doc.to_pylist() == ["d1", "d2", "d3"]
    assert score.to_pylist() == [2.5, -0.001, 7.0]


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"q1 Q0 d1 1 2.5\n", "fewer than 6 fields"),
        (b"q1 Q0 d1 1 NaN r\n", "not a plain decimal"),
        (b"q1 Q0 d1 1 1.0d r\n", "not a plain decimal"),
        (b"q1 Q0 d1 1 1e999 r\n", "out of range"),
        (b"q1 Q0 caf\xe9 1 2 r\n", "invalid UTF8"),
        (b"\xef\xbb\xbfq1 Q0 d1 1 2 r\n", "byte-order mark"),
    ],
)
def test_doubtful_text_is_left_to_spark(data: bytes, why: str) -> None:
    with pytest.raises(NotDirect, match=why):
        direct_text.parse_text(data, "run", "run.txt")


def test_doubtful_grades_are_left_to_spark() -> None:
    with pytest.raises(NotDirect, match="whole number"):
        direct_text.parse_text(b"q1 0 d1 1.5\n", "qrels", "qrels.txt")
    _query, _doc, grade = direct_text.parse_text(b"q1 0 d1 2.0\nq1 0 d2 -1\n", "qrels", "q")
    assert grade.to_pylist() == [2, -1]


def test_plans_only_local_plain_or_gzip_text(tmp_path) -> None:
    (tmp_path / "run.txt").write_text("# c\nq1 Q0 d1 1 2 tagA\nq1 Q0 d2 2 1 tagB\n")
    plan = plan_direct_text(str(tmp_path / "run.txt"), "run")
    assert plan is not None and plan.run_id == "tagA" and plan.fmt == "trec"
    (tmp_path / "run.txt.bz2").write_bytes(b"")
    assert plan_direct_text(str(tmp_path / "run.txt.bz2"), "run") is None
    (tmp_path / "short.txt").write_text("q1 Q0 d1 1 2\n")
    assert plan_direct_text(str(tmp_path / "short.txt"), "run") is None  # Spark's error
    assert plan_direct_text("hdfs://nn/run.txt", "run") is None


@pytest.mark.spark
@pytest.mark.parametrize(("seed", "chunk", "gz"), [(1, None, False), (2, 2048, True)])
def test_workers_read_trec_text_as_spark_does(
    spark, tmp_path, capsys, monkeypatch, seed, chunk, gz
):
    if chunk:
        monkeypatch.setattr(direct_text, "TEXT_CHUNK_BYTES", chunk)
    paths = write_text_collection(tmp_path / "data", seed, gzip_qrels=gz)
    assert _evaluate(paths, tmp_path / "direct", "auto") == EXIT_OK
    assert "inputs read by the driver's threads" in capsys.readouterr().err
    assert _evaluate(paths, tmp_path / "spark", "spark") == EXIT_OK
    assert "inputs read by Spark's readers" in capsys.readouterr().err
    direct_rows, direct_summary = _results(tmp_path / "direct")
    spark_rows, spark_summary = _results(tmp_path / "spark")
    assert len(direct_rows) > 1000 and sorted(direct_summary["runs"]) == ["run0", "run1"]
    pd.testing.assert_frame_equal(direct_rows, spark_rows, check_exact=True)
    assert direct_summary == spark_summary


@pytest.mark.spark
def test_a_bad_line_gets_the_spark_readers_error(spark, tmp_path, capsys) -> None:
    paths = write_text_collection(tmp_path / "data", 3)
    run = paths["runs"][0]
    lines = run.read_bytes().split(b"\n")
    lines.insert(40, b"q7 Q0 dX 5 not-a-number run0")
    run.write_bytes(b"\n".join(lines))
    messages = error_lines_of_both_readers(paths, tmp_path, capsys, "not-a-number")
    assert messages[0] and messages[0] == messages[1]


@pytest.mark.spark
@pytest.mark.parametrize("damage", ["truncated", "flipped byte"])
def test_a_damaged_gzip_run_gets_the_spark_readers_error(spark, tmp_path, capsys, damage) -> None:
    paths = write_text_collection(tmp_path / "data", 4)
    run = paths["runs"][0]
    packed = bytearray(gzip.compress(run.read_bytes()))
    if damage == "truncated":
        packed = packed[: len(packed) // 2]
    else:
        packed[len(packed) // 2] ^= 0xFF
    paths["runs"][0] = run.with_suffix(".txt.gz")
    paths["runs"][0].write_bytes(bytes(packed))
    messages = error_lines_of_both_readers(paths, tmp_path, capsys, "error:")
    assert len(messages[0]) == 1 and messages[0] == messages[1]


def _single_spaced(rows: list[tuple]) -> bytes:
    return "".join(" ".join(str(f) for f in row) + "\n" for row in rows).encode()


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_single_spaced_text_takes_the_quick_parse_with_the_same_fields(kind) -> None:
    run, qrels = random_collection(5, queries=40)
    if kind == "run":
        triples = zip(run.query_id, run.doc_id, run.score, strict=True)
        rows = [(q, "Q0", d, i, f"{s:+.4e}" if i % 3 else s, "tag")
                for i, (q, d, s) in enumerate(triples)]  # fmt: skip
    else:
        rows = [(q, 0, d, g) for q, d, g in qrels.itertuples(index=False)]
    data = _single_spaced(rows)
    cut = data.index(b"\n", 200) + 1
    data = data[:cut] + b"\n" + data[cut:]  # an empty line: skipped by both parses
    assert direct_text._single_spaced_fields(data, kind) is not None
    quick = direct_text.parse_text(data, kind, "x")
    general = direct_text.parse_text(b"# a comment: the general parse\n" + data, kind, "x")
    assert direct_text._single_spaced_fields(b"# a comment\n" + data, kind) is None
    assert [a.to_pylist() for a in quick] == [a.to_pylist() for a in general]


@pytest.mark.parametrize(
    "data",
    [
        b"q1 Q0 d1 1 2.5 r\nq1 Q0 d2 2  1 r\n",  # two spaces
        b"q1 Q0 d1 1 2.5 r\n q1 Q0 d2 2 1 r\n",  # a leading space
        b"q1 Q0 d1 1 2.5 r \n",  # a trailing space
        b"q1\tQ0 d1 1 2.5 r\n",  # a tab
        b"q1 Q0 d1 1 2.5 r\r\n",  # a carriage return
        b"q1 Q0 d1 1 2.5 r extra\n",  # an extra field
        b"q1 Q0 d1 1 2.5\n",  # a missing field
        b"# a b c d e\n",  # a comment of six words
        b"q1 Q0 caf\xe9 1 2 r\n",  # not UTF-8
    ],
)
def test_anything_but_single_spaced_lines_takes_the_general_parse(data: bytes) -> None:
    assert direct_text._single_spaced_fields(data, "run") is None


@pytest.mark.spark
def test_workers_read_single_spaced_trec_text_as_spark_does(spark, tmp_path, capsys) -> None:
    run, qrels = random_collection(6, queries=50, runs=2, edge_queries=True)
    paths = {"runs": []}
    for run_id, group in run.groupby("run_id"):
        triples = zip(group.query_id, group.doc_id, group.score, strict=True)
        rows = [(q, "Q0", d, i, s, run_id) for i, (q, d, s) in enumerate(triples)]
        path = tmp_path / f"{run_id}.txt"
        path.write_bytes(_single_spaced(rows))
        paths["runs"].append(path)
    paths["qrels"] = tmp_path / "qrels.txt.gz"
    judged = [(q, 0, d, g) for q, d, g in qrels.itertuples(index=False)]
    paths["qrels"].write_bytes(gzip.compress(_single_spaced(judged)))
    assert direct_text._single_spaced_fields(paths["runs"][0].read_bytes(), "run") is not None
    assert _evaluate(paths, tmp_path / "direct", "auto") == EXIT_OK
    assert "inputs read by the driver's threads" in capsys.readouterr().err
    assert _evaluate(paths, tmp_path / "spark", "spark") == EXIT_OK
    direct_rows, direct_summary = _results(tmp_path / "direct")
    spark_rows, spark_summary = _results(tmp_path / "spark")
    assert len(direct_rows) > 1000
    pd.testing.assert_frame_equal(direct_rows, spark_rows, check_exact=True)
    assert direct_summary == spark_summary
