"""Names and text that would make sparkeval do something else than it says.

* a link (or anything but a regular file) planted at the writer lock's path beside
  ``--out`` is refused, and nothing is written through it; ``--append-to`` writes no
  file through a planted name either;
* options that take SQL accept the documented subset only: ``--where`` cannot call a
  Java method, and a catalog table name is plain identifiers;
* a path names that file or directory: ``run[1].jsonl`` is not a pattern matching
  ``run1.jsonl``, and ``run:v2.jsonl`` is read.

Each refusal is exit 2 with one line saying what was refused, and no traceback;
nothing outside ``--out`` is touched.  Expected values are derived by hand in the
comments.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT, ConfigError
from sparkeval.io.sql_text import FUNCTIONS, spark_condition
from tests.jobs import CLI, run_job

pytestmark = pytest.mark.spark

#: q1 has one relevant doc, d1
QRELS = "q1 0 d1 1\n"
#: a run that ranks d1 first (P@1 = 1) and one that ranks it last (P@1 = 0)
RIGHT = {"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]}
WRONG = {"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]}


def evaluate_argv(run: Path | str, qrels: Path | str, out: Path, *extra: str) -> list[str]:
    """``sparkeval evaluate`` of P@1, as arguments of the CLI's ``main``."""
    argv = ["evaluate", "--run", str(run), "--qrels", str(qrels), "--measures", "P@1"]
    return [*argv, "--out", str(out), *extra]


def error_lines(err: str) -> list[str]:
    """The CLI's error lines (``sparkeval COMMAND: error: ...``)."""
    return [line for line in err.splitlines() if ": error: " in line]


def assert_refused(code: int, err: str, *fragments: str) -> None:
    """Exit 2, one error line holding every fragment, no traceback."""
    assert code == EXIT_INPUT, err[-3000:]
    lines = error_lines(err)
    assert len(lines) == 1, err[-3000:]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert "Traceback" not in err, err[-3000:]


def p_at_1(out: Path) -> dict[str, float]:
    summary = json.loads((out / "summary.json").read_text())
    return {run: block["measures"]["P@1"] for run, block in summary["runs"].items()}


def write_table(path: Path, columns: dict[str, list]) -> Path:
    """``columns`` as a Parquet file, CSV or JSON Lines file, by ``path``'s suffix."""
    table = pa.table(columns)
    if path.suffix == ".parquet":
        pq.write_table(table, path)
    elif path.suffix == ".csv":
        names = list(columns)
        rows = [",".join(map(str, row)) for row in zip(*columns.values(), strict=True)]
        path.write_text("\n".join([",".join(names), *rows]) + "\n")
    else:
        path.write_text("".join(json.dumps(row) + "\n" for row in table.to_pylist()))
    return path


def trec_run(path: Path, columns: dict[str, list]) -> Path:
    """``columns`` as a TREC run file (tag ``r``)."""
    rows = zip(columns["query_id"], columns["doc_id"], columns["score"], strict=True)
    path.write_text("".join(f"{q} Q0 {d} 1 {s} r\n" for q, d, s in rows))
    return path


# --- the writer lock never follows a link -------------------------------------------------


@pytest.fixture
def files(tmp_path: Path) -> Path:
    trec_run(tmp_path / "run.txt", RIGHT)
    (tmp_path / "qrels.txt").write_text(QRELS)
    return tmp_path


@pytest.mark.parametrize("dry_run", [False, True], ids=["run", "dry-run"])
@pytest.mark.parametrize("target", ["an existing file", "a missing file"])
def test_a_link_at_the_lock_path_is_refused_and_its_target_untouched(
    files: Path, target: str, dry_run: bool
) -> None:
    victim = files / "victim.txt"
    if target == "an existing file":
        victim.write_text("precious\n")
    (files / ".out.lock").symlink_to(victim)
    argv = [*CLI, *evaluate_argv("run.txt", "qrels.txt", files / "out")]
    result = run_job([*argv, *(["--dry-run"] if dry_run else [])], files)
    assert_refused(result.returncode, result.stderr, ".out.lock is a symbolic link")
    if target == "an existing file":
        assert victim.read_text() == "precious\n"
    else:
        assert not victim.exists(), "a dangling link's target was created"
    assert (files / ".out.lock").is_symlink()  # left for its owner to look at
    assert not (files / "out").exists()
    assert "Setting default log level" not in result.stderr  # refused before Spark started


@pytest.mark.parametrize("kind", ["directory", "fifo", "hard link"])
def test_a_lock_path_that_is_not_a_lone_regular_file_is_refused(files: Path, kind: str) -> None:
    lock = files / ".out.lock"
    victim = files / "victim.txt"
    victim.write_text("precious\n")
    if kind == "directory":
        lock.mkdir()
    elif kind == "fifo":
        os.mkfifo(lock)
    else:
        os.link(victim, lock)
    result = run_job([*CLI, *evaluate_argv("run.txt", "qrels.txt", files / "out")], files)
    why = "is a hard link" if kind == "hard link" else "is not a regular file"
    assert_refused(result.returncode, result.stderr, f".out.lock {why}")
    assert victim.read_text() == "precious\n"
    assert not (files / "out").exists()


def _summary_output(directory: Path) -> Path:
    """An output directory holding a ``summary.parquet`` (what ``--append-to`` reads)."""
    from sparkeval.summary_table import write_summary_table

    directory.mkdir()
    summary = {"runs": {"r": {"measures": {"P@1": 1.0}, "undefined": {"P@1": 0}}}}
    write_summary_table(directory, summary, "evaluate", [])
    return directory


def test_append_to_writes_no_file_through_a_planted_name(tmp_path: Path, monkeypatch) -> None:
    from sparkeval import summary_table

    out = _summary_output(tmp_path / "out")
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    evaluation_id = pq.read_table(out / "summary.parquet").column("evaluation_id")[0].as_py()
    final = metrics / f"evaluation_id={evaluation_id}.parquet"
    # the file written first, under a name nobody can guess: here it is guessed
    token = uuid.UUID(int=7)
    monkeypatch.setattr(summary_table.uuid, "uuid4", lambda: token)
    planted = metrics / f".{final.name}.{os.getpid()}-{token.hex[:8]}.tmp"
    planted.symlink_to(victim)
    with pytest.raises(FileExistsError):
        summary_table.append_summary(None, str(out), str(metrics))
    assert victim.read_text() == "precious\n"
    # a link in place of the dataset's file is replaced, not written through
    planted.unlink()
    final.symlink_to(victim)
    said = summary_table.append_summary(None, str(out), str(metrics))
    assert "1 summary rows" in said
    assert not final.is_symlink() and pq.read_table(final).num_rows == 1
    assert victim.read_text() == "precious\n"
    assert sorted(p.name for p in metrics.iterdir()) == [final.name]


# --- SQL options accept a documented subset --------------------------------------------------

#: (a condition, what the refusal names)
REFUSED_CONDITIONS = [
    ("reflect('java.io.File', 'createTempFile', 'x', '.y') IS NOT NULL", "function reflect"),
    ("java_method('java.lang.System', 'exit', 0) = 0", "function java_method"),
    ("score > 0; DROP TABLE runs", "';'"),
    ("query_id IN (SELECT query_id FROM runs)", "a subquery"),
    ("score > 0 -- and the rest", "a comment"),
    ("score::int = 1", "':'"),
    ("CASE WHEN score > 0 THEN 1 END = 1", "CASE"),
    ("exists(array(1), x -> x > 0)", "function exists"),
    ("score IS TRUE", "IS [NOT] NULL is the only IS test"),
    ("X'00' = doc_id", "X'00'"),
]


@pytest.mark.parametrize(("condition", "named"), REFUSED_CONDITIONS)
def test_a_condition_outside_the_subset_is_refused_before_spark_starts(
    files: Path, condition: str, named: str, capsys
) -> None:
    for option in ("--where", "--qrels-where"):
        argv = evaluate_argv(files / "run.parquet", files / "qrels.txt", files / "out")
        code = main([*argv, option, condition, "--dry-run"])
        assert_refused(code, capsys.readouterr().err, f"{option} ", named)
    assert not (files / "out").exists()


def test_reflect_in_where_runs_no_java_method(files: Path) -> None:
    """The issue's example, as a shell runs it: refused, and no temporary file made."""
    write_table(files / "run.parquet", RIGHT)
    before = set(Path("/tmp").glob("x*.y"))
    condition = "reflect('java.io.File','createTempFile','x','.y') IS NOT NULL"
    argv = [*CLI, *evaluate_argv("run.parquet", "qrels.txt", files / "out"), "--where", condition]
    result = run_job(argv, files)
    assert_refused(result.returncode, result.stderr, "--where", "the function reflect")
    assert set(Path("/tmp").glob("x*.y")) == before
    assert not (files / "out").exists()


#: conditions of the subset, and the Spark expression each means
ACCEPTED_CONDITIONS = [
    "dt = '2026-11-01' AND score >= 0",
    "run_id IN ('a', 'b') OR NOT (score < -1.5)",
    "x NOT BETWEEN -1 AND 2 * 3 % 4",
    "lower(trim(name)) LIKE 'a!%%' ESCAPE '!'",
    '`a column` IS NOT NULL AND t.dt <> "it\'s"',
    "CAST(score AS decimal(10, 2)) > 1.5BD",
    "to_date(dt) >= date_sub(current_date(), 7) AND year(d) = 2026",
    "coalesce(a, b, 'z') != '' AND d = DATE '2026-01-01'",
    "'it''s' = x OR 'a\\'b' = y OR x <=> NULL",
    "substring(concat(a, '-', b), 1, 3) = 'q-d' AND length(a) > 10L",
    "- (a) = +1e3 AND x = .5 AND y = 5.",
]


@pytest.mark.parametrize("condition", ACCEPTED_CONDITIONS)
def test_an_accepted_condition_means_to_spark_what_it_says(spark, condition: str) -> None:
    """What Spark is handed (written back from the checked parse) parses, in Spark's
    own parser, to the same expression as the condition as written."""
    parser = spark._jsparkSession.sessionState().sqlParser()
    handed = spark_condition(condition, "--where")
    assert parser.parseExpression(handed).toString() == (
        parser.parseExpression(condition).toString()
    )


def test_every_function_of_the_subset_is_one_spark_knows(spark) -> None:
    for name in FUNCTIONS:
        assert spark.catalog.functionExists(name), name


def test_a_condition_of_the_subset_keeps_the_right_rows(files: Path, capsys) -> None:
    """Both readers apply a condition written with several constructs of the subset."""
    # runs a and b in one table; the condition keeps run a (d1 first) and drops the
    # rows of run b, whose name differs only in case and spaces
    columns = {
        "run_id": [" A", " A", "b", "b"],
        "query_id": ["q1", "q1", "q1", "q1"],
        "doc_id": ["d1", "d2", "d1", "d2"],
        "score": [2.0, 1.0, 1.0, 2.0],
    }
    write_table(files / "runs.parquet", columns)
    condition = (
        "lower(trim(run_id)) IN ('a') AND score BETWEEN 0 AND 10 "
        "AND doc_id NOT LIKE 'x%' AND CAST(score AS int) IS NOT NULL"
    )
    for reader in ("auto", "spark"):
        out = files / f"out-{reader}"
        argv = evaluate_argv(files / "runs.parquet", files / "qrels.txt", out)
        code = main([*argv, "--where", condition, "--reader", reader])
        assert code == 0, capsys.readouterr().err
        assert p_at_1(out) == {" A": 1.0}


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--run", "table:runs; DROP TABLE qrels"),
        ("--run", "table:../../etc/passwd"),
        ("--qrels", "table:`qrels`"),
        ("--run-table", "runs where 1=1"),
        ("--qrels-table", "../../etc/passwd"),
        ("--append-to", "metrics; DROP TABLE metrics"),
    ],
)
def test_a_table_name_that_is_not_plain_identifiers_is_refused(
    files: Path, option: str, value: str, capsys
) -> None:
    argv = ["evaluate", "--measures", "P@1", "--out", str(files / "out"), option, value]
    if option not in ("--run", "--run-table"):
        argv += ["--run", str(files / "run.txt")]
    if option not in ("--qrels", "--qrels-table"):
        argv += ["--qrels", str(files / "qrels.txt")]
    assert_refused(main(argv), capsys.readouterr().err, option, "plain identifiers")
    assert not (files / "out").exists()


def test_a_refused_condition_names_the_option_on_one_line() -> None:
    with pytest.raises(ConfigError) as caught:
        spark_condition("score > 0\nOR reflect('a', 'b') = 1", "--qrels-where")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("--qrels-where ")
    assert "the function reflect is not accepted" in message


# --- paths are literal -------------------------------------------------------------------

#: (the file to evaluate, a file its name matches as a pattern)
PATTERN_NAMES = [
    ("run[1].jsonl", "run1.jsonl"),
    ("run{a,b}.parquet", "runa.parquet"),
    ("run?.csv", "runx.csv"),
    ("run*.txt", "run-all.txt"),
    ("run\\1.parquet", "run1.parquet"),
]


def _write_run(path: Path, columns: dict[str, list]) -> Path:
    return trec_run(path, columns) if path.suffix == ".txt" else write_table(path, columns)


@pytest.mark.parametrize("reader", ["auto", "spark"])
@pytest.mark.parametrize(("name", "decoy"), PATTERN_NAMES)
def test_a_path_with_glob_characters_names_that_file_only(
    tmp_path: Path, name: str, decoy: str, reader: str, capsys
) -> None:
    run = _write_run(tmp_path / name, RIGHT)  # d1 first: P@1 1
    _write_run(tmp_path / decoy, WRONG)  # d2 first: P@1 0, if it were read
    if name.startswith("run{"):
        _write_run(tmp_path / "runb.parquet", WRONG)
    (tmp_path / "qrels.txt").write_text(QRELS)
    argv = evaluate_argv(run, tmp_path / "qrels.txt", tmp_path / "out", "--reader", reader)
    assert main(argv) == 0, capsys.readouterr().err
    assert list(p_at_1(tmp_path / "out").values()) == [1.0]


@pytest.mark.parametrize("reader", ["auto", "spark"])
def test_a_directory_with_glob_characters_names_that_directory(
    tmp_path: Path, reader: str, capsys
) -> None:
    (tmp_path / "runs[1]").mkdir()
    (tmp_path / "runs1").mkdir()
    write_table(tmp_path / "runs[1]" / "part-0.parquet", RIGHT)
    write_table(tmp_path / "runs1" / "part-0.parquet", WRONG)
    (tmp_path / "qrels.txt").write_text(QRELS)
    argv = evaluate_argv(tmp_path / "runs[1]", tmp_path / "qrels.txt", tmp_path / "out")
    assert main([*argv, "--reader", reader, "--where", "score > 0"]) == 0
    assert p_at_1(tmp_path / "out") == {"runs[1]": 1.0}


@pytest.mark.parametrize("reader", ["auto", "spark"])
@pytest.mark.parametrize("name", ["run:v2.jsonl", "run:v2.txt", "run:v2.parquet", "run:v2.csv"])
def test_a_file_named_with_a_colon_is_read(
    tmp_path: Path, name: str, reader: str, monkeypatch, capsys
) -> None:
    _write_run(tmp_path / name, RIGHT)
    (tmp_path / "qrels.txt").write_text(QRELS)
    monkeypatch.chdir(tmp_path)  # a relative name, whose first part holds the colon
    argv = evaluate_argv(name, "qrels.txt", tmp_path / "out", "--reader", reader)
    assert main(argv) == 0, capsys.readouterr().err
    run_id = "r" if name.endswith(".txt") else "run:v2"
    assert p_at_1(tmp_path / "out") == {run_id: 1.0}


def test_a_directory_holding_a_name_with_a_colon_is_read(tmp_path: Path, capsys) -> None:
    (tmp_path / "runs").mkdir()
    write_table(tmp_path / "runs" / "part:0.parquet", RIGHT)
    (tmp_path / "qrels.txt").write_text(QRELS)
    argv = evaluate_argv(tmp_path / "runs", tmp_path / "qrels.txt", tmp_path / "out")
    assert main([*argv, "--reader", "spark"]) == 0, capsys.readouterr().err
    assert p_at_1(tmp_path / "out") == {"runs": 1.0}


def test_files_of_a_directory_named_with_glob_characters_are_each_read(
    spark, tmp_path: Path, capsys
) -> None:
    """A directory's files are handed to Spark one by one where a condition picks the
    run ids of a run id column: ``part[0].parquet`` is that file, not ``part0.parquet``."""
    from sparkeval.io.direct_plan import plan_direct_inputs

    (tmp_path / "runs").mkdir()
    write_table(tmp_path / "runs" / "part[0].parquet", {"run_id": ["a", "a"], **RIGHT})
    write_table(tmp_path / "runs" / "part0.parquet", {"run_id": ["b", "b"], **WRONG})
    (tmp_path / "qrels.txt").write_text(QRELS)
    runs, qrels = str(tmp_path / "runs"), str(tmp_path / "qrels.txt")
    plan = plan_direct_inputs(spark, [runs], qrels, None, None, None, None, "score > 0")
    assert plan is not None and plan.run_ids == ("a", "b")
    argv = evaluate_argv(runs, qrels, tmp_path / "out", "--where", "score > 0")
    assert main(argv) == 0, capsys.readouterr().err
    assert p_at_1(tmp_path / "out") == {"a": 1.0, "b": 0.0}
