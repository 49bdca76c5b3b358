"""Stage messages on the console: ``sparkeval: [stage] message (N s)`` status lines."""

from __future__ import annotations

from sparkeval.status import status


def stage(name: str, message: str) -> None:
    """Print one progress line, with seconds since the process imported this module.

    Example::

        stage("read", "3 runs")  # stderr: "sparkeval: [read] 3 runs (0.1 s)"
    """
    status(f"[{name}] {message}")
