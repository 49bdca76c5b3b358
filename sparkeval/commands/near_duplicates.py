"""``sparkeval near-duplicates``: near-identical documents and their clusters.

MinHash Jaccard or SimHash Hamming search over a docs table
(:mod:`sparkeval.lsh.near_duplicate_search`). Outputs in ``--out``: ``pairs.parquet``,
``clusters.parquet`` and ``summary.json``.

Example::

    sparkeval near-duplicates --docs docs.parquet --method simhash --threshold 3 --out nd/
"""

from __future__ import annotations

from typing import Any, TextIO

from sparkeval.job.command import Command, spark_job
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


COMMAND = Command(
    name="near-duplicates",
    help="near-identical documents (MinHash Jaccard or SimHash Hamming) and clusters",
    description="Near-identical documents and their clusters: MinHash LSH pairs with "
    "exact Jaccard >= T, or SimHash pairs within a Hamming distance, all verified. Writes "
    "OUT/pairs.parquet, OUT/clusters.parquet and OUT/summary.json.",
    config=NearDuplicatesConfig,
    run=spark_job("sparkeval.lsh.near_duplicate_search:run_near_duplicates"),
    show=show,
)
