"""Local masters hand the read rows to the evaluation as files instead of an exchange.

Both ways must give the same files bit for bit, and the handoff directory must be
gone after the job, whether it succeeded or failed.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from sparkeval.cli import main
from sparkeval.engine.transport.local_handoff import HANDOFF_KEY, handoff_enabled
from sparkeval.errors import EXIT_INPUT, EXIT_OK
from tests.engine.test_direct_read import evaluate_argv, results, write_collection
from tests.random_collection import random_collection

pytestmark = pytest.mark.spark


def handoff_dirs(spark) -> list[Path]:
    return sorted(Path(spark.conf.get("spark.local.dir")).glob("sparkeval-handoff-*"))


def one_run_argv(directory: Path) -> list[str]:
    return [
        "evaluate",
        "--run", str(directory / "run.parquet"),
        "--qrels", str(directory / "qrels.parquet"),
        "--measures", "AP",
        "--out", str(directory / "out"),
    ]  # fmt: skip


@pytest.fixture
def exchange(spark):
    """The session with the handoff turned off, for one test."""
    spark.conf.set(HANDOFF_KEY, "false")
    yield spark
    spark.conf.unset(HANDOFF_KEY)


def test_the_local_session_hands_over_files(spark) -> None:
    assert spark.sparkContext.master.startswith("local")
    assert handoff_enabled(spark)


def test_the_setting_turns_the_handoff_off(exchange) -> None:
    assert not handoff_enabled(exchange)


@pytest.mark.parametrize("buckets,row_group,shuffle", [(1, 10_000, None), (5, 41, 3)])
def test_files_and_exchange_give_the_same_output(
    spark, tmp_path, buckets, row_group, shuffle
) -> None:
    data = write_collection(tmp_path / "data", 8, row_group, shuffle)
    argv = ("--buckets", str(buckets))
    assert main(evaluate_argv(data, tmp_path / "files", *argv)) == EXIT_OK
    assert handoff_dirs(spark) == []
    spark.conf.set(HANDOFF_KEY, "false")
    try:
        assert main(evaluate_argv(data, tmp_path / "exchange", *argv)) == EXIT_OK
    finally:
        spark.conf.unset(HANDOFF_KEY)

    file_rows, file_summary = results(tmp_path / "files")
    exchange_rows, exchange_summary = results(tmp_path / "exchange")
    assert len(file_rows) > 1000
    pd.testing.assert_frame_equal(file_rows, exchange_rows, check_exact=True)
    assert file_summary == exchange_summary
    files, exchanged = (
        [p.read_bytes() for p in sorted((tmp_path / name / "per_query.parquet").iterdir())]
        for name in ("files", "exchange")
    )
    assert files and files == exchanged  # the same files, byte for byte


def test_no_files_are_left_when_a_read_value_needs_the_spark_readers(spark, tmp_path) -> None:
    run, qrels = random_collection(6, queries=10)
    run.loc[5, "score"] = None  # the workers leave it to the Spark readers, which reject it
    run.to_parquet(tmp_path / "run.parquet", index=False)
    qrels.to_parquet(tmp_path / "qrels.parquet", index=False)
    assert main(one_run_argv(tmp_path)) == EXIT_INPUT
    assert handoff_dirs(spark) == []


def test_no_files_are_left_when_the_evaluation_fails(spark, tmp_path) -> None:
    run, qrels = random_collection(6, queries=10)
    qrels = pd.concat([qrels, qrels.iloc[[0]]], ignore_index=True)  # a judgement twice
    run.to_parquet(tmp_path / "run.parquet", index=False)
    qrels.to_parquet(tmp_path / "qrels.parquet", index=False)
    assert main(one_run_argv(tmp_path)) == EXIT_INPUT
    assert not (tmp_path / "out").exists()
    assert handoff_dirs(spark) == []
