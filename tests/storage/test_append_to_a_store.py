"""``--append-to s3://...`` and reruns with ``--overwrite`` on a store.

Two different evaluations append two objects to the remote dataset; the first one
run again replaces its object (the same evaluation id) instead of adding rows, and its
rerun's result files are the same bytes as its first run's.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.storage.outputs import QRELS, RUN, evaluate

pytestmark = [pytest.mark.spark, pytest.mark.slow]


def _snapshot(s3, uri: str) -> dict[str, bytes]:
    return {key: s3.get(f"{uri}/{key}") for key in s3.files(uri)}


def _table(data: bytes) -> pa.Table:
    return pq.read_table(pa.BufferReader(data))


@pytest.fixture(scope="module")
def history(tmp_path_factory, s3):
    """Evaluations A (P@1,P@2) and B (AP) side by side, then A again with --overwrite,
    each appending to ``s3://BUCKET/metrics``; the bucket's objects after each step."""
    work = tmp_path_factory.mktemp("store-append")
    bucket = s3.bucket("append")
    s3.put(f"s3://{bucket}/data/run.txt", RUN.encode())
    s3.put(f"s3://{bucket}/data/qrels.txt", QRELS.encode())
    metrics = f"s3://{bucket}/metrics"
    with ThreadPoolExecutor(2) as pool:
        first = list(
            pool.map(
                lambda job: evaluate(s3, bucket, *job, work, "--append-to", metrics),
                [("a", "P@1,P@2"), ("b", "AP")],
            )
        )
    for result in first:
        assert result.returncode == 0, result.stderr[-3000:]
    after_two = {
        "a": _snapshot(s3, f"s3://{bucket}/a"),
        "b": _snapshot(s3, f"s3://{bucket}/b"),
        "metrics": _snapshot(s3, f"s3://{bucket}/metrics"),
    }
    again = evaluate(s3, bucket, "a", "P@1,P@2", work, "--overwrite", "--append-to", metrics)
    assert again.returncode == 0, again.stderr[-3000:]
    after_rerun = {
        "a": _snapshot(s3, f"s3://{bucket}/a"),
        "metrics": _snapshot(s3, f"s3://{bucket}/metrics"),
    }
    return bucket, after_two, after_rerun


def test_two_evaluations_append_two_objects_of_their_rows(history, s3) -> None:
    bucket, after_two, _ = history
    metrics = after_two["metrics"]
    assert len(metrics) == 2
    for out in ("a", "b"):
        own = _table(after_two[out]["summary.parquet"])
        (evaluation_id,) = set(own["evaluation_id"].to_pylist())
        assert _table(metrics[f"evaluation_id={evaluation_id}.parquet"]).equals(own)
    # the dataset as a dashboard reads it: every row of both evaluations, once
    dataset = pq.read_table(f"{bucket}/metrics", filesystem=s3.filesystem)
    assert sorted(
        zip(dataset["measure"].to_pylist(), dataset["value"].to_pylist(), strict=True)
    ) == [
        ("AP", 1.0),
        ("P@1", 1.0),
        ("P@2", 0.5),
    ]


def test_the_same_evaluation_again_replaces_its_object(history, s3) -> None:
    bucket, after_two, after_rerun = history
    assert sorted(after_rerun["metrics"]) == sorted(after_two["metrics"])  # not a third
    own = _table(after_rerun["a"]["summary.parquet"])
    (evaluation_id,) = set(own["evaluation_id"].to_pylist())
    name = f"evaluation_id={evaluation_id}.parquet"
    replaced = _table(after_rerun["metrics"][name])
    assert replaced.equals(own)  # the rerun's rows (its evaluated_at), not the first's
    first_time = _table(after_two["metrics"][name])["evaluated_at"][0].as_py()
    assert replaced["evaluated_at"][0].as_py() > first_time
    others = [k for k in after_rerun["metrics"] if k != name]
    assert [after_rerun["metrics"][k] for k in others] == [after_two["metrics"][k] for k in others]
    dataset = pq.read_table(f"{bucket}/metrics", filesystem=s3.filesystem)
    assert dataset.num_rows == 3


def test_a_rerun_with_overwrite_gives_the_same_result_files(history) -> None:
    _, after_two, after_rerun = history
    first, rerun = after_two["a"], after_rerun["a"]
    assert sorted(first) == sorted(rerun)
    for key in first:
        if key in ("summary.json",) or key.startswith("per_query.parquet/"):
            assert rerun[key] == first[key], key
    summary_rows = [_table(x["summary.parquet"]).drop(["evaluated_at"]) for x in (first, rerun)]
    assert summary_rows[0].equals(summary_rows[1])
    # the manifest names a new generation with the same files and sizes
    assert first["_SUCCESS"] != rerun["_SUCCESS"]
