"""``per_query.parquet`` as the Python workers write it: order, nulls, file count."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.engine.long_rows import PER_QUERY_SCHEMA, evaluated_order, long_rows
from sparkeval.engine.plans import driver_plan
from sparkeval.engine.transport import per_query_writer
from sparkeval.engine.transport.local_handoff import HANDOFF_KEY
from sparkeval.engine.transport.per_query_writer import (
    _file_count,
    _share_count,
    share_bounds,
)
from tests.random_collection import random_collection

#: query ids whose byte order differs from a naive or locale-aware order
ODD_IDS = ["q10", "q2", "Q1", "Ä", "é", "z", "ｑ", "q-1", "q_1", "10", "9"]


def test_long_rows_keep_measure_order_and_nulls() -> None:
    wide = pa.table(
        {
            "run_id": ["r", "r"],
            "query_id": ["q1", "q2"],
            "m0": [0.5, 1.0],
            "m1": pa.array([None, 0.25], pa.float64()),
        }
    )
    table = long_rows(wide, ["m0", "m1"], ["AP", "RR"])
    assert table.to_pylist() == [
        {"run_id": "r", "query_id": "q1", "measure": "AP", "value": 0.5},
        {"run_id": "r", "query_id": "q1", "measure": "RR", "value": None},
        {"run_id": "r", "query_id": "q2", "measure": "AP", "value": 1.0},
        {"run_id": "r", "query_id": "q2", "measure": "RR", "value": 0.25},
    ]


def test_long_rows_of_several_runs_sharing_query_ids() -> None:
    # the id columns are dictionaries built per chunk: two runs with the same queries
    wide = pa.table(
        {
            "run_id": ["a", "a", "b", "b"],
            "query_id": ["q1", "q2", "q1", "q2"],
            "m0": [0.1, 0.2, 0.3, 0.4],
        }
    )
    table = long_rows(wide, ["m0"], ["AP"])
    assert table.cast(PER_QUERY_SCHEMA).to_pylist() == [
        {"run_id": r, "query_id": q, "measure": "AP", "value": v}
        for r, q, v in [("a", "q1", 0.1), ("a", "q2", 0.2), ("b", "q1", 0.3), ("b", "q2", 0.4)]
    ]


def test_evaluated_order_is_byte_order_over_chunks_without_unevaluated_rows() -> None:
    runs = ["r2", "r10", "R"]
    keys = [(r, q) for r in runs for q in ODD_IDS]
    evaluated = [i % 5 != 3 for i in range(len(keys))]
    rows = pa.table(
        {
            "run_id": [r for r, _ in keys],
            "query_id": [q for _, q in keys],
            "evaluated": evaluated,
        }
    )
    # several chunks, as the blobs of several partitions arrive
    chunked = pa.concat_tables([rows.slice(0, 7), rows.slice(7, 11), rows.slice(18)])
    order = evaluated_order(chunked).to_pylist()
    # by hand: Python sorts encoded UTF-8 bytes byte-wise
    expected = sorted(
        (i for i in range(len(keys)) if evaluated[i]),
        key=lambda i: (keys[i][0].encode(), keys[i][1].encode()),
    )
    assert order == expected


@pytest.mark.parametrize(
    ("rows", "cores", "files"),
    [
        (0, 2, 1),
        (1_000_000, 2, 1),
        (10_000_000, 2, 1),
        (50_000_000, 4, 4),
        (70_000_000, 4, 8),
        (40_000_000, 8, 3),
    ],
)
def test_file_count(rows, cores, files) -> None:
    assert _file_count(rows, cores) == files


def test_file_count_bounds_the_queries_one_task_sorts() -> None:
    # 16M long rows fit one file, but at one measure they are 16M queries to sort
    assert _file_count(16_000_000, 2, wide_rows=16_000_000) == 4
    assert _file_count(16_000_000, 2, wide_rows=1_600_000) == 1


@pytest.mark.parametrize(
    ("rows", "cores", "shares"),
    [(0, 2, 1), (3_999_999, 2, 1), (4_000_000, 2, 2), (10_000_000, 2, 2), (10_000_000, 8, 5)],
)
def test_share_count(rows, cores, shares) -> None:
    assert _share_count(rows, cores) == shares


@pytest.mark.parametrize("rows", [0, 1, 7, 100_001])
@pytest.mark.parametrize("shares", [1, 2, 3, 8])
def test_shares_cover_every_row_once_in_order(rows, shares) -> None:
    bounds = [share_bounds(rows, i, shares) for i in range(shares)]
    covered = [row for start, stop in bounds for row in range(start, stop)]
    assert covered == list(range(rows))
    sizes = [stop - start for start, stop in bounds]
    assert max(sizes) - min(sizes) <= 1


@pytest.fixture(params=["true", "false"], ids=["wide rows in files", "inline blobs"])
def handoff(request, spark, monkeypatch):
    """The local handoff on (wide rows in local files) or off (inline blobs), through
    Spark (not the driver's small-input path)."""
    monkeypatch.setattr(driver_plan, "DRIVER_BYTES", -1)
    spark.conf.set(HANDOFF_KEY, request.param)
    yield request.param == "true"
    spark.conf.unset(HANDOFF_KEY)


@pytest.mark.spark
@pytest.mark.parametrize(
    ("rows_per_file", "shared_sort_rows"),
    [
        (20, per_query_writer.SHARED_SORT_ROWS),  # many range-sorted files
        (per_query_writer.ROWS_PER_FILE, per_query_writer.SHARED_SORT_ROWS),  # one file
        (per_query_writer.ROWS_PER_FILE, 10),  # files: each core maps them, one slice each
    ],
)
def test_part_files_in_name_order_are_sorted_by_run_query_and_measure(
    spark, tmp_path, monkeypatch, handoff, rows_per_file, shared_sort_rows
) -> None:
    import sparkeval

    run, qrels = random_collection(3, queries=len(ODD_IDS), runs=3)
    rename = dict(zip(sorted(qrels.query_id.unique()), ODD_IDS, strict=True))
    run["query_id"] = run.query_id.map(rename)
    qrels["query_id"] = qrels.query_id.map(rename)
    measures = ["AP", "nDCG@10", "P@5", "RR"]
    evaluation = sparkeval.evaluate(
        spark, spark.createDataFrame(run), spark.createDataFrame(qrels), measures
    )
    try:
        expected = [tuple(r) for r in evaluation.ordered_per_query.collect()]
        monkeypatch.setattr(per_query_writer, "ROWS_PER_FILE", rows_per_file)
        monkeypatch.setattr(per_query_writer, "SHARED_SORT_ROWS", shared_sort_rows)
        out = tmp_path / "per_query.parquet"
        evaluation.write_per_query(str(out))  # a path as text, as users give it
    finally:
        evaluation.unpersist()
    parts = sorted(p.name for p in out.iterdir())
    if rows_per_file == 20:
        assert len(parts) > 3
    elif handoff and shared_sort_rows < 132:  # one per core (132 long rows, 10 per share)
        assert len(parts) == spark.sparkContext.defaultParallelism > 1
    else:  # one file (inline blobs are never shared: each task would receive them all)
        assert len(parts) == 1
    assert parts == [f"part-{i:05d}.parquet" for i in range(len(parts))]
    written = [
        tuple(row.values()) for name in parts for row in pq.read_table(out / name).to_pylist()
    ]
    same = [
        a[:3] == b[:3] and (a[3] == b[3] or (a[3] is None and b[3] is None))
        for a, b in zip(written, expected, strict=True)
    ]
    assert all(same)
    # independently of Spark: byte order of run and query, then the requested measure order
    key = [(r[0].encode(), r[1].encode(), measures.index(r[2])) for r in written]
    assert key == sorted(key)
    # every run owes every judged query (the default policy): 3 runs x 11 queries x 4
    assert len(set(key)) == len(key) == 3 * len(ODD_IDS) * len(measures)


def test_a_file_of_many_chunks_holds_them_in_order_one_row_group_each(tmp_path) -> None:
    # a file written from several sorted chunks keeps their order, one row group each
    queries = [f"q{i:03d}" for i in range(50)]
    wide = pa.table(
        {
            "run_id": ["r"] * 50,
            "query_id": queries,
            "m0": [i / 50 for i in range(50)],
            "m1": pa.array([None if i % 7 == 0 else float(i) for i in range(50)], pa.float64()),
        }
    )
    chunks = (wide.slice(start, 6) for start in range(0, 50, 6))
    written = list(per_query_writer._write_file(str(tmp_path), chunks, ["m0", "m1"], ["AP", "RR"]))
    assert [b.column(0).to_pylist() for b in written] == [[0]]
    parquet = pq.ParquetFile(tmp_path / "part-00000.parquet")
    assert parquet.metadata.num_row_groups == 9  # 50 rows in chunks of 6
    assert parquet.schema_arrow == PER_QUERY_SCHEMA  # plain strings, not dictionaries
    rows = parquet.read().to_pylist()
    # by hand: each query gives AP (i / 50) then RR (i, or null when i is a multiple of 7)
    expected = [
        row
        for i, q in enumerate(queries)
        for row in (
            {"run_id": "r", "query_id": q, "measure": "AP", "value": i / 50},
            {"run_id": "r", "query_id": q, "measure": "RR", "value": None if i % 7 == 0 else i},
        )
    ]
    assert rows == expected
