"""``sparkeval evaluate``: ranking measures of one or more runs against qrels.

The config (:class:`~sparkeval.evaluation.options.EvaluateConfig`) is checked before Spark
starts; the job itself
(reading, evaluating, writing) is :func:`sparkeval.evaluation.job.run_evaluate`.

Example ``conf/demo.yaml`` (relative paths are relative to the file)::

    run: [../demo-results/data/run_strong.txt, ../demo-results/data/run_weak.txt]
    qrels: ../demo-results/data/qrels.txt
    measures: [official, nDCG@10]
    out: ../demo-results/from-config
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

# the command's config, imported from here in Python (docs/python-api.md)
from sparkeval.evaluation.options import EvaluateConfig
from sparkeval.job.command import Command, LocalEngine, spark_job
from sparkeval.job.engine_choice import run_here_or_on_spark, runs_locally

if TYPE_CHECKING:
    from sparkeval.engine.local_files import LocalFileEvaluation
    from sparkeval.engine.plans.spark_engine import Evaluation


def show(
    evaluation: Evaluation | LocalFileEvaluation, config: EvaluateConfig, stdout: TextIO
) -> None:
    """The trec_eval-style table (per query with ``--per-query``), then release the cache."""
    from sparkeval.engine.local_files import LocalFileEvaluation
    from sparkeval.trec_table import write_run_table, write_table

    try:
        rows: Any = []
        if config.per_query and isinstance(evaluation, LocalFileEvaluation):
            rows = evaluation.per_query_records()
        elif config.per_query:
            frame: Any = evaluation.ordered_per_query
            rows = frame.toLocalIterator()
        if config.per_query and evaluation.set_rows:
            from sparkeval.evaluation.per_user_set import with_per_user_rows

            rows = with_per_user_rows(rows, evaluation.set_rows)
        writer = write_run_table if config.print_as == "table" else write_table
        names = [*evaluation.names, *evaluation.set_names]
        writer(stdout, evaluation.report, evaluation.measures, names, rows)
    finally:
        evaluation.unpersist()


def needs_spark(config: EvaluateConfig) -> str | None:
    """Why ``config`` needs Spark whatever the size of its inputs, or None: what the
    local engine (:mod:`sparkeval.engine.local_files`) does not do."""
    from sparkeval.evaluation.job import direct_read_refusal
    from sparkeval.io.direct import all_direct_formats

    if config.reads_tables():
        return "catalog tables are read through Spark"
    if config.where or config.qrels_where:
        return "--where and --qrels-where are applied by Spark"
    refusal = direct_read_refusal(config, config.plan(), flags_here=True)
    if refusal is not None:
        return refusal
    run_format = config.run_format or config.format
    if not all_direct_formats(
        config.run, config.qrels_input(), run_format, config.qrels_format or config.format
    ):
        return "only Parquet, TREC, CSV and TSV inputs are read without Spark"
    return None


def run_locally(config: EvaluateConfig) -> LocalFileEvaluation | None:
    """The evaluation in this process (:func:`sparkeval.evaluation.job.run_evaluate_locally`);
    None sends an ``auto`` run to Spark when a value needs Spark's readers."""
    from sparkeval.evaluation.job import run_evaluate_locally

    return run_here_or_on_spark(config, run_evaluate_locally)


def jvm_profile(config: EvaluateConfig) -> str:
    """The driver JVM profile of who does the heavy work
    (see :func:`sparkeval.evaluation.job.jvm_profile`)."""
    from sparkeval.evaluation.job import jvm_profile as profile

    return profile(config)


def early_read(config: EvaluateConfig) -> Any:
    """The inputs' read started before Spark (see `sparkeval.evaluation.job.start_early_read`)."""
    from sparkeval.evaluation.job import start_early_read

    return start_early_read(config)


COMMAND = Command(
    name="evaluate",
    help="compute ranking measures per query and overall",
    description="Evaluate runs against qrels on Spark. Writes OUT/per_query.parquet and "
    "OUT/summary.json and prints a trec_eval-style table.",
    config=EvaluateConfig,
    run=spark_job("sparkeval.evaluation.job:run_evaluate"),
    show=show,
    jvm_profile=jvm_profile,
    early=early_read,
    local=LocalEngine(lambda config: runs_locally(config, needs_spark), run_locally),
)
