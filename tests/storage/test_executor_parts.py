"""Parts that tasks upload into a remote output's staging prefix under their partition's
name are committed under their final names (``part-00000.parquet``, ... in partition
order): by the commit itself, and by the next writer's recovery when the commit was
cut short after the manifest was written. On the real S3-protocol server of the
storage tests; no Spark (the tasks' writer is called as a task calls it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.storage import object_commit
from sparkeval.storage.executor_parts import (
    ExecutorStaging,
    executor_staging,
    remote_table,
    write_batches,
)
from sparkeval.storage.stores import StoreSettings, configure
from tests.storage.conftest import ACCESS_KEY, SECRET_KEY


@pytest.fixture
def store(s3, monkeypatch) -> StoreSettings:
    """This process's store settings: the test server's."""
    for name, value in {
        "AWS_ENDPOINT_URL": s3.endpoint,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)
    settings = StoreSettings.from_spark(None)
    configure(settings)
    yield settings
    configure(StoreSettings.from_spark(None))


def rows(first: int, count: int) -> pa.RecordBatch:
    return pa.record_batch({"n": pa.array(range(first, first + count), pa.int64())})


def staged_parts(staging: ExecutorStaging, settings: StoreSettings) -> None:
    """Partitions 3 and 7 write parts of ``t.parquet`` (rows 0-1, then 2-4); partition 5
    has no rows and writes nothing."""
    target = f"{staging.prefix}/t.parquet"
    assert write_batches(target, "part-00003.parquet", iter([rows(0, 2)]), settings)
    assert not write_batches(target, "part-00005.parquet", iter([rows(9, 0)]), settings)
    assert write_batches(target, "part-00007.parquet", iter([rows(2, 1), rows(3, 2)]), settings)
    staging.place("t.parquet", [7, 3])


def test_parts_are_committed_under_their_final_names(s3, store, tmp_path) -> None:
    out = f"s3://{s3.bucket()}/eval"
    token = object_commit.new_generation()
    local = tmp_path / "staging"
    local.mkdir()
    (local / "summary.json").write_text("{}\n")
    with executor_staging(local, object_commit.staging_prefix(out, token), store) as staging:
        assert remote_table(local / "t.parquet") == (staging, "t.parquet")
        assert remote_table(tmp_path / "elsewhere") is None
        staged_parts(staging, store)
        object_commit.commit_directory(local, out, token, staging.parts)
    assert remote_table(local / "t.parquet") is None
    files = s3.files(out)
    assert sorted(files) == [
        "_SUCCESS",
        "summary.json",
        "t.parquet/part-00000.parquet",
        "t.parquet/part-00001.parquet",
    ]
    manifest = json.loads(s3.get(f"{out}/_SUCCESS"))
    assert manifest["sources"] == {
        "t.parquet/part-00000.parquet": "t.parquet/part-00003.parquet",
        "t.parquet/part-00001.parquet": "t.parquet/part-00007.parquet",
    }
    assert {k: v for k, v in files.items() if k != "_SUCCESS"} == manifest["files"]
    table = pq.read_table(s3.download(f"{out}/t.parquet", tmp_path / "t"))
    assert table.column("n").to_pylist() == [0, 1, 2, 3, 4]
    assert not [n for n in s3.names(out.rsplit("/", 1)[0]) if ".staging-" in n]


def test_recovery_places_staged_parts_under_their_final_names(s3, store, tmp_path) -> None:
    """A writer died after its manifest and intent were written, before the swap: the
    next writer's recovery rolls the generation forward, parts renamed as listed."""
    out = f"s3://{s3.bucket()}/eval"
    token = object_commit.new_generation()
    prefix = object_commit.staging_prefix(out, token)
    staging = ExecutorStaging(Path(tmp_path), prefix, store)
    staged_parts(staging, store)
    manifest = {
        "generation": token,
        "files": {final: size for final, (_, size) in staging.parts.items()},
        "sources": {final: name for final, (name, _) in staging.parts.items()},
    }
    s3.put(f"{prefix}/_SUCCESS", json.dumps(manifest).encode())
    s3.put(f"{out.rsplit('/', 1)[0]}/.eval.swap", json.dumps({"generation": token}).encode())
    object_commit.recover(out)
    assert sorted(s3.files(out)) == [
        "_SUCCESS",
        "t.parquet/part-00000.parquet",
        "t.parquet/part-00001.parquet",
    ]
    first = pq.read_table(s3.download(f"{out}/t.parquet", tmp_path / "t") / "part-00000.parquet")
    assert first.column("n").to_pylist() == [0, 1]
