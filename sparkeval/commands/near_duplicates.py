"""``sparkeval near-duplicates``: near-identical documents and their clusters.

MinHash Jaccard or SimHash Hamming search over a docs table
(:mod:`sparkeval.lsh.near_duplicate_search`). Outputs in ``--out``: ``pairs.parquet``,
``clusters.parquet`` and ``summary.json``.

Small local Parquet, CSV, TSV and JSON Lines docs run in this process without a JVM
(``--engine``, see :mod:`sparkeval.lsh.local_near_duplicates`); anything else runs on
Spark.

Example::

    sparkeval near-duplicates --docs docs.parquet --method simhash --threshold 3 --out nd/
"""

from __future__ import annotations

from typing import Any, TextIO

from sparkeval.job.command import Command, LocalEngine, spark_job
from sparkeval.job.engine_choice import run_here_or_on_spark, runs_locally
from sparkeval.lsh.options import NearDuplicatesConfig
from sparkeval.output import shown_path


def show(summary: dict[str, Any], config: NearDuplicatesConfig, stdout: TextIO) -> None:
    """One line of counts, and a warning when the bucket cap skipped pairs."""
    c = summary["counts"]
    print(
        f"near-duplicates ({config.method}): {c['pairs']} pairs, {c['clusters']} clusters "
        f"covering {c['clustered_docs']} docs; wrote {shown_path(config.out)}",
        file=stdout,
    )
    if summary["skipped_by_max_bucket"]["buckets"]:
        print(
            f"near-duplicates: warning: {summary['skipped_by_max_bucket']['buckets']} buckets "
            f"over --max-bucket were skipped",
            file=stdout,
        )


def needs_spark(config: NearDuplicatesConfig) -> str | None:
    """Why ``config`` needs Spark whatever the size of its docs, or None: what the
    local engine (:mod:`sparkeval.lsh.local_near_duplicates`) does not read."""
    from sparkeval.io.readers import is_catalog_table, is_local_path

    if is_catalog_table(config.docs):
        return "catalog tables are read through Spark"
    if not is_local_path(config.docs):
        return "docs on a remote store are read through Spark"
    return None


def run_locally(config: NearDuplicatesConfig) -> dict[str, Any] | None:
    """The job in this process; None sends an ``auto`` run to Spark when the docs or
    the search need Spark after all."""
    from sparkeval.lsh.local_near_duplicates import run_near_duplicates_locally

    return run_here_or_on_spark(config, run_near_duplicates_locally)


COMMAND = Command(
    name="near-duplicates",
    help="near-identical documents (MinHash Jaccard or SimHash Hamming) and clusters",
    description="Near-identical documents and their clusters: MinHash LSH pairs with "
    "exact Jaccard >= T, or SimHash pairs within a Hamming distance, all verified. Writes "
    "OUT/pairs.parquet, OUT/clusters.parquet and OUT/summary.json.",
    config=NearDuplicatesConfig,
    run=spark_job("sparkeval.lsh.near_duplicate_search:run_near_duplicates"),
    show=show,
    local=LocalEngine(lambda config: runs_locally(config, needs_spark), run_locally),
)
