"""Rows split by query bucket: every row once, in its bucket, in its original order."""

from __future__ import annotations

import zlib

import pyarrow as pa
import pytest

from sparkeval.engine.transport.arrow_exchange import bucket_slices


@pytest.mark.parametrize("buckets", [1, 7, 70_000])
def test_bucket_slices_keep_every_row_in_its_bucket_in_order(buckets: int) -> None:
    query_ids = [f"q{(i * 7919) % 501}" for i in range(5_000)]
    table = pa.table({"query_id": query_ids, "row": list(range(len(query_ids)))})

    got = {bucket: rows.column("row").to_pylist() for bucket, rows in bucket_slices(table, buckets)}

    expected: dict[int, list[int]] = {}
    for row, query_id in enumerate(query_ids):  # crc32 of the id's UTF-8 bytes, mod buckets
        expected.setdefault(zlib.crc32(query_id.encode()) % buckets, []).append(row)
    assert got == expected
    assert list(got) == sorted(got)
