"""Odd but valid inputs read right, and bad ones refused in one line, for every command.

Each value case writes a few lines and states the value it must give, derived by hand
in the comments (trec_eval's rules: docs by score descending, tied scores by doc id
descending; P@k divides by k; a query of the qrels missing from a run scores 0).
Each refusal is exit 2 with one error line naming the problem, no traceback, no
output directory or staging leftovers, and the inputs as they were.

``evaluate`` runs in this process (``--engine local``), so most cases start no JVM;
the other commands' option refusals happen before Spark starts, and their value cases
use the test session's shared Spark session.
"""

from __future__ import annotations

import gzip
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.cli import main
from tests.reliability.test_hostile_inputs import assert_refused

#: q1 judges d1 relevant and d2 not
QRELS = "q1 0 d1 1\nq1 0 d2 0\n"
#: d1 ranked first, d2 second: P@1 = 1, RR = 1
TREC_RIGHT = "q1 Q0 d1 1 2 r\nq1 Q0 d2 2 1 r\n"
#: a run and qrels that read right
GOOD = {"run.txt": TREC_RIGHT, "qrels.txt": QRELS}


def parquet_bytes(columns: dict[str, pa.Array | list]) -> bytes:
    """``columns`` as the bytes of one Parquet file."""
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue().to_pybytes()


def gz(text: str) -> bytes:
    """``text`` as one gzip member."""
    return gzip.compress(text.encode(), mtime=0)


def jsonl(*rows: dict) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


@dataclass(frozen=True)
class Case:
    """Files to write (name → text or bytes), the arguments, what must come out."""

    files: dict[str, str | bytes]
    argv: list[str]
    #: value cases: measure → value of the one run (or RUN/measure → value)
    expected: dict[str, float | None] = field(default_factory=dict)
    #: refusals: fragments of the one error line
    fragments: tuple[str, ...] = ()
    #: the output directory value cases read
    out: str = "out"
    #: an input only Spark's readers take (quoted CSV, JSON Lines, ...): run on Spark
    spark: bool = False


def ev(
    run: str | list[str], measures: str = "P@1", qrels: str = "qrels.txt", *extra: str
) -> list[str]:
    """``evaluate`` arguments, in this process, writing ``out``."""
    runs = [run] if isinstance(run, str) else run
    argv = ["evaluate", "--qrels", qrels, "--measures", measures, "--out", "out"]
    for name in runs:
        argv += ["--run", name]
    return [*argv, "--engine", "local", *extra]


def run_main(argv: list[str]) -> int:
    """The CLI's exit code (argparse's refusals exit through ``SystemExit``)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` (by relative path) and its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def assert_nothing_left(root: Path, before: dict[str, bytes]) -> None:
    assert not (root / "out").exists()
    assert not [p.name for p in root.iterdir() if p.name.startswith(".out")], "leftovers"
    assert snapshot(root) == before, "an input was changed"


def run_measures(out: Path) -> dict[str, float | None]:
    """``RUN/measure → value`` of every run, and ``measure → value`` with one run."""
    runs = json.loads((out / "summary.json").read_text())["runs"]
    flat = {
        f"{run}/{name}": value
        for run, block in runs.items()
        for name, value in block["measures"].items()
    }
    if len(runs) == 1:
        (block,) = runs.values()
        flat.update(block["measures"])
    return flat


def check_values(case: Case, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    write_files(tmp_path, case.files)
    if (tmp_path / "real").is_dir():  # the cases that name their inputs through links
        (tmp_path / "link.txt").symlink_to(tmp_path / "real" / "run.txt")
        (tmp_path / "linkdir").symlink_to(tmp_path / "real", target_is_directory=True)
    argv = [("spark" if case.spark and arg == "local" else arg) for arg in case.argv]
    code = run_main(argv)
    err = capsys.readouterr().err
    assert code == 0, err[-3000:]
    got = run_measures(tmp_path / case.out)
    for name, value in case.expected.items():
        if value is None:
            assert got[name] is None, (name, got)
        else:
            assert got[name] == pytest.approx(value, abs=1e-12), (name, got)


def check_refusal(case: Case, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    write_files(tmp_path, case.files)
    before = snapshot(tmp_path)
    argv = [("spark" if case.spark and arg == "local" else arg) for arg in case.argv]
    code = run_main(argv)
    err = capsys.readouterr().err
    assert_refused(code, err, *case.fragments)
    assert_nothing_left(tmp_path, before)


# --- evaluate: odd but valid inputs give the right value ---------------------------------

LONG = "d" * 5000

EVALUATE_VALUES: dict[str, Case] = {
    # the CRLF of the last column is no part of the id: d1 (score 2) first, P@1 = 1
    "csv with CRLF line ends and the doc id last": Case(
        {"run.csv": "query_id,score,doc_id\r\nq1,1,d2\r\nq1,2,d1\r\n", "qrels.txt": QRELS},
        ev("run.csv"),
        {"P@1": 1.0},
        spark=True,
    ),
    # CRLF in the qrels: grade "1\r" is the grade 1, so d1 is relevant: P@1 = 1
    "trec qrels with CRLF line ends": Case(
        {"run.txt": TREC_RIGHT, "qrels.txt": QRELS.replace("\n", "\r\n")},
        ev("run.txt"),
        {"P@1": 1.0},
    ),
    # 1e-3 > 5e-4 > -2E+2 as numbers (as text "5e-4" would sort first): d1 first, P@1 = 1
    "scores in exponent notation rank as numbers": Case(
        {
            "run.txt": "q1 Q0 d3 1 5e-4 r\nq1 Q0 d1 2 1e-3 r\nq1 Q0 d2 3 -2E+2 r\n",
            "qrels.txt": "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 0\n",
        },
        ev("run.txt", "P@1,RR"),
        {"P@1": 1.0, "RR": 1.0},
    ),
    # exponent notation in a CSV score column: 2.5E1 = 25 > 3e0 = 3, d1 first
    "csv scores in exponent notation": Case(
        {"run.csv": "query_id,doc_id,score\nq1,d2,3e0\nq1,d1,2.5E1\n", "qrels.txt": QRELS},
        ev("run.csv"),
        {"P@1": 1.0},
    ),
    # equal scores: doc id descending puts d2 first; RR = 1/2
    "tied scores rank by doc id descending": Case(
        {"run.txt": "q1 Q0 d1 1 1 r\nq1 Q0 d2 2 1 r\n", "qrels.txt": QRELS},
        ev("run.txt", "P@1,RR"),
        {"P@1": 0.0, "RR": 0.5},
    ),
    # -0.0 == 0.0 (as trec_eval compares doubles): a tie, so d2 first; RR = 1/2
    "minus zero ties with zero": Case(
        {"run.txt": "q1 Q0 d1 1 0.0 r\nq1 Q0 d2 2 -0.0 r\n", "qrels.txt": QRELS},
        ev("run.txt", "P@1,RR"),
        {"P@1": 0.0, "RR": 0.5},
    ),
    # -0.0 and 0.0 in a Parquet double column tie the same way
    "minus zero ties with zero in parquet": Case(
        {
            "run.parquet": parquet_bytes(
                {"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [0.0, -0.0]}
            ),
            "qrels.txt": QRELS,
        },
        ev("run.parquet", "RR"),
        {"RR": 0.5},
    ),
    # tied doc ids compare as bytes: "d10" > "d1" > "D9" ("D" < "d"), relevant D9 is third
    "ties break by byte order of the doc ids": Case(
        {
            "run.txt": "q1 Q0 D9 1 1 r\nq1 Q0 d1 2 1 r\nq1 Q0 d10 3 1 r\n",
            "qrels.txt": "q1 0 D9 1\n",
        },
        ev("run.txt", "RR"),
        {"RR": 1 / 3},
    ),
    # +inf ranks first and -inf last: d1 first
    "infinite scores rank first and last": Case(
        {"run.txt": "q1 Q0 d2 1 -inf r\nq1 Q0 d1 2 inf r\nq1 Q0 d3 3 0 r\n", "qrels.txt": QRELS},
        ev("run.txt", "P@1,RR"),
        {"P@1": 1.0, "RR": 1.0},
        spark=True,
    ),
    # one relevant doc retrieved at rank 1 of 2, P@k divides by k: 1/1000000
    "a cutoff far beyond the ranking": Case(
        {"run.txt": TREC_RIGHT, "qrels.txt": QRELS},
        ev("run.txt", "P@1000000,nDCG@1000000"),
        {"P@1000000": 1e-6, "nDCG@1000000": 1.0},
    ),
    # one row: P@5 = 1/5, AP = 1/R = 1, R@1 = 1
    "a run of one row": Case(
        {"run.txt": "q1 Q0 d1 1 3.5 r\n", "qrels.txt": QRELS},
        ev("run.txt", "P@5,AP,R@1"),
        {"P@5": 0.2, "AP": 1.0, "R@1": 1.0},
    ),
    # the same doc id in two queries is two docs: q1 ranks its relevant d1 first (P@1 = 1),
    # q2 ranks its non-relevant d1 first (P@1 = 0); mean 0.5
    "one doc id in two queries": Case(
        {
            "run.txt": "q1 Q0 d1 1 2 r\nq1 Q0 d2 2 1 r\nq2 Q0 d1 1 2 r\nq2 Q0 d2 2 1 r\n",
            "qrels.txt": "q1 0 d1 1\nq2 0 d1 0\nq2 0 d2 1\n",
        },
        ev("run.txt"),
        {"P@1": 0.5},
    ),
    # a judged query missing from the run scores 0 (queries=qrels): (1 + 0) / 2
    "a judged query missing from the run scores zero": Case(
        {"run.txt": TREC_RIGHT, "qrels.txt": QRELS + "q2 0 d9 1\n"},
        ev("run.txt"),
        {"P@1": 0.5},
    ),
    # trailing blanks, tabs between fields and several spaces: the same two lines
    "trec fields separated by mixed blanks": Case(
        {"run.txt": "q1\tQ0  d1 1\t2 r  \n  q1 Q0\td2\t2 1 r\t\n", "qrels.txt": QRELS},
        ev("run.txt"),
        {"P@1": 1.0},
    ),
    # fields beyond the tag are ignored (as documented)
    "trec run lines with extra trailing fields": Case(
        {"run.txt": "q1 Q0 d1 1 2 r x y\nq1 Q0 d2 2 1 r z\n", "qrels.txt": QRELS},
        ev("run.txt"),
        {"P@1": 1.0},
    ),
    # comment lines anywhere are skipped
    "comment lines between trec lines": Case(
        {"run.txt": "# head\nq1 Q0 d1 1 2 r\n# between\nq1 Q0 d2 2 1 r\n", "qrels.txt": QRELS},
        ev("run.txt"),
        {"P@1": 1.0},
    ),
    # a last line without its newline is read
    "a last line without a newline": Case(
        {"run.txt": "q1 Q0 d2 2 1 r\nq1 Q0 d1 1 2 r", "qrels.txt": QRELS.rstrip("\n")},
        ev("run.txt"),
        {"P@1": 1.0},
    ),
    # columns in another order, with columns no one asked for
    "csv columns in another order with extra columns": Case(
        {
            "run.csv": "note,score,doc_id,extra,query_id\nx,1,d2,y,q1\nz,2,d1,w,q1\n",
            "qrels.txt": QRELS,
        },
        ev("run.csv"),
        {"P@1": 1.0},
    ),
    "tsv run": Case(
        {"run.tsv": "query_id\tdoc_id\tscore\nq1\td2\t1\nq1\td1\t2\n", "qrels.txt": QRELS},
        ev("run.tsv"),
        {"P@1": 1.0},
    ),
    # aliases of the canonical names: qid, docno, prediction
    "csv columns under their aliases": Case(
        {"run.csv": "qid,docno,prediction\nq1,d2,1\nq1,d1,2\n", "qrels.txt": QRELS},
        ev("run.csv"),
        {"P@1": 1.0},
    ),
    # a quoted id holding the separator is one id "d,1" (relevant): ranked first
    "a quoted csv id holding a comma": Case(
        {
            "run.csv": 'query_id,doc_id,score\nq1,"d,1",2\nq1,d2,1\n',
            "qrels.csv": 'query_id,doc_id,relevance\nq1,"d,1",1\nq1,d2,0\n',
        },
        ev("run.csv", "P@1", "qrels.csv"),
        {"P@1": 1.0},
        spark=True,
    ),
    # " d1" (leading blank) is not d1: the run's first doc is unjudged, so P@2 = 0
    "a blank inside a csv id is part of the id": Case(
        {"run.csv": 'query_id,doc_id,score\nq1," d1",2\nq1,d2,1\n', "qrels.txt": QRELS},
        ev("run.csv", "P@1,P@2"),
        {"P@1": 0.0, "P@2": 0.0},
        spark=True,
    ),
    # keys in any order, extra keys, and an empty last line
    "json lines with keys in any order": Case(
        {
            "run.jsonl": '{"score": 1, "doc_id": "d2", "query_id": "q1", "x": [1]}\n'
            '{"query_id": "q1", "extra": null, "doc_id": "d1", "score": 2}\n\n',
            "qrels.txt": QRELS,
        },
        ev("run.jsonl"),
        {"P@1": 1.0},
        spark=True,
    ),
    # integer ids in JSON are the text "1" and "7" of the qrels
    "json integer ids join text ids": Case(
        {
            "run.jsonl": jsonl(
                {"query_id": 1, "doc_id": 7, "score": 2}, {"query_id": 1, "doc_id": 8, "score": 1}
            ),
            "qrels.txt": "1 0 7 1\n1 0 8 0\n",
        },
        ev("run.jsonl"),
        {"P@1": 1.0},
        spark=True,
    ),
    # a 5,000-character doc id matches itself
    "a very long doc id": Case(
        {"run.txt": f"q1 Q0 {LONG} 1 2 r\nq1 Q0 d2 2 1 r\n", "qrels.txt": f"q1 0 {LONG} 1\n"},
        ev("run.txt"),
        {"P@1": 1.0},
    ),
    # unicode ids (CJK, emoji, a combining accent) in a CSV run against TREC qrels
    "unicode ids across csv and trec": Case(
        {
            "run.csv": "query_id,doc_id,score\n查询,doc🙂,2\n查询,e\u0301,1\n",
            "qrels.txt": "查询 0 doc🙂 1\n查询 0 e\u0301 0\n",
        },
        ev("run.csv", "P@1,RR"),
        {"P@1": 1.0, "RR": 1.0},
    ),
    # ids with leading zeros in Parquet text columns stay themselves: "007" is relevant
    "leading zeros in parquet ids": Case(
        {
            "run.parquet": parquet_bytes(
                {"query_id": ["01", "01"], "doc_id": ["7", "007"], "score": [2.0, 1.0]}
            ),
            "qrels.txt": "01 0 007 1\n01 0 7 0\n",
        },
        ev("run.parquet", "P@1,RR"),
        {"P@1": 0.0, "RR": 0.5},
    ),
    # int64 ids, float32 scores, columns in another order, an extra column
    "parquet of integer ids and float32 scores in another order": Case(
        {
            "run.parquet": parquet_bytes(
                {
                    "score": pa.array([1.0, 2.0], pa.float32()),
                    "extra": ["a", "b"],
                    "doc_id": pa.array([8, 7], pa.int64()),
                    "query_id": pa.array([1, 1], pa.int32()),
                }
            ),
            "qrels.txt": "1 0 7 1\n1 0 8 0\n",
        },
        ev("run.parquet"),
        {"P@1": 1.0},
    ),
    # integer scores rank as numbers: 10 > 9
    "parquet integer scores": Case(
        {
            "run.parquet": parquet_bytes(
                {
                    "query_id": ["q1", "q1"],
                    "doc_id": ["d1", "d2"],
                    "score": pa.array([10, 9], pa.int64()),
                }
            ),
            "qrels.txt": QRELS,
        },
        ev("run.parquet"),
        {"P@1": 1.0},
    ),
    # "item" is an alias of doc_id
    "a parquet doc column under an alias": Case(
        {
            "run.parquet": parquet_bytes(
                {"query_id": ["q1", "q1"], "item": ["d2", "d1"], "score": [1.0, 2.0]}
            ),
            "qrels.txt": QRELS,
        },
        ev("run.parquet"),
        {"P@1": 1.0},
    ),
    # a run of ranks and no scores: rank 1 first
    "a csv of ranks without scores": Case(
        {"run.csv": "query_id,doc_id,rank\nq1,d2,2\nq1,d1,1\n", "qrels.txt": QRELS},
        ev("run.csv"),
        {"P@1": 1.0},
        spark=True,
    ),
    # a gzip run and gzip qrels, both TREC text
    "gzip trec run and qrels": Case(
        {"run.txt.gz": gz(TREC_RIGHT), "qrels.txt.gz": gz(QRELS)},
        ev("run.txt.gz", "P@1", "qrels.txt.gz"),
        {"P@1": 1.0},
    ),
    # two gzip members (as `cat a.gz b.gz`): the second holds d1, which must be read
    "a gzip file of two members": Case(
        {"run.txt.gz": gz("q1 Q0 d2 2 1 r\n") + gz("q1 Q0 d1 1 2 r\n"), "qrels.txt": QRELS},
        ev("run.txt.gz", "P@1,num_ret"),
        {"P@1": 1.0, "NumRet": 2.0},
    ),
    "gzip json lines": Case(
        {
            "run.jsonl.gz": gz(
                jsonl(
                    {"query_id": "q1", "doc_id": "d1", "score": 2},
                    {"query_id": "q1", "doc_id": "d2", "score": 1},
                )
            ),
            "qrels.txt": QRELS,
        },
        ev("run.jsonl.gz"),
        {"P@1": 1.0},
        spark=True,
    ),
    # paths with blanks and non-ASCII letters are read as named
    "a path with blanks and unicode": Case(
        {"my runs/rün ☃ 1.txt": TREC_RIGHT, "qr els/qrels ü.txt": QRELS},
        ev("my runs/rün ☃ 1.txt", "P@1", "qr els/qrels ü.txt"),
        {"P@1": 1.0},
    ),
    # a nested output directory whose parents do not exist yet is created
    "an output below directories not made yet": Case(
        {"run.txt": TREC_RIGHT, "qrels.txt": QRELS},
        [*ev("run.txt"), "--out", "a/b c/out"],
        {"P@1": 1.0},
        out="a/b c/out",
    ),
    # --depth 1 keeps d2 (score 2) only: the relevant d1 is cut, AP = 0, num_ret = 1
    "depth one": Case(
        {"run.txt": "q1 Q0 d1 1 1 r\nq1 Q0 d2 2 2 r\n", "qrels.txt": QRELS},
        ev("run.txt", "AP,num_ret", "qrels.txt", "--depth", "1"),
        {"AP": 0.0, "NumRet": 1.0},
    ),
    # --rel-level 2: only d2 (grade 2) is relevant; it is second, RR = 1/2
    "rel level above the first grade": Case(
        {"run.txt": TREC_RIGHT, "qrels.txt": "q1 0 d1 1\nq1 0 d2 2\n"},
        ev("run.txt", "P@1,RR", "qrels.txt", "--rel-level", "2"),
        {"P@1": 0.0, "RR": 0.5},
    ),
    # no grade reaches 1: nothing retrieved is relevant; P@2 = 0 / 2
    "qrels of negative grades only": Case(
        {"run.txt": TREC_RIGHT, "qrels.txt": "q1 0 d1 -1\nq1 0 d2 -2\n"},
        ev("run.txt", "P@2,num_rel_ret"),
        {"P@2": 0.0, "NumRelRet": 0.0},
    ),
    # negative grades are judged non-relevant: P@2 counts d1 only (1/2)
    "a negative grade is not relevant": Case(
        {"run.txt": TREC_RIGHT, "qrels.txt": "q1 0 d1 1\nq1 0 d2 -3\n"},
        ev("run.txt", "P@2"),
        {"P@2": 0.5},
    ),
    # mixed-case family names as typed: ndcg@1 is nDCG@1 = 1, map is AP = 1
    "measure names in another case": Case(
        {"run.txt": TREC_RIGHT, "qrels.txt": QRELS},
        ev("run.txt", "ndcg@1,p@1"),
        {"nDCG@1": 1.0, "P@1": 1.0},
    ),
    # a measure named twice is evaluated once, with its value
    "a measure named twice": Case(
        {"run.txt": TREC_RIGHT, "qrels.txt": QRELS},
        ev("run.txt", "P@1,P@1"),
        {"P@1": 1.0},
    ),
    # the same measure under its trec_eval and canonical names
    "one measure under two names": Case(
        {"run.txt": TREC_RIGHT, "qrels.txt": QRELS},
        ev("run.txt", "P_1,P@1"),
        {"P@1": 1.0},
    ),
    # cutoff 1 is the lowest: Success@1 = 1, RR@1 = 1, nDCG@1 = 1
    "measures at cutoff one": Case(
        {"run.txt": TREC_RIGHT, "qrels.txt": QRELS},
        ev("run.txt", "Success@1,RR@1,nDCG@1,AP@1"),
        {"Success@1": 1.0, "RR@1": 1.0, "nDCG@1": 1.0, "AP@1": 1.0},
    ),
    # two runs from two files, each named by its tag
    "two runs named by their tags": Case(
        {
            "a.txt": "q1 Q0 d1 1 2 A\nq1 Q0 d2 2 1 A\n",
            "b.txt": "q1 Q0 d1 1 1 B\nq1 Q0 d2 2 2 B\n",
            "qrels.txt": QRELS,
        },
        ev(["a.txt", "b.txt"]),
        {"A/P@1": 1.0, "B/P@1": 0.0},
    ),
    # a symbolic link to the run file is read as the file
    "a run named through a symbolic link": Case(
        {"real/run.txt": TREC_RIGHT, "qrels.txt": QRELS},
        ev("link.txt"),
        {"P@1": 1.0},
    ),
    # a symbolic link to a directory of Parquet files
    "a parquet directory named through a symbolic link": Case(
        {
            "real/part-0.parquet": parquet_bytes(
                {"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]}
            ),
            "qrels.txt": QRELS,
        },
        ev("linkdir"),
        {"P@1": 1.0},
    ),
    # dictionary-encoded and large_string id columns are text like any other
    "parquet ids dictionary-encoded and large strings": Case(
        {
            "run.parquet": parquet_bytes(
                {
                    "query_id": pa.array(["q1", "q1"]).dictionary_encode(),
                    "doc_id": pa.array(["d2", "d1"], pa.large_string()),
                    "score": [1.0, 2.0],
                }
            ),
            "qrels.txt": QRELS,
        },
        ev("run.parquet", "P@1,RR"),
        {"P@1": 1.0, "RR": 1.0},
        spark=True,
    ),
    # a query of the run only is left out under --queries qrels: P@1 of q1 alone
    "a query of the run only is not evaluated": Case(
        {"run.txt": TREC_RIGHT + "q9 Q0 d1 1 5 r\n", "qrels.txt": QRELS},
        ev("run.txt"),
        {"P@1": 1.0},
    ),
    # --queries both leaves out q2 (judged, not in the run): the mean over q1 alone
    "queries both leaves out a judged query missing from the run": Case(
        {"run.txt": TREC_RIGHT, "qrels.txt": QRELS + "q2 0 d9 1\n"},
        ev("run.txt", "P@1", "qrels.txt", "--queries", "both"),
        {"P@1": 1.0},
    ),
    # an output path with blanks, non-ASCII letters and a .. segment
    "an output path of unicode with a dot-dot segment": Case(
        GOOD,
        [*ev("run.txt"), "--out", "sub/../résultats ☃/out"],
        {"P@1": 1.0},
        out="résultats ☃/out",
    ),
    # a byte order mark before the CSV header is no part of the first column's name
    "a csv header after a byte order mark": Case(
        {"run.csv": "\ufeffquery_id,doc_id,score\nq1,d1,2\nq1,d2,1\n", "qrels.txt": QRELS},
        ev("run.csv"),
        {"P@1": 1.0},
        spark=True,
    ),
    # nor of the first qrels line's query id: q1 of the run meets q1 of the qrels
    "trec qrels after a byte order mark": Case(
        {"run.txt": TREC_RIGHT, "qrels.txt": "\ufeff" + QRELS},
        ev("run.txt"),
        {"P@1": 1.0},
        spark=True,
    ),
    # signed and zero-padded grades are the integers 1 and 0: d1 relevant, P@2 = 1/2
    "grades written +1 and -0": Case(
        {"run.txt": TREC_RIGHT, "qrels.txt": "q1 0 d1 +1\nq1 0 d2 -0\n"},
        ev("run.txt", "P@1,P@2"),
        {"P@1": 1.0, "P@2": 0.5},
    ),
    "grades written 01 and 00": Case(
        {"run.txt": TREC_RIGHT, "qrels.txt": "q1 0 d1 01\nq1 0 d2 00\n"},
        ev("run.txt", "P@1,P@2"),
        {"P@1": 1.0, "P@2": 0.5},
    ),
    # +2 > .5 and 5. > -.5: d1 first either way
    "scores written +2 and .5": Case(
        {"run.txt": "q1 Q0 d2 2 .5 r\nq1 Q0 d1 1 +2 r\n", "qrels.txt": QRELS},
        ev("run.txt"),
        {"P@1": 1.0},
    ),
    "scores written 5. and -.5": Case(
        {"run.txt": "q1 Q0 d2 2 -.5 r\nq1 Q0 d1 1 5. r\n", "qrels.txt": QRELS},
        ev("run.txt"),
        {"P@1": 1.0},
    ),
    # a file without a suffix is CSV when --run-format says so; its columns mapped
    "a csv run without a suffix under --run-format": Case(
        {"run": "a,b,c\nq1,d2,1\nq1,d1,2\n", "qrels.txt": QRELS},
        ev(
            "run",
            "P@1",
            "qrels.txt",
            "--run-format",
            "csv",
            "--run-columns",
            "query_id=a,doc_id=b,score=c",
        ),
        {"P@1": 1.0},
        spark=True,
    ),
    # a .txt name holding tab-separated columns, read as TSV under --run-format tsv
    "a tsv run under a txt name": Case(
        {"tabs.txt": "query_id\tdoc_id\tscore\nq1\td2\t1\nq1\td1\t2\n", "qrels.txt": QRELS},
        ev("tabs.txt", "P@1", "qrels.txt", "--run-format", "tsv"),
        {"P@1": 1.0},
        spark=True,
    ),
    # a run id column holding two runs in one CSV file
    "two runs in one csv": Case(
        {
            "runs.csv": "run_id,query_id,doc_id,score\n"
            "A,q1,d1,2\nA,q1,d2,1\nB,q1,d1,1\nB,q1,d2,2\n",
            "qrels.txt": QRELS,
        },
        ev("runs.csv"),
        {"A/P@1": 1.0, "B/P@1": 0.0},
    ),
}


@pytest.mark.parametrize("case", sorted(k for k, v in EVALUATE_VALUES.items() if not v.spark))
def test_evaluate_reads_an_odd_but_valid_input_right(
    case: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    check_values(EVALUATE_VALUES[case], tmp_path, monkeypatch, capsys)


@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(k for k, v in EVALUATE_VALUES.items() if v.spark))
def test_evaluate_reads_an_odd_but_valid_input_right_through_spark(
    case: str, spark, tmp_path: Path, monkeypatch, capsys
) -> None:
    check_values(EVALUATE_VALUES[case], tmp_path, monkeypatch, capsys)


@pytest.mark.spark
def test_relative_paths_are_read_by_workers_in_another_directory(
    spark, tmp_path: Path, monkeypatch, capsys
) -> None:
    """The session's Python workers run where the session started; a relative input
    path given after the process changed directory still names the file it names here.

    ``runs/`` (a directory of one Parquet file) ranks d1 first: P@1 = 1, and so does
    the CSV run (a quoted field: read by the workers): two runs, each P@1 = 1.
    """
    files = {
        "runs/part-0.parquet": parquet_bytes(
            {
                "run_id": ["p", "p"],
                "query_id": ["q1", "q1"],
                "doc_id": ["d1", "d2"],
                "score": [2.0, 1.0],
            }
        ),
        "run.csv": 'query_id,doc_id,score\nq1,"d1",2\nq1,d2,1\n',
        "qrels.txt": QRELS,
    }
    case = Case(files, ev(["runs", "run.csv"]), {"p/P@1": 1.0, "run/P@1": 1.0}, spark=True)
    check_values(case, tmp_path, monkeypatch, capsys)


# --- evaluate: bad inputs and options are one exit-2 line, nothing written ---------------

EVALUATE_REFUSALS: dict[str, Case] = {
    "an empty measure list": Case(GOOD, ev("run.txt", ""), fragments=("measures",)),
    "a measure list of commas only": Case(GOOD, ev("run.txt", ",,"), fragments=("measures",)),
    "a cutoff with trailing letters": Case(GOOD, ev("run.txt", "P@1x"), fragments=("P@1x",)),
    "a negative cutoff": Case(GOOD, ev("run.txt", "P@-1"), fragments=("P@-1",)),
    "a fractional cutoff": Case(GOOD, ev("run.txt", "nDCG@2.5"), fragments=("nDCG@2.5",)),
    # 2^63 - 1 is the largest cutoff (was exit 1 for nDCG, an overflow in the kernel)
    "a cutoff beyond 64 bits": Case(
        GOOD,
        ev("run.txt", "nDCG@99999999999999999999999"),
        fragments=("nDCG@99999999999999999999999", "2^63-1"),
    ),
    "a cutoff of two to the 63": Case(
        GOOD, ev("run.txt", "P@9223372036854775808"), fragments=("P@9223372036854775808", "2^63-1")
    ),
    "a trec_eval cutoff list beyond 64 bits": Case(
        GOOD,
        ev("run.txt", "ndcg_cut.5,99999999999999999999999"),
        fragments=("ndcg_cut.5,99999999999999999999999", "2^63-1"),
    ),
    "an unknown measure beside a known one": Case(
        GOOD, ev("run.txt", "P@1,nDCG@10,NotAMeasure"), fragments=("NotAMeasure",)
    ),
    "depth zero": Case(
        GOOD, ev("run.txt", "P@1", "qrels.txt", "--depth", "0"), fragments=("depth",)
    ),
    "a negative depth": Case(
        GOOD, ev("run.txt", "P@1", "qrels.txt", "--depth", "-5"), fragments=("depth",)
    ),
    "a fractional depth": Case(
        GOOD, ev("run.txt", "P@1", "qrels.txt", "--depth", "1.5"), fragments=("depth",)
    ),
    "a rel level that is not a number": Case(
        GOOD, ev("run.txt", "P@1", "qrels.txt", "--rel-level", "x"), fragments=("rel-level",)
    ),
    "an unknown queries policy": Case(
        GOOD, ev("run.txt", "P@1", "qrels.txt", "--queries", "all"), fragments=("--queries",)
    ),
    "an unknown engine": Case(GOOD, [*ev("run.txt"), "--engine", "gpu"], fragments=("--engine",)),
    # --engine local names a missing input as Spark's readers do (was: "an input the
    # direct readers do not plan ... use --engine spark")
    "a missing run file": Case(GOOD, ev("nope.txt"), fragments=("nope.txt", "no such file")),
    "a missing qrels file": Case(
        GOOD, ev("run.txt", "P@1", "nope.txt"), fragments=("nope.txt", "no such file")
    ),
    # one source column for two roles read as "duplicate doc q1"; a key given twice
    # took its last value silently
    "a column mapping that names one column for two roles": Case(
        {"run": "a,b,c\nq1,d1,2\nq1,d2,1\n", "qrels.txt": QRELS},
        ev(
            "run",
            "P@1",
            "qrels.txt",
            "--run-format",
            "csv",
            "--run-columns",
            "query_id=a,doc_id=a,score=c",
        ),
        fragments=("maps the column a to two columns",),
    ),
    "a column mapping that gives one key twice": Case(
        {"run": "a,b,c\nq1,d1,2\nq1,d2,1\n", "qrels.txt": QRELS},
        ev(
            "run",
            "P@1",
            "qrels.txt",
            "--run-format",
            "csv",
            "--run-columns",
            "query_id=a,doc_id=b,score=c,score=a",
        ),
        fragments=("gives score twice", "score=a"),
    ),
    "an empty output path": Case(GOOD, [*ev("run.txt"), "--out", ""], fragments=("out",)),
    # the qrels have three fields (no iteration column)
    "qrels lines of three fields": Case(
        {"run.txt": TREC_RIGHT, "qrels.txt": "q1 d1 1\nq1 d2 0\n"},
        ev("run.txt"),
        fragments=("qrels.txt",),
        spark=True,
    ),
    # a run file of comments only holds no rows
    "a run of comments only": Case(
        {"run.txt": "# nothing\n# here\n", "qrels.txt": QRELS},
        ev("run.txt"),
        fragments=("run.txt",),
        spark=True,
    ),
    "an empty gzip run": Case(
        {"run.txt.gz": gz(""), "qrels.txt": QRELS},
        ev("run.txt.gz"),
        fragments=("run.txt.gz",),
        spark=True,
    ),
    "a zero-byte parquet run": Case(
        {"run.parquet": b"", "qrels.txt": QRELS},
        ev("run.parquet"),
        fragments=("run.parquet",),
        spark=True,
    ),
    "a directory of hidden files only": Case(
        {"runs/_SUCCESS": "", "runs/.part.crc": "x", "qrels.txt": QRELS},
        ev("runs"),
        fragments=("runs",),
        spark=True,
    ),
    "a csv without a score or rank column": Case(
        {"run.csv": "query_id,doc_id\nq1,d1\n", "qrels.txt": QRELS},
        ev("run.csv"),
        fragments=("run.csv",),
        spark=True,
    ),
    "a csv header naming a column twice": Case(
        {"run.csv": "query_id,doc_id,score,score\nq1,d1,1,2\n", "qrels.txt": QRELS},
        ev("run.csv"),
        fragments=("run.csv", "score"),
        spark=True,
    ),
    # a separator after the last field makes a fourth field the header does not have
    "a trailing separator on a csv row": Case(
        {"run.csv": "query_id,doc_id,score\nq1,d1,2,\nq1,d2,1\n", "qrels.txt": QRELS},
        ev("run.csv"),
        fragments=("run.csv:2", "malformed"),
        spark=True,
    ),
    "a trec score with a digit separator": Case(
        {"run.txt": "q1 Q0 d1 1 1_000 r\n", "qrels.txt": QRELS},
        ev("run.txt"),
        fragments=("run.txt",),
        spark=True,
    ),
    "a trec score in hexadecimal": Case(
        {"run.txt": "q1 Q0 d1 1 0x10 r\n", "qrels.txt": QRELS},
        ev("run.txt"),
        fragments=("run.txt",),
        spark=True,
    ),
    "a nan score in parquet": Case(
        {
            "run.parquet": parquet_bytes(
                {"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [1.0, math.nan]}
            ),
            "qrels.txt": QRELS,
        },
        ev("run.parquet"),
        fragments=("NaN", "d2"),
    ),
    "a doc given twice in one query of a parquet run": Case(
        {
            "run.parquet": parquet_bytes(
                {"query_id": ["q1", "q1"], "doc_id": ["d1", "d1"], "score": [1.0, 2.0]}
            ),
            "qrels.txt": QRELS,
        },
        ev("run.parquet"),
        fragments=("d1",),
    ),
    # two files whose first lines carry the same tag are two runs of one name
    "two run files of one tag": Case(
        {"a.txt": TREC_RIGHT, "b.txt": TREC_RIGHT, "qrels.txt": QRELS},
        ev(["a.txt", "b.txt"]),
        fragments=("run id 'r' appears in both a.txt and b.txt",),
        spark=True,
    ),
    "one run file given twice": Case(
        GOOD,
        ev(["run.txt", "run.txt"]),
        fragments=("run id 'r' appears in both run.txt and run.txt",),
        spark=True,
    ),
    # --out names the directory holding the inputs: refused, the inputs untouched
    "an output that is the inputs' directory": Case(
        {"in/run.txt": TREC_RIGHT, "in/qrels.txt": QRELS},
        [*ev("in/run.txt", "P@1", "in/qrels.txt"), "--out", "in", "--overwrite"],
        fragments=("in",),
    ),
    "an output that is the qrels file": Case(
        GOOD, [*ev("run.txt"), "--out", "qrels.txt", "--overwrite"], fragments=("qrels.txt",)
    ),
    "an output that is an existing file": Case(
        {**GOOD, "note.txt": "keep\n"},
        [*ev("run.txt"), "--out", "note.txt", "--overwrite"],
        fragments=("note.txt",),
    ),
    # the output would be inside the run's own directory of Parquet files
    "an output inside a parquet run directory": Case(
        {
            "runs/part-0.parquet": parquet_bytes(
                {"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]}
            ),
            "qrels.txt": QRELS,
        },
        [*ev("runs"), "--out", "runs/out"],
        fragments=("runs",),
    ),
}


@pytest.mark.parametrize("case", sorted(k for k, v in EVALUATE_REFUSALS.items() if not v.spark))
def test_evaluate_refuses_a_bad_input_in_one_line(
    case: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    check_refusal(EVALUATE_REFUSALS[case], tmp_path, monkeypatch, capsys)


@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(k for k, v in EVALUATE_REFUSALS.items() if v.spark))
def test_evaluate_refuses_a_bad_input_in_one_line_through_spark(
    case: str, spark, tmp_path: Path, monkeypatch, capsys
) -> None:
    check_refusal(EVALUATE_REFUSALS[case], tmp_path, monkeypatch, capsys)


# --- config files: odd YAML read right, bad YAML refused naming the file or key ----------


def cfg(name: str = "job.yaml", *extra: str) -> list[str]:
    """``evaluate --config NAME`` in this process."""
    return ["evaluate", "--config", name, "--engine", "local", *extra]


CONFIG_VALUES: dict[str, Case] = {
    # a comma-separated string of measures with blanks: P@1 = 1, RR = 1
    "measures as one string with blanks": Case(
        {**GOOD, "job.yaml": "run: [run.txt]\nqrels: qrels.txt\nmeasures: 'P@1, RR'\nout: out\n"},
        cfg(),
        {"P@1": 1.0, "RR": 1.0},
    ),
    "a json config": Case(
        {
            **GOOD,
            "job.json": json.dumps(
                {"run": ["run.txt"], "qrels": "qrels.txt", "measures": ["RR"], "out": "out"}
            ),
        },
        cfg("job.json"),
        {"RR": 1.0},
    ),
    # relative paths are relative to the config file, which lies in a directory with a blank
    "paths relative to a config in another directory": Case(
        {
            **GOOD,
            "conf dir/job.yaml": "run: [../run.txt]\nqrels: ../qrels.txt\nmeasures: [P@1]\n"
            "out: ../out\n",
        },
        cfg("conf dir/job.yaml"),
        {"P@1": 1.0},
    ),
    # the command line wins: RR (= 1/2 for the wrong run) instead of the config's P@1
    "an option given on the command line wins over the config": Case(
        {
            "run.txt": "q1 Q0 d1 1 1 r\nq1 Q0 d2 2 2 r\n",
            "qrels.txt": QRELS,
            "job.yaml": "run: [run.txt]\nqrels: qrels.txt\nmeasures: [P@1]\nout: out\n",
        },
        cfg("job.yaml", "--measures", "RR"),
        {"RR": 0.5},
    ),
    # a byte order mark before the first key (as some editors save UTF-8)
    "a config starting with a byte order mark": Case(
        {
            **GOOD,
            "job.yaml": "\ufeffrun: [run.txt]\nqrels: qrels.txt\nmeasures: [P@1]\nout: out\n",
        },
        cfg(),
        {"P@1": 1.0},
    ),
    # JSON's reader refused the mark ("Unexpected UTF-8 BOM") before it was skipped
    "a json config starting with a byte order mark": Case(
        {
            **GOOD,
            "job.json": "\ufeff"
            + json.dumps(
                {"run": ["run.txt"], "qrels": "qrels.txt", "measures": ["RR"], "out": "out"}
            ),
        },
        cfg("job.json"),
        {"RR": 1.0},
    ),
    "a config of CRLF lines": Case(
        {
            **GOOD,
            "job.yaml": "run: [run.txt]\r\nqrels: qrels.txt\r\nmeasures: [P@1]\r\nout: out\r\n",
        },
        cfg(),
        {"P@1": 1.0},
    ),
    # an anchor (with no alias) and comments are plain YAML
    "a config with an anchor and comments": Case(
        {
            **GOOD,
            "job.yaml": "# job\nrun: &runs [run.txt]  # the runs\nqrels: qrels.txt\n"
            "measures: [P@1]\nout: out\n",
        },
        cfg(),
        {"P@1": 1.0},
    ),
    # depth 1 from the config keeps d2 only (ranked by score 2): AP = 0
    "a depth from the config": Case(
        {
            "run.txt": "q1 Q0 d1 1 1 r\nq1 Q0 d2 2 2 r\n",
            "qrels.txt": QRELS,
            "job.yaml": "run: [run.txt]\nqrels: qrels.txt\nmeasures: [AP]\nout: out\ndepth: 1\n",
        },
        cfg(),
        {"AP": 0.0},
    ),
}


@pytest.mark.parametrize("case", sorted(CONFIG_VALUES))
def test_a_config_file_of_odd_but_valid_yaml_is_read_right(
    case: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    check_values(CONFIG_VALUES[case], tmp_path, monkeypatch, capsys)


BASE_YAML = "run: [run.txt]\nqrels: qrels.txt\nmeasures: [P@1]\nout: out\n"

CONFIG_REFUSALS: dict[str, Case] = {
    # YAML's true is no depth, although Python's bool is an int
    "a depth of true": Case(
        {**GOOD, "job.yaml": BASE_YAML + "depth: true\n"}, cfg(), fragments=("depth",)
    ),
    "a fractional depth": Case(
        {**GOOD, "job.yaml": BASE_YAML + "depth: 1.5\n"}, cfg(), fragments=("depth",)
    ),
    "a rel level of false": Case(
        {**GOOD, "job.yaml": BASE_YAML + "rel_level: false\n"}, cfg(), fragments=("rel_level",)
    ),
    "buckets of true": Case(
        {**GOOD, "job.yaml": BASE_YAML + "buckets: true\n"}, cfg(), fragments=("buckets",)
    ),
    "a nested list of measures": Case(
        {**GOOD, "job.yaml": BASE_YAML.replace("[P@1]", "[P@1, [AP]]")},
        cfg(),
        fragments=("measures",),
    ),
    "a mapping as a run": Case(
        {**GOOD, "job.yaml": BASE_YAML.replace("[run.txt]", "{path: run.txt}")},
        cfg(),
        fragments=("run",),
    ),
    "a config that is a list": Case(
        {**GOOD, "job.yaml": "- run.txt\n- qrels.txt\n"}, cfg(), fragments=("job.yaml",)
    ),
    "an empty config": Case({**GOOD, "job.yaml": ""}, cfg(), fragments=()),
    "a config of two documents": Case(
        {**GOOD, "job.yaml": BASE_YAML + "---\n" + BASE_YAML}, cfg(), fragments=("job.yaml",)
    ),
    "a config indented with a tab": Case(
        {**GOOD, "job.yaml": "run:\n\t- run.txt\nqrels: qrels.txt\n"},
        cfg(),
        fragments=("job.yaml",),
    ),
    "a missing config file": Case(GOOD, cfg("nope.yaml"), fragments=("nope.yaml",)),
    # was "conf: config file not found"
    "a config path that is a directory": Case(
        {**GOOD, "conf/x": ""}, cfg("conf"), fragments=("conf: a directory, not a config file",)
    ),
    "a misspelt key": Case(
        {**GOOD, "job.yaml": BASE_YAML + "measure: [AP]\n"}, cfg(), fragments=("measure",)
    ),
    "a key in another case": Case(
        {**GOOD, "job.yaml": BASE_YAML + "Depth: 3\n"}, cfg(), fragments=("Depth",)
    ),
    "an empty run list": Case(
        {**GOOD, "job.yaml": BASE_YAML.replace("[run.txt]", "[]")}, cfg(), fragments=("run",)
    ),
    "an out of null": Case(
        {**GOOD, "job.yaml": BASE_YAML.replace("out: out", "out: ~")}, cfg(), fragments=("out",)
    ),
    "spark settings as a list": Case(
        {**GOOD, "job.yaml": BASE_YAML + "spark: [a, b]\n"}, cfg(), fragments=("spark",)
    ),
    "a json config with a trailing comma": Case(
        {**GOOD, "job.json": '{"run": ["run.txt"], "qrels": "qrels.txt",}'},
        cfg("job.json"),
        fragments=("job.json",),
    ),
    "a measure cutoff of zero in the config": Case(
        {**GOOD, "job.yaml": BASE_YAML.replace("[P@1]", "[nDCG@0]")}, cfg(), fragments=("nDCG@0",)
    ),
}


@pytest.mark.parametrize("case", sorted(CONFIG_REFUSALS))
def test_a_bad_config_file_is_one_exit_2_line(
    case: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    check_refusal(CONFIG_REFUSALS[case], tmp_path, monkeypatch, capsys)


# --- every other command: values out of their range are refused before Spark starts -----

LISTS = parquet_bytes(
    {"user_id": ["u1", "u1", "u2"], "item_id": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]}
)
DOCS = parquet_bytes({"doc_id": ["x", "y"], "text": ["one two three four", "one two three five"]})
RATINGS = parquet_bytes({"user_id": ["u1"], "item_id": ["a"], "rating": [3.0]})
PREDICTIONS = parquet_bytes({"user_id": ["u1"], "item_id": ["a"], "prediction": [2.5]})
INPUTS = {
    "lists.parquet": LISTS,
    "docs.parquet": DOCS,
    "truth.parquet": RATINGS,
    "pred.parquet": PREDICTIONS,
    "a.txt": "q1 Q0 d1 1 2 a\nq1 Q0 d2 2 1 a\n",
    "b.txt": "q1 Q0 d1 1 1 b\nq1 Q0 d2 2 2 b\n",
}
SU = ["similar-users", "--run", "lists.parquet", "--out", "out"]
ND = ["near-duplicates", "--docs", "docs.parquet", "--out", "out"]
DIV = ["diversity", "--run", "lists.parquet", "--out", "out"]
RD = ["rank-distance", "--runs", "a.txt", "b.txt", "--baseline", "a", "--out", "out"]
RE = ["rating-errors", "--predictions", "pred.parquet", "--truth", "truth.parquet", "--out", "out"]
CMP = ["compare", "--per-query", "eval", "--baseline", "a", "--out", "out"]

OPTION_REFUSALS: dict[str, Case] = {
    "similar-users threshold above one": Case(
        INPUTS, [*SU, "--threshold", "1.5"], fragments=("threshold",)
    ),
    "similar-users negative threshold": Case(
        INPUTS, [*SU, "--threshold", "-0.1"], fragments=("threshold",)
    ),
    "similar-users threshold of nan": Case(
        INPUTS, [*SU, "--threshold", "nan"], fragments=("threshold",)
    ),
    "similar-users zero permutations": Case(
        INPUTS, [*SU, "--threshold", "0.5", "--num-perm", "0"], fragments=("num_perm",)
    ),
    "similar-users zero bands": Case(
        INPUTS, [*SU, "--threshold", "0.5", "--bands", "0", "--rows", "4"], fragments=("bands",)
    ),
    "similar-users bands without rows": Case(
        INPUTS, [*SU, "--threshold", "0.5", "--bands", "4"], fragments=("rows",)
    ),
    "similar-users recall above one": Case(
        INPUTS, [*SU, "--threshold", "0.5", "--recall", "1.5"], fragments=("recall",)
    ),
    "similar-users top k of zero": Case(
        INPUTS, [*SU, "--threshold", "0.5", "--k", "0"], fragments=("k",)
    ),
    # 0 is no cap; a cap below 2 was refused only once Spark had started (not by --dry-run)
    "similar-users max bucket of minus one": Case(
        INPUTS, [*SU, "--threshold", "0.5", "--max-bucket", "-1"], fragments=("max_bucket",)
    ),
    "similar-users max bucket of minus one in a dry run": Case(
        INPUTS,
        [*SU, "--threshold", "0.5", "--max-bucket", "-1", "--dry-run"],
        fragments=("max_bucket", "got -1"),
    ),
    "near-duplicates max bucket of one": Case(
        INPUTS, [*ND, "--threshold", "0.5", "--max-bucket", "1"], fragments=("max_bucket", "got 1")
    ),
    "near-duplicates threshold above one": Case(
        INPUTS, [*ND, "--threshold", "2"], fragments=("threshold",)
    ),
    "near-duplicates shingles of zero units": Case(
        INPUTS, [*ND, "--threshold", "0.5", "--k", "0"], fragments=("k",)
    ),
    "near-duplicates zero permutations": Case(
        INPUTS, [*ND, "--threshold", "0.5", "--num-perm", "0"], fragments=("num_perm",)
    ),
    "near-duplicates unknown shingle": Case(
        INPUTS, [*ND, "--threshold", "0.5", "--shingle", "line"], fragments=("shingle",)
    ),
    "diversity top k of zero": Case(INPUTS, [*DIV, "--k", "0"], fragments=("k",)),
    "diversity negative sample pairs": Case(
        INPUTS, [*DIV, "--sample-pairs", "-1"], fragments=("sample",)
    ),
    "diversity unknown similarity": Case(
        INPUTS, [*DIV, "--similarity", "euclid"], fragments=("similarity",)
    ),
    "rank-distance rbo persistence of one": Case(INPUTS, [*RD, "--rbo-p", "1"], fragments=("rbo",)),
    "rank-distance rbo persistence of zero": Case(
        INPUTS, [*RD, "--rbo-p", "0"], fragments=("rbo",)
    ),
    "rank-distance top k of zero": Case(INPUTS, [*RD, "--k", "0"], fragments=("k",)),
    "rank-distance depth of zero": Case(INPUTS, [*RD, "--depth", "0"], fragments=("depth",)),
    # beyond 64 bits (was exit 1: Spark could not compare ranks with the number)
    "rank-distance top k beyond 64 bits": Case(
        INPUTS, [*RD, "--k", "99999999999999999999999"], fragments=("--k must be <= 2^63-1",)
    ),
    "rank-distance depth beyond 64 bits": Case(
        INPUTS, [*RD, "--depth", "9223372036854775808"], fragments=("--depth must be <= 2^63-1",)
    ),
    "compare top k beyond 64 bits": Case(
        INPUTS, [*CMP, "--k", "99999999999999999999999"], fragments=("--k must be <= 2^63-1",)
    ),
    "diversity top k beyond 64 bits": Case(
        INPUTS, [*DIV, "--k", "99999999999999999999999"], fragments=("key 'k'", "<= 2^63-1")
    ),
    "near-duplicates shingles beyond 64 bits": Case(
        INPUTS,
        [*ND, "--threshold", "0.5", "--k", "99999999999999999999999"],
        fragments=("key 'k'", "<= 2^63-1"),
    ),
    "similar-users top k beyond 64 bits": Case(
        INPUTS,
        [*SU, "--threshold", "0.5", "--k", "99999999999999999999999"],
        fragments=("key 'k'", "<= 2^63-1"),
    ),
    "compare zero permutations": Case(
        INPUTS, [*CMP, "--permutations", "0"], fragments=("permutations",)
    ),
    "compare alpha of zero": Case(INPUTS, [*CMP, "--alpha", "0"], fragments=("alpha",)),
    "compare alpha of nan": Case(INPUTS, [*CMP, "--alpha", "nan"], fragments=("alpha",)),
    "compare a gate that is not a condition": Case(
        INPUTS, [*CMP, "--fail-if", "nDCG@10 is bad"], fragments=("fail-if",)
    ),
    "rating-errors zero buckets": Case(INPUTS, [*RE, "--buckets", "0"], fragments=("buckets",)),
    "rating-errors an unknown measure": Case(
        INPUTS, [*RE, "--measures", "RMSE,Bogus"], fragments=("Bogus",)
    ),
    "rating-errors top l of zero": Case(
        INPUTS, [*RE, "--measures", "TopL_AE(L=0)"], fragments=("TopL_AE",)
    ),
    "rating-errors lp of zero": Case(INPUTS, [*RE, "--measures", "Lp(p=0)"], fragments=("Lp",)),
    "rating-errors unknown missing policy": Case(
        INPUTS, [*RE, "--missing", "drop"], fragments=("missing",)
    ),
    "rating-errors an empty measure list": Case(
        INPUTS, [*RE, "--measures", ""], fragments=("measures",)
    ),
}


@pytest.mark.parametrize("case", sorted(OPTION_REFUSALS))
def test_a_value_out_of_range_is_refused_before_spark(
    case: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    check_refusal(OPTION_REFUSALS[case], tmp_path, monkeypatch, capsys)


# --- the other commands read odd but valid inputs right (Spark) ---------------------------


def run_in(
    tmp_path: Path, monkeypatch, capsys, files: dict[str, str | bytes], argv: list[str]
) -> str:
    """Write ``files`` in ``tmp_path``, run ``argv`` there; exit 0 asserted, stderr back."""
    monkeypatch.chdir(tmp_path)
    write_files(tmp_path, files)
    code = run_main(argv)
    err = capsys.readouterr().err
    assert code == 0, err[-3000:]
    return err


@pytest.mark.spark
def test_rank_distance_orders_ties_and_exponent_scores_as_evaluate_does(
    spark, tmp_path: Path, monkeypatch, capsys
) -> None:
    """``a`` ranks d1 > d2 > d3 by scores in exponent notation (3e0 > 2E-1 > 1e-9);
    ``b`` ties every score, so doc id descending gives d3, d2, d1: the reverse.
    Reversed rankings of 3: τ = ρ = -1, footrule |1-3| + 0 + |3-1| = 4, one
    transposition (Cayley 1), Ulam 3 - 1 = 2 (longest common subsequence of one), two
    positions differ (Hamming 2), the same three docs (Jaccard@3 = 1, overlap 3)."""
    import pandas as pd

    files = {
        "a.txt": "q1 Q0 d2 1 2E-1 a\r\nq1 Q0 d3 2 1e-9 a\r\nq1 Q0 d1 3 3e0 a\r\n",
        "b.txt": "q1 Q0 d1 1 7 b\nq1 Q0 d2 2 7 b\nq1 Q0 d3 3 7 b\n",
    }
    run_in(tmp_path, monkeypatch, capsys, files, [*RD, "--k", "3"])
    row = pd.read_parquet(tmp_path / "out" / "rank_distance.parquet").iloc[0]
    assert (row["run_id"], row["query_id"]) == ("b", "q1")
    expected = {"overlap": 3, "kendall_tau": -1.0, "spearman_rho": -1.0, "footrule": 4}
    expected |= {"cayley": 1, "ulam": 2, "hamming": 2, "jaccard_at_k": 1.0}
    assert {name: row[name] for name in expected} == pytest.approx(expected)


RATING_VALUES: dict[str, tuple[dict[str, str | bytes], list[str], dict[str, float]]] = {
    # text "user item value" with CRLF, exponent notation and a timestamp field (ignored):
    # errors 1e0 - 1 = 0 and 2.5E0 - 1.5 = 1: RMSE = sqrt((0 + 1) / 2), MAE = 1/2
    "text of crlf lines and exponent values": (
        {
            "pred.txt": "u1 a 1e0 99\r\nu1 b 2.5E0 99\r\n",
            "truth.txt": "u1 a 1 5\r\nu1 b 1.5 5\r\n",
        },
        ["--predictions", "pred.txt", "--truth", "truth.txt"],
        {"RMSE": math.sqrt(0.5), "MAE": 0.5},
    ),
    # -0.0 against 0 is no error; "007" and "7" are two users: errors 0 and 2,
    # MAE = 1, RMSE = sqrt(4 / 2); per user the MAEs are 0 and 2, their mean 1
    "minus zero and ids with leading zeros in csv": (
        {
            "pred.csv": "user_id,item_id,prediction\n007,1,-0.0\n7,1,2\n",
            "truth.csv": "item_id,user_id,rating\n1,007,0\n1,7,0\n",
        },
        ["--predictions", "pred.csv", "--truth", "truth.csv"],
        {"RMSE": math.sqrt(2.0), "MAE": 1.0, "MAE_per_user": 1.0},
    ),
    # --missing skip drops the pair only one side holds: one error of 3 remains
    "a pair on one side only, skipped": (
        {
            "pred.jsonl": jsonl(
                {"user_id": "ü", "item_id": "x", "prediction": 4},
                {"user_id": "ü", "item_id": "y", "prediction": 1},
            ),
            "truth.jsonl": jsonl({"user_id": "ü", "item_id": "x", "rating": 1}),
        },
        ["--predictions", "pred.jsonl", "--truth", "truth.jsonl", "--missing", "skip"],
        {"RMSE": 3.0, "MAE": 3.0},
    ),
}


@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(RATING_VALUES))
def test_rating_errors_read_an_odd_but_valid_input_right(
    case: str, spark, tmp_path: Path, monkeypatch, capsys
) -> None:
    files, argv, expected = RATING_VALUES[case]
    command = ["rating-errors", *argv, "--measures", "RMSE,MAE", "--out", "out"]
    run_in(tmp_path, monkeypatch, capsys, files, command)
    measures = json.loads((tmp_path / "out" / "summary.json").read_text())["measures"]
    assert {name: measures[name] for name in expected} == pytest.approx(expected)


@pytest.mark.spark
def test_similar_users_at_threshold_one_pair_identical_lists_of_unicode_users(
    spark, tmp_path: Path, monkeypatch, capsys
) -> None:
    """ "ü 1" and "ü 2" (a blank in each id) recommend {a, b}: Jaccard 1, kept at the
    threshold's upper bound 1; "u3"'s {a, c} shares 1 of 3 items with each (1/3)."""
    import pandas as pd

    lists = "user_id,item_id,score\nü 1,a,2\nü 1,b,1\nü 2,b,5\nü 2,a,4\nu3,a,1\nu3,c,2\n"
    files = {"lists.csv": lists}
    argv = ["similar-users", "--run", "lists.csv", "--threshold", "1", "--out", "out"]
    run_in(tmp_path, monkeypatch, capsys, files, argv)
    pairs = pd.read_parquet(tmp_path / "out" / "pairs.parquet")
    assert pairs[["user_a", "user_b", "jaccard"]].to_dict("records") == [
        {"user_a": "ü 1", "user_b": "ü 2", "jaccard": 1.0}
    ]


@pytest.mark.spark
def test_near_duplicates_pair_identical_texts_from_json_lines(
    spark, tmp_path: Path, monkeypatch, capsys
) -> None:
    """ "x" and "y 2" hold the same four words (one with CRLF-free blanks doubled);
    word shingles of 1 unit: Jaccard 1 at threshold 1; "z" shares no word."""
    import pandas as pd

    docs = jsonl(
        {"text": "alpha beta gamma delta", "doc_id": "x"},
        {"doc_id": "y 2", "text": "alpha  beta gamma   delta", "extra": 1},
        {"doc_id": "z", "text": "eins zwei drei vier"},
    )
    files = {"docs.jsonl": docs}
    argv = ["near-duplicates", "--docs", "docs.jsonl", "--threshold", "1", "--k", "1"]
    run_in(tmp_path, monkeypatch, capsys, files, [*argv, "--out", "out"])
    pairs = pd.read_parquet(tmp_path / "out" / "pairs.parquet")
    assert sorted(map(sorted, pairs[["doc_a", "doc_b"]].values.tolist())) == [["x", "y 2"]]


PER_QUERY = parquet_bytes(
    {
        "run_id": ["A", "A", "B", "B"],
        "query_id": ["q1", "q2", "q1", "q2"],
        "measure": ["P@1"] * 4,
        "value": [1.0, 0.0, 0.0, 1.0],
    }
)

SPARK_REFUSALS: dict[str, Case] = {
    "compare against a baseline the table does not hold": Case(
        {"pq.parquet": PER_QUERY},
        ["compare", "--per-query", "pq.parquet", "--baseline", "Z", "--out", "out"],
        fragments=("baseline run 'Z' is not in the per-query table",),
    ),
    "compare a measure the table does not hold": Case(
        {"pq.parquet": PER_QUERY},
        [
            "compare",
            "--per-query",
            "pq.parquet",
            "--baseline",
            "A",
            "--measures",
            "AP",
            "--out",
            "out",
        ],
        fragments=("measure 'AP' is not in the per-query table",),
    ),
    "diversity of a run id the table does not hold": Case(
        {"lists.csv": "run_id,user_id,item_id,score\nR,u1,a,1\nR,u1,b,2\n"},
        ["diversity", "--run", "lists.csv", "--run-id", "nope", "--out", "out"],
        fragments=("--run-id nope", "lists.csv"),
    ),
    "rank-distance against a baseline no file holds": Case(
        {"a.txt": INPUTS["a.txt"], "b.txt": INPUTS["b.txt"]},
        ["rank-distance", "--runs", "a.txt", "b.txt", "--baseline", "c", "--out", "out"],
        fragments=("baseline run 'c'",),
    ),
    # 1e400 is beyond the doubles: not taken as an infinite prediction
    "rating-errors a prediction beyond the double range": Case(
        {"pred.txt": "u1 a 1e400\n", "truth.txt": "u1 a 1\n"},
        ["rating-errors", "--predictions", "pred.txt", "--truth", "truth.txt", "--out", "out"],
        fragments=("pred.txt", "'1e400' is not a finite number"),
    ),
    "evaluate a mapped column the file lacks": Case(
        {"run": "a,b,c\nq1,d1,2\n", "qrels.txt": QRELS},
        ev(
            "run",
            "P@1",
            "qrels.txt",
            "--run-format",
            "csv",
            "--run-columns",
            "query_id=a,doc_id=zz,score=c",
        ),
        fragments=("mapped column 'zz' (for doc_id) not found",),
        spark=True,
    ),
    # a rating that is a word, on the second line of a text file
    "rating-errors a rating that is a word": Case(
        {"pred.txt": "u1 a 1\nu1 b 2\n", "truth.txt": "u1 a 1\nu1 b high\n"},
        ["rating-errors", "--predictions", "pred.txt", "--truth", "truth.txt", "--out", "out"],
        fragments=("truth.txt", "item b", "'high'"),
    ),
}


@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(SPARK_REFUSALS))
def test_every_command_refuses_a_bad_input_in_one_line(
    case: str, spark, tmp_path: Path, monkeypatch, capsys
) -> None:
    check_refusal(SPARK_REFUSALS[case], tmp_path, monkeypatch, capsys)


def test_a_damaged_gzip_range_is_named_as_given_not_by_its_absolute_path(tmp_path: Path) -> None:
    """The plan holds input files made absolute (for workers in another directory);
    the message of a damaged gzip range still names the input as it was given."""
    from sparkeval.io.direct_input import NotDirect
    from sparkeval.io.direct_text import read_text_range

    data = gz("q1 Q0 d1 1 2 r\n" * 1000)
    path = tmp_path / "run.txt.gz"
    path.write_bytes(data[: len(data) - 20])
    with pytest.raises(NotDirect, match=r"\] run\.txt\.gz: compressed file ended"):
        read_text_range(str(path), 0, 1, "run.txt.gz")
