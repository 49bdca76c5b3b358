"""Spark MLlib RankingEvaluator, the usual way: collect_list per query, one evaluate() per metric.

Usage: python -m runners.mllib RUN.parquet QRELS.parquet [--cache] [--archive-at-exit FILE]
       [--master URL]

Under ``spark-submit`` the submitter's master stands (``--master`` is then not given).

As usually written (for instance Microsoft Recommenders' ``SparkRankingEvaluation``),
nothing is cached, so each ``evaluate()`` reads the inputs and rebuilds the per-query
lists again.  ``--cache`` caches the joined lists once, the
tuned variant: the first ``evaluate()`` builds them and the other three reuse them.

``MLLIB_JAVA_OPTIONS`` adds driver JVM options (the harness maps a class-data archive
with it); ``--archive-at-exit`` writes such an archive when the JVM exits.
"""

from __future__ import annotations

import argparse
import os
import time

from pyspark.ml.evaluation import RankingEvaluator
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from runners.common import report


def main(
    run_path: str,
    qrels_path: str,
    *,
    cache: bool = False,
    archive_at_exit: str | None = None,
    master: str | None = "local[2]",
) -> None:
    java_options = os.environ.get("MLLIB_JAVA_OPTIONS", "")
    if archive_at_exit:
        java_options += f" -XX:ArchiveClassesAtExit={archive_at_exit} -Xlog:cds=off"
    builder = SparkSession.builder.master(master) if master else SparkSession.builder
    spark = (
        builder.config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.driver.extraJavaOptions", java_options.strip())
        .getOrCreate()
    )
    started = time.time()
    as_number = F.regexp_extract("doc_id", r"(\d+)$", 1).cast("double")
    run = spark.read.parquet(run_path).withColumn("item", as_number)
    qrels = spark.read.parquet(qrels_path).where("relevance >= 1").withColumn("item", as_number)
    ranked = (
        run.groupBy("query_id")
        .agg(F.sort_array(F.collect_list(F.struct(-F.col("score"), F.col("item")))).alias("pairs"))
        .select("query_id", F.col("pairs.item").alias("prediction"))
    )
    labels = qrels.groupBy("query_id").agg(F.collect_list("item").alias("label"))
    data = ranked.join(labels, "query_id", "left").select(
        "prediction", F.coalesce("label", F.array().cast("array<double>")).alias("label")
    )
    if cache:
        data = data.cache()
    values = {}
    for metric, k in (
        ("ndcgAtK", 10),
        ("meanAveragePrecision", None),
        ("precisionAtK", 10),
        ("recallAtK", 10),
    ):
        evaluator = RankingEvaluator(metricName=metric)
        if k is not None:
            evaluator = evaluator.setK(k)
        values[metric] = evaluator.evaluate(data)
    report(time.time() - started, values=values)
    gateway = spark.sparkContext._gateway
    spark.stop()
    if archive_at_exit:  # the JVM writes the archive as it exits: wait for it
        gateway.proc.stdin.close()
        gateway.proc.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("qrels")
    parser.add_argument("--cache", action="store_true", help="cache the joined lists once")
    parser.add_argument("--archive-at-exit", help="write a JVM class-data archive here")
    parser.add_argument("--master", default="local[2]", help="'submitted': spark-submit's")
    args = parser.parse_args()
    master = None if args.master == "submitted" else args.master
    main(args.run, args.qrels, cache=args.cache, archive_at_exit=args.archive_at_exit,
         master=master)  # fmt: skip
