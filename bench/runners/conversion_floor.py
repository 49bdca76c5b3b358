"""What handing Spark's rows to Python costs with no evaluation at all: a floor.

Usage: python -m runners.conversion_floor RUN.parquet QRELS.parquet MODE [OUT]

Each mode starts its session as the sparkeval path it bounds does, reads the inputs
with Spark's readers and hands every row on, and stops there:

- ``readers``: as ``sparkeval evaluate --reader spark`` (a local[2] session with the
  ``spark`` JVM profile); the run and qrels rows, as Spark reads them, converted to
  Arrow batches (bounded by rows only, as sparkeval sends them) for Python tasks that
  only count them.
- ``readers_hashed``: the same with both ids replaced by their ``xxhash64`` in the JVM,
  so that no string is converted: the cheapest conversion of these rows there is.
- ``computed``: as ``sparkeval.evaluate(spark, ...)`` on a run whose score Spark
  computes (``score / 1.0``) in a session with HotSpot's defaults; the run's rows
  converted and counted (that path reads the scanned qrels from their files).
- ``jvm_parquet``: the way round the conversion: the JVM writes the rows Spark read as
  uncompressed Parquet files under OUT (which the Python workers could then read).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

import pyarrow as pa

MODES = ("readers", "readers_hashed", "computed", "jvm_parquet")


def row_count(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """One row: how many rows the task received."""
    rows = 0
    for batch in batches:
        rows += batch.num_rows
    yield pa.RecordBatch.from_pydict({"rows": [rows]})


def main(run_path: str, qrels_path: str, mode: str, out: str | None = None) -> None:
    from pyspark.sql import functions as F

    from runners.common import report
    from sparkeval.spark import arrow_batches_bounded_by_rows, build_session

    if mode not in MODES:
        raise SystemExit(f"mode must be one of {MODES}, got {mode!r}")
    profile = None if mode == "computed" else "spark"
    spark = build_session("local[2]", "sparkeval-bench-floor", jvm_profile=profile)
    started = time.time()
    run_df = spark.read.parquet(run_path).select("query_id", "doc_id", "score")
    qrels_df = spark.read.parquet(qrels_path).select("query_id", "doc_id", "relevance")
    if mode == "jvm_parquet":
        if out is None:
            raise SystemExit("jvm_parquet needs OUT")
        for name, frame in (("run", run_df), ("qrels", qrels_df)):
            writer = frame.write.mode("overwrite").option("compression", "uncompressed")
            writer.parquet(f"{out}/{name}")
        report(time.time() - started)
        return
    if mode == "readers_hashed":
        hashed = [F.xxhash64("query_id").alias("query_id"), F.xxhash64("doc_id").alias("doc_id")]
        run_df = run_df.select(*hashed, "score")
        qrels_df = qrels_df.select(*hashed, "relevance")
    if mode == "computed":
        run_df = run_df.withColumn("score", F.col("score") / F.lit(1.0))
    frames = run_df.mapInArrow(row_count, "rows long")
    if mode != "computed":
        frames = frames.union(qrels_df.mapInArrow(row_count, "rows long"))
    with arrow_batches_bounded_by_rows(spark):
        rows = sum(row.rows for row in frames.collect())
    report(time.time() - started, rows=rows)


if __name__ == "__main__":
    main(*sys.argv[1:5])
