"""Benchmark of ``near-duplicates`` (SimHash or MinHash) on a generated corpus.

Data: D documents of W words drawn from a Zipf vocabulary of 20,000 words; a share
of them get a planted copy with 1 to 3 words replaced. The corpus is generated and
written in chunks, so a million documents fit in little memory.

Measured:
* the end-to-end time of ``near-duplicates`` from the Parquet docs to the written
  pairs and clusters (Spark already started);
* recall of the planted copies: for SimHash, of the planted pairs whose
  fingerprints (recomputed here in numpy) are within h; for MinHash, of the planted
  pairs whose exact Jaccard of word k-shingle sets (Python sets) is >= the
  threshold; and the planted pairs found at all;
* that every reported pair holds (within h, or exact Jaccard >= threshold, both
  recomputed here, independently of the Spark job);
* with ``--datasketch``: datasketch's single-process ``MinHashLSH`` on the same
  documents (signatures with ``MinHash.update_batch``, insert, query every
  document, exact check of its candidates), for MinHash.

Usage:
    python bench/near_duplicates_bench.py --method simhash --docs 1000000 --distance 8
    python bench/near_duplicates_bench.py --method minhash --docs 100000 --datasketch
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sparkeval.lsh.near_duplicate_search import run_near_duplicates
from sparkeval.lsh.options import NearDuplicatesConfig
from sparkeval.lsh.simhash import simhash_of
from sparkeval.spark import build_session

VOCABULARY = 20_000
CHUNK = 50_000


def write_corpus(path: Path, docs: int, words: int, share: float, seed: int) -> list:
    """Write ``doc_id, text`` in chunks; return the planted pairs (source, copy)."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(VOCABULARY)])
    cdf = np.cumsum(1.0 / np.arange(1, VOCABULARY + 1) ** 0.9)
    cdf /= cdf[-1]
    sources = np.sort(rng.choice(docs, int(docs * share), replace=False))
    planted, copies = [], []
    schema = pa.schema([("doc_id", pa.int64()), ("text", pa.string())])
    with pq.ParquetWriter(path, schema) as writer:
        for lo in range(0, docs, CHUNK):
            hi = min(lo + CHUNK, docs)
            codes = np.searchsorted(cdf, rng.random((hi - lo, words)))
            texts = [" ".join(vocab[row]) for row in codes]
            for src in sources[(sources >= lo) & (sources < hi)]:
                text = texts[src - lo].split()
                c = len(planted)
                for pos in rng.choice(words, int(rng.integers(1, 4)), replace=False):
                    text[pos] = f"edit{c}x{pos}"
                planted.append((int(src), docs + c))
                copies.append(" ".join(text))
            writer.write_table(pa.table({"doc_id": np.arange(lo, hi), "text": texts}, schema))
        writer.write_table(
            pa.table({"doc_id": np.arange(docs, docs + len(copies)), "text": copies}, schema)
        )
    return planted


def word_shingles(text: str, k: int) -> list[str]:
    """Word k-shingles as the command defines them (lower case, split on non-word)."""
    words = [w for w in re.split(r"[^\w]+", text.lower()) if w]
    return [" ".join(words[i : i + k]) for i in range(max(len(words) - k, 0) + 1)]


def texts_of(path: Path, ids: set[int]) -> dict[int, str]:
    """The texts of some documents, read back from the Parquet file."""
    table = pq.read_table(path, filters=[("doc_id", "in", sorted(ids))]) if ids else None
    if table is None:
        return {}
    return dict(
        zip(table.column("doc_id").to_pylist(), table.column("text").to_pylist(), strict=True)
    )


def jaccard(a: set, b: set) -> float:
    """Exact Jaccard of two sets."""
    return len(a & b) / len(a | b) if a or b else 1.0


def check_simhash(got: set, planted: list, text: dict, h: int, k: int) -> dict:
    ids = sorted(text)
    fps = dict(
        zip(
            ids, (int(f) for f in simhash_of([word_shingles(text[i], k) for i in ids])), strict=True
        )
    )
    distance = {p: bin(fps[p[0]] ^ fps[p[1]]).count("1") for p in planted}
    reachable = [p for p in planted if distance[p] <= h]
    return {
        "planted_within_h": len(reachable),
        "recall_within_h": sum(p in got for p in reachable) / max(len(reachable), 1),
        "planted_distance_median": float(np.median(list(distance.values()))),
        "pairs_beyond_h": sum(bin(fps[a] ^ fps[b]).count("1") > h for a, b in got),
    }


def check_minhash(got: set, planted: list, text: dict, threshold: float, k: int) -> dict:
    sets = {i: set(word_shingles(t, k)) for i, t in text.items()}
    similar = [p for p in planted if jaccard(sets[p[0]], sets[p[1]]) >= threshold]
    return {
        "planted_at_threshold": len(similar),
        "recall_at_threshold": sum(p in got for p in similar) / max(len(similar), 1),
        "pairs_below_threshold": sum(jaccard(sets[a], sets[b]) < threshold for a, b in got),
    }


def datasketch_baseline(path: Path, threshold: float, k: int, num_perm: int) -> dict:
    """datasketch MinHashLSH in this process: signatures, insert, query, exact check."""
    from datasketch import MinHash, MinHashLSH

    start = time.perf_counter()
    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    sets: dict[int, set] = {}
    pairs: set[tuple[int, int]] = set()
    for batch in pq.ParquetFile(path).iter_batches(batch_size=CHUNK):
        ids = batch.column(0).to_pylist()
        for doc, text in zip(ids, batch.column(1).to_pylist(), strict=True):
            shingle_set = set(word_shingles(text, k))
            m = MinHash(num_perm=num_perm)
            m.update_batch([s.encode("utf-8") for s in shingle_set])
            for other in lsh.query(m):  # documents inserted before this one
                if jaccard(shingle_set, sets[other]) >= threshold:
                    pairs.add((min(doc, other), max(doc, other)))
            lsh.insert(doc, m)
            sets[doc] = shingle_set
    return {
        "datasketch_seconds": round(time.perf_counter() - start, 2),
        "datasketch_pairs": pairs,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--method", choices=("simhash", "minhash"), default="simhash")
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--words", type=int, default=200)
    parser.add_argument("--share", type=float, default=0.02)
    parser.add_argument("--distance", type=int, default=8, help="SimHash h")
    parser.add_argument("--threshold", type=float, default=0.8, help="MinHash Jaccard")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--datasketch", action="store_true")
    parser.add_argument("--driver-memory", default="8g", help="the local Spark JVM's heap")
    parser.add_argument(
        "--spark-stages",
        action="store_true",
        help="search with the Spark stages even when the docs are small enough for the driver",
    )
    args = parser.parse_args()
    if args.spark_stages:
        from sparkeval.engine.plans import driver_plan

        driver_plan.DRIVER_BYTES = 0
    work = Path(tempfile.mkdtemp(prefix="near-dup-bench-"))
    try:
        path = work / "docs.parquet"
        start = time.perf_counter()
        planted = write_corpus(path, args.docs, args.words, args.share, seed=7)
        generated = time.perf_counter() - start
        spark = build_session(
            master=args.master,
            conf={
                "spark.sql.shuffle.partitions": "8",
                "spark.driver.memory": args.driver_memory,
                "spark.local.dir": str(work / "spark"),
            },
        )
        start = time.perf_counter()
        config = NearDuplicatesConfig.load(
            docs=str(path),
            out=str(work / "out"),
            method=args.method,
            threshold=args.distance if args.method == "simhash" else args.threshold,
            k=args.k,
        )
        summary = run_near_duplicates(spark, config)
        elapsed = time.perf_counter() - start
        spark.stop()
        pairs = pq.read_table(work / "out" / "pairs.parquet", columns=["doc_a", "doc_b"])
        got = set(zip(pairs.column(0).to_pylist(), pairs.column(1).to_pylist(), strict=True))
        planted = [(min(p), max(p)) for p in planted]
        text = texts_of(path, {d for p in got for d in p} | {d for p in planted for d in p})
        result = {
            "method": args.method,
            "docs": args.docs + len(planted),
            "words": args.words,
            "planted": len(planted),
            "planted_found": sum(p in got for p in planted) / max(len(planted), 1),
            "pairs": len(got),
            "candidate_pairs": summary["counts"]["candidate_pairs"],
            "seconds": round(elapsed, 2),
            "corpus_seconds": round(generated, 1),
            "driver_peak_rss_gb": round(
                resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2
            ),
        }
        if args.method == "simhash":
            result.update(
                distance_h=args.distance,
                tables=summary["counts"].get("tables"),
                key_bits=summary["counts"].get("key_bits"),
                **check_simhash(got, planted, text, args.distance, args.k),
            )
        else:
            result.update(
                threshold=args.threshold,
                **check_minhash(got, planted, text, args.threshold, args.k),
            )
            if args.datasketch:
                base = datasketch_baseline(
                    path, args.threshold, args.k, summary["parameters"]["num_perm"]
                )
                result.update(
                    datasketch_seconds=base["datasketch_seconds"],
                    datasketch_pairs=len(base["datasketch_pairs"]),
                    datasketch_planted_found=sum(p in base["datasketch_pairs"] for p in planted)
                    / max(len(planted), 1),
                    datasketch_over_sparkeval=round(base["datasketch_seconds"] / elapsed, 2),
                )
        print(json.dumps(result))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
