"""Timing whole processes in alternation, for the CLI benchmarks: a warm-up round, then
rounds that run every system once in turn (A B C, A B C, ...), and a table of medians.

Example::

    times = alternating_times({"a": ["true"], "b": ["sleep", "0.1"]}, repeat=3)
    print_table(times, baseline="a")
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path


def timed(argv: list[str]) -> float:
    """Seconds from the process's start to its exit (it must succeed)."""
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - start


def alternating_times(systems: dict[str, list[str]], repeat: int) -> dict[str, list[float]]:
    """Each system's times over ``repeat`` alternating rounds, after a warm-up round."""
    for argv in systems.values():
        timed(argv)
    times: dict[str, list[float]] = {name: [] for name in systems}
    for _ in range(repeat):
        for name, argv in systems.items():
            times[name].append(timed(argv))
    return times


def print_table(times: dict[str, list[float]], baseline: str) -> None:
    """A Markdown table: each system's median and min, and its ratio to the median of
    ``baseline``."""
    reference = statistics.median(times[baseline])
    print(f"| system | median s | min s | / {baseline} |")
    print("|---|---:|---:|---:|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.2f} | {min(values):.2f} | {median / reference:.2f} |")


def both_engines(args: list[str], directory: Path) -> dict[str, list[str]]:
    """``sparkeval ARGS`` through the CLI (its default engine choice) and with ``--engine
    spark``, each into its own ``--out`` below ``directory`` (``local``, ``spark``)."""
    cli = [str(Path(sys.executable).parent / "sparkeval"), *args, "--overwrite"]
    return {
        "sparkeval CLI": [*cli, "--out", str(directory / "local")],
        "sparkeval CLI --engine spark": [
            *cli,
            "--out",
            str(directory / "spark"),
            "--engine",
            "spark",
        ],
    }
