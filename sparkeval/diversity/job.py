"""The diversity job: read the lists (and training data, item features), measure each
run, write.

The command is :mod:`sparkeval.commands.diversity`.
"""

from __future__ import annotations

import functools
import time
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from sparkeval.diversity.definitions import per_user_schema_of
from sparkeval.diversity.evaluate import evaluate_diversity
from sparkeval.diversity.summary import diversity_summary
from sparkeval.errors import InputError
from sparkeval.io.columns import FEATURE_ALIASES, TRAIN_ALIASES
from sparkeval.io.lists import (
    check_k,
    checked_runs,
    normalise_columns,
    read_run_rows,
    read_typed_table,
    top_k,
)
from sparkeval.io.readers import decodes_text
from sparkeval.output import atomic_output_dir, write_spark_table, write_summary
from sparkeval.status import status

if TYPE_CHECKING:
    from sparkeval.diversity.options import DiversityConfig


def run_diversity(spark: SparkSession, config: DiversityConfig) -> dict[str, Any]:
    """Read the inputs, measure each run of ``--run`` (every run, or ``--run-id``'s),
    write ``per_user.parquet`` (``run_id`` first, sorted by run and user; the local
    engine's bytes, :func:`sparkeval.output.write_spark_table`) and
    ``summary.json`` (each run's measures under ``runs``; one run's also at the top)."""
    config.preflight()
    start = time.perf_counter()
    k = check_k(config.k)
    rows = read_run_rows(spark, config.run, require_score=k is not None)
    train_path, features_path = config.train, config.item_features
    train = _read_train(spark, train_path) if train_path else None
    features = _read_features(spark, features_path) if features_path else None
    runs = checked_runs(rows, config.run, config.run_id)  # the jobs: after every schema
    status(
        f"[read] {config.run}"
        + (f", {train_path}" if train_path else "")
        + (f", {features_path}" if features_path else "")
        + f"; computing the measures of {_runs_named(runs.ids)}"
    )
    cached: list[DataFrame] = []
    if len(runs.ids) > 1:  # every run reads them: once
        train = train.cache() if train is not None else None
        features = features.cache() if features is not None else None
        cached += [t for t in (train, features) if t is not None]
    try:
        per_user, blocks = [], {}
        for run_id in runs.ids:
            lists = top_k(runs.rows_of(run_id), k)
            cols = ["query_id", "doc_id"] + (["relevance"] if "relevance" in lists.columns else [])
            lists = lists.select(*cols)
            cached.append(lists)  # evaluate_diversity caches it, and its per-user table
            if len(runs.ids) > 1:
                status(f"[measure] run {run_id}")
            users, blocks[run_id] = evaluate_diversity(
                spark,
                lists,
                train=train,
                features=features,
                length=k,
                similarity=config.similarity,
                exact_pair_limit=config.exact_pair_limit,
                sample_pairs=config.sample_pairs,
                seed=config.seed,
            )
            cached.append(users)
            per_user.append(users.select(F.lit(run_id).alias("run_id"), *users.columns))
        status("[write] per_user.parquet and summary.json")
        with atomic_output_dir(config.out) as staging:
            table = functools.reduce(lambda a, b: a.union(b), per_user)
            # the local engine's bytes up to the driver's limit (at most N + 1 rows of
            # the cached per-user tables collected to tell), else Spark's writer
            ordered = table.orderBy("run_id", "query_id")
            write_spark_table(ordered, staging / "per_user.parquet", per_user_schema_of)
            summary = diversity_summary(config, k, blocks)
            summary["timings_s"] = {"total": round(time.perf_counter() - start, 3)}
            write_summary(staging, summary, "diversity", config.input_paths())
    finally:
        # cached here and by evaluate_diversity; a running session keeps going
        for frame in cached:
            frame.unpersist()
        runs.release()
    return summary


def _runs_named(ids: tuple[str, ...]) -> str:
    """``run A`` or ``3 runs (A, B, C)`` for a status line."""
    if len(ids) == 1:
        return f"run {ids[0]}"
    return f"{len(ids)} runs ({', '.join(ids[:5])}{', ...' if len(ids) > 5 else ''})"


def _read_train(spark: SparkSession, path: str) -> DataFrame:
    """The training interactions as ``query_id, doc_id``."""
    return normalise_columns(
        read_typed_table(spark, path),
        TRAIN_ALIASES,
        ("query_id", "doc_id"),
        path,
        decodes_text(path),
    )


def _read_features(spark: SparkSession, path: str) -> DataFrame:
    """The item features as ``doc_id, features`` (an array column).

    Raises:
        InputError: the features column is not an array.
    """
    features = normalise_columns(
        read_typed_table(spark, path),
        FEATURE_ALIASES,
        ("doc_id", "features"),
        path,
        decodes_text(path),
    )
    kind = features.schema["features"].dataType.simpleString()
    if not kind.startswith("array"):
        raise InputError(
            f"{path}: column features must be an array (a numeric vector or labels), got {kind}"
        )
    return features
