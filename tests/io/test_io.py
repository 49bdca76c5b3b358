"""Readers: formats, aliases, explicit mappings, string ids, TREC comments."""

from __future__ import annotations

import json
from functools import partial

import pandas as pd
import pytest

from sparkeval.errors import ConfigError, InputError
from sparkeval.io import detect_format, read_qrels, read_run, read_runs
from sparkeval.io.columns import parse_mapping
from tests.job_groups import jobs_run

pytestmark = pytest.mark.spark


def rows(df, cols):
    return sorted(tuple(r[c] for c in cols) for r in df.collect())


def test_detect_format(tmp_path) -> None:
    (tmp_path / "d").mkdir()
    assert detect_format(str(tmp_path / "d")) == "parquet"
    assert detect_format("x.parquet") == "parquet"
    assert detect_format("x.CSV") == "csv"
    assert detect_format("x.jsonl") == "jsonl"
    assert detect_format("qrels.test") == "trec"
    assert detect_format("x.csv", "trec") == "trec"
    with pytest.raises(InputError, match="unknown format 'xml'"):
        detect_format("x", "xml")


def test_trec_run_comments_hash_ids_and_extra_fields(spark, tmp_path) -> None:
    path = tmp_path / "run.txt"
    path.write_text(
        "# a comment line\n"
        "q1 Q0 doc#1 1 0.5 mytag extra fields here\n"
        "\n"
        "q1\tQ0\tdoc#2\t2\t0.25\tmytag\n"
        "007 Q0 d 1 -inf mytag\n"
    )
    run = read_run(spark, str(path))
    assert run.run_ids == ("mytag",)
    got = rows(run.df, ["run_id", "query_id", "doc_id", "score", "_bad"])
    assert got == sorted(
        [
            ("mytag", "q1", "doc#1", 0.5, None),
            ("mytag", "q1", "doc#2", 0.25, None),
            ("mytag", "007", "d", float("-inf"), None),
        ]
    )


def test_tables_with_aliases_all_formats(spark, tmp_path) -> None:
    frame = pd.DataFrame({"user_id": ["007", "7"], "item_id": ["a", "b"], "prediction": [0.5, 1.5]})
    frame.to_csv(tmp_path / "run.csv", index=False)
    frame.to_parquet(tmp_path / "run.parquet")
    with open(tmp_path / "run.jsonl", "w") as out:
        for rec in frame.to_dict("records"):
            out.write(json.dumps(rec) + "\n")
    expected = [("run", "007", "a", 0.5), ("run", "7", "b", 1.5)]
    for name in ("run.csv", "run.parquet", "run.jsonl"):
        run = read_run(spark, str(tmp_path / name))
        assert run.run_ids == ("run",)
        assert rows(run.df, ["run_id", "query_id", "doc_id", "score"]) == expected, name


def test_parquet_directory_with_run_id_column_and_int_ids(spark, tmp_path) -> None:
    frame = pd.DataFrame(
        {"run_id": ["A", "A", "B"], "qid": [1, 1, 2], "docno": [10, 11, 10], "score": [1, 2, 3]}
    )
    spark.createDataFrame(frame).write.parquet(str(tmp_path / "runs"))
    run = read_run(spark, str(tmp_path / "runs"))
    assert run.run_ids == ("A", "B")
    assert rows(run.df, ["run_id", "query_id", "doc_id", "score"]) == [
        ("A", "1", "10", 1.0),
        ("A", "1", "11", 2.0),
        ("B", "2", "10", 3.0),
    ]


def test_explicit_mapping(spark, tmp_path) -> None:
    pd.DataFrame({"u": ["x"], "i": ["y"], "s": [2.0], "user": ["ignored"]}).to_csv(
        tmp_path / "r.csv", index=False
    )
    run = read_run(spark, str(tmp_path / "r.csv"), columns="query_id=u,doc_id=i,score=s")
    assert rows(run.df, ["query_id", "doc_id", "score"]) == [("x", "y", 2.0)]
    with pytest.raises(InputError, match="mapped column 'nope'"):
        read_run(spark, str(tmp_path / "r.csv"), columns="query_id=nope,doc_id=i,score=s")
    with pytest.raises(ConfigError, match="unknown column"):
        parse_mapping("quid=u", "run")


def test_qrels_formats(spark, tmp_path) -> None:
    (tmp_path / "q.txt").write_text("# judged\n1 0 d1 2\n1 0 d2 -1\n")
    pd.DataFrame({"user": ["1", "1"], "item": ["d1", "d2"], "rating": [2, -1]}).to_csv(
        tmp_path / "q.csv", index=False
    )
    for name in ("q.txt", "q.csv"):
        got = rows(read_qrels(spark, str(tmp_path / name)), ["query_id", "doc_id", "relevance"])
        assert got == [("1", "d1", 2), ("1", "d2", -1)], name


def test_two_runs_with_one_id_are_refused(spark, tmp_path) -> None:
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text("q Q0 d 1 1 same\n")
    with pytest.raises(InputError, match="run id 'same' appears in both"):
        read_runs(spark, [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")])


def test_corrupt_parquet_names_the_file(spark, tmp_path) -> None:
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(InputError, match=r"broken\.parquet"):
        read_run(spark, str(bad)).df.collect()


def test_inputs_read_without_their_row_check_run_one_job_less_each(spark, tmp_path) -> None:
    # the evaluate job finds an input without rows from what it evaluates, so its
    # readers leave out the job that looks for a first row (each file's schema is still
    # read by Spark's own job)
    run = str(tmp_path / "run.parquet")
    qrels = str(tmp_path / "qrels.parquet")
    pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]}).to_parquet(run)
    pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]}).to_parquet(qrels)
    for kind, read in (
        ("run", lambda check: read_runs(spark, [run], check_rows=check)),
        ("qrels", lambda check: read_qrels(spark, qrels, check_rows=check)),
    ):
        checked = jobs_run(spark, f"{kind}-checked", partial(read, True))
        assert checked >= 1
        assert jobs_run(spark, f"{kind}-unchecked", partial(read, False)) == checked - 1


def test_a_run_read_without_its_row_check_is_named_after_its_file_even_when_empty(
    spark, tmp_path
) -> None:
    path = tmp_path / "empty.parquet"
    pd.DataFrame(
        {
            "query_id": pd.Series([], dtype=str),
            "doc_id": pd.Series([], dtype=str),
            "score": pd.Series([], dtype=float),
        }
    ).to_parquet(path)
    with pytest.raises(InputError, match=r"empty\.parquet: no run rows"):
        read_runs(spark, [str(path)])
    df, run_ids = read_runs(spark, [str(path)], check_rows=False)
    assert run_ids == ("empty",) and df.count() == 0
