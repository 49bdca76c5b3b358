"""``sparkeval rank-distance`` on a MovieLens-sized run table, as whole processes.

Three runs of 1,000 queries × 100 docs (300,000 rows) in one Parquet table; the two
other runs against a baseline (Kendall τ-b, Spearman ρ, footrule, Cayley, Ulam,
Hamming, Jaccard@10, RBO, and the top-10 exposure entropy, JS and KL). Each system is
timed from the interpreter's start to its exit, reading the same file:

* ``sparkeval rank-distance`` (the CLI: small local inputs run in the process, no JVM),
* ``sparkeval rank-distance --engine spark`` (the same call on a local Spark session),
* scipy: ``kendalltau`` and ``spearmanr`` per query over the docs both rankings hold
  (a subset of what rank-distance computes), on a pandas read of the same table, as
  a single-machine script would.

Usage::

    python bench/rank_distance_cli.py [--repeat 5]

Runs alternate (A B C, A B C, ...) after one warm-up round; the table gives each
system's median and min and its ratio to the Spark engine's median.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from alternating import alternating_times, both_engines, print_table

QUERIES, DEPTH, POOL = 1_000, 100, 300
RUNS = ("base", "near", "far")

SCIPY = """
import sys, pandas as pd
from scipy.stats import kendalltau, spearmanr
rows = pd.read_parquet(sys.argv[1])
rows = rows.sort_values(["run_id", "query_id", "score", "doc_id"], ascending=[1, 1, 0, 0])
rows["rank"] = rows.groupby(["run_id", "query_id"]).cumcount() + 1
base = rows[rows["run_id"] == "base"].set_index(["query_id", "doc_id"])["rank"]
for run in ("near", "far"):
    mine = rows[rows["run_id"] == run].set_index(["query_id", "doc_id"])["rank"]
    both = pd.concat([mine.rename("r"), base.rename("b")], axis=1, join="inner")
    taus = [kendalltau(g["r"], g["b"])[0] for _, g in both.groupby(level=0)]
    rhos = [spearmanr(g["r"], g["b"])[0] for _, g in both.groupby(level=0)]
    print(run, sum(taus) / len(taus), sum(rhos) / len(rhos))
"""


def write_runs(path: Path, seed: int = 3) -> None:
    """Three runs: ``near`` perturbs the baseline's scores a little, ``far`` a lot."""
    rng = np.random.default_rng(seed)
    frames = []
    for query in range(QUERIES):
        docs = rng.choice(POOL, size=DEPTH + 40, replace=False)
        base = rng.normal(size=DEPTH + 40)
        for run, noise in zip(RUNS, (0.0, 0.3, 2.0), strict=True):
            scores = base + rng.normal(scale=noise, size=len(base)) if noise else base
            keep = np.argsort(-scores)[:DEPTH]
            frames.append(
                pd.DataFrame(
                    {
                        "run_id": run,
                        "query_id": f"q{query:04d}",
                        "doc_id": [f"d{d:04d}" for d in docs[keep]],
                        "score": scores[keep].round(6),
                    }
                )
            )
    pd.concat(frames, ignore_index=True).to_parquet(path, index=False)


def commands(directory: Path, runs: Path) -> dict[str, list[str]]:
    args = ["rank-distance", "--runs", str(runs), "--baseline", "base", "--k", "10"]
    return {
        **both_engines(args, directory),
        "scipy (tau and rho only)": [sys.executable, "-c", SCIPY, str(runs)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rank-distance-cli-") as tmp:
        directory = Path(tmp)
        runs = directory / "runs.parquet"
        write_runs(runs)
        systems = commands(directory, runs)
        times = alternating_times(systems, args.repeat)
        local = (directory / "local" / "summary.json").read_bytes()
        same = local == (directory / "spark" / "summary.json").read_bytes()
    rows = QUERIES * DEPTH * len(RUNS)
    print(f"{rows:,} run rows ({len(RUNS)} runs), two against a baseline; {args.repeat} rounds")
    print()
    print_table(times, baseline="sparkeval CLI --engine spark")
    print()
    print(f"summary.json of the two engines byte for byte equal: {same}")


if __name__ == "__main__":
    main()
