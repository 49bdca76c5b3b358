"""Near-duplicate-aware evaluation on a real local Spark: flags, CLI, config, errors.

The collection (values worked out by hand in the comments)::

    run r  q1: a 6, b 5, c 4, y 3, x 3, z 1   (tie: y before x, doc id descending)
           q2: nothing (owed by the qrels: an empty ranking)
    run s  q1: z 5, a 1
           q2: b 2, a 1
    qrels  q1: a 1, b 2, c 0, y 1, z 1, r1 1  (x not judged)   q2: a 1
    pairs  b a / c b / x y / z w / y y / a b

Pairs: 6 read, 1 self-pair (y y), a b repeats b a, so 4 distinct.  Flags:
r/q1 b (a is higher), c (b is higher, though b is flagged itself), x (y wins
the tie); z pairs only with w, which r did not retrieve.  s/q1: none (b is not
there).  s/q2: a (b is higher).  Rows flagged: r 3, s 1.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from sparkeval import evaluate
from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT, ConfigError, InputError

pytestmark = pytest.mark.spark

RUN_R = [("q1", "a", 6), ("q1", "b", 5), ("q1", "c", 4), ("q1", "y", 3), ("q1", "x", 3)]
RUN_R += [("q1", "z", 1)]
RUN_S = [("q1", "z", 5), ("q1", "a", 1), ("q2", "b", 2), ("q2", "a", 1)]
QRELS = [("q1", "a", 1), ("q1", "b", 2), ("q1", "c", 0), ("q1", "y", 1), ("q1", "z", 1)]
QRELS += [("q1", "r1", 1), ("q2", "a", 1)]
PAIRS = [("b", "a"), ("c", "b"), ("x", "y"), ("z", "w"), ("y", "y"), ("a", "b")]
MEASURES = "P@5,AP,nDCG@5,Bpref,NearDup@5,NearDup"

# r/q1 after demotion (b -> grade 0): relevant a@1, y@4, z@6; R = 5, N = 1
NDCG5 = (1 + 1 / math.log2(5)) / (
    2 + 1 / math.log2(3) + 1 / math.log2(4) + 1 / math.log2(5) + 1 / math.log2(6)
)
EXPECTED = {
    ("r", "q1"): {
        "P@5": 2 / 5,
        "AP": (1 + 2 / 4 + 3 / 6) / 5,
        "nDCG@5": NDCG5,
        "Bpref": 1 / 5,  # a: 1; y and z: b, c above, capped at min(N, R) = 1 -> 0
        "NearDup@5": 3 / 5,  # b c x among a b c y x
        "NearDup@10": 3 / 6,
    },
    # missing from run r: every measure 0, NearDup included (as Judged@k)
    ("r", "q2"): dict.fromkeys(("P@5", "AP", "nDCG@5", "Bpref", "NearDup@5", "NearDup@10"), 0.0),
    ("s", "q1"): {
        "P@5": 2 / 5,
        "AP": (1 + 2 / 2) / 5,
        "nDCG@5": (1 + 1 / math.log2(3))
        / (2 + 1 / math.log2(3) + 1 / math.log2(4) + 1 / math.log2(5) + 1 / math.log2(6)),
        "Bpref": 2 / 5,
        "NearDup@5": 0.0,
        "NearDup@10": 0.0,
    },
    # b is not judged for q2; a (grade 1) is flagged -> grade 0: nothing relevant retrieved
    ("s", "q2"): {
        "P@5": 0.0,
        "AP": 0.0,
        "nDCG@5": 0.0,
        "Bpref": 0.0,
        "NearDup@5": 1 / 2,
        "NearDup@10": 1 / 2,
    },
}


def _trec_run(path: Path, tag: str, rows) -> str:
    lines = [f"{q} Q0 {d} {i + 1} {s} {tag}" for i, (q, d, s) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, str]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS))
    pairs_txt = tmp_path / "pairs.txt"
    pairs_txt.write_text("# near duplicates\n" + "".join(f"{a}\t{b}\n" for a, b in PAIRS))
    pairs_pq = tmp_path / "pairs.parquet"
    pd.DataFrame(
        {"doc_a": [a for a, _ in PAIRS], "doc_b": [b for _, b in PAIRS], "jaccard": 0.9}
    ).to_parquet(pairs_pq)
    return {
        "run_r": _trec_run(tmp_path / "r.txt", "r", RUN_R),
        "run_s": _trec_run(tmp_path / "s.txt", "s", RUN_S),
        "qrels": str(qrels),
        "pairs_txt": str(pairs_txt),
        "pairs_parquet": str(pairs_pq),
    }


def _cli(files: dict[str, str], out: Path, *extra: str, measures: str = MEASURES) -> int:
    return main(
        [
            "evaluate",
            "--run",
            files["run_r"],
            "--run",
            files["run_s"],
            "--qrels",
            files["qrels"],
            "--measures",
            measures,
            "--out",
            str(out),
            *extra,
        ]
    )


def _per_query(out: Path) -> dict[tuple[str, str], dict[str, float]]:
    frame = pd.read_parquet(out / "per_query.parquet")
    got: dict[tuple[str, str], dict[str, float]] = {}
    for row in frame.itertuples():
        got.setdefault((row.run_id, row.query_id), {})[row.measure] = row.value
    return got


@pytest.mark.parametrize("pairs", ["pairs_txt", "pairs_parquet"])
def test_cli_flags_and_dedup_aware_measures(spark, files, tmp_path, pairs) -> None:
    out = tmp_path / "out"
    assert _cli(files, out, "--near-duplicates", files[pairs]) == 0
    got = _per_query(out)
    assert set(got) == set(EXPECTED)
    for key, values in EXPECTED.items():
        for name, value in values.items():
            assert got[key][name] == pytest.approx(value, abs=1e-12), (key, name)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["near_duplicates"] == {
        "path": files[pairs],
        "pairs_read": 6,
        "self_pairs_ignored": 1,
        "repeated_pairs": 1,
        "distinct_pairs": 4,
        "rows_flagged": {"r": 3, "s": 1},
    }
    assert summary["inputs"]["near_duplicates"] == files[pairs]
    # NearDup@5 of run r: mean of 3/5 and 0 over the two qrels queries
    assert summary["runs"]["r"]["measures"]["NearDup@5"] == pytest.approx(0.3)


def test_python_api_takes_a_pairs_dataframe(spark) -> None:
    run = spark.createDataFrame(
        [("r", q, d, float(s)) for q, d, s in RUN_R],
        "run_id string, query_id string, doc_id string, score double",
    )
    qrels = spark.createDataFrame(QRELS, "query_id string, doc_id string, relevance long")
    pairs = spark.createDataFrame(PAIRS, "doc_a string, doc_b string")
    ev = evaluate(spark, run, qrels, "P@5,NearDup@5", near_duplicates=pairs)
    try:
        got = {(r.query_id, r.measure): r.value for r in ev.per_query.collect()}
        assert got[("q1", "P@5")] == pytest.approx(2 / 5)
        assert got[("q1", "NearDup@5")] == pytest.approx(3 / 5)
        assert ev.report["near_duplicates"]["rows_flagged"] == {"r": 3}
    finally:
        ev.unpersist()


def test_empty_pairs_equal_no_pairs(spark, files, tmp_path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    without = tmp_path / "without"
    with_empty = tmp_path / "with_empty"
    measures = "official,nDCG@5,Judged@5"
    assert _cli(files, without, measures=measures) == 0
    assert _cli(files, with_empty, "--near-duplicates", str(empty), measures=measures) == 0
    pd.testing.assert_frame_equal(
        pd.read_parquet(without / "per_query.parquet"),
        pd.read_parquet(with_empty / "per_query.parquet"),
    )
    a = json.loads((without / "summary.json").read_text())
    b = json.loads((with_empty / "summary.json").read_text())
    assert b.pop("near_duplicates")["distinct_pairs"] == 0
    del b["inputs"]["near_duplicates"]
    assert a == b


def test_pairs_of_the_near_duplicates_command_feed_evaluate(spark, tmp_path, capsys) -> None:
    # d1 and d2 share every word; d3 shares none with them
    docs = tmp_path / "docs.parquet"
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    pd.DataFrame(
        {"doc_id": ["d1", "d2", "d3"], "text": [words, words, "one two three four five six"]}
    ).to_parquet(docs)
    nd = tmp_path / "nd"
    code = main(
        [
            "near-duplicates",
            "--docs",
            str(docs),
            "--method",
            "minhash",
            "--threshold",
            "0.9",
            "--out",
            str(nd),
        ]
    )
    assert code == 0
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 1\n")
    out = tmp_path / "out"
    args = ["evaluate", "--run", str(run), "--qrels", str(qrels), "--out", str(out)]
    assert (
        main([*args, "--measures", "P@3,NearDup@3", "--near-duplicates", str(nd / "pairs.parquet")])
        == 0
    )
    got = _per_query(out)[("r", "q1")]
    # d2 copies d1: 2 of 3 relevant docs earn credit, 1 of 3 docs is a near-duplicate
    assert got == {"P@3": pytest.approx(2 / 3), "NearDup@3": pytest.approx(1 / 3)}


def test_config_file_key_is_file_relative(spark, files, tmp_path) -> None:
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    config = conf_dir / "eval.yaml"
    config.write_text(
        f"run: [{files['run_r']}]\nqrels: {files['qrels']}\nmeasures: [NearDup@5]\n"
        "near_duplicates: ../pairs.txt\nout: ../from-config\n"
    )
    assert main(["evaluate", "--config", str(config)]) == 0
    summary = json.loads((tmp_path / "from-config" / "summary.json").read_text())
    path = summary["near_duplicates"]["path"]
    assert Path(path).resolve() == Path(files["pairs_txt"]).resolve()
    assert summary["near_duplicates"]["rows_flagged"] == {"r": 3}
    assert summary["runs"]["r"]["measures"]["NearDup@5"] == pytest.approx(0.3)


def test_near_dup_without_pairs_fails_before_spark_work(files, tmp_path, capsys) -> None:
    code = main(
        [
            "evaluate",
            "--run",
            files["run_r"],
            "--qrels",
            files["qrels"],
            "--measures",
            "AP,NearDup",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert code == EXIT_INPUT
    assert "measure NearDup@10 needs near-duplicate pairs" in err and "--near-duplicates" in err
    assert not (tmp_path / "out").exists()


def test_python_api_near_dup_without_pairs(spark) -> None:
    run = spark.createDataFrame([("q1", "a", 1.0)], "query_id string, doc_id string, score double")
    qrels = spark.createDataFrame(
        [("q1", "a", 1)], "query_id string, doc_id string, relevance long"
    )
    with pytest.raises(ConfigError, match="NearDup@5 needs near-duplicate pairs"):
        evaluate(spark, run, qrels, "NearDup@5")
    with pytest.raises(InputError, match="missing column\\(s\\) 'doc_b'"):
        evaluate(spark, run, qrels, "P@5", near_duplicates=spark.range(1).toDF("doc_a"))


@pytest.mark.parametrize(
    ("name", "text", "fragments"),
    [
        ("pairs.txt", "a b\nc\n", ["pairs.txt:2", "malformed line 'c'", "doc_a doc_b"]),
        ("pairs.csv", "doc_a,doc_b\na,b\nc,\n", ["pairs.csv", "missing or empty doc_b", "'c'"]),
        (
            "pairs.jsonl",
            '{"doc_a": "a", "doc_b": "b"}\n{"doc_b": "b"}\n',
            ["missing or empty doc_a"],
        ),
        ("pairs.csv", "left,right\na,b\n", ["pairs.csv: missing column(s) 'doc_a', 'doc_b'"]),
    ],
)
def test_bad_pairs_input(spark, files, tmp_path, capsys, name, text, fragments) -> None:
    pairs = tmp_path / name
    pairs.write_text(text)
    code = _cli(files, tmp_path / "out", "--near-duplicates", str(pairs))
    err = capsys.readouterr().err
    assert code == EXIT_INPUT, err
    for fragment in fragments:
        assert fragment in err, err
    assert not (tmp_path / "out").exists()


def test_output_over_pairs_is_refused(files, tmp_path, capsys) -> None:
    # only the pairs live in the would-be output directory
    pairs_dir = tmp_path / "nd"
    pairs_dir.mkdir()
    pairs = pairs_dir / "pairs.txt"
    pairs.write_text("a b\n")
    code = _cli(files, pairs_dir, "--near-duplicates", str(pairs), "--overwrite")
    assert code == EXIT_INPUT
    assert f"overlaps the input {pairs}" in capsys.readouterr().err
    assert pairs.read_text() == "a b\n"
