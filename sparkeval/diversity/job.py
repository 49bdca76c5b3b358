"""The diversity job: read the lists (and training data, item features), measure, write.

The command is :mod:`sparkeval.commands.diversity`.
"""

from __future__ import annotations

import time
from typing import Any

from pyspark.sql import SparkSession

from sparkeval.commands._tables import (
    _read_table,
    check_k,
    normalise_columns,
    read_run_table,
    top_k,
)
from sparkeval.diversity.evaluate import evaluate_diversity
from sparkeval.errors import InputError
from sparkeval.io.columns import FEATURE_ALIASES, TRAIN_ALIASES
from sparkeval.output import atomic_output_dir, check_output_path, write_json, write_parquet


def run_diversity(
    spark: SparkSession,
    run_path: str,
    out: str,
    *,
    train_path: str | None = None,
    features_path: str | None = None,
    run_id: str | None = None,
    k: int | None = None,
    overwrite: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """Read the inputs, compute the measures, write ``per_user.parquet`` + ``summary.json``."""
    inputs = [p for p in (run_path, train_path, features_path) if p]
    check_output_path(out, inputs, overwrite)
    start = time.perf_counter()
    lists = top_k(read_run_table(spark, run_path, run_id, require_score=k is not None), check_k(k))
    cols = ["query_id", "doc_id"] + (["relevance"] if "relevance" in lists.columns else [])
    lists = lists.select(*cols)
    train = None
    if train_path:
        train = normalise_columns(
            _read_table(spark, train_path), TRAIN_ALIASES, ("query_id", "doc_id"), train_path
        )
    features = None
    if features_path:
        features = normalise_columns(
            _read_table(spark, features_path),
            FEATURE_ALIASES,
            ("doc_id", "features"),
            features_path,
        )
        if not features.schema["features"].dataType.simpleString().startswith("array"):
            raise InputError(
                f"{features_path}: column features must be an array (a numeric vector or "
                f"labels), got {features.schema['features'].dataType.simpleString()}"
            )
    per_user, summary = evaluate_diversity(
        spark, lists, train=train, features=features, length=k, **options
    )
    with atomic_output_dir(out) as staging:
        write_parquet(per_user, staging / "per_user.parquet")
        summary = {
            "command": "diversity",
            "run": run_path,
            "run_id": run_id,
            "train": train_path,
            "item_features": features_path,
            "k": k,
            **summary,
            "timings_s": {"total": round(time.perf_counter() - start, 3)},
        }
        write_json(staging / "summary.json", summary)
    return summary
