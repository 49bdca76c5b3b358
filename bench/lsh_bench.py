"""Benchmark of ``similar-users`` (MinHash LSH + exact verification) on Spark.

Data: U users, each a list of distinct items (length uniform in ``--min-len`` ..
``--max-len``, default 20) drawn from a Zipf catalogue (exponent ``--zipf``: 1.0 is
skewed, 0.6 milder); 2% of the users are planted near-duplicates of another user
(0, 1 or 2 items replaced). Ground truth: every pair with Jaccard >= 0.8, found
exactly in numpy by the prefix filter of all-pairs similarity joins (rarest items
first; candidates share a prefix item; each checked by counting common items). For
lists of one length it is cross-checked against a second exact method, subset
hashing (two 20-sets with Jaccard >= 0.8 share 18 items, so they agree on one of
the 190 subsets of 18 items of each).

Measured, end to end from the Parquet run file to the written pairs:
* sparkeval similar-users at the ``--sizes`` user counts: recall against the ground
  truth, exact Jaccard values, false pairs;
* Spark MLlib ``MinHashLSH.approxSimilarityJoin`` (distance 0.2) at ``--mllib-users``
  in the same session, with ``--mllib-tables`` hash tables (default 3, the fewest
  whose chance of missing a pair at J = 0.8 is below 1%: 0.2^3 = 0.008), its recall
  against the same ground truth, cancelled after ``--mllib-timeout`` seconds.

Usage:
    python bench/lsh_bench.py --sizes 50000,100000,1000000 --repeats 3
    python bench/lsh_bench.py --sizes 50000 --zipf 0.6 --min-len 10 --max-len 30
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import statistics
import tempfile
import threading
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from sparkeval.lsh.options import SimilarUsersConfig
from sparkeval.lsh.similar_users import run_similar_users
from sparkeval.spark import build_session

LIST_LEN = 20
THRESHOLD = 0.8


def make_lists(
    users: int,
    items: int,
    seed: int,
    planted: float = 0.02,
    zipf: float = 1.0,
    lengths: tuple[int, int] = (LIST_LEN, LIST_LEN),
) -> list[np.ndarray]:
    """Lists of distinct items from a Zipf(``zipf``) catalogue, lengths uniform in
    ``lengths``, plus planted near-duplicates (a copy with 0, 1 or 2 items replaced)."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, items + 1) ** zipf
    weights /= weights.sum()
    sizes = rng.integers(lengths[0], lengths[1] + 1, users)
    draw = rng.choice(items, size=(users, 3 * lengths[1]), p=weights)
    lists = []
    for u in range(users):
        _, first = np.unique(draw[u], return_index=True)
        row = draw[u][np.sort(first)]
        while len(row) < sizes[u]:
            extra = rng.choice(items, lengths[1], p=weights)
            row = np.concatenate([row, extra[~np.isin(extra, row)]])
            _, first = np.unique(row, return_index=True)
            row = row[np.sort(first)]
        lists.append(row[: sizes[u]].astype(np.int64))
    n_dup = int(users * planted)
    copies = rng.choice(users, size=n_dup, replace=False)
    for c in copies:
        src = int(rng.integers(0, users))
        if src == c:
            continue
        row = lists[src].copy()
        for pos in rng.choice(len(row), size=int(rng.integers(0, 3)), replace=False):
            new = int(rng.integers(0, items))
            while new in row:
                new = int(rng.integers(0, items))
            row[pos] = new
        lists[c] = row
    return lists


def prefix_filter_pairs(lists: list[np.ndarray], threshold: float) -> dict[tuple[int, int], float]:
    """All pairs with Jaccard >= threshold, exactly, for sets of any sizes.

    The prefix filter of all-pairs similarity joins: order items by global frequency
    (rarest first); a set x of size n keeps its first n - ceil(T n) + 1 items. Two
    sets with Jaccard >= T share at least one kept item, so pairs sharing a kept item
    are the candidates; a size filter (|small| >= T |big|) and an exact count of
    common items decide.
    """
    frac = Fraction(repr(threshold))
    p, q = frac.numerator, frac.denominator
    sizes = np.array([len(x) for x in lists], dtype=np.int64)
    flat = np.concatenate(lists)
    freq = np.bincount(flat)
    rank = np.empty(len(freq), dtype=np.int64)
    rank[np.lexsort((np.arange(len(freq)), freq))] = np.arange(len(freq))
    owner_l, item_l = [], []
    for u, items in enumerate(lists):
        keep = len(items) - (-(-p * len(items) // q)) + 1
        owner_l.append(np.full(keep, u, dtype=np.int64))
        item_l.append(items[np.argsort(rank[items])[:keep]])
    owner, item = np.concatenate(owner_l), np.concatenate(item_l)
    order = np.lexsort((owner, item))
    owner, item = owner[order], item[order]
    cand = []
    d = 1
    while d < len(item):
        same = item[d:] == item[:-d]
        if not same.any():
            break
        cand.append(np.stack([owner[:-d][same], owner[d:][same]], axis=1))
        d += 1
    if not cand:
        return {}
    pairs = np.unique(np.sort(np.concatenate(cand), axis=1), axis=0)
    small = np.minimum(sizes[pairs[:, 0]], sizes[pairs[:, 1]])
    big = np.maximum(sizes[pairs[:, 0]], sizes[pairs[:, 1]])
    pairs = pairs[small * q >= p * big]
    sets = [set(x.tolist()) for x in lists]
    out: dict[tuple[int, int], float] = {}
    for u, v in pairs.tolist():
        inter = len(sets[u] & sets[v])
        union = len(sets[u]) + len(sets[v]) - inter
        if inter * q >= p * union:
            out[(u, v)] = inter / union
    return out


def exact_pairs(lists: np.ndarray, threshold: float) -> dict[tuple[int, int], float]:
    """All pairs with Jaccard >= threshold, exactly, for sets of one size n.

    Two n-sets have Jaccard x / (2n - x) >= T iff they share x >= need items
    (need = the least x with x (1 + T) >= 2 T n). Such sets agree on at least one
    subset of ``need`` items: every set emits the hashes of all its subsets that
    drop ``n - need`` items (a sum of random 64-bit item hashes, so a subset's hash
    is the set's total minus the dropped items'), sets sharing a hash are
    candidates, and every candidate is checked by counting common items. Hash
    collisions only add candidates. Processed in hash partitions to bound memory.
    """
    frac = Fraction(repr(threshold))
    p, q = frac.numerator, frac.denominator
    n_users, size = lists.shape
    need = -(-2 * p * size // (p + q))  # ceil(2 T n / (1 + T))
    drop = size - need
    rng = np.random.default_rng(12345)
    item_hash = rng.integers(0, 2**63, size=int(lists.max()) + 1, dtype=np.uint64)
    combos = np.array(list(itertools.combinations(range(size), drop)), dtype=np.int64)
    combos = combos.reshape(len(combos), drop)
    parts, chunk = 8, 100_000
    cand_parts = []
    for part in range(parts):
        keys_l, owner_l = [], []
        for lo in range(0, n_users, chunk):
            h = item_hash[lists[lo : lo + chunk]]
            with np.errstate(over="ignore"):
                total = h.sum(axis=1, dtype=np.uint64)
                dropped = (
                    h[:, combos].sum(axis=2, dtype=np.uint64)
                    if drop
                    else np.zeros((len(h), 1), dtype=np.uint64)
                )
                keys = total[:, None] - dropped
            mine = keys % np.uint64(parts) == np.uint64(part)
            keys_l.append(keys[mine])
            owner_l.append(np.nonzero(mine)[0].astype(np.int64) + lo)
        keys = np.concatenate(keys_l)
        owner = np.concatenate(owner_l)
        order = np.argsort(keys, kind="stable")
        keys, owner = keys[order], owner[order]
        d = 1
        while d < len(keys):
            same = keys[d:] == keys[:-d]
            if not same.any():
                break
            pair = np.stack([owner[:-d][same], owner[d:][same]], axis=1)
            cand_parts.append(np.unique(np.sort(pair, axis=1), axis=0))
            d += 1
    if not cand_parts:
        return {}
    pairs = np.unique(np.concatenate(cand_parts), axis=0)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    sorted_lists = np.sort(lists, axis=1)
    out: dict[tuple[int, int], float] = {}
    for start in range(0, len(pairs), 200_000):
        block = pairs[start : start + 200_000]
        a, b = sorted_lists[block[:, 0]], sorted_lists[block[:, 1]]
        inter = (a[:, :, None] == b[:, None, :]).sum(axis=(1, 2))
        union = 2 * size - inter
        keep = inter * q >= p * union
        for (u, v), i, un in zip(block[keep], inter[keep], union[keep], strict=True):
            out[(int(u), int(v))] = i / un
    return out


def write_run(lists: list[np.ndarray], path: Path) -> None:
    sizes = np.array([len(x) for x in lists], dtype=np.int64)
    pd.DataFrame(
        {
            "query_id": np.repeat(np.arange(len(lists), dtype=np.int64), sizes),
            "doc_id": np.concatenate(lists),
            "score": np.concatenate([np.arange(n, 0, -1, dtype=np.float64) for n in sizes]),
        }
    ).to_parquet(path, index=False)


def run_ours(spark, run_path: Path, out: Path) -> tuple[float, dict, pd.DataFrame]:
    start = time.perf_counter()
    config = SimilarUsersConfig.load(
        run=str(run_path), out=str(out), threshold=THRESHOLD, overwrite=True
    )
    summary = run_similar_users(spark, config)
    elapsed = time.perf_counter() - start
    return elapsed, summary, pd.read_parquet(out / "pairs.parquet")


def run_mllib(
    spark, run_path: Path, out: Path, timeout: float, tables: int
) -> tuple[float | None, set[tuple[int, int]]]:
    """MLlib MinHashLSH self-join at distance <= 0.2 with ``tables`` hash tables,
    written to Parquet; its pairs, or None on timeout."""
    from pyspark.ml.feature import CountVectorizer, MinHashLSH
    from pyspark.sql import functions as F

    sc = spark.sparkContext
    group = f"mllib-{time.time_ns()}"
    sc.setJobGroup(group, "MLlib MinHashLSH baseline", interruptOnCancel=True)
    timer = threading.Timer(timeout, lambda: sc.cancelJobGroup(group))
    timer.start()
    start = time.perf_counter()
    try:
        run = spark.read.parquet(str(run_path))
        lists = run.groupBy("query_id").agg(
            F.collect_list(F.col("doc_id").cast("string")).alias("items")
        )
        cv = CountVectorizer(inputCol="items", outputCol="features", binary=True, minDF=1.0)
        vec = cv.fit(lists).transform(lists).select(F.col("query_id").alias("id"), "features")
        model = MinHashLSH(
            inputCol="features", outputCol="hashes", numHashTables=tables, seed=1
        ).fit(vec)
        # a pair at exactly J = 0.8 has distance 1 - 0.8 in floating point, which a
        # threshold of 1.0 - THRESHOLD may just exclude: widen by 1e-9 so that MLlib
        # is not penalised at the boundary (its extra pairs would count as false)
        joined = model.approxSimilarityJoin(vec, vec, 1.0 - THRESHOLD + 1e-9, distCol="dist")
        pairs = joined.where(F.col("datasetA.id") < F.col("datasetB.id")).select(
            F.col("datasetA.id").alias("a"), F.col("datasetB.id").alias("b"), "dist"
        )
        pairs.write.mode("overwrite").parquet(str(out))
        elapsed = time.perf_counter() - start
        found = pd.read_parquet(out, columns=["a", "b"])
        return elapsed, set(zip(found["a"].tolist(), found["b"].tolist(), strict=True))
    except Exception as exc:  # cancelled by the timer
        if "cancel" in str(exc).lower():
            return None, set()
        raise
    finally:
        timer.cancel()
        sc.setLocalProperty("spark.jobGroup.id", None)


def check(got: pd.DataFrame, truth: dict[tuple[int, int], float]) -> dict:
    found = {
        (int(a), int(b)): j
        for a, b, j in got[["user_a", "user_b", "jaccard"]].itertuples(index=False)
    }
    hits = [k for k in truth if k in found]
    false_pairs = [k for k in found if k not in truth]
    worst = max((abs(found[k] - truth[k]) for k in hits), default=0.0)
    return {
        "true_pairs": len(truth),
        "found": len(found),
        "recall": len(hits) / len(truth) if truth else 1.0,
        "false_pairs": len(false_pairs),
        "max_abs_jaccard_error": worst,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="50000,100000", help="user counts for sparkeval")
    parser.add_argument("--mllib-users", type=int, default=50000)
    parser.add_argument("--mllib-timeout", type=float, default=1200.0)
    parser.add_argument("--skip-mllib", action="store_true")
    parser.add_argument("--repeats", type=int, default=3, help="repeats per size (median)")
    parser.add_argument("--items", type=int, default=50000, help="catalogue size")
    parser.add_argument("--zipf", type=float, default=1.0, help="catalogue Zipf exponent")
    parser.add_argument("--min-len", type=int, default=LIST_LEN, help="shortest list")
    parser.add_argument("--max-len", type=int, default=LIST_LEN, help="longest list")
    parser.add_argument(
        "--mllib-tables",
        type=int,
        default=3,
        help="MLlib hash tables (3: recall 1 - 0.2^3 = 0.992 for a pair at J = 0.8)",
    )
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    work = Path(tempfile.mkdtemp(prefix="lsh-bench-"))
    spark = build_session(
        master=args.master,
        app_name="lsh-bench",
        conf={
            "spark.sql.shuffle.partitions": "8",
            "spark.driver.memory": "8g",
            "spark.local.dir": str(work / "spark"),
        },
    )
    results: dict = {"ours": {}, "mllib": None, "cmd_sizes": sizes}
    try:
        for users in sorted(set(sizes + ([args.mllib_users] if not args.skip_mllib else []))):
            lists = make_lists(
                users, args.items, seed=users, zipf=args.zipf, lengths=(args.min_len, args.max_len)
            )
            run_path = work / f"run_{users}.parquet"
            write_run(lists, run_path)
            t0 = time.perf_counter()
            fixed_length = args.min_len == args.max_len
            if fixed_length and users > 200_000:
                # subset hashing: memory grows with the users, not with the popular items'
                # candidate lists (the prefix filter on a skewed catalogue does not fit)
                truth = exact_pairs(np.stack(lists), THRESHOLD)
            else:
                truth = prefix_filter_pairs(lists, THRESHOLD)
            truth_s = time.perf_counter() - t0
            if fixed_length and users <= 200_000:
                # two independent exact methods must agree
                assert truth.keys() == exact_pairs(np.stack(lists), THRESHOLD).keys()
            entry: dict = {"ground_truth_s": round(truth_s, 2)}
            if users in sizes:
                times = []
                repeats = args.repeats if users <= 200_000 else 1
                for _ in range(repeats):
                    elapsed, summary, got = run_ours(spark, run_path, work / f"out_{users}")
                    times.append(elapsed)
                entry.update(check(got, truth))
                entry["times_s"] = [round(t, 2) for t in times]
                entry["median_s"] = round(statistics.median(times), 2)
                entry["bands_rows"] = [
                    summary["parameters"]["banding_bands"],
                    summary["parameters"]["banding_rows"],
                ]
                entry["largest_bucket"] = summary["largest_bucket"]
                entry["skipped_buckets"] = summary["skipped_by_max_bucket"]["buckets"]
                entry["candidate_pairs"] = summary["counts"]["candidate_pairs"]
                entry["stage_s"] = summary["timings_s"]
                results["ours"][users] = entry
                print(json.dumps({"users": users, **entry}), flush=True)
            if users == args.mllib_users and not args.skip_mllib:
                elapsed, found = run_mllib(
                    spark, run_path, work / "mllib_out", args.mllib_timeout, args.mllib_tables
                )
                results["mllib"] = {
                    "users": users,
                    "tables": args.mllib_tables,
                    "seconds": elapsed,
                    "pairs": len(found),
                    "recall": sum(k in found for k in truth) / len(truth) if truth else 1.0,
                    "false_pairs": len(found - truth.keys()),
                    "timeout_s": args.mllib_timeout,
                    "true_pairs": len(truth),
                }
                print(json.dumps({"mllib": results["mllib"]}), flush=True)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    print_table(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))


def print_table(results: dict) -> None:
    mllib = results.get("mllib")
    base = mllib["seconds"] if mllib and mllib["seconds"] else None
    print("\n| users | method | median s | runs s | recall | false pairs | max |dJ| | vs MLlib |")
    print("|---|---|---|---|---|---|---|---|")
    for users, e in sorted(results["ours"].items()):
        ratio = ""
        if mllib and mllib["users"] == users:
            if base:
                ratio = f"{base / e['median_s']:.1f}x faster"
            else:
                ratio = f">{mllib['timeout_s'] / e['median_s']:.1f}x faster (MLlib timed out)"
        print(
            f"| {users} | sparkeval similar-users | {e['median_s']} | {e['times_s']} | "
            f"{e['recall']:.4f} ({e['found']}/{e['true_pairs']}) | {e['false_pairs']} | "
            f"{e['max_abs_jaccard_error']:.1e} | {ratio} |"
        )
    if mllib:
        secs = f"{mllib['seconds']:.1f}" if mllib["seconds"] else f">{mllib['timeout_s']:.0f}"
        print(
            f"| {mllib['users']} | MLlib MinHashLSH({mllib['tables']} tables) | {secs} | 1 run | "
            f"{mllib['recall']:.4f} ({mllib['pairs']} pairs) | {mllib['false_pairs']} | | 1.0x |"
        )
    sizes = sorted(results["ours"])
    for small, big in itertools.pairwise(sizes):
        t_small, t_big = results["ours"][small]["median_s"], results["ours"][big]["median_s"]
        print(
            f"growth {small} -> {big} users: x{big / small:.0f} users, x{t_big / t_small:.2f} "
            f"time (quadratic would be x{(big / small) ** 2:.0f})"
        )


if __name__ == "__main__":
    main()
