"""The one rule for a Spark table that the driver may write as the local engine does
(:func:`sparkeval.output.write_spark_table`).

Which writer wrote a part is read from its footer's ``created_by``: Spark's writer is
parquet-mr ("parquet-mr version ..."), the driver's is pyarrow ("parquet-cpp-arrow
version ..."). The driver's part must equal, byte for byte, the part pyarrow writes
for the same rows built here by hand.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sparkeval.errors import ConfigError
from sparkeval.output import DRIVER_WRITE_ROWS_KEY, write_arrow_parquet, write_spark_table

SCHEMA = pa.schema([pa.field("id", pa.string(), nullable=False), pa.field("x", pa.float64())])
ROWS = [("a", 0.5), ("b", None), ("c", 2.0)]


def _writers(directory: Path) -> set[str]:
    return {pq.ParquetFile(p).metadata.created_by for p in sorted(directory.glob("*.parquet"))}


@pytest.fixture
def frame(spark):
    spark.conf.set(DRIVER_WRITE_ROWS_KEY, "3")
    yield spark.createDataFrame(ROWS, "id string, x double").orderBy("id")
    spark.conf.unset(DRIVER_WRITE_ROWS_KEY)


@pytest.mark.parametrize("rows", [None, 3])
def test_a_table_within_the_limit_is_the_local_engines_bytes(frame, tmp_path, rows) -> None:
    written = write_spark_table(frame, tmp_path / "t.parquet", SCHEMA, rows)
    expected = pa.Table.from_pylist(
        [{"id": i, "x": x} for i, x in ROWS], schema=SCHEMA
    )  # the local engine's table, by hand
    write_arrow_parquet(expected, tmp_path / "local.parquet")
    assert [p.name for p in written] == ["part-00000.parquet"]
    assert written[0].read_bytes() == (tmp_path / "local.parquet/part-00000.parquet").read_bytes()
    assert pq.read_schema(written[0]).field("id").nullable is False


@pytest.mark.parametrize("rows", [None, 4])
def test_a_table_past_the_limit_keeps_sparks_writer(spark, frame, tmp_path, rows) -> None:
    spark.conf.set(DRIVER_WRITE_ROWS_KEY, "2")
    write_spark_table(frame, tmp_path / "t.parquet", SCHEMA, rows)
    writers = _writers(tmp_path / "t.parquet")
    assert writers and all(w.startswith("parquet-mr") for w in writers), writers
    back = pq.read_table(tmp_path / "t.parquet")
    assert [tuple(r.values()) for r in back.to_pylist()] == ROWS


def test_the_driver_sorts_what_it_is_told_to(spark, frame, tmp_path) -> None:
    shuffled = spark.createDataFrame([ROWS[2], ROWS[0], ROWS[1]], "id string, x double")
    write_spark_table(shuffled, tmp_path / "t.parquet", SCHEMA, sort_by=["id"])
    assert pq.read_table(tmp_path / "t.parquet").column("id").to_pylist() == ["a", "b", "c"]


def test_a_bad_limit_is_named(spark, frame, tmp_path) -> None:
    spark.conf.set(DRIVER_WRITE_ROWS_KEY, "many")
    with pytest.raises(ConfigError, match=r"spark\.sparkeval\.driverWriteRows: .*'many'"):
        write_spark_table(frame, tmp_path / "t.parquet", SCHEMA)
    assert not (tmp_path / "t.parquet").exists()
