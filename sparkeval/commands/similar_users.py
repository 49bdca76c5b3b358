"""``sparkeval similar-users``: all user pairs whose lists have Jaccard >= T.

Each user's set is the items of their list (the top k by score when ``--k`` is
given). Pairs are found with MinHash LSH and verified exactly
(:mod:`sparkeval.lsh.similar_users`), in each run of ``--run`` on its own (a
``run_id`` column; ``--run-id`` picks one). Outputs in ``--out``: ``pairs.parquet``
(``run_id, user_a, user_b, jaccard``, user_a < user_b, run after run) and
``summary.json`` (each run's counts under ``runs``). A small local run is searched
in this process without a JVM (``--engine``; :mod:`sparkeval.lsh.local_similar_users`),
with the same outputs as on Spark.

Example::

    sparkeval similar-users --run run.parquet --threshold 0.8 --k 20 --out sim/
"""

from __future__ import annotations

from typing import Any, TextIO

from sparkeval.job.command import Command, LocalEngine, spark_job
from sparkeval.job.engine_choice import run_here_or_on_spark, runs_locally
from sparkeval.lsh.options import SimilarUsersConfig
from sparkeval.output import shown_path


def needs_spark(config: SimilarUsersConfig) -> str | None:
    """Why ``config`` needs Spark whatever the size of its run, or None: what the local
    engine (:mod:`sparkeval.lsh.local_similar_users`) does not read."""
    from sparkeval.io.direct import DIRECT_FORMATS
    from sparkeval.io.readers import detect_format, is_catalog_table

    if is_catalog_table(config.run):
        return "catalog tables are read through Spark"
    if detect_format(config.run, None) not in DIRECT_FORMATS:
        return "only Parquet, TREC, CSV and TSV inputs are read without Spark"
    return None


def run_locally(config: SimilarUsersConfig) -> dict[str, Any] | None:
    """The job in this process
    (:func:`sparkeval.lsh.local_similar_users.run_similar_users_locally`); None sends an
    ``auto`` run to Spark when the run needs Spark's readers or its search."""
    from sparkeval.lsh.local_similar_users import run_similar_users_locally

    return run_here_or_on_spark(config, run_similar_users_locally)


def show(summary: dict[str, Any], config: SimilarUsersConfig, stdout: TextIO) -> None:
    """A line of counts per run and one of banding, and a warning for each run where
    the bucket cap skipped pairs."""
    runs = summary["runs"]
    banding = (
        f"bands {summary['parameters']['banding_bands']} x "
        f"{summary['parameters']['banding_rows']}, estimated recall at threshold "
        f"{summary['estimated_recall_at_threshold']:.4f}"
    )
    several = len(runs) > 1
    if several:
        print(
            f"similar-users: {len(runs)} runs, Jaccard >= {config.threshold} ({banding}); "
            f"wrote {shown_path(config.out)}",
            file=stdout,
        )
    for run_id, block in runs.items():
        counts = block["counts"]
        found = f"{counts['pairs']} pairs"
        if several:
            print(f"  run {run_id}: {found} among {counts['users']} users", file=stdout)
        else:
            print(
                f"similar-users: {found} with Jaccard >= {config.threshold} among "
                f"{counts['users']} users ({banding}); wrote {shown_path(config.out)}",
                file=stdout,
            )
        skipped = block["skipped_by_max_bucket"]
        if skipped["buckets"]:
            print(
                f"similar-users: warning: {f'run {run_id}: ' if several else ''}"
                f"{skipped['buckets']} buckets over --max-bucket {config.max_bucket} were "
                f"skipped ({skipped['pairs']} candidate pairs not checked)",
                file=stdout,
            )


COMMAND = Command(
    name="similar-users",
    help="user pairs whose recommendation lists have Jaccard >= T (MinHash LSH, exact)",
    description="All user pairs whose lists have Jaccard >= T, in each run of --run (or "
    "in --run-id's): MinHash LSH candidates, verified exactly. Writes OUT/pairs.parquet "
    "(run_id, user_a, user_b, jaccard) and OUT/summary.json (per run).",
    config=SimilarUsersConfig,
    run=spark_job("sparkeval.lsh.similar_users:run_similar_users"),
    show=show,
    local=LocalEngine(lambda config: runs_locally(config, needs_spark), run_locally),
)
