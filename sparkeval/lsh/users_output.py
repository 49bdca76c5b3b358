"""What ``similar-users`` writes, whichever engine searched: the summary's entries and
``pairs.parquet`` of runs searched by the numpy stages (:mod:`sparkeval.lsh.driver_sets`),
without pyspark.

The Spark job (:mod:`sparkeval.lsh.similar_users`) and the local engine
(:mod:`sparkeval.lsh.local_similar_users`) both write through :func:`write_outputs`,
so the two give the same ``summary.json`` (only ``timings.json`` differs) and, for runs
searched by the numpy stages, the same bytes of ``pairs.parquet``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from sparkeval.lsh.search_stats import bucket_report, check_max_bucket
from sparkeval.output import atomic_output_dir, write_summary

if TYPE_CHECKING:
    from sparkeval.lsh.options import LshOptions, SimilarUsersConfig


def search_parameters(threshold: float | str, k: int | None, lsh: LshOptions) -> dict[str, Any]:
    """The ``parameters`` entry of the summary: threshold, cutoff, signature, banding."""
    params = lsh.banding(threshold)
    return {
        "threshold": params.threshold,
        "k": k,
        **lsh.signature(),
        "recall_target": lsh.recall if params.chosen == "auto" else None,
        "max_bucket": check_max_bucket(lsh.max_bucket),
        **{f"banding_{key}": value for key, value in params.as_dict().items()},
    }


def write_driver_pairs(pairs_of_runs: Mapping[str, pa.Table], path: Path) -> dict[str, int]:
    """Every run's pairs (``user_a, user_b, jaccard``, sorted by user) as
    ``run_id, user_a, user_b, jaccard``, run after run, in one part file written by
    pyarrow. Returns the pairs written of each run."""
    field = pa.field("run_id", pa.string(), nullable=False)  # as Spark writes a literal
    parts = [
        pairs.add_column(0, field, pa.array([run_id] * pairs.num_rows, pa.string()))
        for run_id, pairs in pairs_of_runs.items()
    ]
    path.mkdir(parents=True)
    pq.write_table(pa.concat_tables(parts), path / "part-00000.parquet")
    return {run_id: pairs.num_rows for run_id, pairs in pairs_of_runs.items()}


def run_summary(stats: Mapping[str, Any], pairs: int) -> dict[str, Any]:
    """A run's entry of the summary: counts, buckets and candidates per user."""
    kept = {key: value for key, value in stats.items() if key != "timings_s"}
    counts = {
        "users": kept.pop("sets"),
        "users_with_empty_list": kept.pop("empty_sets"),
        "pairs": pairs,
        **kept,
    }
    listed = max(1, counts["users"] - counts["users_with_empty_list"])
    return {
        "counts": counts,
        **bucket_report(kept),
        # the candidate stage's load: candidate pairs per user with a list
        "candidates_per_user": round(counts.get("candidate_pairs", 0) / listed, 3),
    }


def stage_timings(
    stats_of_runs: Mapping[str, Mapping[str, Any]], write_s: float, total_s: float
) -> dict[str, Any]:
    """The stage timings: a run's at the top, several runs' under ``runs``."""
    stages = {run_id: dict(stats.get("timings_s", {})) for run_id, stats in stats_of_runs.items()}
    timings: dict[str, Any] = next(iter(stages.values())) if len(stages) == 1 else {"runs": stages}
    return {**timings, "expand_and_write": round(write_s, 3), "total": round(total_s, 3)}


def write_outputs(
    config: SimilarUsersConfig,
    stats_of_runs: Mapping[str, Mapping[str, Any]],
    write_pairs: Callable[[Path], dict[str, int]],
    start: float,
) -> dict[str, Any]:
    """``pairs.parquet`` (by ``write_pairs(path)``, which returns each run's pairs
    written) and ``summary.json`` into ``config.out``, all or nothing; each run's
    entry under ``runs``, one run's also at the top. ``start``: the job's start
    (``time.perf_counter()``). Returns the summary written."""
    parameters = search_parameters(config.threshold, config.k, config)
    with atomic_output_dir(config.out) as staging:
        write_start = time.perf_counter()
        written = write_pairs(staging / "pairs.parquet")
        write_s = time.perf_counter() - write_start
        blocks = {
            run_id: run_summary(stats, written[run_id]) for run_id, stats in stats_of_runs.items()
        }
        summary: dict[str, Any] = {
            "command": "similar-users",
            "run": config.run,
            "run_id": config.run_id,
            "parameters": parameters,
            "estimated_recall_at_threshold": parameters["banding_estimated_recall_at_threshold"],
            "runs": blocks,
        }
        if len(blocks) == 1:  # one run: its entries at the top too, as ever
            summary.update(next(iter(blocks.values())))
        summary["timings_s"] = stage_timings(stats_of_runs, write_s, time.perf_counter() - start)
        write_summary(staging, summary, "similar-users", config.input_paths())
    return summary
