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
from typing import TYPE_CHECKING, Any, Self, TextIO

from sparkeval.job.command import Command
from sparkeval.job.options import option
from sparkeval.lsh.options import LshConfig, check_positive

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True, kw_only=True)
class SimilarUsersConfig(LshConfig):
    """A run, the Jaccard threshold and the list cutoff, plus the LSH options."""

    run: str = option(
        metavar="PATH", path=True, help="run table (Parquet/CSV/TSV/JSONL) or TREC run file"
    )
    run_id: str | None = option(None, help="run to use when the table holds several")
    threshold: str | float = option(help="Jaccard threshold in (0, 1]")
    k: int | None = option(None, help="use each user's top K items by score (default: whole list)")

    def validate(self) -> Self:
        check_positive(self.k, "k")
        return super().validate()

    def input_paths(self) -> list[str]:
        return [self.run]


def run(spark: SparkSession | None, config: SimilarUsersConfig) -> dict[str, Any]:
    """Find and write the similar pairs; returns the summary written."""
    from sparkeval.lsh.similar_users import run_similar_users

    assert spark is not None
    return run_similar_users(
        spark,
        config.run,
        config.out,
        config.threshold,
        run_id=config.run_id,
        overwrite=config.overwrite,
        k=config.k,
        **config.lsh_values(),
    )


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
    run=run,
    show=show,
)
