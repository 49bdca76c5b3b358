"""The diversity job: read the lists (and training data, item features), measure, write.

The command is :mod:`sparkeval.commands.diversity`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from pyspark.sql import SparkSession

from sparkeval.diversity.evaluate import evaluate_diversity
from sparkeval.errors import InputError
from sparkeval.io.columns import FEATURE_ALIASES, TRAIN_ALIASES
from sparkeval.io.lists import (
    check_k,
    normalise_columns,
    read_run_table,
    read_typed_table,
    top_k,
)
from sparkeval.io.readers import decodes_text
from sparkeval.output import atomic_output_dir, write_parquet, write_summary
from sparkeval.status import status

if TYPE_CHECKING:
    from sparkeval.commands.diversity import DiversityConfig


def run_diversity(spark: SparkSession, config: DiversityConfig) -> dict[str, Any]:
    """Read the inputs, compute the measures, write ``per_user.parquet`` + ``summary.json``."""
    config.preflight()
    start = time.perf_counter()
    k = config.k
    lists = top_k(
        read_run_table(spark, config.run, config.run_id, require_score=k is not None), check_k(k)
    )
    cols = ["query_id", "doc_id"] + (["relevance"] if "relevance" in lists.columns else [])
    lists = lists.select(*cols)
    train_path, features_path = config.train, config.item_features
    train = None
    if train_path:
        train = normalise_columns(
            read_typed_table(spark, train_path),
            TRAIN_ALIASES,
            ("query_id", "doc_id"),
            train_path,
            decodes_text(train_path),
        )
    features = None
    if features_path:
        features = normalise_columns(
            read_typed_table(spark, features_path),
            FEATURE_ALIASES,
            ("doc_id", "features"),
            features_path,
            decodes_text(features_path),
        )
        if not features.schema["features"].dataType.simpleString().startswith("array"):
            raise InputError(
                f"{features_path}: column features must be an array (a numeric vector or "
                f"labels), got {features.schema['features'].dataType.simpleString()}"
            )
    status(
        f"[read] {config.run}"
        + (f", {train_path}" if train_path else "")
        + (f", {features_path}" if features_path else "")
        + "; computing the measures"
    )
    per_user = None
    try:
        per_user, summary = evaluate_diversity(
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
        status("[write] per_user.parquet and summary.json")
        with atomic_output_dir(config.out) as staging:
            write_parquet(per_user, staging / "per_user.parquet")
            summary = {
                "command": "diversity",
                "run": config.run,
                "run_id": config.run_id,
                "train": train_path,
                "item_features": features_path,
                "k": k,
                **summary,
                "timings_s": {"total": round(time.perf_counter() - start, 3)},
            }
            write_summary(staging, summary, "diversity", config.input_paths())
    finally:
        # evaluate_diversity cached both; a running session keeps going
        if per_user is not None:
            per_user.unpersist()
        lists.unpersist()
    return summary
