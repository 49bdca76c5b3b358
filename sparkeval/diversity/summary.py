"""``summary.json`` of ``sparkeval diversity`` but its timings, assembled alike by the
Spark job (:mod:`sparkeval.diversity.job`) and the local engine
(:mod:`sparkeval.diversity.local_job`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sparkeval.diversity.options import DiversityConfig


def diversity_summary(
    config: DiversityConfig, k: int | None, blocks: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """``summary.json``'s content but the timings: the inputs, ``k`` and each run's
    measures under ``runs`` (one run's also at the top, as ever)."""
    summary: dict[str, Any] = {
        "command": "diversity",
        "run": config.run,
        "run_id": config.run_id,
        "train": config.train,
        "item_features": config.item_features,
        "k": k,
        "runs": blocks,
    }
    if len(blocks) == 1:
        summary.update(next(iter(blocks.values())))
    return summary
