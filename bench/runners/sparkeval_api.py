"""sparkeval's Python API on a pipeline's DataFrames: ``spark.read.parquet`` and a
projection, then ``sparkeval.evaluate(spark, run_df, qrels_df, measures)``.

Usage: python -m runners.sparkeval_api RUN.parquet QRELS.parquet [--filtered]
[--computed] [--spark-computed] [--jvm-profile workers]

A projection only scans the files, so the workers read them themselves; so does a
filter they can apply: ``--filtered`` adds one that keeps every row (``score >= 0``).
``--computed`` replaces the score by ``score + 0.0``: arithmetic the workers compute
themselves as they read the files. ``--spark-computed`` replaces it by ``score / 1.0``,
a division they leave to Spark, which makes the run a computed DataFrame whose rows
Spark converts to Arrow for the workers. The session is
``build_session``'s with HotSpot's defaults, as a pipeline's session would have;
``--jvm-profile workers`` gives its driver JVM the options for work done by the
Python workers (``sparkeval.spark.JVM_PROFILES``).
"""

from __future__ import annotations

import sys
import time

from runners.common import SPARKEVAL_MEASURES, report


def main(
    run_path: str,
    qrels_path: str,
    filtered: bool = False,
    computed: bool = False,
    spark_computed: bool = False,
    jvm_profile: str | None = None,
) -> None:
    from pyspark.sql import functions as F

    import sparkeval
    from sparkeval.spark import build_session

    spark = build_session("local[2]", "sparkeval-bench-api", jvm_profile=jvm_profile)
    started = time.time()
    run_df = spark.read.parquet(run_path).select("query_id", "doc_id", "score")
    qrels_df = spark.read.parquet(qrels_path).select("query_id", "doc_id", "relevance")
    if filtered:
        run_df = run_df.where("score >= 0")
    if computed:
        run_df = run_df.withColumn("score", F.col("score") + F.lit(0.0))
    if spark_computed:
        run_df = run_df.withColumn("score", F.col("score") / F.lit(1.0))
    evaluation = sparkeval.evaluate(spark, run_df, qrels_df, SPARKEVAL_MEASURES)
    values = evaluation.report["runs"]["run"]["measures"]
    evaluation.unpersist()
    report(time.time() - started, values={"AP": values["AP"], "P@10": values["P@10"]})


if __name__ == "__main__":
    flags = sys.argv[3:]
    profile = flags[flags.index("--jvm-profile") + 1] if "--jvm-profile" in flags else None
    main(
        sys.argv[1],
        sys.argv[2],
        filtered="--filtered" in flags,
        computed="--computed" in flags,
        spark_computed="--spark-computed" in flags,
        jvm_profile=profile,
    )
