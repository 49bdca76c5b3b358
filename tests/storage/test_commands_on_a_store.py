"""Every command reads its inputs from ``s3://`` and writes ``--out s3://...`` with the
results of the same command on the same inputs on local disk.

A real S3-protocol server (moto's, on 127.0.0.1) holds a copy of the inputs; each
command runs twice, once as a real ``sparkeval`` process on the bucket's URIs, once on
the local files, and the two outputs must hold the same Parquet datasets with the same
rows (how many parts Spark writes follows settings chosen by the inputs' known sizes,
see :func:`tests.storage.collection.dataset_rows`) and every other file with the same
bytes (a summary names its inputs as given, so there the local paths stand for their
URIs). The local run is :func:`sparkeval.cli.main` in this process, on the tests'
session (one JVM start less per case), beside the process on the bucket. The store's
``_SUCCESS`` is its commit's manifest and must list exactly the
files the output holds; the printed results are the same too.
"""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from sparkeval.cli import main
from tests.jobs import CLI
from tests.storage.collection import differences, write_inputs

pytestmark = [pytest.mark.spark, pytest.mark.slow]

MEASURES = "AP,nDCG@10,P@5,RR,NumRet"

#: each case: the command's arguments, ``{data}`` standing for the inputs' directory
CASES: dict[str, list[str]] = {
    # TREC text and Parquet, read by the workers straight from the store; a Parquet
    # table of near-duplicate pairs
    "evaluate-trec-and-parquet": [
        "evaluate",
        "--run",
        "{data}/run_strong.txt",
        "{data}/run_medium.parquet",
        "--qrels",
        "{data}/qrels.txt",
        "--near-duplicates",
        "{data}/pairs.parquet",
        "--measures",
        MEASURES + ",NearDup@5",
    ],
    # JSON Lines, which only Spark's readers read (a local copy: no S3A in this JVM),
    # and Parquet with --reader spark
    "evaluate-jsonl-and-reader-spark": [
        "evaluate",
        "--run",
        "{data}/run_weak.jsonl",
        "{data}/run_medium.parquet",
        "--qrels",
        "{data}/qrels.parquet",
        "--reader",
        "spark",
        "--measures",
        MEASURES,
    ],
    "compare": [
        "compare",
        "--per-query",
        "{data}/eval",
        "--baseline",
        "base",
        "--runs",
        "{data}/compare_runs.parquet",
        "--extra-summary",
        "{data}/lsh",
        "--k",
        "5",
        "--permutations",
        "200",
        "--bootstrap",
        "100",
        "--seed",
        "1",
        "--no-plots",
        "--fail-if",
        "nDCG@10 drop > 0.1",
    ],
    "rank-distance": [
        "rank-distance",
        "--runs",
        "{data}/runs.parquet",
        "--baseline",
        "strong",
        "--k",
        "5",
        "--depth",
        "10",
    ],
    "rating-errors": [
        "rating-errors",
        "--predictions",
        "{data}/pred.csv",
        "--truth",
        "{data}/truth.csv",
        "--measures",
        "RMSE,MAE,R2,ExpVar",
        "--missing",
        "skip",
    ],
    "diversity": [
        "diversity",
        "--run",
        "{data}/reco.parquet",
        "--train",
        "{data}/train.parquet",
        "--item-features",
        "{data}/features.parquet",
    ],
    "similar-users": [
        "similar-users",
        "--run",
        "{data}/lists.parquet",
        "--threshold",
        "0.75",
        "--seed",
        "3",
    ],
    "near-duplicates": [
        "near-duplicates",
        "--docs",
        "{data}/docs.parquet",
        "--threshold",
        "0.5",
        "--k",
        "2",
    ],
}
#: the exit code of each case (compare's gate fails: run 'worse' drops 0.2 nDCG@10)
EXIT = {"compare": 3}


@dataclass
class Collection:
    local: Path
    bucket: str

    @property
    def remote(self) -> str:
        return f"s3://{self.bucket}/data"


@pytest.fixture(scope="module")
def collection(tmp_path_factory, s3) -> Collection:
    local = write_inputs(tmp_path_factory.mktemp("store-commands") / "data")
    bucket = s3.bucket("commands")
    s3.upload(local, f"s3://{bucket}/data")
    return Collection(local, bucket)


def _argv(case: str, data: str, out: str) -> list[str]:
    return [
        *CLI,
        *(a.replace("{data}", data) for a in CASES[case]),
        "--out",
        out,
        "--master",
        "local[1]",
    ]


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_command_on_the_store_writes_what_it_writes_locally(
    case: str, collection: Collection, s3, tmp_path: Path, spark, capsys, monkeypatch
) -> None:
    local_out = tmp_path / "local-out"
    remote_out = f"s3://{collection.bucket}/out/{case}"
    with ThreadPoolExecutor(1) as pool:  # the two runs are independent: side by side
        remote = pool.submit(_run, _argv(case, collection.remote, remote_out), tmp_path, s3.env())
        monkeypatch.chdir(tmp_path)
        capsys.readouterr()
        local_code = main(_argv(case, str(collection.local), str(local_out))[len(CLI) : -2])
        local_stdout = capsys.readouterr().out
        remote_result = remote.result()
    expected_exit = EXIT.get(case, 0)
    assert local_code == expected_exit
    assert remote_result.returncode == expected_exit, remote_result.stderr[-3000:]
    assert "Traceback" not in remote_result.stderr, remote_result.stderr[-3000:]
    if case == "evaluate-jsonl-and-reader-spark":
        assert f"copied {collection.remote}/run_weak.jsonl for Spark's readers" in (
            remote_result.stderr
        )

    # the store's manifest lists exactly the files of the output, with their sizes
    present = s3.files(remote_out)
    manifest = json.loads(s3.get(f"{remote_out}/_SUCCESS"))
    assert manifest["files"] == {k: v for k, v in present.items() if k != "_SUCCESS"}

    downloaded = s3.download(remote_out, tmp_path / "remote-out")
    places = {str(collection.local): collection.remote, str(local_out): remote_out}
    assert differences(local_out, downloaded, places) == []
    # printed results too: the same table (paths named as given)
    expected_stdout = local_stdout
    for path, uri in places.items():
        expected_stdout = expected_stdout.replace(path, uri)
    assert remote_result.stdout == expected_stdout


def test_demo_with_an_out_on_the_store_writes_no_local_directory_named_after_it(
    s3, tmp_path: Path
) -> None:
    bucket = s3.bucket("demo")
    out = f"s3://{bucket}/demo"
    result = _run([*CLI, "demo", "--out", out, "--queries", "5", "--data-only"], tmp_path, s3.env())
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    assert not (tmp_path / "s3:").exists(), sorted(str(p) for p in tmp_path.rglob("*"))
    # either the data goes to the store, or the URI is refused in one line
    if result.returncode == 0:
        assert s3.exists(f"{out}/data/qrels.txt")
    else:
        assert result.returncode == 2
        assert result.stderr.startswith(f"sparkeval demo: error: {out}"), result.stderr
