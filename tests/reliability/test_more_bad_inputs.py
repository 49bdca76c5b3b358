"""Bad inputs of every command's own readers: exit 2 with a line naming the file,
column or measure, and no output. Expected values are derived by hand."""

from __future__ import annotations

import gzip
import json
import random
import warnings
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT

pytestmark = pytest.mark.spark


def run(capsys, argv: list[str]) -> tuple[int, str]:
    """Exit code and stderr of a command, with the user warnings it raised written
    there as a command-line run prints them (pytest would keep them apart)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        code = main(argv)
    shown = "".join(
        warnings.formatwarning(w.message, w.category, w.filename, w.lineno) for w in caught
    )
    return code, capsys.readouterr().err + shown


def evaluate_argv(tmp_path, run_name: str) -> list[str]:
    """``evaluate`` of ``run_name`` against ``qrels.txt`` in ``tmp_path`` (P@1) into ``out``."""
    argv = ["evaluate", "--run", str(tmp_path / run_name), "--qrels"]
    return [*argv, str(tmp_path / "qrels.txt"), "--measures", "P@1", "--out", str(tmp_path / "out")]


def error_line(err: str, command: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith(f"sparkeval {command}: error:")]
    assert lines, err
    return lines[0]


def test_decimal_user_ids_of_rating_errors_are_refused(tmp_path, capsys):
    pq.write_table(
        pa.table(
            {
                "user_id": pa.array([Decimal("1.5"), Decimal("1.5")], pa.decimal128(5, 1)),
                "item_id": ["i1", "i2"],
                "prediction": [3.0, 2.0],
            }
        ),
        tmp_path / "pred.parquet",
    )
    (tmp_path / "truth.csv").write_text("user_id,item_id,rating\n1.5,i1,1.0\n1.5,i2,2.0\n")
    argv = ["rating-errors", "--predictions", str(tmp_path / "pred.parquet")]
    argv += ["--truth", str(tmp_path / "truth.csv"), "--out", str(tmp_path / "out")]
    code, err = run(capsys, argv)
    assert code == EXIT_INPUT
    line = error_line(err, "rating-errors")
    assert "pred.parquet" in line and "user_id" in line and "decimal" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("command", "column", "table"),
    [
        (
            "similar-users",
            "user_id",
            {"user_id": [{"u": "u1"}, {"u": "u2"}], "item_id": ["a", "a"], "score": [1.0, 1.0]},
        ),
        ("near-duplicates", "doc_id", {"doc_id": [{"d": 1}, {"d": 2}], "text": ["a b", "a b"]}),
    ],
)
def test_nested_ids_of_list_inputs_are_refused(tmp_path, capsys, command, column, table):
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table(table), path)
    option = "--run" if command == "similar-users" else "--docs"
    argv = [command, option, str(path), "--threshold", "0.8", "--out", str(tmp_path / "out")]
    code, err = run(capsys, argv)
    assert code == EXIT_INPUT
    line = error_line(err, command)
    assert "in.parquet" in line and column in line and "struct" in line
    assert not (tmp_path / "out").exists()


def test_a_nested_query_id_in_a_per_query_table_is_refused(tmp_path, capsys):
    path = tmp_path / "pq.parquet"
    pq.write_table(
        pa.table(
            {
                "run_id": ["A", "B"],
                "query_id": [{"q": "q1"}, {"q": "q1"}],
                "measure": ["P@1", "P@1"],
                "value": [0.0, 1.0],
            }
        ),
        path,
    )
    argv = ["compare", "--per-query", str(path), "--baseline", "A"]
    code, err = run(capsys, [*argv, "--out", str(tmp_path / "out")])
    assert code == EXIT_INPUT
    line = error_line(err, "compare")
    assert "pq.parquet" in line and "query_id" in line
    assert not (tmp_path / "out").exists()


def test_a_nan_score_is_refused_by_rank_distance(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    path.write_text("run_id,query_id,doc_id,score\nA,q1,d1,3\nA,q1,d2,2\nB,q1,d1,1\nB,q1,d2,NaN\n")
    argv = ["rank-distance", "--runs", str(path), "--baseline", "A"]
    code, err = run(capsys, [*argv, "--out", str(tmp_path / "out")])
    assert code == EXIT_INPUT
    line = error_line(err, "rank-distance")
    assert "run B" in line and "d2" in line and "NaN" in line


def test_a_gzip_file_with_a_damaged_body_is_an_input_error(tmp_path, capsys):
    body = bytes(random.Random(1).randrange(256) for _ in range(200))
    header = gzip.compress(b"")[:10]
    (tmp_path / "run.txt.gz").write_bytes(header + body)
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    argv = evaluate_argv(tmp_path, "run.txt.gz")
    code, err = run(capsys, argv)
    assert code == EXIT_INPUT
    assert "run.txt.gz" in error_line(err, "evaluate")
    assert not (tmp_path / "out").exists()


def test_an_output_on_a_pseudo_file_system_is_refused_before_the_work(tmp_path, capsys):
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 3 r\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    argv = ["evaluate", "--run", str(tmp_path / "run.txt"), "--qrels"]
    argv += [str(tmp_path / "qrels.txt"), "--measures", "P@1", "--out", "/proc/sparkeval-out"]
    code, err = run(capsys, argv)
    assert code == EXIT_INPUT
    assert "cannot write in /proc" in error_line(err, "evaluate")


def test_rating_errors_beyond_the_double_range_of_squares(tmp_path, capsys):
    # errors of 1e300: MAE and MaxAE are 1e300 exactly; RMSE's squares overflow,
    # which is an error naming RMSE rather than an infinite value
    (tmp_path / "pred.csv").write_text("user_id,item_id,prediction\nu1,i1,0.0\nu1,i2,0.0\n")
    (tmp_path / "truth.csv").write_text("user_id,item_id,rating\nu1,i1,1e300\nu1,i2,-1e300\n")
    base = ["rating-errors", "--predictions", str(tmp_path / "pred.csv")]
    base += ["--truth", str(tmp_path / "truth.csv")]
    code, err = run(capsys, [*base, "--measures", "MAE,MaxAE", "--out", str(tmp_path / "a")])
    assert code == 0, err
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["measures"]["MAE"] == 1e300
    assert summary["measures"]["MaxAE"] == 1e300
    code, err = run(capsys, [*base, "--measures", "RMSE", "--out", str(tmp_path / "b")])
    assert code == EXIT_INPUT
    assert "RMSE" in error_line(err, "rating-errors")
    assert not (tmp_path / "b").exists()


LATIN1_E_ACUTE, LATIN1_E_GRAVE = b"\xe9", b"\xe8"


def test_two_latin1_users_are_not_one_user_in_rating_errors(tmp_path, capsys):
    # u\xe9 and u\xe8 would both decode to u\ufffd and their rows would pair up
    pred = b"user_id,item_id,prediction\nu" + LATIN1_E_ACUTE + b",i1,3.0\n"
    truth = b"user_id,item_id,rating\nu" + LATIN1_E_GRAVE + b",i1,3.0\n"
    (tmp_path / "pred.csv").write_bytes(pred)
    (tmp_path / "truth.csv").write_bytes(truth)
    argv = ["rating-errors", "--predictions", str(tmp_path / "pred.csv")]
    argv += ["--truth", str(tmp_path / "truth.csv"), "--out", str(tmp_path / "out")]
    code, err = run(capsys, argv)
    assert code == EXIT_INPUT
    line = error_line(err, "rating-errors")
    assert "pred.csv" in line and "UTF-8" in line


def test_latin1_near_duplicate_pairs_are_refused(tmp_path, capsys):
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "pairs.csv").write_bytes(b"doc_a,doc_b\nd1,d" + LATIN1_E_ACUTE + b"\n")
    argv = ["evaluate", "--run", str(tmp_path / "run.txt"), "--qrels", str(tmp_path / "qrels.txt")]
    argv += ["--measures", "P@1", "--near-duplicates", str(tmp_path / "pairs.csv")]
    code, err = run(capsys, [*argv, "--out", str(tmp_path / "out")])
    assert code == EXIT_INPUT
    line = error_line(err, "evaluate")
    assert "pairs.csv" in line and "UTF-8" in line


def test_latin1_text_is_not_a_false_duplicate(tmp_path, capsys):
    # 'caf\xe9 au lait' and 'caf\xe8 au lait' differ; decoded with replacement they
    # would be the same text and a pair at Jaccard 1
    docs = b"doc_id,text\n1,caf" + LATIN1_E_ACUTE + b" au lait\n2,caf" + LATIN1_E_GRAVE
    (tmp_path / "docs.csv").write_bytes(docs + b" au lait\n")
    argv = ["near-duplicates", "--docs", str(tmp_path / "docs.csv"), "--threshold", "0.8"]
    code, err = run(capsys, [*argv, "--out", str(tmp_path / "out")])
    assert code == EXIT_INPUT
    line = error_line(err, "near-duplicates")
    assert "docs.csv" in line and "text" in line and "UTF-8" in line


def test_a_nan_score_under_a_top_k_cut_is_refused(tmp_path, capsys):
    path = tmp_path / "run.csv"
    path.write_text("user_id,item_id,score\nu1,a,1\nu1,b,NaN\nu2,a,1\nu2,b,2\n")
    argv = ["similar-users", "--run", str(path), "--threshold", "0.5", "--k", "1"]
    code, err = run(capsys, [*argv, "--out", str(tmp_path / "out")])
    assert code == EXIT_INPUT
    line = error_line(err, "similar-users")
    assert "user u1 item b" in line and "NaN" in line


def test_a_nan_value_in_a_per_query_table_is_refused(tmp_path, capsys):
    path = tmp_path / "pq.parquet"
    pq.write_table(
        pa.table(
            {
                "run_id": ["A", "A", "B", "B"],
                "query_id": ["q1", "q2", "q1", "q2"],
                "measure": ["P@1"] * 4,
                "value": [0.0, 1.0, float("nan"), 1.0],
            }
        ),
        path,
    )
    argv = ["compare", "--per-query", str(path), "--baseline", "A"]
    code, err = run(capsys, [*argv, "--out", str(tmp_path / "out")])
    assert code == EXIT_INPUT
    line = error_line(err, "compare")
    assert "pq.parquet" in line and "run B query q1" in line and "NaN" in line
    assert "Traceback" not in err and "UserWarning" not in err


def test_a_latin1_json_line_is_named_as_not_utf8(tmp_path, capsys):
    (tmp_path / "run.jsonl").write_bytes(
        b'{"query_id":"q1","doc_id":"d1","score":2}\n{"query_id":"q1","doc_id":"d'
        + LATIN1_E_ACUTE
        + b'","score":1}\n'
    )
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    argv = evaluate_argv(tmp_path, "run.jsonl")
    code, err = run(capsys, argv)
    assert code == EXIT_INPUT
    line = error_line(err, "evaluate")
    assert "run.jsonl:2:" in line and "UTF-8" in line


def test_a_json_object_as_an_id_on_one_line_is_refused(tmp_path, capsys):
    # line 1 holds a string id and line 2 an object: Spark infers a string column and
    # would keep the object as the text {"x":"d2"}
    (tmp_path / "run.jsonl").write_text(
        '{"query_id":"q1","doc_id":"d1","score":3.0}\n'
        '{"query_id":"q1","doc_id":{"x":"d2"},"score":2.0}\n'
    )
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    argv = evaluate_argv(tmp_path, "run.jsonl")
    code, err = run(capsys, argv)
    assert code == EXIT_INPUT
    line = error_line(err, "evaluate")
    assert "run.jsonl:2:" in line and "doc_id" in line and "object" in line


def test_a_string_id_that_starts_with_a_brace_is_an_id(tmp_path, capsys):
    (tmp_path / "run.jsonl").write_text('{"query_id":"q1","doc_id":"{d1}","score":3.0}\n')
    (tmp_path / "qrels.txt").write_text("q1 0 {d1} 1\n")
    argv = evaluate_argv(tmp_path, "run.jsonl")
    code, err = run(capsys, argv)
    assert code == 0, err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    (values,) = summary["runs"].values()
    assert values["measures"]["P@1"] == 1.0


def test_a_doc_id_given_twice_is_refused_by_near_duplicates(tmp_path, capsys):
    # doc 2 has two texts: one of them pairs with doc 1, the other does not
    (tmp_path / "docs.csv").write_text(
        "doc_id,text\n1,the cat sat on the mat\n2,the cat sat on the mat\n"
        "2,an entirely different text\n3,something else here\n"
    )
    argv = ["near-duplicates", "--docs", str(tmp_path / "docs.csv"), "--threshold", "0.8"]
    code, err = run(capsys, [*argv, "--out", str(tmp_path / "out")])
    assert code == EXIT_INPUT
    line = error_line(err, "near-duplicates")
    assert line.endswith("docs.csv: doc id 2 appears 2 times; each doc may appear once"), line
    assert not (tmp_path / "out").exists()
