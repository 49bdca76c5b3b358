"""A remote ``--out`` written from a Spark standalone cluster (a master and two workers
on 127.0.0.1) whose executors share no directory with the driver, as on YARN or
Kubernetes: no ``spark.sparkeval.handoffDirectory`` is set, so each task uploads its
part of a table straight into the output's staging prefix on the S3 server (moto's,
on 127.0.0.1), and the driver commits them under their final names.

The jobs (``evaluate``, whose Python tasks write its table, and ``diversity``, whose
table Spark's DataFrame writer writes on local disk when it is larger than
``spark.sparkeval.driverWriteRows``, set to 0 here) are submitted with
``spark-submit`` as the user guide says; the results equal those of the same command
in local mode on local disk. The executors' Python workers
get no AWS variables of their own (the cluster's daemons were started without them):
they open the store with the driver's settings.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from sparkeval.cli import main
from sparkeval.errors import EXIT_OK
from tests.cluster import build_zip, cluster_env, spark_submit
from tests.conftest import ROOT
from tests.jobs import assert_same_results, collection
from tests.storage.conftest import ACCESS_KEY, SECRET_KEY

pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> dict[str, Path]:
    """The collection, its config and the package zip shipped with the jobs."""
    base = tmp_path_factory.mktemp("cluster-store")
    config = collection(base / "data")
    return {"config": config, "zip": build_zip(ROOT, base / "sparkeval.zip")}


def store_env(endpoint: str) -> dict[str, str]:
    """The submission's environment: the cluster's, with the standard AWS variables of
    the test server (and no other store setting)."""
    env = {k: v for k, v in cluster_env().items() if not k.upper().startswith("AWS_")}
    env.update(
        AWS_ENDPOINT_URL=endpoint,
        AWS_ACCESS_KEY_ID=ACCESS_KEY,
        AWS_SECRET_ACCESS_KEY=SECRET_KEY,
        AWS_REGION="us-east-1",
        AWS_EC2_METADATA_DISABLED="true",
        NO_PROXY="127.0.0.1,localhost",
    )
    return env


def submitted(cluster, job, script: str, args: list[str], env: dict[str, str], cwd: Path):
    """Submit ``jobs/<script>`` with ``args`` to the cluster and wait for it to succeed."""
    command = [*spark_submit(cluster.url, job["zip"]), str(ROOT / "jobs" / script), *args]
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == EXIT_OK, proc.stderr[-4000:]
    assert SECRET_KEY not in proc.stdout + proc.stderr
    return proc


def committed(s3, out: str) -> dict[str, int]:
    """The output's files, after checking that its manifest lists exactly them and that
    nothing but the output is left in the bucket (no staging prefix, no claim)."""
    manifest = json.loads(s3.get(f"{out}/_SUCCESS"))
    found = s3.files(out)
    assert {k: v for k, v in found.items() if k != "_SUCCESS"} == manifest["files"]
    bucket, name = out.rsplit("/", 1)
    left = [n for n in s3.names(bucket) if n != name]
    assert not [n for n in left if ".staging-" in n], f"staging left behind: {left}"
    assert not s3.files(f"{bucket}/.{name}.lock"), "a writer's claim left behind"
    return found


def test_evaluate_on_a_cluster_writes_its_parts_into_the_store(
    standalone_cluster, s3, job, spark, tmp_path
) -> None:
    out = f"s3://{s3.bucket()}/eval"
    args = ["--config", str(job["config"]), "--out", out]
    submitted(standalone_cluster, job, "evaluate.py", args, store_env(s3.endpoint), tmp_path)
    local = tmp_path / "local"
    assert main(["evaluate", "--engine", "spark", *args[:2], "--out", str(local)]) == EXIT_OK
    files = committed(s3, out)
    assert any(name.startswith("per_query.parquet/part-") for name in files)
    remote = s3.download(out, tmp_path / "remote")
    assert_same_results(remote, local)
    # the executors' pyarrow writer is the local run's, with the same options
    for part in sorted((local / "per_query.parquet").iterdir()):
        assert (remote / "per_query.parquet" / part.name).read_bytes() == part.read_bytes()
    assert (remote / "summary.json").read_bytes() == (local / "summary.json").read_bytes()


def test_a_table_of_spark_rows_is_written_by_the_executors_too(
    standalone_cluster, s3, job, spark, tmp_path
) -> None:
    """``diversity`` writes its per-user table through Spark's DataFrame writer locally
    when it has more rows than ``spark.sparkeval.driverWriteRows`` (0 here: any row);
    on the cluster each task uploads its sorted partition, and the parts, read in name
    order, hold the local run's rows in its order."""
    data = job["config"].parent
    out = f"s3://{s3.bucket()}/diversity"
    args = ["--run", str(data / "run_strong.txt"), "--k", "5"]
    settings = ["--conf", "spark.sql.shuffle.partitions=4"]
    settings += ["--conf", "spark.sparkeval.driverWriteRows=0"]  # Spark's writer
    command = [*settings, str(ROOT / "jobs" / "diversity.py"), *args, "--out", out]
    proc = subprocess.run(
        [*spark_submit(standalone_cluster.url, job["zip"]), *command],
        cwd=tmp_path,
        env=store_env(s3.endpoint),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == EXIT_OK, proc.stderr[-4000:]
    local = tmp_path / "local"
    assert main(["diversity", *args, "--out", str(local)]) == EXIT_OK
    files = committed(s3, out)
    parts = sorted(n for n in files if n.startswith("per_user.parquet/"))
    assert parts and parts[0] == "per_user.parquet/part-00000.parquet"
    remote = s3.download(out, tmp_path / "remote")

    def rows(directory: Path) -> pd.DataFrame:
        table = directory / "per_user.parquet"
        frames = [pd.read_parquet(p) for p in sorted(table.glob("part-*.parquet"))]
        return pd.concat(frames, ignore_index=True)

    pd.testing.assert_frame_equal(rows(remote), rows(local), check_exact=True)
    ours = json.loads((remote / "summary.json").read_text())
    theirs = json.loads((local / "summary.json").read_text())
    assert ours == theirs
