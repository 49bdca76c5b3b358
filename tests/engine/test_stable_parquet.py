"""Footer canonicalisation of Parquet files: same data, fixed encodings order, valid file."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.output import tidy_spark_output
from sparkeval.stable_parquet import FooterFormatError, sort_footer_encodings

# thrift enum values of parquet's Encoding: the order the lists are sorted into
ENUM = {"PLAIN": 0, "PLAIN_DICTIONARY": 2, "RLE": 3, "BIT_PACKED": 4, "RLE_DICTIONARY": 8}


def sample_table() -> pa.Table:
    return pa.table(
        {
            "run_id": ["a", "b", None] * 200,
            "value": [1.5, None, 2.0] * 200,
            "nested": pa.array([[1, 2], [3], None] * 200),
            "flag": [True, False, True] * 200,
            "text": [f"row-{i}" for i in range(600)],
        }
    )


def encodings(path: Path) -> list[tuple[str, ...]]:
    meta = pq.ParquetFile(path).metadata
    return [
        meta.row_group(r).column(c).encodings
        for r in range(meta.num_row_groups)
        for c in range(meta.num_columns)
    ]


def test_encodings_are_sorted_and_the_data_is_unchanged(tmp_path) -> None:
    path = tmp_path / "t.parquet"
    table = sample_table()
    # several row groups, dictionary on some columns only, statistics and metadata
    pq.write_table(table, path, row_group_size=150, use_dictionary=["run_id", "text"])
    before = encodings(path)
    assert any(list(e) != sorted(e, key=ENUM.get) for e in before), "nothing to sort"
    size = path.stat().st_size

    assert sort_footer_encodings(path) is True
    after = encodings(path)
    assert all(list(e) == sorted(e, key=ENUM.get) for e in after)
    assert [sorted(e) for e in after] == [sorted(e) for e in before]
    assert path.stat().st_size == size
    assert pq.read_table(path).equals(table)
    assert sort_footer_encodings(path) is False  # already canonical


def test_other_files_are_left_alone_and_garbage_is_refused(tmp_path) -> None:
    text = tmp_path / "notes.parquet"
    text.write_bytes(b"not parquet at all")
    assert sort_footer_encodings(text) is False
    broken = tmp_path / "broken.parquet"
    content = b"PAR1" + b"\x19\x7c\xff\xff" + (4).to_bytes(4, "little") + b"PAR1"
    broken.write_bytes(content)
    with pytest.raises(FooterFormatError):
        sort_footer_encodings(broken)
    assert broken.read_bytes() == content


def test_tidy_spark_output_names_parts_in_order(tmp_path) -> None:
    out = tmp_path / "per_query.parquet"
    out.mkdir()
    names = [
        "part-00001-4f1c-c000.snappy.parquet",
        "part-00000-4f1c-c000.snappy.parquet",
        "part-00000-4f1c-c001.snappy.parquet",
    ]
    for i, name in enumerate(names):
        pq.write_table(pa.table({"i": [i]}), out / name)
        (out / f".{name}.crc").write_bytes(b"crc")
    (out / "_SUCCESS").write_text("")
    parts = tidy_spark_output(out)
    assert [p.name for p in parts] == [f"part-0000{i}.parquet" for i in range(3)]
    assert sorted(p.name for p in out.iterdir()) == [p.name for p in parts]
    assert [pq.read_table(p).column("i")[0].as_py() for p in parts] == [1, 2, 0]
