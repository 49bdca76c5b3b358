"""Flag run rows that near-duplicate a higher-ranked doc of the same ranking.

Given undirected pairs ``doc_a ~ doc_b``, a run row ``(run_id, query_id, doc_id,
score)`` is *flagged* (``_dup = true``) iff some other doc ``e`` of the same run and
query with ``doc_id ~ e`` ranks higher.  Rank order is the engine's: score
descending, ties broken by doc_id descending (byte-wise, as Spark compares
strings).  A doc paired with a higher doc that is itself flagged is still
flagged: it duplicates a higher result.

Plan (all before the evaluation's cogroup)::

    run ⋈ edges(doc_id -> other, both directions) ⋈ run(other) on (run_id, query_id)
        -> keep "other ranks higher" -> distinct -> left join back -> _dup

The pairs are read once for their counts (read, self-pairs, distinct); the set of
flagged rows is cached while the evaluation runs, so counting it per run and
joining it back share one pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sparkeval.errors import InputError
from sparkeval.formats import BAD, DUPLICATE_FLAG
from sparkeval.io.locate import with_line_number
from sparkeval.io.pairs import pairs_frame

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def pair_stats(pairs) -> dict[str, int]:
    """Counts of a ``doc_a, doc_b, _bad`` pairs frame; raises InputError on a bad row.

    Returns ``pairs_read`` (rows), ``self_pairs_ignored`` (doc_a == doc_b),
    ``repeated_pairs`` (a pair seen again, in either orientation) and
    ``distinct_pairs`` (undirected pairs used).
    """
    from pyspark.sql import functions as F

    ok = F.col(BAD).isNull()
    self_pair = ok & (F.col("doc_a") == F.col("doc_b"))
    used = ok & (F.col("doc_a") != F.col("doc_b"))
    row = pairs.agg(
        F.count(F.lit(1)).alias("read"),
        F.min(BAD).alias("bad"),
        F.sum(F.when(self_pair, 1).otherwise(0)).alias("self"),
        F.count_distinct(
            F.when(used, F.least("doc_a", "doc_b")), F.when(used, F.greatest("doc_a", "doc_b"))
        ).alias("distinct"),
    ).first()
    if row["bad"] is not None:
        raise InputError(with_line_number(row["bad"]))
    read, self_pairs, distinct = int(row["read"]), int(row["self"] or 0), int(row["distinct"])
    return {
        "pairs_read": read,
        "self_pairs_ignored": self_pairs,
        "repeated_pairs": read - self_pairs - distinct,
        "distinct_pairs": distinct,
    }


def pair_edges(pairs):
    """``doc_id, other``: every distinct non-self pair in both directions."""
    from pyspark.sql import functions as F

    undirected = (
        pairs.where(F.col("doc_a") != F.col("doc_b"))
        .select(
            F.least("doc_a", "doc_b").alias("x"),
            F.greatest("doc_a", "doc_b").alias("y"),
        )
        .distinct()
    )
    return undirected.select(F.col("x").alias("doc_id"), F.col("y").alias("other")).unionByName(
        undirected.select(F.col("y").alias("doc_id"), F.col("x").alias("other"))
    )


def flagged_rows(run_df: DataFrame, edges):
    """Distinct ``run_id, query_id, doc_id`` of run rows with a higher-ranked near-duplicate."""
    from pyspark.sql import functions as F

    rows = run_df.select("run_id", "query_id", "doc_id", "score")
    higher = rows.select(
        "run_id",
        "query_id",
        F.col("doc_id").alias("other"),
        F.col("score").alias("other_score"),
    )
    ranks_higher = (F.col("other_score") > F.col("score")) | (
        (F.col("other_score") == F.col("score")) & (F.col("other") > F.col("doc_id"))
    )
    return (
        rows.join(edges, "doc_id")
        .join(higher, ["run_id", "query_id", "other"])
        .where(ranks_higher)
        .select("run_id", "query_id", "doc_id")
        .distinct()
    )


def with_flags(run_df: DataFrame, flagged):
    """``run_df`` plus the boolean column ``_dup`` (false for rows not in ``flagged``)."""
    from pyspark.sql import functions as F

    keys = ["run_id", "query_id", "doc_id"]
    marked = flagged.select(*keys, F.lit(True).alias("_flag"))
    joined = run_df.join(marked, keys, "left")
    return joined.select(
        *run_df.columns, F.coalesce(F.col("_flag"), F.lit(False)).alias(DUPLICATE_FLAG)
    )


@dataclass
class NearDuplicateFlags:
    """Run rows with ``_dup`` and the counts for ``summary.json``.

    Attributes:
        run_df: the run with the boolean column ``_dup``.
        report: ``pairs_read``, ``self_pairs_ignored``, ``repeated_pairs``,
            ``distinct_pairs`` and ``rows_flagged`` (run id -> flagged run rows,
            counted over all rows of the run, before any depth cut).
    """

    run_df: Any
    report: dict[str, Any]
    _cached: Any = None

    def release(self) -> None:
        """Drop the cached flagged rows (after the evaluation has been computed)."""
        if self._cached is not None:
            self._cached.unpersist()
            self._cached = None


def flag_near_duplicates(run_df: DataFrame, pairs, run_ids: Sequence[str]) -> NearDuplicateFlags:
    """Add ``_dup`` to a normalised run from a pairs frame (``doc_a, doc_b[, _bad]``).

    Args:
        run_df: ``run_id, query_id, doc_id, score, _bad`` (normalised by the engine).
        pairs: near-duplicate pairs; a DataFrame without ``_bad`` is checked like a file.
        run_ids: every run id, so that a run with no flagged row reports 0.

    Raises:
        InputError: a pairs column is missing or a row lacks a doc id.
    """
    from pyspark.sql import functions as F

    if BAD not in pairs.columns:
        pairs = pairs_frame(pairs, "near_duplicates DataFrame")
    stats = pair_stats(pairs)
    if stats["distinct_pairs"] == 0:
        report = {**stats, "rows_flagged": {r: 0 for r in run_ids}}
        return NearDuplicateFlags(run_df.withColumn(DUPLICATE_FLAG, F.lit(False)), report)
    flagged = flagged_rows(run_df, pair_edges(pairs)).persist()
    counts = {
        r["run_id"]: int(r["n"])
        for r in flagged.groupBy("run_id").agg(F.count(F.lit(1)).alias("n")).collect()
    }
    report = {**stats, "rows_flagged": {r: counts.get(r, 0) for r in run_ids}}
    return NearDuplicateFlags(with_flags(run_df, flagged), report, flagged)


__all__ = [
    "NearDuplicateFlags",
    "flag_near_duplicates",
    "pair_edges",
    "pair_stats",
]
