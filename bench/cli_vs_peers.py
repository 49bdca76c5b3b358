"""The CLI on a MovieLens-sized run beside single-machine peers, as whole processes.

A recommender engineer's daily call: 943 users x 300 recommended items (282,900 rows,
the size of MovieLens-100k's users and a top-300 list) against 21 relevant items per
user, six measures at 10 (precision, recall, nDCG, AP, reciprocal rank, hit rate), read
from CSV files.  Each system is timed as a whole process, from the interpreter's start
to its exit, reading the same files:

* ``sparkeval evaluate`` (the CLI: small local inputs run in the process, no JVM),
* ``sparkeval evaluate --engine spark`` (the same call on a local Spark session),
* pytrec_eval (``RelevanceEvaluator`` on dicts built from the CSV files with pandas),
* RecTools (``calculate_metrics`` on the pandas frames).

Usage::

    python bench/cli_vs_peers.py [--repeat 5] [--peer-python PYTHON] [--rows-only]

``--peer-python`` is an interpreter with ``pytrec-eval-terrier`` and ``rectools``
installed (they may not share sparkeval's environment); a peer it lacks is skipped and
said so.  Runs alternate (A B C D, A B C D, ...) after one warm-up round; the table gives
each system's median and min, and its ratio to the fastest peer's median.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

USERS, ITEMS, DEPTH, RELEVANT = 943, 1682, 300, 21
MEASURES = "P@10,R@10,nDCG@10,AP@10,RR@10,HitRate@10"

PYTREC = """
import sys, pandas as pd, pytrec_eval
recs = pd.read_csv(sys.argv[1], dtype={"user_id": str, "item_id": str})
truth = pd.read_csv(sys.argv[2], dtype={"user_id": str, "item_id": str})
run, qrels = {}, {}
for u, i, s in zip(recs.user_id, recs.item_id, recs.score):
    run.setdefault(u, {})[i] = float(s)
for u, i, r in zip(truth.user_id, truth.item_id, truth.relevance):
    qrels.setdefault(u, {})[i] = int(r)
measures = {"P_10", "recall_10", "ndcg_cut_10", "map_cut_10", "recip_rank", "success_10"}
per_query = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
names = sorted(next(iter(per_query.values())))
print({n: sum(q[n] for q in per_query.values()) / len(per_query) for n in names})
"""

RECTOOLS = """
import sys, pandas as pd
from rectools import Columns
from rectools.metrics import MAP, MRR, NDCG, HitRate, Precision, Recall, calc_metrics
recs = pd.read_csv(sys.argv[1]).rename(columns={"user_id": Columns.User, "item_id": Columns.Item})
recs[Columns.Rank] = recs.groupby(Columns.User)["score"].rank(ascending=False, method="first")
truth = pd.read_csv(sys.argv[2]).rename(columns={"user_id": Columns.User, "item_id": Columns.Item})
metrics = {"P@10": Precision(10), "R@10": Recall(10), "nDCG@10": NDCG(10), "AP@10": MAP(10),
           "RR@10": MRR(10), "HitRate@10": HitRate(10)}
print(calc_metrics(metrics, recs[[Columns.User, Columns.Item, Columns.Rank]], truth))
"""


def write_inputs(directory: Path, seed: int = 7) -> tuple[Path, Path]:
    """recs.csv (user_id, item_id, score: distinct scores) and truth.csv (relevance 1)."""
    rng = np.random.default_rng(seed)
    users = np.repeat(np.arange(1, USERS + 1), DEPTH)
    items = np.concatenate([rng.choice(ITEMS, DEPTH, replace=False) + 1 for _ in range(USERS)])
    recs = pd.DataFrame({"user_id": users, "item_id": items, "score": rng.permutation(len(users))})
    truth_users = np.repeat(np.arange(1, USERS + 1), RELEVANT)
    truth_items = np.concatenate(
        [rng.choice(ITEMS, RELEVANT, replace=False) + 1 for _ in range(USERS)]
    )
    truth = pd.DataFrame({"user_id": truth_users, "item_id": truth_items, "relevance": 1})
    recs.to_csv(directory / "recs.csv", index=False)
    truth.to_csv(directory / "truth.csv", index=False)
    return directory / "recs.csv", directory / "truth.csv"


def commands(directory: Path, peer_python: str) -> dict[str, list[str]]:
    recs, truth = directory / "recs.csv", directory / "truth.csv"
    cli = [sys.executable, "-m", "sparkeval.cli", "evaluate", "--run", str(recs), "--qrels"]
    cli += [str(truth), "--measures", MEASURES, "--overwrite", "--quiet", "--out"]
    found = {
        "sparkeval CLI": [*cli, str(directory / "out-auto")],
        "sparkeval CLI --engine spark": [*cli, str(directory / "out-spark"), "--engine", "spark"],
    }
    for name, module, script in (
        ("pytrec_eval", "pytrec_eval", PYTREC),
        ("RecTools", "rectools", RECTOOLS),
    ):
        check = subprocess.run([peer_python, "-c", f"import {module}"], capture_output=True)
        if check.returncode == 0:
            path = directory / f"{module}_bench.py"
            path.write_text(script)
            found[name] = [peer_python, str(path), str(recs), str(truth)]
        else:
            print(f"{name}: not installed for {peer_python}; skipped", file=sys.stderr)
    return found


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--peer-python", default=sys.executable)
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="cli-vs-peers-"))
    try:
        write_inputs(directory)
        systems = commands(directory, args.peer_python)
        for argv in systems.values():  # warm-up: caches, the class archive
            timed(argv)
        times: dict[str, list[float]] = {name: [] for name in systems}
        for _ in range(args.repeat):
            for name, argv in systems.items():
                times[name].append(timed(argv))
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    peers = [name for name in systems if not name.startswith("sparkeval")]
    fastest = min((statistics.median(times[n]) for n in peers), default=None)
    print(f"{USERS} users x {DEPTH} items ({USERS * DEPTH:,} rows), {MEASURES}; ")
    print(f"whole processes, {args.repeat} alternating rounds after a warm-up\n")
    print("| system | median s | min s | / fastest peer |")
    print("|---|---:|---:|---:|")
    for name, values in times.items():
        median = statistics.median(values)
        ratio = f"{median / fastest:.2f}" if fastest else "-"
        print(f"| {name} | {median:.2f} | {min(values):.2f} | {ratio} |")


if __name__ == "__main__":
    main()
