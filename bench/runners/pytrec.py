"""pytrec_eval (trec_eval's C code) on the same Parquet data, single process.

Usage: python -m runners.pytrec RUN.parquet QRELS.parquet
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict

import pyarrow.parquet as pq
import pytrec_eval

from runners.common import PYTREC_MEASURES, report


def main(run_path: str, qrels_path: str) -> None:
    started = time.time()
    run: dict[str, dict[str, float]] = defaultdict(dict)
    r = pq.read_table(run_path).to_pydict()
    for q, d, s in zip(r["query_id"], r["doc_id"], r["score"], strict=True):
        run[q][d] = s
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    j = pq.read_table(qrels_path).to_pydict()
    for q, d, g in zip(j["query_id"], j["doc_id"], j["relevance"], strict=True):
        qrels[q][d] = int(g)
    results = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(run)
    means = {}
    for values in results.values():
        for name, v in values.items():
            means[name] = means.get(name, 0.0) + v / len(results)
    report(time.time() - started, values={"map": means.get("map"), "P_10": means.get("P_10")})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
