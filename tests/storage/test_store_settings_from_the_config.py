"""The store's settings from the config file's ``spark:`` section alone.

A job whose environment holds no AWS variable (but ``AWS_EC2_METADATA_DISABLED``) and
whose home is empty finds the server, its path-style addressing and its keys in the
``spark.hadoop.fs.s3a.*`` settings of its config file, as a Spark user keeps them;
``s3a://`` and ``s3://`` name the same bucket; the secret key is never printed nor
written into any output.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.errors import EXIT_INPUT
from tests.jobs import CLI
from tests.storage.conftest import empty_home, storeless_env
from tests.storage.outputs import EXPECTED, QRELS, RUN

pytestmark = [pytest.mark.spark, pytest.mark.slow]

#: keys only this config holds; the job's environment has none
ACCESS = "cfg-access-7c1d"
SECRET = "cfg-secret-5e9a0b3f61d2"


def _config(directory: Path, endpoint: str, bucket: str, **options: object) -> Path:
    spark = {
        "spark.hadoop.fs.s3a.endpoint": endpoint,
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.access.key": ACCESS,
        "spark.hadoop.fs.s3a.secret.key": SECRET,
        "spark.ui.enabled": "false",
    }
    body = {
        # both spellings of the bucket in one job
        "run": [f"s3a://{bucket}/data/run.txt"],
        "qrels": f"s3://{bucket}/data/qrels.txt",
        "measures": ["P@1", "P@2", "NumRet"],
        "master": "local[1]",
        "spark": spark,
        **options,
    }
    path = directory / "job.json"
    path.write_text(json.dumps(body))
    return path


@pytest.fixture(scope="module")
def configured(tmp_path_factory, s3):
    """One job configured by its file alone: ``--out s3a://B/eval`` and ``--append-to
    s3://B/metrics``; returns (bucket, result, env, work directory)."""
    work = tmp_path_factory.mktemp("store-config")
    conf = tmp_path_factory.mktemp("store-config-file")  # holds the secret: not in work
    bucket = s3.bucket("config")
    s3.put(f"s3://{bucket}/data/run.txt", RUN.encode())
    s3.put(f"s3://{bucket}/data/qrels.txt", QRELS.encode())
    env = storeless_env(**empty_home(work / "home"))
    config = _config(
        conf, s3.endpoint, bucket, out=f"s3a://{bucket}/eval", append_to=f"s3://{bucket}/metrics"
    )
    result = subprocess.run(
        [*CLI, "evaluate", "--config", str(config)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return bucket, result, env, work


def test_the_config_files_store_settings_are_enough(configured, s3) -> None:
    bucket, result, env, _ = configured
    assert [k for k in env if k.startswith("AWS_")] == ["AWS_EC2_METADATA_DISABLED"]
    assert result.returncode == 0, result.stderr[-3000:]
    # written through s3a://, read back through the same bucket with pyarrow's client
    summary = json.loads(s3.get(f"s3://{bucket}/eval/summary.json"))
    (run,) = summary["runs"].values()
    assert run["measures"] == EXPECTED
    manifest = json.loads(s3.get(f"s3://{bucket}/eval/_SUCCESS"))
    present = {k: v for k, v in s3.files(f"s3://{bucket}/eval").items() if k != "_SUCCESS"}
    assert manifest["files"] == present
    (appended,) = s3.files(f"s3://{bucket}/metrics")
    rows = pq.read_table(pa.BufferReader(s3.get(f"s3://{bucket}/metrics/{appended}")))
    assert dict(zip(rows["measure"].to_pylist(), rows["value"].to_pylist(), strict=True)) == (
        EXPECTED
    )


def test_s3a_and_s3_name_the_same_bucket(configured, s3, tmp_path: Path) -> None:
    bucket, result, env, work = configured
    assert result.returncode == 0, result.stderr[-3000:]
    # the output written as s3a://B/eval is s3://B/eval: not empty, so not replaced
    again = subprocess.run(
        [
            *CLI,
            "evaluate",
            "--config",
            str(_config(tmp_path, s3.endpoint, bucket)),
            "--out",
            f"s3://{bucket}/eval",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert again.returncode == EXIT_INPUT, again.stderr[-3000:]
    assert f"output directory s3://{bucket}/eval already exists and is not empty" in again.stderr
    # and an output may not lie inside an input of the other spelling
    inside = subprocess.run(
        [
            *CLI,
            "evaluate",
            "--config",
            str(_config(tmp_path, s3.endpoint, bucket)),
            "--out",
            f"s3://{bucket}/data/run.txt/out",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert inside.returncode == EXIT_INPUT, inside.stderr[-3000:]
    assert "overlaps the input" in inside.stderr


def _strings(table: pa.Table) -> list[str]:
    return [
        str(value)
        for column in table.columns
        for value in column.to_pylist()
        if isinstance(value, str)
    ]


def test_the_secret_is_never_printed_nor_written(configured, s3, tmp_path: Path) -> None:
    bucket, result, env, work = configured
    assert result.returncode == 0, result.stderr[-3000:]
    printed = [result.stdout, result.stderr]
    # a dry run's report and a failure's message (an input in a bucket that does not
    # exist) are printed with the same settings
    for extra, code in (
        (["--dry-run", "--out", f"s3://{bucket}/dry"], 0),
        (["--qrels", "s3://no-such-bucket-sparkeval/qrels.txt", "--out", f"s3://{bucket}/x"], 2),
    ):
        other = subprocess.run(
            [*CLI, "evaluate", "--config", str(_config(tmp_path, s3.endpoint, bucket)), *extra],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert other.returncode == code, other.stderr[-3000:]
        assert "Traceback" not in other.stderr, other.stderr[-3000:]
        printed += [other.stdout, other.stderr]
    assert not [text for text in printed if SECRET in text]
    # every object the jobs left in the bucket: outputs, manifests, appended rows
    objects = s3.files(f"s3://{bucket}")
    assert "eval/summary.parquet" in objects and any(k.startswith("metrics/") for k in objects)
    for key in objects:
        data = s3.get(f"s3://{bucket}/{key}")
        assert SECRET.encode() not in data, key
        if key.endswith(".parquet"):
            assert not [s for s in _strings(pq.read_table(pa.BufferReader(data))) if SECRET in s]
    # nor below the jobs' working directory, their home included
    for path in work.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
