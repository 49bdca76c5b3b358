"""``evaluate --ties`` on the local engine: the tie keys its own readers give files.

The rows and hand-derived values are those of :mod:`tests.engine.test_tie_rules`
(three queries whose relevant doc moves with the tie rule), written as a TREC run (the
rank field is the rank column, the lines in the row order), as Parquet (in row groups
of two rows, so that the rows' places span read units) and as CSV.  The byte-for-byte
comparison with Spark is :mod:`tests.engine.test_local_ties_spark`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT, EXIT_OK
from tests.engine.test_tie_rules import MEASURES, QRELS, RUN, expected, flat
from tests.jobs import run_without_java, tree

RUNS = ("run.txt", "run.parquet", "run.csv")


def write_inputs(directory: Path) -> None:
    """The run as ``run.txt``, ``run.parquet`` (row groups of 2 rows) and ``run.csv``;
    the qrels as ``qrels.txt``."""
    lines = [f"{r.query_id} Q0 {r.doc_id} {r.rank} {r.score} tied\n" for r in RUN.itertuples()]
    (directory / "run.txt").write_text("".join(lines))
    pq.write_table(
        pa.Table.from_pandas(RUN, preserve_index=False), directory / "run.parquet", row_group_size=2
    )
    RUN.to_csv(directory / "run.csv", index=False)
    (directory / "qrels.txt").write_text(
        "".join(f"{r.query_id} 0 {r.doc_id} {r.relevance}\n" for r in QRELS.itertuples())
    )


def argv(directory: Path, run: str, out: str, *extra: str) -> list[str]:
    """The evaluate command line of ``run`` against ``qrels.txt``."""
    return [
        "evaluate", "--run", str(directory / run), "--qrels", str(directory / "qrels.txt"),
        "--measures", ",".join(MEASURES), "--out", str(directory / out), *extra,
    ]  # fmt: skip


def per_query(out: Path) -> dict[tuple[str, str], float]:
    rows = pd.read_parquet(out / "per_query.parquet")
    return {(r.measure, r.query_id): r.value for r in rows.itertuples(index=False)}


@pytest.mark.parametrize("rule", ["doc-id", "rank", "input-order"])
@pytest.mark.parametrize("run", RUNS)
def test_each_rule_gives_the_hand_derived_values_without_spark(
    tmp_path: Path, capsys, rule: str, run: str
) -> None:
    write_inputs(tmp_path)
    assert main(argv(tmp_path, run, "out", "--ties", rule, "--engine", "local")) == EXIT_OK
    assert per_query(tmp_path / "out") == pytest.approx(flat(expected(rule)))
    err = capsys.readouterr().err
    assert "inputs read by this process, without Spark" in err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["compat"]["ties"].startswith("score descending, tied scores ")


@pytest.mark.parametrize("rule", ["rank", "input-order"])
@pytest.mark.parametrize("run", ["run.txt", "run.parquet"])
def test_several_processes_keep_the_tie_order(tmp_path: Path, rule: str, run: str) -> None:
    """Over worker processes (a unit's rows by bucket, the buckets' pieces in unit
    order) the files are those of one process."""
    write_inputs(tmp_path)
    one = argv(tmp_path, run, "one", "--ties", rule, "--engine", "local", "--local-workers", "1")
    two = argv(tmp_path, run, "two", "--ties", rule, "--engine", "local", "--local-workers", "2")
    assert main(one) == main(two) == EXIT_OK
    assert tree(tmp_path / "two") == tree(tmp_path / "one")
    assert per_query(tmp_path / "two") == pytest.approx(flat(expected(rule)))


def test_input_order_of_a_text_run_is_its_line_order(tmp_path: Path) -> None:
    """Two docs tied at 1.0 for one query, z written before a (doc id descending puts z
    first too), then the same lines in the other order: P@1 and nDCG@2 of the relevant
    doc a follow the lines.

    Lines z, a: a at position 2: P@1 = 0, nDCG@2 = (1/log2(3)) / 1 = 0.6309...
    Lines a, z: a at position 1: P@1 = 1, nDCG@2 = 1.
    """
    (tmp_path / "qrels.txt").write_text("q 0 a 1\n")
    (tmp_path / "za.txt").write_text("q Q0 z 1 1.0 r\nq Q0 a 2 1.0 r\n")
    (tmp_path / "az.txt").write_text("q Q0 a 1 1.0 r\nq Q0 z 2 1.0 r\n")
    got = {}
    for run in ("za.txt", "az.txt"):
        command = [
            "evaluate", "--run", str(tmp_path / run), "--qrels", str(tmp_path / "qrels.txt"),
            "--measures", "P@1,nDCG@2", "--out", str(tmp_path / f"out-{run}"),
            "--ties", "input-order", "--engine", "local",
        ]  # fmt: skip
        assert main(command) == EXIT_OK
        got[run] = {m: v for (m, _), v in per_query(tmp_path / f"out-{run}").items()}
    assert got["za.txt"] == pytest.approx({"P@1": 0.0, "nDCG@2": 1 / math.log2(3)})
    assert got["az.txt"] == pytest.approx({"P@1": 1.0, "nDCG@2": 1.0})


def test_a_table_without_a_rank_column_is_refused_by_name(tmp_path: Path, capsys) -> None:
    write_inputs(tmp_path)
    RUN.drop(columns="rank").to_parquet(tmp_path / "scores.parquet", index=False)
    RUN.drop(columns="rank").to_csv(tmp_path / "scores.csv", index=False)
    for run in ("scores.parquet", "scores.csv"):
        command = argv(tmp_path, run, "out", "--ties", "rank", "--engine", "local")
        assert main(command) == EXIT_INPUT
        err = capsys.readouterr().err
        assert f"{run}: ties rank orders tied scores by the run's rank column" in err
    assert not (tmp_path / "out").exists()


def test_input_order_on_spark_is_refused_by_name(tmp_path: Path, capsys) -> None:
    write_inputs(tmp_path)
    assert main(argv(tmp_path, "run.txt", "out", "--ties", "input-order", "--engine", "spark")) == (
        EXIT_INPUT
    )
    err = capsys.readouterr().err
    assert "key 'ties': input-order keeps the order of a run's lines or rows" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("rule", ["rank", "input-order"])
def test_auto_on_a_small_input_starts_no_jvm(tmp_path: Path, rule: str) -> None:
    write_inputs(tmp_path)
    result = run_without_java(
        "evaluate", tmp_path, tmp_path, *argv(tmp_path, "run.txt", "out", "--ties", rule)[1:]
    )
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stderr.splitlines()[-1] == "no pyspark"
    assert "inputs read by this process, without Spark" in result.stderr
    assert per_query(tmp_path / "out") == pytest.approx(flat(expected(rule)))


def test_the_quick_and_the_general_text_parse_read_the_same_ranks() -> None:
    """The rank fields of single-spaced lines (the quick parse) and of the same lines
    after a comment (the general parse); a rank that is not a plain number is left to
    Spark's readers."""
    from sparkeval.io import direct_text
    from sparkeval.io.direct_input import NotDirect

    data = b"q1 Q0 a 3 1.0 r\nq1 Q0 b 1 1.0 r\nq2 Q0 c 2.5 0.5 r\n"
    quick = direct_text.parse_text_ranks(data, "run", "run.txt")[3]
    general = direct_text.parse_text_ranks(b"# comment\n" + data, "run", "run.txt")[3]
    assert quick is not None and general is not None
    assert quick.to_pylist() == general.to_pylist() == [3.0, 1.0, 2.5]
    with pytest.raises(NotDirect, match=r"run\.txt: a value that is not a plain decimal"):
        direct_text.parse_text_ranks(b"q1 Q0 a third 1.0 r\n", "run", "run.txt")
