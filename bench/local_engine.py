"""``sparkeval evaluate`` on 10M run rows: the local engine (no JVM) beside the Spark path.

Three whole processes on the same Parquet files (bench_evaluate.py's synthetic data and
its 10 measures), alternating A B C, A B C, ...:

* ``sparkeval evaluate`` on Spark (``--engine spark --master local[N]``, N the cores,
  the JVM mapping the class archive a fresh install builds in the background),
* ``--engine local``: this process and one worker process per core
  (:mod:`sparkeval.engine.local_processes`),
* ``--engine local --local-workers 1``: this process alone.

The table gives each median wall time (min–max), the median inner time (from the
status line "evaluating ..." to "results in ...") and the ratio to the Spark path's
median wall time. After the timed runs the outputs are compared: the local engine's
byte for byte (one process against several), the Spark path's by its per-query rows
and summary values (beyond one file's rows its writer cuts the per-query files at
other boundaries).

Usage::

    python bench/local_engine.py --sizes 100000x100 1000000x10 --repeat 3 \
        --results bench/RESULTS_LOCAL.md
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent)]

from bench_evaluate import (  # noqa: E402
    base_env,
    command,
    inner_seconds,
    median_cell,
    prepare_jvm_archives,
    results_header,
    run_measured,
)
from synthetic import generate  # noqa: E402

SYSTEMS = {
    "spark": ("sparkeval", ["--engine", "spark"]),
    "local": ("sparkeval_local", []),
    "local_one": ("sparkeval_local_one", []),
}
LABELS = {
    "spark": "sparkeval evaluate --engine spark (local[{cores}])",
    "local": "sparkeval evaluate --engine local ({cores} worker processes)",
    "local_one": "sparkeval evaluate --engine local --local-workers 1",
}


def _cmd(name: str, run: Path, qrels: Path, out: Path) -> list[str]:
    system, extra = SYSTEMS[name]
    cmd = command(system, run, qrels, out)
    if name == "spark":
        cmd[cmd.index("--master") + 1] = f"local[{os.cpu_count()}]"
    else:  # no master: the local engine starts no Spark
        at = cmd.index("--master")
        del cmd[at : at + 2]
    return [*cmd, *extra]


def bench_size(spec: str, repeat: int, work: Path, archive_env: dict[str, str]) -> list[str]:
    queries, docs = (int(x) for x in spec.lower().split("x"))
    run, qrels = generate(work / spec, queries, docs)
    walls: dict[str, list[float]] = {name: [] for name in SYSTEMS}
    inners: dict[str, list[float]] = {name: [] for name in SYSTEMS}
    peaks: dict[str, float] = {name: 0.0 for name in SYSTEMS}
    for rep in range(repeat):
        for name in SYSTEMS:
            env = {**base_env(), "SPARKEVAL_JVM_ARCHIVE": "off"}
            if name == "spark":
                env.update(archive_env)
            out = work / f"out-{spec}-{name}"
            wall, peak, stdout, stderr = run_measured(_cmd(name, run, qrels, out), env, BENCH)
            inner = inner_seconds(SYSTEMS[name][0], stdout, stderr)
            walls[name].append(wall)
            if inner is not None:
                inners[name].append(inner)
            peaks[name] = max(peaks[name], peak)
            print(f"  {spec} rep {rep + 1} {name:<10} wall {wall:6.1f}s", flush=True)
    _same_outputs(work, spec)
    base = statistics.median(walls["spark"])
    cores = os.cpu_count()
    lines = [
        f"### {queries:,} queries × {docs} docs = {queries * docs:,} run rows",
        "",
        "| system | median wall s (min–max) | median inner s | peak RSS MiB | "
        "wall / Spark path wall |",
        "|---|---|---|---|---|",
    ]
    for name in SYSTEMS:
        inner = f"{statistics.median(inners[name]):.1f}" if inners[name] else "-"
        ratio = statistics.median(walls[name]) / base
        lines.append(
            f"| {LABELS[name].format(cores=cores)} | {median_cell(walls[name])} | {inner} | "
            f"{peaks[name]:,.0f} | {ratio:.2f}× |"
        )
    return [*lines, ""]


def _same_outputs(work: Path, spec: str) -> None:
    """The local engine's outputs, one process or several, are the same bytes; the Spark
    path's hold the same per-query rows (its writer cuts files at other boundaries
    beyond one file's rows) and the same summary values."""
    import pyarrow.parquet as pq

    outs = {name: work / f"out-{spec}-{name}" for name in SYSTEMS}
    parts = {
        name: [p.read_bytes() for p in sorted((out / "per_query.parquet").glob("*.parquet"))]
        for name, out in outs.items()
    }
    if parts["local"] != parts["local_one"]:
        raise SystemExit(f"{spec}: the local engine's per-query files differ")
    rows = {name: pq.read_table(outs[name] / "per_query.parquet") for name in ("spark", "local")}
    if not rows["spark"].equals(rows["local"]):
        raise SystemExit(f"{spec}: the per-query rows differ")
    summaries = [json.loads((out / "summary.json").read_text())["runs"] for out in outs.values()]
    if any(summary != summaries[0] for summary in summaries[1:]):
        raise SystemExit(f"{spec}: the summaries differ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["100000x100", "1000000x10"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--results", type=Path, default=None)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sparkeval-bench-local-"))
    archive_env = prepare_jvm_archives(work)["sparkeval"]
    lines = results_header(
        "# The local engine beside the Spark path",
        "bench/local_engine.py",
        f"; {args.repeat} alternating repetitions, medians; whole processes. The Spark "
        "path's JVM maps the class archive a fresh install builds in the background; the "
        "outputs of the three are checked identical after timing.",
    )
    lines.append("")
    for spec in args.sizes:
        lines += bench_size(spec, args.repeat, work, archive_env)
    text = "\n".join(lines)
    print(text)
    if args.results:
        args.results.write_text(text)


if __name__ == "__main__":
    main()
