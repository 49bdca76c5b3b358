"""``--ties rank`` on every route that honours it, and refused by name where not.

The values are the hand-derived ones of :mod:`tests.engine.test_tie_rules` (the same
rows, written as a TREC run whose rank field is the rank column, and as Parquet): the
command on Spark (the driver's small-input path, the local handoff's files, the
exchange, and qrels the driver reads by bucket), the API on Spark DataFrames, and the
refusals by name of Spark's readers.  The local engine's tie keys are
:mod:`tests.engine.test_local_ties`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import sparkeval
from sparkeval.cli import main
from sparkeval.engine.plans import driver_plan
from sparkeval.engine.transport.local_handoff import HANDOFF_KEY
from sparkeval.errors import EXIT_INPUT, EXIT_OK, ConfigError
from tests.engine.test_tie_rules import MEASURES, QRELS, RUN, expected, flat

#: the route of a Spark evaluation: (DRIVER_BYTES, handoff on, qrels as Parquet)
ROUTES = {
    "driver": (driver_plan.DRIVER_BYTES, True, False),
    "handoff-files": (-1, True, False),
    "exchange": (-1, False, False),
    "qrels-read-by-the-driver": (-1, True, True),
}


def _write_inputs(directory: Path) -> None:
    lines = [f"{r.query_id} Q0 {r.doc_id} {r.rank} {r.score} tied\n" for r in RUN.itertuples()]
    (directory / "run.txt").write_text("".join(lines))
    RUN.to_parquet(directory / "run.parquet", index=False)
    (directory / "qrels.txt").write_text(
        "".join(f"{r.query_id} 0 {r.doc_id} {r.relevance}\n" for r in QRELS.itertuples())
    )
    QRELS.to_parquet(directory / "qrels.parquet", index=False)


def _per_query(out: Path) -> dict[tuple[str, str], float]:
    rows = pd.read_parquet(out / "per_query.parquet")
    return {(r.measure, r.query_id): r.value for r in rows.itertuples(index=False)}


def _argv(directory: Path, run: str, qrels: str, out: str, *extra: str) -> list[str]:
    return [
        "evaluate", "--run", str(directory / run), "--qrels", str(directory / qrels),
        "--measures", ",".join(MEASURES), "--out", str(directory / out), *extra,
    ]  # fmt: skip


@pytest.mark.parametrize("route", list(ROUTES))
@pytest.mark.parametrize("run", ["run.txt", "run.parquet"])
def test_rank_on_spark_gives_the_hand_derived_values(
    spark, tmp_path, monkeypatch, capsys, route: str, run: str
) -> None:
    driver_bytes, handoff, parquet_qrels = ROUTES[route]
    _write_inputs(tmp_path)
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", driver_bytes)
    qrels = "qrels.parquet" if parquet_qrels else "qrels.txt"
    argv = _argv(tmp_path, run, qrels, "out", "--ties", "rank", "--engine", "spark")
    if not handoff:
        spark.conf.set(HANDOFF_KEY, "false")
    try:
        assert main(argv) == EXIT_OK
    finally:
        spark.conf.unset(HANDOFF_KEY)
    got = _per_query(tmp_path / "out")
    assert got == pytest.approx(flat(expected("rank")))
    ties = json.loads((tmp_path / "out" / "summary.json").read_text())["compat"]["ties"]
    assert ties.startswith("score descending, tied scores by the run's rank ascending")
    err = capsys.readouterr().err
    assert "inputs read by Spark's readers" in err
    assert "ties: score descending, tied scores by the run's rank ascending" in err


def test_the_default_on_spark_is_the_doc_id_rule(spark, tmp_path, capsys) -> None:
    _write_inputs(tmp_path)
    assert main(_argv(tmp_path, "run.txt", "qrels.txt", "out", "--engine", "spark")) == EXIT_OK
    assert _per_query(tmp_path / "out") == pytest.approx(flat(expected("doc-id")))
    assert "tied scores by doc id descending" in capsys.readouterr().err


def test_the_api_on_spark_dataframes_gives_the_in_process_values(spark) -> None:
    run_df, qrels_df = spark.createDataFrame(RUN), spark.createDataFrame(QRELS)
    on_spark = sparkeval.evaluate(spark, run_df, qrels_df, MEASURES, ties="rank")
    in_process = sparkeval.evaluate(None, RUN, QRELS, MEASURES, ties="rank")
    rows = on_spark.per_query.toPandas()
    assert {(r.measure, r.query_id): r.value for r in rows.itertuples(index=False)} == (
        pytest.approx(flat(expected("rank")))
    )
    assert on_spark.report["compat"] == in_process.report["compat"]
    with pytest.raises(ConfigError, match="ties input-order: Spark does not keep the order"):
        sparkeval.evaluate(spark, run_df, qrels_df, MEASURES, ties="input-order")
    with pytest.raises(ConfigError, match="ties rank orders tied scores by the run's rank"):
        sparkeval.evaluate(spark, run_df.drop("rank"), qrels_df, MEASURES, ties="rank")


def test_a_table_without_a_rank_column_is_refused_on_spark(spark, tmp_path, capsys) -> None:
    _write_inputs(tmp_path)
    RUN.drop(columns="rank").to_parquet(tmp_path / "scores.parquet", index=False)
    argv = _argv(tmp_path, "scores.parquet", "qrels.txt", "out", "--ties", "rank")
    assert main([*argv, "--engine", "spark"]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "scores.parquet: ties rank orders tied scores by the run's rank column" in err


def test_a_trec_rank_that_is_not_a_number_is_named_with_its_line(spark, tmp_path, capsys) -> None:
    _write_inputs(tmp_path)
    lines = (tmp_path / "run.txt").read_text().splitlines()
    lines[2] = lines[2].replace(" 3 ", " third ")
    (tmp_path / "bad.txt").write_text("\n".join(lines) + "\n")
    argv = _argv(tmp_path, "bad.txt", "qrels.txt", "out", "--ties", "rank", "--engine", "spark")
    assert main(argv) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "bad.txt" in err and "q1 Q0 c third 1.0 tied" in err
    assert "the rank field is not a finite number" in err


def test_the_config_key_ties_is_read_and_checked(tmp_path) -> None:
    from sparkeval.evaluation.options import EvaluateConfig

    base = "run: run.txt\nqrels: qrels.txt\nmeasures: [AP]\nout: res\n"
    (tmp_path / "rank.yaml").write_text(base + "ties: rank\n")
    config = EvaluateConfig.load(tmp_path / "rank.yaml", {}).validate()
    assert config.ties == "rank" and config.plan().ties == "rank"
    assert EvaluateConfig.load(tmp_path / "rank.yaml", {}, ties="doc-id").plan().ties == "doc-id"
    (tmp_path / "bad.yaml").write_text(base + "ties: docid\n")
    with pytest.raises(ConfigError, match="ties"):
        EvaluateConfig.load(tmp_path / "bad.yaml", {}).validate()


def test_auto_evaluates_rank_with_spark_readers(spark, tmp_path, capsys) -> None:
    _write_inputs(tmp_path)
    argv = _argv(tmp_path, "run.txt", "qrels.txt", "out", "--ties", "rank", "--engine", "auto")
    assert main(argv) == EXIT_OK
    assert _per_query(tmp_path / "out") == pytest.approx(flat(expected("rank")))
    err = capsys.readouterr().err
    assert "inputs read by Spark's readers" in err
