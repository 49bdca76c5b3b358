"""ranx (numba) on the same Parquet data, single process.

Usage: python -m runners.ranx_runner RUN.parquet QRELS.parquet
"""

from __future__ import annotations

import sys
import time

import pandas as pd
from ranx import Qrels, Run, evaluate

from runners.common import RANX_MEASURES, report


def main(run_path: str, qrels_path: str) -> None:
    started = time.time()
    run = pd.read_parquet(run_path)
    qrels = pd.read_parquet(qrels_path)
    qrels = qrels[qrels.relevance > 0]
    values = evaluate(
        Qrels.from_df(qrels, q_id_col="query_id", doc_id_col="doc_id", score_col="relevance"),
        Run.from_df(run, q_id_col="query_id", doc_id_col="doc_id", score_col="score"),
        RANX_MEASURES,
        make_comparable=True,
    )
    report(time.time() - started, values={k: float(v) for k, v in values.items()})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
