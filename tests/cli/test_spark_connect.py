"""Spark Connect end to end: a real Connect server, started from the installed pyspark
on 127.0.0.1, runs the CLI's jobs (``--remote`` and ``SPARK_REMOTE``) and the Python
API; the values equal a classic local session's (the tests' own session, which runs
the classic side of each command in this process: one JVM start less per case)."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sparkeval.cli import main
from tests.jobs import BIN, CLI, collection, job_env, run_job

pytest.importorskip("grpc", reason="the connect extra (pyspark[connect]) is not installed")
pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    """``sc://127.0.0.1:PORT`` of a Spark Connect server on a local master."""
    work = tmp_path_factory.mktemp("connect-server")
    port = _free_port()
    log = work / "server.log"
    argv = [
        str(BIN / "spark-submit"),
        "--master",
        "local[2]",
        "--class",
        "org.apache.spark.sql.connect.service.SparkConnectServer",
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
        "--conf",
        "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.sql.shuffle.partitions=4",
    ]
    with open(log, "w") as out:
        server = subprocess.Popen(argv, cwd=work, env=job_env(), stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 180
        while "Spark Connect server started" not in log.read_text():
            assert server.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, "the Connect server did not start"
            time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=60)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("connect-inputs")
    collection(directory)
    return directory


def evaluate_argv(out: str, *extra: str) -> list[str]:
    return [*CLI, "evaluate", "--config", "job.yaml", "--out", out, *extra]


def assert_same_outputs(a: Path, b: Path) -> None:
    assert json.loads((a / "summary.json").read_text()) == json.loads(
        (b / "summary.json").read_text()
    )
    assert pq.read_table(a / "per_query.parquet").equals(pq.read_table(b / "per_query.parquet"))


def classic(inputs: Path, monkeypatch, argv: list[str]) -> int:
    """The exit code of the command ``argv`` run by :func:`sparkeval.cli.main` in this
    process, on the tests' classic session, in ``inputs``."""
    monkeypatch.chdir(inputs)
    return main(argv)


def test_the_cli_runs_on_a_connect_server(connect_server, inputs, spark, monkeypatch) -> None:
    assert classic(inputs, monkeypatch, evaluate_argv("classic")[len(CLI) :]) == 0
    # job.yaml sets spark settings; a Connect session takes them as its own settings
    remote = run_job(evaluate_argv("remote", "--remote", connect_server), inputs)
    assert remote.returncode == 0, remote.stderr[-3000:]
    assert_same_outputs(inputs / "classic", inputs / "remote")
    by_variable = run_job(evaluate_argv("by-variable"), inputs, SPARK_REMOTE=connect_server)
    assert by_variable.returncode == 0, by_variable.stderr[-3000:]
    assert_same_outputs(inputs / "classic", inputs / "by-variable")


def test_other_commands_run_on_a_connect_server(connect_server, inputs, spark, monkeypatch):
    (inputs / "recs.csv").write_text(
        "user_id,item_id,score\nu1,a,0.9\nu1,b,0.8\nu2,a,0.7\nu2,b,0.6\nu3,c,0.5\n"
    )
    argv = [*CLI, "similar-users", "--run", "recs.csv", "--threshold", "0.5"]
    remote = run_job([*argv, "--out", "su-remote", "--remote", connect_server], inputs)
    assert remote.returncode == 0, remote.stderr[-3000:]
    assert classic(inputs, monkeypatch, [*argv[len(CLI) :], "--out", "su-classic"]) == 0
    got = pq.read_table(inputs / "su-remote" / "pairs.parquet")
    assert got.equals(pq.read_table(inputs / "su-classic" / "pairs.parquet"))
    assert got.to_pylist() == [{"run_id": "recs", "user_a": "u1", "user_b": "u2", "jaccard": 1.0}]


API_SCRIPT = """
import json, sys
from pyspark.sql import SparkSession
import sparkeval

spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
rows = [("r", "q1", "d1", 2.0), ("r", "q1", "d2", 1.0), ("r", "q2", "d1", 1.0)]
judged = [("q1", "d2", 1), ("q2", "d1", 2)]
run = spark.createDataFrame(rows, "run_id string, query_id string, doc_id string, score double")
qrels = spark.createDataFrame(judged, "query_id string, doc_id string, relevance int")
ev = sparkeval.evaluate(spark, run, qrels, ["AP", "nDCG@10", "P@1"])
from sparkeval.engine.plans.local_rows import client_table
from sparkeval.engine.plans.spark_engine import plan_bytes
# text sent as large strings, which the schema sent with them casts on the server
spark.conf.set("spark.sql.execution.arrow.useLargeVarTypes", "true")
large = spark.createDataFrame(rows, "run_id string, query_id string, doc_id string, score double")
spark.conf.set("spark.sql.execution.arrow.useLargeVarTypes", "false")
others = [run.where("score > 0"), large]  # not evaluated from the client's table
held = [client_table(frame) is not None for frame in (run, qrels, *others)]
# the server estimates those others, and one job collects them
evaluated = [sparkeval.evaluate(spark, f, qrels, ["AP", "nDCG@10", "P@1"]) for f in others]
estimates = [plan_bytes(frame, qrels) for frame in (run, *others)]
per_query = [list(row) for row in ev.ordered_per_query.collect()]
made_in = [type(e._blobs).__name__ for e in (ev, *evaluated)]
same = all(e.report == ev.report for e in evaluated)
print(json.dumps([held, estimates, made_in, same, per_query]))
print(json.dumps(ev.report, sort_keys=True))
"""


def test_the_python_api_on_a_connect_session(connect_server, spark, tmp_path) -> None:
    """A Connect client process (one process may not hold a classic and a remote
    session) against the classic session of the tests."""
    import sys

    import sparkeval

    rows = [("r", "q1", "d1", 2.0), ("r", "q1", "d2", 1.0), ("r", "q2", "d1", 1.0)]
    judged = [("q1", "d2", 1), ("q2", "d1", 2)]
    classic = sparkeval.evaluate(
        spark,
        spark.createDataFrame(rows, "run_id string, query_id string, doc_id string, score double"),
        spark.createDataFrame(judged, "query_id string, doc_id string, relevance int"),
        ["AP", "nDCG@10", "P@1"],
    )
    client = run_job([sys.executable, "-c", API_SCRIPT, connect_server], tmp_path)
    assert client.returncode == 0, client.stderr[-3000:]
    *_, plan, report = client.stdout.strip().splitlines()
    remote = json.loads(report)
    assert remote == json.loads(json.dumps(classic.report, sort_keys=True))
    # by hand: q1 AP 1/2 (d2 at rank 2), q2 AP 1: mean 3/4
    assert remote["runs"]["r"]["measures"]["AP"] == 0.75
    # the client holds the rows of frames made of local data and evaluates them itself;
    # the size of a filtered frame, or of one the server would cast, is asked of the
    # server, whose estimate sends it to the driver path too (one job), not to a
    # shuffle of 200 partitions
    held, estimates, made_in, same, per_query = json.loads(plan)
    assert held == [True, True, False, False]
    assert all(0 < estimate < 1 << 20 for estimate in estimates)
    assert made_in == ["DeferredBlobs"] * 3 and same
    assert per_query == [list(row) for row in classic.ordered_per_query.collect()]


#: the other commands on the collection and on tiny tables (argv after the command)
OTHER_COMMANDS = {
    # more co-occurring user pairs than the limit: the mean Jaccard of sampled pairs too
    "diversity": [
        "--run", "recs.csv", "--train", "recs.csv", "--k", "2",
        "--exact-pair-limit", "0", "--sample-pairs", "50",
    ],
    "rank-distance": ["--runs", "run_strong.txt", "run_weak.txt", "--baseline", "weak"],
    "rating-errors": ["--predictions", "predictions.csv", "--truth", "truth.csv"],
    "near-duplicates": ["--docs", "docs.csv", "--method", "minhash", "--threshold", "0.5"],
    "compare": [
        "--per-query", "evaluated", "--baseline", "weak", "--runs", "run_strong.txt",
        "run_medium.txt", "run_weak.txt", "--permutations", "200", "--bootstrap", "200",
        "--no-plots",
    ],
}  # fmt: skip


def _without_timings(value, prefix: str):
    """A summary with its timings left out and the input directory ``prefix`` cut from
    its paths (a Connect session names inputs by their absolute paths)."""
    if isinstance(value, dict):
        return {k: _without_timings(v, prefix) for k, v in value.items() if "timing" not in k}
    if isinstance(value, list):
        return [_without_timings(v, prefix) for v in value]
    return value.replace(prefix, "") if isinstance(value, str) else value


@pytest.mark.parametrize("name", list(OTHER_COMMANDS))
def test_every_other_command_gives_what_a_classic_session_gives(
    connect_server, inputs, spark, monkeypatch, name
) -> None:
    (inputs / "recs.csv").write_text(
        "user_id,item_id,score\nu1,a,0.9\nu1,b,0.8\nu2,a,0.7\nu2,b,0.6\nu3,c,0.5\n"
    )
    (inputs / "predictions.csv").write_text("user,item,prediction\nu1,a,4.0\nu1,b,2.5\nu2,a,3\n")
    (inputs / "truth.csv").write_text("user,item,rating\nu1,a,5.0\nu1,b,2.0\nu2,a,3.0\n")
    (inputs / "docs.csv").write_text(
        "doc_id,text\nd1,the quick brown fox jumps over the lazy dog\n"
        "d2,the quick brown fox jumps over the lazy dog today\n"
        "d3,an entirely different sentence about spark and data\n"
    )
    if name == "compare" and not (inputs / "evaluated").exists():
        assert classic(inputs, monkeypatch, evaluate_argv("evaluated")[len(CLI) :]) == 0
    command = name
    argv = [*CLI, command, *OTHER_COMMANDS[name]]
    remote = run_job([*argv, "--out", f"{name}-remote", "--remote", connect_server], inputs)
    assert remote.returncode == 0, remote.stderr[-3000:]
    assert classic(inputs, monkeypatch, [*argv[len(CLI) :], "--out", f"{name}-classic"]) == 0
    got, expected = (inputs / f"{name}-{kind}" for kind in ("remote", "classic"))
    prefix = f"{inputs}/"
    summaries = [_without_timings(json.loads((d / "summary.json").read_text()), prefix)
                 for d in (got, expected)]  # fmt: skip
    assert summaries[0] == summaries[1]
    tables = sorted(p.name for p in expected.glob("*.parquet") if p.name != "summary.parquet")
    assert tables == sorted(p.name for p in got.glob("*.parquet") if p.name != "summary.parquet")
    for table in tables:
        assert pq.read_table(got / table).equals(pq.read_table(expected / table)), table
    if name == "near-duplicates":  # d1's 7 word 3-shingles are 7 of d2's 8
        pairs = pq.read_table(got / "pairs.parquet").to_pylist()
        assert [(p["doc_a"], p["doc_b"]) for p in pairs] == [("d1", "d2")]
