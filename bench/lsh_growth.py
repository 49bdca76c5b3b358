"""How ``similar-users`` grows with the number of users, up to 10M users.

``lsh_bench.py`` measures recall against every true pair, which needs an exact
all-pairs join in memory (about 1M users of 20 items on 24 GB). This script goes
further with a check that stays linear:

* Data: U users of 20 distinct items from the same Zipf catalogue as ``lsh_bench.py``
  (50,000 items, exponent 1.0 by default), generated in chunks of 1M users with numpy
  (the first 20 distinct items of 60 draws; a row with fewer distinct draws is drawn
  again); 2% of the users are planted copies of another user with 0, 1 or 2 items
  replaced (Jaccard 1, 19/21 or 18/22, all >= 0.8).
* Recall: of the planted pairs whose final lists (after all replacements) have
  Jaccard >= 0.8, the share that ``similar-users`` reports. Pairs that are similar by
  chance are not counted (no exact join at this size), so this is a recall on a
  known sample of the true pairs.
* False pairs: every reported pair is checked against the generated lists by counting
  common items (independent of the code under test); its Jaccard must be >= 0.8 and
  equal to the reported value.
* Times are end to end, Parquet run file to ``pairs.parquet`` and ``summary.json``,
  Spark already started; each size runs once (these are growth figures, not medians).

Usage:
    python bench/lsh_growth.py --sizes 1000000,10000000
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sparkeval.lsh.options import SimilarUsersConfig
from sparkeval.lsh.similar_users import run_similar_users
from sparkeval.spark import build_session

LIST_LEN = 20
THRESHOLD = 0.8
CHUNK = 1_000_000


def first_distinct(draws: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``draws``, its first ``length`` distinct values in draw order, and a
    mask of the rows that hold fewer than ``length`` distinct values.

    Example:
        >>> rows, short = first_distinct(np.array([[3, 3, 1, 2], [5, 5, 5, 4]]), 3)
        >>> rows[0].tolist(), bool(short[0]), bool(short[1])
        ([3, 1, 2], False, True)
    """
    n = len(draws)
    order = np.argsort(draws, axis=1, kind="stable")
    ranked = np.take_along_axis(draws, order, axis=1)
    is_first_ranked = np.ones_like(ranked, dtype=bool)
    is_first_ranked[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
    is_first = np.empty_like(is_first_ranked)
    np.put_along_axis(is_first, order, is_first_ranked, axis=1)
    kept = is_first & (np.cumsum(is_first, axis=1) <= length)
    short = kept.sum(axis=1) < length
    out = np.zeros((n, length), dtype=np.int64)
    rows = np.nonzero(~short)[0]
    out[rows] = draws[rows][kept[rows]].reshape(len(rows), length)
    return out, short


def make_lists(users: int, items: int, zipf: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(lists of shape (users, 20), planted pairs (a, b) with a < b)."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, items + 1) ** zipf
    weights /= weights.sum()
    lists = np.empty((users, LIST_LEN), dtype=np.int64)
    for lo in range(0, users, CHUNK):
        n = min(CHUNK, users - lo)
        block, short = first_distinct(
            rng.choice(items, size=(n, 3 * LIST_LEN), p=weights), LIST_LEN
        )
        while short.any():
            again, short_again = first_distinct(
                rng.choice(items, size=(int(short.sum()), 6 * LIST_LEN), p=weights), LIST_LEN
            )
            rows = np.nonzero(short)[0]
            block[rows[~short_again]] = again[~short_again]
            short[rows[~short_again]] = False
        lists[lo : lo + n] = block
    n_planted = int(users * 0.02)
    copies = rng.choice(users, size=n_planted, replace=False)
    sources = rng.integers(0, users, size=n_planted)
    pairs = []
    for copy, source in zip(copies.tolist(), sources.tolist(), strict=True):
        if copy == source:
            continue
        row = lists[source].copy()
        for position in rng.choice(LIST_LEN, size=int(rng.integers(0, 3)), replace=False):
            new = int(rng.integers(0, items))
            while new in row:
                new = int(rng.integers(0, items))
            row[position] = new
        lists[copy] = row
        pairs.append((min(copy, source), max(copy, source)))
    return lists, np.unique(np.array(pairs, dtype=np.int64).reshape(-1, 2), axis=0)


def jaccard(sorted_lists: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Exact Jaccard of each pair (rows of ``sorted_lists``, 20 distinct items each)."""
    out = np.empty(len(pairs), dtype=np.float64)
    for lo in range(0, len(pairs), 200_000):
        block = pairs[lo : lo + 200_000]
        a, b = sorted_lists[block[:, 0]], sorted_lists[block[:, 1]]
        common = (a[:, :, None] == b[:, None, :]).sum(axis=(1, 2))
        out[lo : lo + len(block)] = common / (2 * LIST_LEN - common)
    return out


def write_run(lists: np.ndarray, path: Path) -> None:
    """The run file: one row per (user, item), score = LIST_LEN - position."""
    schema = pa.schema([("query_id", pa.int64()), ("doc_id", pa.int64()), ("score", pa.float64())])
    with pq.ParquetWriter(path, schema) as writer:
        for lo in range(0, len(lists), CHUNK):
            block = lists[lo : lo + CHUNK]
            users = np.arange(lo, lo + len(block), dtype=np.int64)
            scores = np.tile(np.arange(LIST_LEN, 0, -1, dtype=np.float64), len(block))
            writer.write_table(
                pa.table(
                    {
                        "query_id": np.repeat(users, LIST_LEN),
                        "doc_id": block.reshape(-1),
                        "score": scores,
                    },
                    schema=schema,
                ),
                row_group_size=CHUNK * LIST_LEN,
            )


def measure(spark, users: int, args: argparse.Namespace, work: Path) -> dict:
    t0 = time.perf_counter()
    lists, planted = make_lists(users, args.items, args.zipf, seed=users)
    run_path = work / f"run_{users}.parquet"
    write_run(lists, run_path)
    prepared_s = time.perf_counter() - t0
    sorted_lists = np.sort(lists, axis=1)
    del lists
    planted = planted[jaccard(sorted_lists, planted) >= THRESHOLD]
    out = work / f"out_{users}"
    config = SimilarUsersConfig.load(
        run=str(run_path), out=str(out), threshold=THRESHOLD, overwrite=True
    )
    start = time.perf_counter()
    summary = run_similar_users(spark, config)
    elapsed = time.perf_counter() - start
    found = pq.read_table(out / "pairs.parquet", columns=["user_a", "user_b", "jaccard"])
    got = np.stack(
        [found.column("user_a").to_numpy(), found.column("user_b").to_numpy()], axis=1
    ).astype(np.int64)
    got = np.sort(got, axis=1)
    exact = jaccard(sorted_lists, got)
    reported = found.column("jaccard").to_numpy()
    found_keys = set(map(tuple, got.tolist()))
    hits = sum((a, b) in found_keys for a, b in planted.tolist())
    run_path.unlink()
    shutil.rmtree(out, ignore_errors=True)
    return {
        "users": users,
        "seconds": round(elapsed, 1),
        "data_s": round(prepared_s, 1),
        "found_pairs": len(got),
        "false_pairs": int((exact < THRESHOLD).sum()),
        "jaccard_mismatches": int((np.abs(exact - reported) > 1e-12).sum()),
        "planted_pairs": len(planted),
        "planted_found": hits,
        "planted_recall": round(hits / len(planted), 5) if len(planted) else 1.0,
        "candidate_pairs": summary["counts"]["candidate_pairs"],
        "largest_bucket": summary["largest_bucket"],
        "skipped": summary["skipped_by_max_bucket"],
        "stage_s": summary["timings_s"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000000,10000000", help="user counts")
    parser.add_argument("--items", type=int, default=50000, help="catalogue size")
    parser.add_argument("--zipf", type=float, default=1.0, help="catalogue Zipf exponent")
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lsh-growth-"))
    spark = build_session(
        master="local[2]",
        app_name="lsh-growth",
        conf={
            "spark.sql.shuffle.partitions": "8",
            "spark.driver.memory": args.driver_memory,
            "spark.local.dir": str(work / "spark"),
        },
    )
    results = []
    try:
        for users in [int(s) for s in args.sizes.split(",") if s]:
            entry = measure(spark, users, args, work)
            results.append(entry)
            print(json.dumps(entry), flush=True)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    print("\n| users | seconds | x first size | found pairs | false | planted recall | "
          "candidates per user | largest bucket | skipped buckets |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for entry in results:
        print(
            f"| {entry['users']:,} | {entry['seconds']} | "
            f"{entry['seconds'] / results[0]['seconds']:.2f} | {entry['found_pairs']:,} | "
            f"{entry['false_pairs']} | {entry['planted_recall']:.4f} "
            f"({entry['planted_found']}/{entry['planted_pairs']}) | "
            f"{entry['candidate_pairs'] / entry['users']:.2f} | {entry['largest_bucket']} | "
            f"{entry['skipped']['buckets']} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
