"""``sparkeval rating-errors`` on a MovieLens-100k-sized table, as whole processes.

100,000 ratings of 943 users on 1,682 items (MovieLens-100k's shape) and a prediction
for each, in two CSV files; RMSE, MAE and R2. Each system is timed from the
interpreter's start to its exit, reading the same files:

* ``sparkeval rating-errors`` (the CLI: small local inputs run in the process, no JVM),
* ``sparkeval rating-errors --engine spark`` (the same call on a local Spark session),
* scikit-learn (``mean_squared_error``, ``mean_absolute_error``, ``r2_score`` on the
  pandas join of the two files: the pooled values, what Microsoft Recommenders'
  ``rmse``/``mae``/``rsquared`` compute), the peer.

Usage::

    python bench/rating_cli.py [--repeat 5]

Runs alternate (A B C, A B C, ...) after one warm-up round; the table gives each
system's median and min and its ratio to the peer's median.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from alternating import alternating_times, both_engines, print_table

USERS, ITEMS, RATINGS = 943, 1682, 100_000
MEASURES = "RMSE,MAE,R2"

SKLEARN = """
import sys, pandas as pd
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score
pred = pd.read_csv(sys.argv[1], dtype={"user_id": str, "item_id": str})
truth = pd.read_csv(sys.argv[2], dtype={"user_id": str, "item_id": str})
pairs = truth.merge(pred, on=["user_id", "item_id"])
t, q = pairs["rating"], pairs["prediction"]
print(mean_squared_error(t, q) ** 0.5, mean_absolute_error(t, q), r2_score(t, q))
"""


def write_inputs(directory: Path, seed: int = 5) -> tuple[Path, Path]:
    """``pred.csv`` and ``truth.csv``: RATINGS distinct (user, item) pairs."""
    rng = np.random.default_rng(seed)
    codes = rng.choice(USERS * ITEMS, size=RATINGS, replace=False)
    users, items = codes // ITEMS, codes % ITEMS
    rating = rng.integers(1, 6, size=RATINGS)
    prediction = np.clip(rating + rng.normal(0, 0.9, size=RATINGS), 1, 5).round(4)
    keys = {"user_id": [f"u{u}" for u in users], "item_id": [f"i{i}" for i in items]}
    pred, truth = directory / "pred.csv", directory / "truth.csv"
    pd.DataFrame({**keys, "prediction": prediction}).to_csv(pred, index=False)
    pd.DataFrame({**keys, "rating": rating}).to_csv(truth, index=False)
    return pred, truth


def commands(directory: Path, pred: Path, truth: Path) -> dict[str, list[str]]:
    args = ["rating-errors", "--predictions", str(pred), "--truth", str(truth)]
    return {
        **both_engines([*args, "--measures", MEASURES], directory),
        "scikit-learn": [sys.executable, "-c", SKLEARN, str(pred), str(truth)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rating-cli-") as tmp:
        directory = Path(tmp)
        pred, truth = write_inputs(directory)
        systems = commands(directory, pred, truth)
        times = alternating_times(systems, args.repeat)
    print(f"{RATINGS:,} ratings of {USERS} users, {MEASURES}; {args.repeat} alternating rounds")
    print()
    print_table(times, baseline="scikit-learn")


if __name__ == "__main__":
    main()
