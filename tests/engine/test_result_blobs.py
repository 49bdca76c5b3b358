"""Result blobs: wide rows inline or in a local file, partial sums inline, read back in
the order of their rows."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from sparkeval.engine.transport import result_blobs
from sparkeval.engine.transport.result_files import wide_file_path


def wide(first: int, rows: int) -> pa.Table:
    return pa.table(
        {
            "query_id": [f"q{i}" for i in range(first, first + rows)],
            "m0": [i / 8 for i in range(first, first + rows)],
        }
    )


def test_wide_rows_come_back_from_inline_blobs_and_files_in_row_order(tmp_path) -> None:
    path = wide_file_path(str(tmp_path), 7)
    assert Path(path).name == "wide-00007.arrow"
    sums = pa.table({"run_id": ["r"], "n": [3]})
    batches = [
        *result_blobs.wide_blobs(wide(0, 3)),
        *result_blobs.wide_file_blobs(wide(3, 4), path),
        result_blobs.blob_batch(result_blobs.PARTIAL, sums),
        *result_blobs.wide_file_blobs(wide(9, 0), str(tmp_path / "empty.arrow")),
    ]
    kinds = [k for b in batches for k in b.column(0).to_pylist()]
    assert kinds == [result_blobs.WIDE, result_blobs.WIDE_FILE, result_blobs.PARTIAL]
    # the file blob holds only the path; the rows are in the file, nothing else is left
    assert batches[1].column(1)[0].as_py() == path.encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wide-00007.arrow"]

    rows = pa.concat_tables(result_blobs.tables(batches, result_blobs.WIDE))
    assert rows.equals(wide(0, 7))
    (partial,) = result_blobs.tables(batches, result_blobs.PARTIAL)
    assert partial.equals(sums)
