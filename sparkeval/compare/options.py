"""The options ``compare`` and ``rank-distance`` share, declared once: the baseline, the
runs compared with it and the depths of the rank distances."""

from __future__ import annotations

from dataclasses import dataclass

from sparkeval.job.options import option
from sparkeval.job.spark_options import OutputJobConfig


@dataclass(frozen=True, kw_only=True)
class BaselineComparisonConfig(OutputJobConfig):
    """A baseline run, the runs compared with it, and the rank-distance depths."""

    baseline: str = option(metavar="RUN", help="run id of the baseline")
    compared: tuple[str, ...] = option(
        (),
        flag="--run",
        metavar="RUN",
        help="run id to compare (repeatable; default: every other run)",
    )
    k: int = option(10, help="depth of Jaccard@k and of the exposure distributions (default 10)")
    rbo_p: float = option(0.9, help="RBO persistence (default 0.9)")
    depth: int = option(100, help="rankings are cut at this depth for rank distances (default 100)")
