"""How fast can the paths where Spark hands its rows to Python be? Floors, timed.

Usage::

    python bench/conversion_floor.py --size 100000x100 --repeat 3 \
        --results bench/RESULTS_FLOOR.md

Two of the benchmark's paths give sparkeval rows that Spark holds: ``--reader spark``
and a run DataFrame Spark computes.  Spark must then hand the rows to the Python
workers, by converting them to Arrow or by writing them to files.  This harness times,
as whole processes in alternation with the fastest path (``sparkeval evaluate`` on
Parquet, the workers reading the files), processes that do only that hand-over and
nothing else (``runners.conversion_floor``: no evaluation, no output), beside the two
paths themselves.

Every bucket of the evaluation needs rows from every partition Spark converts, so
the evaluation cannot start before the hand-over ends, and both keep the two cores
busy.  A path is therefore at least its floor plus the fastest path's own evaluation
(its time from the session's start to its outputs, the inner time of
``bench_evaluate.py``), less the Python workers' start that both count; the table's
last section gives that bound against the 1.3× target of the fastest path.

Every sparkeval process maps the class archive a user's first run builds in the
background (as in ``bench_evaluate.py``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent)]

from bench_evaluate import (  # noqa: E402
    base_env,
    command,
    first_run_archive,
    inner_seconds,
    median_cell,
    results_header,
    run_measured,
)
from synthetic import generate  # noqa: E402

#: the fastest path, the two paths Spark converts for, and their floors
SYSTEMS = (
    "sparkeval",
    "sparkeval_spark_readers",
    "sparkeval_api_spark_computed",
    "floor_readers",
    "floor_readers_hashed",
    "floor_computed",
    "floor_jvm_parquet",
)
LABELS = {
    "sparkeval": "sparkeval evaluate, the workers read the Parquet files (the fastest path)",
    "sparkeval_spark_readers": "sparkeval evaluate --reader spark",
    "sparkeval_api_spark_computed": "sparkeval.evaluate(spark, ...) on a run Spark computes "
    "(score / 1.0)",
    "floor_readers": "floor: Spark's readers, every run and qrels row converted to Arrow for "
    "Python tasks that only count them",
    "floor_readers_hashed": "floor: the same with both ids as xxhash64 longs (no string converted)",
    "floor_computed": "floor: the computed run's rows converted to Arrow and counted "
    "(session with HotSpot's defaults)",
    "floor_jvm_parquet": "floor: Spark's readers, the rows written by the JVM as "
    "uncompressed Parquet",
}
#: each path Spark converts for and the floors that bound it
BOUNDED = {
    "sparkeval_spark_readers": ("floor_readers", "floor_readers_hashed", "floor_jvm_parquet"),
    "sparkeval_api_spark_computed": ("floor_computed",),
}
TARGET = 1.3
#: seconds a bound may count twice: the Python workers' start, in a floor and in the
#: evaluation (about 0.5 s on 2 cores; kept on the generous side)
WORKER_START = 0.6


def floor_command(system: str, run: Path, qrels: Path, out: Path) -> list[str]:
    mode = system.removeprefix("floor_")
    return [sys.executable, "-m", "runners.conversion_floor", str(run), str(qrels), mode, str(out)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="100000x100", help="QUERIESxDOCS")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    parser.add_argument("--results", type=Path, default=None, help="write the table here")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    if "sparkeval" not in args.systems:
        parser.error("the fastest path (sparkeval) is the baseline: keep it in --systems")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="sparkeval-floor-"))
    work.mkdir(parents=True, exist_ok=True)
    queries, docs = (int(x) for x in args.size.lower().split("x"))
    run, qrels = generate(work / args.size, queries, docs)
    env = {**base_env(), **first_run_archive(work)[0]}
    walls: dict[str, list[float]] = {system: [] for system in args.systems}
    inners: dict[str, list[float]] = {system: [] for system in args.systems}
    for rep in range(args.repeat):
        for system in args.systems:
            out = work / f"out-{system}"
            make = floor_command if system.startswith("floor_") else command
            started = time.perf_counter()
            wall, _, stdout, stderr = run_measured(make(system, run, qrels, out), env, BENCH)
            inner = inner_seconds(system, stdout, stderr)
            walls[system].append(wall)
            if inner is not None:
                inners[system].append(inner)
            print(
                f"  rep {rep + 1} {system:<30} wall {wall:6.1f}s "
                f"({time.perf_counter() - started:.1f}s with the harness)",
                flush=True,
            )
    text = "\n".join(results_text(args, queries, docs, walls, inners)) + "\n"
    print(text)
    if args.results:
        args.results.write_text(text)


def results_text(
    args: argparse.Namespace,
    queries: int,
    docs: int,
    walls: dict[str, list[float]],
    inners: dict[str, list[float]],
) -> list[str]:
    fastest = statistics.median(walls["sparkeval"])
    evaluation = statistics.median(inners["sparkeval"])
    lines = [
        *results_header(
            "# How fast the paths Spark converts rows for can be: floors",
            "bench/conversion_floor.py",
            f"; local[2]; {args.repeat} alternating repetitions, medians; every process maps "
            "the class archive a first run builds. A floor runs only the hand-over of Spark's "
            "rows to Python (no evaluation, no output).",
        ),
        "",
        f"### {queries:,} queries × {docs} docs = {queries * docs:,} run rows",
        "",
        "| system | median wall s (min–max) | × the fastest path |",
        "|---|---|---|",
    ]
    for system in args.systems:
        ratio = statistics.median(walls[system]) / fastest
        lines.append(f"| {LABELS[system]} | {median_cell(walls[system])} | {ratio:.2f}× |")
    lines += [
        "",
        f"The fastest path's own evaluation (from its session's start to its outputs): "
        f"{evaluation:.1f} s (median).",
        "",
        "### Bounds: a floor plus that evaluation, against the 1.3× target",
        "",
        "A floor and the evaluation both count the start of the Python workers (about "
        "0.5 s on this machine), which a path pays once: a bound is out of reach only "
        "when it is over the target by more than that.",
        "",
    ]
    for path, floors in BOUNDED.items():
        if path not in walls:
            continue
        measured = statistics.median(walls[path]) / fastest
        for floor in floors:
            if floor not in walls:
                continue
            bound = statistics.median(walls[floor]) + evaluation
            over = bound - TARGET * fastest
            verdict = "out of reach" if over > WORKER_START else "not excluded"
            lines.append(
                f"- {LABELS[path]} ({measured:.2f}× measured): '{LABELS[floor]}' plus the "
                f"evaluation make {bound / fastest:.2f}×, {over:.1f} s over the {TARGET}× "
                f"target: {verdict}"
            )
    return lines


if __name__ == "__main__":
    main()
