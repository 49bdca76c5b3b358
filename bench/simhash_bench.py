"""Benchmark of ``near-duplicates --method simhash`` on a generated corpus.

Data: D documents of W words from a Zipf vocabulary; a share of them get an edited
copy (1 to 3 words replaced). Measured: recall of the planted copies at Hamming
distance h, that every reported pair is within h (fingerprints recomputed in
numpy and compared), and the end-to-end time from the Parquet docs to the written
pairs and clusters.

Usage:
    python bench/simhash_bench.py --docs 20000 --words 200 --distance 8
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sparkeval.commands.near_duplicates import NearDuplicatesConfig
from sparkeval.lsh.near_duplicate_search import run_near_duplicates
from sparkeval.lsh.simhash import simhash_of
from sparkeval.spark import build_session


def corpus(docs: int, words: int, share: float, seed: int) -> tuple[list, list]:
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(20000)])
    p = 1.0 / np.arange(1, len(vocab) + 1) ** 0.9
    p /= p.sum()
    rows = [(d, " ".join(rng.choice(vocab, words, p=p))) for d in range(docs)]
    planted = []
    for c, src in enumerate(rng.choice(docs, int(docs * share), replace=False)):
        text = rows[src][1].split()
        for pos in rng.choice(words, int(rng.integers(1, 4)), replace=False):
            text[pos] = f"edit{c}x{pos}"
        rows.append((docs + c, " ".join(text)))
        planted.append((int(src), docs + c))
    return rows, planted


def shingles(text: str, k: int) -> list[str]:
    words = [w for w in re.split(r"[^\w]+", text.lower()) if w]
    return [" ".join(words[i : i + k]) for i in range(max(len(words) - k, 0) + 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--words", type=int, default=200)
    parser.add_argument("--share", type=float, default=0.05)
    parser.add_argument("--distance", type=int, default=8)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    rows, planted = corpus(args.docs, args.words, args.share, seed=7)
    work = Path(tempfile.mkdtemp(prefix="simhash-bench-"))
    try:
        path = work / "docs.parquet"
        pd.DataFrame(rows, columns=["doc_id", "text"]).to_parquet(path)
        spark = build_session(master=args.master, conf={"spark.sql.shuffle.partitions": "8"})
        start = time.perf_counter()
        config = NearDuplicatesConfig.load(
            docs=str(path),
            out=str(work / "out"),
            method="simhash",
            threshold=args.distance,
            k=args.k,
        )
        summary = run_near_duplicates(spark, config)
        elapsed = time.perf_counter() - start
        pairs = pd.read_parquet(work / "out" / "pairs.parquet")
        got = {(int(a), int(b)) for a, b in zip(pairs["doc_a"], pairs["doc_b"], strict=True)}
        fps = simhash_of([shingles(t, args.k) for _, t in rows])
        fp = {d: int(f) for (d, _), f in zip(rows, fps, strict=True)}
        wrong = sum(bin(fp[a] ^ fp[b]).count("1") > args.distance for a, b in got)
        found = sum((min(p), max(p)) in got for p in planted)
        dist = [bin(fp[a] ^ fp[b]).count("1") for a, b in planted]
        result = {
            "docs": len(rows),
            "words": args.words,
            "distance_h": args.distance,
            "planted": len(planted),
            "planted_recall": found / len(planted),
            "planted_distance_median": float(np.median(dist)),
            "pairs": len(got),
            "pairs_beyond_h": wrong,
            "candidate_pairs": summary["counts"]["candidate_pairs"],
            "seconds": round(elapsed, 2),
        }
        print(json.dumps(result))
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
