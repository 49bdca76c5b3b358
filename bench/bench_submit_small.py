"""Commands on small files under ``spark-submit``: the session as Spark makes it.

A pipeline step that runs ``spark-submit jobs/NAME.py --config FILE`` with no Spark
settings gets Spark's default of 200 shuffle partitions.  sparkeval runs a command on
small local files with ``spark.sql.optimizer.canChangeCachedPlanOutputPartitioning``
on (:mod:`sparkeval.job.small_inputs`); the baseline is the same submission with that
setting given as ``false`` by ``--conf``, which sparkeval keeps, as Spark's default
behaves.  Both are whole processes (JVM start included), run in alternation.

Usage::

    python bench/bench_submit_small.py [--repeat 3] [--commands diversity compare ...]

Prints a Markdown table: the median wall seconds of each (min–max) and the ratio
baseline / sparkeval (above 1: the setting saves time).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUBMIT = Path(sys.executable).parent / "spark-submit"
KEY = "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning"

#: each command's config (beyond ``out``), on the files :func:`write_inputs` writes
CONFIGS = {
    "diversity": "run: recs.csv\ntrain: recs.csv\nk: 2\n",
    "rank-distance": "runs: [run_strong.txt, run_weak.txt]\nbaseline: weak\n",
    "rating-errors": "predictions: predictions.csv\ntruth: truth.csv\nmeasures: [RMSE, MAE]\n",
    "compare": (
        "per_query: evaluated\nbaseline: weak\nmeasures: [AP]\npermutations: 200\n"
        "bootstrap: 200\nno_plots: true\n"
    ),
}


def write_inputs(directory: Path) -> None:
    """A small graded collection (30 queries, 3 runs), its evaluation, and tables of
    recommendations and ratings."""
    from sparkeval.demo_data import generate

    generate(directory, queries=30, pool=60, depth=20)
    (directory / "recs.csv").write_text(
        "user_id,item_id,score\nu1,a,0.9\nu1,b,0.8\nu2,a,0.7\nu2,b,0.6\nu3,c,0.5\n"
    )
    (directory / "predictions.csv").write_text("user,item,prediction\nu1,a,4.0\nu1,b,2.5\nu2,a,3\n")
    (directory / "truth.csv").write_text("user,item,rating\nu1,a,5.0\nu1,b,2.0\nu2,a,3.0\n")
    evaluate = "run: [run_strong.txt, run_weak.txt]\nqrels: qrels.txt\nmeasures: [AP]\n"
    code, _ = submit(directory, "evaluate", evaluate, "evaluated", [])
    if code != 0:
        raise SystemExit(f"the evaluation the comparison reads failed ({code})")


def submit(directory: Path, command: str, config: str, out: str, conf: list[str]):
    """(exit code, wall seconds) of ``spark-submit jobs/NAME.py --config FILE``."""
    shutil.rmtree(directory / out, ignore_errors=True)
    path = directory / f"{out}.yaml"
    path.write_text(config + f"out: {out}\n")
    entry = ROOT / "jobs" / f"{command.replace('-', '_')}.py"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    argv = [str(SUBMIT), "--master", "local[2]", *conf, str(entry), "--config", str(path)]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=directory, env=env, capture_output=True, text=True)
    return done.returncode, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--commands", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="sparkeval-bench-submit-"))
    try:
        write_inputs(directory)
        print("| command | sparkeval s | baseline (setting false) s | baseline / sparkeval |")
        print("|---|---|---|---|")
        for command in args.commands:
            times: dict[str, list[float]] = {"on": [], "off": []}
            for _ in range(args.repeat):
                for name, conf in (("on", []), ("off", ["--conf", f"{KEY}=false"])):
                    out = f"{command}-{name}"
                    code, seconds = submit(directory, command, CONFIGS[command], out, conf)
                    if code != 0:
                        raise SystemExit(f"{command} ({name}) exited with {code}")
                    times[name].append(seconds)
            on, off = (statistics.median(times[k]) for k in ("on", "off"))
            span = {k: f"{min(v):.1f}–{max(v):.1f}" for k, v in times.items()}
            print(
                f"| {command} | {on:.1f} ({span['on']}) | {off:.1f} ({span['off']}) "
                f"| {off / on:.2f}× |",
                flush=True,
            )
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
