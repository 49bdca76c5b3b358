"""The single-process limit: sparkeval's own kernels on the whole data, no Spark.

Usage: python -m runners.numpy_reference RUN.parquet QRELS.parquet
"""

from __future__ import annotations

import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq

from runners.common import SPARKEVAL_MEASURES, report
from sparkeval.engine.worker.assemble import evaluate_tables
from sparkeval.measures.names import parse_measures


def main(run_path: str, qrels_path: str) -> None:
    started = time.time()
    run = pq.read_table(run_path)
    run = run.append_column("run_id", pa.array(["run"] * run.num_rows, pa.string()))
    qrels = pq.read_table(qrels_path)
    table = evaluate_tables(run, qrels, parse_measures(SPARKEVAL_MEASURES))
    means = {
        name: float(table.column(f"m{i}").to_numpy().mean())
        for i, name in enumerate(SPARKEVAL_MEASURES[:4])
    }
    report(time.time() - started, values=means)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
