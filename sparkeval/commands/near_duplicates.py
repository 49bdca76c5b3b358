"""``sparkeval near-duplicates``: near-identical documents and their clusters.

MinHash Jaccard or SimHash Hamming search over a docs table
(:mod:`sparkeval.lsh.near_duplicate_search`). Outputs in ``--out``: ``pairs.parquet``,
``clusters.parquet`` and ``summary.json``.

Example::

    sparkeval near-duplicates --docs docs.parquet --method simhash --threshold 3 --out nd/
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self, TextIO

from sparkeval.job.command import Command, spark_job
from sparkeval.job.options import input_path, option
from sparkeval.job.spark_options import OutputJobConfig
from sparkeval.lsh.near_duplicate_search import METHODS
from sparkeval.lsh.options import LshOptions, check_positive
from sparkeval.lsh.shingles import SHINGLE_KINDS
from sparkeval.output import shown_path


@dataclass(frozen=True, kw_only=True)
class NearDuplicatesConfig(LshOptions, OutputJobConfig):
    """A docs table, the method and its threshold, shingling, plus the LSH options."""

    docs: str = input_path("docs table: doc_id and text, or doc_id and tokens [+ weights]")
    method: str = option(
        "minhash",
        choices=METHODS,
        help="minhash (Jaccard of shingle sets, default) or simhash (64-bit Hamming)",
    )
    threshold: str | float = option(
        help="minhash: Jaccard in (0, 1]; simhash: Hamming distance 0..63 or a similarity in (0, 1)"
    )
    shingle: str = option(
        "word", choices=SHINGLE_KINDS, help="shingle unit for text (default word)"
    )
    k: int = option(3, help="units per shingle (default 3)")

    def validate(self) -> Self:
        check_positive(self.k, "k")
        return self.check_lsh()

    def input_paths(self) -> list[str]:
        return [self.docs]


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
