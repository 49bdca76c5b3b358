"""Synthetic runs and qrels at benchmark sizes (seeded, written as Parquet).

``queries`` × ``docs`` run rows; scores are rounded so that about 5% of the rows
share their score with another doc of the same query; every query has graded
qrels (grades 0..3) for a third of its retrieved docs plus unretrieved relevant docs.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

#: run rows generated and written at a time, so that 100M rows fit in memory
CHUNK_ROWS = 10_000_000


def generate(directory: Path, queries: int, docs: int, seed: int = 1) -> tuple[Path, Path]:
    """Write ``run.parquet`` and ``qrels.parquet`` into ``directory``; returns their paths.

    The rows are made and written ``CHUNK_ROWS`` at a time (whole queries); up to that
    size the files are the same as made in one piece.
    """
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    run_path, qrels_path = directory / "run.parquet", directory / "qrels.parquet"
    per_chunk = max(1, CHUNK_ROWS // docs)
    writers: dict[Path, pq.ParquetWriter] = {}
    extra_start = 0
    try:
        for first in range(0, queries, per_chunk):
            count = min(per_chunk, queries - first)
            run, qrels, extra = _chunk(rng, first, count, docs, extra_start)
            extra_start += extra
            for path, table in ((run_path, run), (qrels_path, qrels)):
                if path not in writers:
                    writers[path] = pq.ParquetWriter(path, table.schema)
                writers[path].write_table(table)
    finally:
        for writer in writers.values():
            writer.close()
    return run_path, qrels_path


def _chunk(
    rng: np.random.Generator, first: int, queries: int, docs: int, extra_start: int
) -> tuple[pa.Table, pa.Table, int]:
    """The run and qrels rows of queries ``first`` .. ``first + queries - 1``, and the
    number of unretrieved relevant docs (``x<extra_start>``, ...) in the qrels."""
    n = queries * docs
    qid = np.repeat(np.arange(first, first + queries), docs)
    doc = rng.integers(0, 50 * docs, size=n)
    # distinct docs per query: offset by position so duplicates cannot occur
    doc = doc * docs + np.tile(np.arange(docs), queries)
    # a 1/2000 grid makes ~5% of a 100-doc list collide with a neighbour
    score = np.round(rng.random(n) * 2000) / 2000
    query_ids = np.char.add("q", qid.astype(str))
    doc_ids = np.char.add("d", doc.astype(str))
    run = pa.table({"query_id": query_ids, "doc_id": doc_ids, "score": score})

    judged = rng.random(n) < 0.33
    grades = rng.choice(4, size=n, p=[0.55, 0.25, 0.12, 0.08])
    extra = queries * max(1, docs // 10)  # relevant docs the run missed
    extra_q = rng.integers(first, first + queries, size=extra)
    numbers = np.arange(extra_start, extra_start + extra)
    qrels = pa.table(
        {
            "query_id": np.concatenate([query_ids[judged], np.char.add("q", extra_q.astype(str))]),
            "doc_id": np.concatenate([doc_ids[judged], np.char.add("x", numbers.astype(str))]),
            "relevance": np.concatenate([grades[judged], rng.integers(1, 4, size=extra)]),
        }
    )
    return run, qrels, extra


def write_variants(
    directory: Path, run_path: Path, qrels_path: Path
) -> dict[str, tuple[Path, Path]]:
    """The same collection as integer-id Parquet, TREC text (plain and gzip) and CSV with
    a header; ``{variant: paths}``.

    Integer ids are the digits of the string ids (``q12`` -> 12, ``d345`` -> 345); the
    qrels' unretrieved ``x`` docs become negative numbers, so that no id collides.
    """
    import pyarrow.compute as pc
    import pyarrow.csv as csv

    run = pq.read_table(run_path)
    qrels = pq.read_table(qrels_path)

    def number(ids: pa.ChunkedArray) -> pa.Array:
        digits = pc.cast(pc.utf8_slice_codeunits(ids, 1), pa.int64())
        unretrieved = pc.starts_with(ids, "x")
        return pc.if_else(unretrieved, pc.subtract(pc.negate(digits), 1), digits)

    int_run = directory / "run_int.parquet"
    int_qrels = directory / "qrels_int.parquet"
    pq.write_table(
        pa.table({"query_id": number(run["query_id"]), "doc_id": number(run["doc_id"]),
                  "score": run["score"]}),
        int_run,
    )  # fmt: skip
    pq.write_table(
        pa.table({"query_id": number(qrels["query_id"]), "doc_id": number(qrels["doc_id"]),
                  "relevance": qrels["relevance"]}),
        int_qrels,
    )  # fmt: skip

    options = csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    n = run.num_rows
    trec_run = directory / "run.txt"
    csv.write_csv(
        pa.table({"q": run["query_id"], "it": pa.array(["Q0"] * n), "d": run["doc_id"],
                  "rank": pa.array(range(n), pa.int64()), "s": run["score"],
                  "tag": pa.array(["run"] * n)}),
        trec_run, options,
    )  # fmt: skip
    trec_qrels = directory / "qrels.txt"
    csv.write_csv(
        pa.table({"q": qrels["query_id"], "it": pa.array([0] * qrels.num_rows, pa.int64()),
                  "d": qrels["doc_id"], "g": qrels["relevance"]}),
        trec_qrels, options,
    )  # fmt: skip
    gz_run, gz_qrels = directory / "run.txt.gz", directory / "qrels.txt.gz"
    for plain, packed in ((trec_run, gz_run), (trec_qrels, gz_qrels)):
        with open(plain, "rb") as source, gzip.open(packed, "wb", compresslevel=6) as target:
            shutil.copyfileobj(source, target, 1 << 20)
    header = csv.WriteOptions(include_header=True, delimiter=",", quoting_style="none")
    csv_run, csv_qrels = directory / "run.csv", directory / "qrels.csv"
    csv.write_csv(run.select(["query_id", "doc_id", "score"]), csv_run, header)
    csv.write_csv(qrels.select(["query_id", "doc_id", "relevance"]), csv_qrels, header)
    return {
        "int_ids": (int_run, int_qrels),
        "trec": (trec_run, trec_qrels),
        "trec_gz": (gz_run, gz_qrels),
        "csv": (csv_run, csv_qrels),
    }
