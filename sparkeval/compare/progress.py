"""Stage messages on the console: ``sparkeval: [stage] message`` lines on stderr."""

from __future__ import annotations

import sys
import time

_START = time.monotonic()


def stage(name: str, message: str) -> None:
    """Print one progress line, with seconds since the process imported this module.

    Example::

        stage("read", "3 runs")  # stderr: "sparkeval: [read] 3 runs (0.1 s)"
    """
    elapsed = time.monotonic() - _START
    print(f"sparkeval: [{name}] {message} ({elapsed:.1f} s)", file=sys.stderr, flush=True)
