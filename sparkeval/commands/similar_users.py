"""``sparkeval similar-users``: all user pairs whose lists have Jaccard >= T.

Each user's set is the items of their list (the top k by score when ``--k`` is
given). Pairs are found with MinHash LSH and verified exactly
(:mod:`sparkeval.lsh.similar_users`). Outputs in ``--out``: ``pairs.parquet``
(``user_a, user_b, jaccard``, user_a < user_b) and ``summary.json``.

Example::

    sparkeval similar-users --run run.parquet --threshold 0.8 --k 20 --out sim/
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self, TextIO

from sparkeval.job.command import Command, spark_job
from sparkeval.job.options import option
from sparkeval.job.spark_options import RunListsConfig
from sparkeval.lsh.options import LshOptions, check_positive


@dataclass(frozen=True, kw_only=True)
class SimilarUsersConfig(LshOptions, RunListsConfig):
    """A run, the Jaccard threshold and the list cutoff, plus the LSH options."""

    threshold: str | float = option(help="Jaccard threshold in (0, 1]")
    k: int | None = option(None, help="use each user's top K items by score (default: whole list)")

    def validate(self) -> Self:
        check_positive(self.k, "k")
        return self.check_lsh()


def show(summary: dict[str, Any], config: SimilarUsersConfig, stdout: TextIO) -> None:
    """One line of counts and banding, and a warning when the bucket cap skipped pairs."""
    counts = summary["counts"]
    print(
        f"similar-users: {counts['pairs']} pairs with Jaccard >= {config.threshold} among "
        f"{counts['users']} users (bands {summary['parameters']['banding_bands']} x "
        f"{summary['parameters']['banding_rows']}, estimated recall at threshold "
        f"{summary['estimated_recall_at_threshold']:.4f}); wrote {config.out}",
        file=stdout,
    )
    if summary["skipped_by_max_bucket"]["buckets"]:
        skipped = summary["skipped_by_max_bucket"]
        print(
            f"similar-users: warning: {skipped['buckets']} buckets over --max-bucket "
            f"{config.max_bucket} were skipped ({skipped['pairs']} candidate pairs not checked)",
            file=stdout,
        )


COMMAND = Command(
    name="similar-users",
    help="user pairs whose recommendation lists have Jaccard >= T (MinHash LSH, exact)",
    description="All user pairs whose lists have Jaccard >= T: MinHash LSH candidates, "
    "verified exactly. Writes OUT/pairs.parquet (user_a, user_b, jaccard) and "
    "OUT/summary.json.",
    config=SimilarUsersConfig,
    run=spark_job("sparkeval.lsh.similar_users:run_similar_users"),
    show=show,
)
