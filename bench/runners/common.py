"""Shared bits of the benchmark runners: the measure lists and the result line."""

from __future__ import annotations

import json
import sys

#: the ten measures sparkeval and the numpy reference compute
SPARKEVAL_MEASURES = [
    "nDCG@10",
    "AP",
    "P@10",
    "R@10",
    "nDCG",
    "AP@100",
    "RR",
    "Rprec",
    "Success@10",
    "ERR@20",
]
#: pytrec_eval equivalents (trec_eval has no ERR)
PYTREC_MEASURES = {
    "ndcg_cut.10",
    "map",
    "P.10",
    "recall.10",
    "ndcg",
    "map_cut.100",
    "recip_rank",
    "Rprec",
    "success.10",
}
#: ranx equivalents (no ERR)
RANX_MEASURES = [
    "ndcg@10",
    "map",
    "precision@10",
    "recall@10",
    "ndcg",
    "map@100",
    "mrr",
    "r-precision",
    "hit_rate@10",
]


def report(inner_seconds: float, **extra: object) -> None:
    """Print the runner's result as the last stdout line (read by the harness)."""
    print(json.dumps({"inner_seconds": inner_seconds, **extra}))
    sys.stdout.flush()
