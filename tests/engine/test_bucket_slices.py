"""Rows split by query bucket: every row once, in its bucket, in its original order."""

from __future__ import annotations

import zlib

import pyarrow as pa
import pytest

from sparkeval.engine.transport.arrow_exchange import bucket_slices


@pytest.mark.parametrize("encoded", [False, True])
@pytest.mark.parametrize("buckets", [1, 7, 16, 17, 70_000])
def test_bucket_slices_keep_every_row_in_its_bucket_in_order(buckets: int, encoded: bool) -> None:
    """By filters (up to 16 buckets) or by one sort (more); query ids as text or
    dictionary-encoded (as the direct read gives them), always handed on as text."""
    query_ids = [f"q{(i * 7919) % 501}" for i in range(5_000)]
    column = pa.array(query_ids)
    table = pa.table(
        {"query_id": column.dictionary_encode() if encoded else column, "row": range(5_000)}
    )

    slices = list(bucket_slices(table, buckets))
    got = {bucket: rows.column("row").to_pylist() for bucket, rows in slices}
    for _, rows in slices:
        assert rows.schema.field("query_id").type == pa.string()
        assert rows.column("query_id").to_pylist() == [query_ids[i] for i in rows.column("row")]

    expected: dict[int, list[int]] = {}
    for row, query_id in enumerate(query_ids):  # crc32 of the id's UTF-8 bytes, mod buckets
        expected.setdefault(zlib.crc32(query_id.encode()) % buckets, []).append(row)
    assert got == expected
    assert list(got) == sorted(got)
