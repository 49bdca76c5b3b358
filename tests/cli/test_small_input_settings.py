"""Commands on small local files let adaptive execution merge their cached queries'
partitions (:mod:`sparkeval.job.small_inputs`), whatever the session's shuffle
partitions; larger or unknown inputs leave the session as it is."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pyarrow.parquet as pq

from sparkeval.cli import main
from sparkeval.errors import EXIT_OK
from sparkeval.job import small_inputs
from sparkeval.job.small_inputs import (
    CACHED_PLAN_PARTITIONING_KEY,
    local_input_bytes,
    small_input_settings,
)
from sparkeval.spark import session_settings
from tests.job_groups import tasks_run

#: spark-submit's session with no settings: Spark's default shuffle partitions
SPARK_DEFAULT = {"spark.sql.shuffle.partitions": "200"}


@dataclass
class _Config:
    paths: list[str]
    tables: list[str] = field(default_factory=list)

    def input_paths(self) -> list[str]:
        return self.paths

    def input_tables(self) -> list[str]:
        return self.tables


def test_local_input_bytes_adds_files_and_directories(tmp_path):
    (tmp_path / "run.csv").write_bytes(b"x" * 100)
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "a").write_bytes(b"y" * 10)
    (tmp_path / "parts" / "b").write_bytes(b"z" * 10)
    paths = [str(tmp_path / "run.csv"), str(tmp_path / "parts")]
    assert local_input_bytes(paths) == 120
    assert local_input_bytes([f"file://{tmp_path / 'run.csv'}"]) == 100
    assert local_input_bytes([*paths, "s3a://bucket/run.parquet"]) is None
    assert local_input_bytes([str(tmp_path / "missing.csv")]) is None


def test_only_small_local_inputs_get_the_setting(tmp_path, monkeypatch):
    run = tmp_path / "run.csv"
    run.write_bytes(b"x" * 100)
    assert small_input_settings(_Config([str(run)])) == {CACHED_PLAN_PARTITIONING_KEY: "true"}
    assert small_input_settings(_Config([str(run)], ["db.qrels"])) == {}  # a table: unknown
    assert small_input_settings(_Config([])) == {}
    assert small_input_settings(_Config(["hdfs://nn/run"])) == {}
    monkeypatch.setattr(small_inputs, "SMALL_INPUT_BYTES", 99)
    assert small_input_settings(_Config([str(run)])) == {}


def _recommendations(tmp_path, name):
    recs = tmp_path / f"{name}.csv"
    recs.write_text(
        "user_id,item_id,score\nu1,a,0.9\nu1,b,0.8\nu2,a,0.7\nu2,b,0.6\nu3,c,0.5\nu3,a,0.4\n"
    )
    return recs


def _diversity(recs, out) -> None:
    argv = ["diversity", "--run", str(recs), "--train", str(recs), "--k", "2", "--out", str(out)]
    assert main([*argv, "--quiet"]) == EXIT_OK


def test_a_command_on_small_files_runs_few_tasks_under_sparks_default_partitions(spark, tmp_path):
    # one file for both: had the first run left its lists cached, the second would find
    # them in the cache, partitioned as the first run left them
    recs = _recommendations(tmp_path, "recs")
    with session_settings(spark, {**SPARK_DEFAULT, CACHED_PLAN_PARTITIONING_KEY: "false"}):
        kept = tasks_run(spark, "small-inputs-kept", lambda: _diversity(recs, tmp_path / "kept"))
    with session_settings(spark, SPARK_DEFAULT):
        merged = tasks_run(spark, "small-inputs-on", lambda: _diversity(recs, tmp_path / "on"))
        # the session's own value (unset) is back after the command
        assert spark.conf.get(CACHED_PLAN_PARTITIONING_KEY, None) is None
    # a value the session sets is kept: 200 tasks a stage over cached rows
    assert kept > 1000, kept
    assert merged < kept / 4, (merged, kept)
    # the same values: per user, and in the summary
    rows = [
        pq.read_table(tmp_path / d / "per_user.parquet").sort_by("query_id") for d in ("kept", "on")
    ]
    assert rows[0].to_pylist() == rows[1].to_pylist()
    summaries = [json.loads((tmp_path / d / "summary.json").read_text()) for d in ("kept", "on")]
    # means and entropies are exact sums (sparkeval.exact_means): equal to the bit
    assert summaries[0] == summaries[1]
