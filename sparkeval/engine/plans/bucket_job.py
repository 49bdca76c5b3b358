"""The evaluation's job over buckets handed over as local files: plain Python tasks.

On a local master the evaluated rows never pass through Spark: each bucket's run and
qrels rows are in local files (:mod:`sparkeval.engine.transport.local_handoff`), and
each evaluating task writes its wide rows to a local file of its own
(:mod:`sparkeval.engine.transport.result_files`).  What goes back to the driver is a
few short blobs per task: the name of its wide-row file and its partial sums.  So the
job needs no query plan: it is an RDD of the bucket indices, one per partition, mapped
by a Python function, and its blob rows are collected to the driver::

    parallelize(range(tasks), tasks)     one task per non-empty bucket
      -> mapPartitionsWithIndex: unpack(bucket files) -> evaluate_tables
                                 -> wide-<partition>.arrow; yield (kind, blob) pairs
      -> collect                         -> partial sums combined in the driver

The same job as a DataFrame (``mapInArrow`` over ``spark.range``, persisted, its
partial sums filtered and collected) made the driver's JVM analyse, optimise and
generate code for a query and build a columnar cache of a few rows; in a session with
HotSpot's default compilers the JVM then compiled that code as it ran.  Measured on 2
cores, 10M run rows read by the driver's threads, one evaluation in a fresh session
with HotSpot's defaults (two runs each): the driver JVM's CPU time during the call was
2.7–2.8 s (its C2 compiler 1.0–1.3 s of it), against 0.8–0.9 s with this job, and the
call took 5.6–6.0 s against 4.7–4.8 s: on 2 cores the JVM's work took time from the
Python workers.

Values are those of the DataFrame job: the same tasks evaluate the same buckets
(:func:`evaluated_blobs` is shared with the exchange's job), and the files have the
same names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sparkeval.engine.transport import result_blobs
from sparkeval.engine.transport.result_files import ResultFiles, wide_file_path
from sparkeval.engine.worker.assemble import evaluated_wide
from sparkeval.engine.worker.exact_summary import combine, partition_sums
from sparkeval.engine.worker.worker_memory import keep_freed_memory
from sparkeval.faults import in_task

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Settings for a query's Python tasks that run before plain Python jobs (job 1 of the
#: handoff, which writes the buckets' files): Spark keeps one pool of Python workers
#: (and one daemon) per environment, and a query's tasks get one variable more than a
#: plain job's, ``SPARK_SIMPLIFIED_TRACEBACK``, unless this is off.  With it on, a
#: command whose rows Spark reads started a second daemon and a second pair of workers
#: for the evaluation, each importing numpy, pyarrow and the kernels again (10M rows,
#: ``--reader spark``: about 550 MB more at the peak).  Error messages are unchanged:
#: sparkeval takes its own from the failure either way.
PLAIN_WORKER_SETTINGS = {"spark.sql.execution.pyspark.udf.simplifiedTraceback.enabled": "false"}

#: what a task evaluates: (measures, options, run ids)
Task = tuple[list[Any], Any, list[str]]


def evaluated_blobs(
    run_table: pa.Table, qrels_table: pa.Table, task: Task, wide_file: str | None
) -> Iterator[pa.RecordBatch]:
    """The blob rows of one evaluated partition: its wide rows (inline blobs, or written
    to the file ``wide_file``), then its partial sums
    (:func:`~sparkeval.engine.worker.exact_summary.partition_sums`)."""
    measure_list, options, run_ids = task
    result = evaluated_wide(run_table, qrels_table, measure_list, options, run_ids, True)
    if wide_file is None:
        yield from result_blobs.wide_blobs(result)
    else:
        yield from result_blobs.wide_file_blobs(result, wide_file)
    partials = pa.Table.from_batches([partition_sums(result, measure_list)])
    yield result_blobs.blob_batch(result_blobs.PARTIAL, partials)


def evaluate_buckets(
    spark: SparkSession,
    tasks: int,
    unpack: Callable[[int], tuple[pa.Table, pa.Table]],
    task: Task,
    results: Path,
) -> tuple[ResultFiles, dict[str, dict[str, Any]]]:
    """(the result blobs, summary statistics) of ``tasks`` bucket evaluations, one Spark
    task each; task ``i`` evaluates ``unpack(i)`` (its run rows, its qrels rows) and
    writes its wide rows to ``results``.

    Raises:
        Exception: the job's failure, as Spark reports it (the caller classifies it).
    """
    target = str(results)

    def evaluate(partition: int, indexes: Iterable[int]) -> Iterator[tuple[int, bytes]]:
        in_task()  # fault injection for reliability tests; off unless SPARKEVAL_FAULT is set
        keep_freed_memory()
        wide_file = wide_file_path(target, partition)
        for index in indexes:  # one: the partition's own
            run_table, qrels_table = unpack(index)
            for batch in evaluated_blobs(run_table, qrels_table, task, wide_file):
                yield from zip(
                    batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True
                )

    indexes = spark.sparkContext.parallelize(range(tasks), max(1, tasks))
    rows = indexes.mapPartitionsWithIndex(evaluate).collect()
    partials = [
        row
        for kind, blob in rows
        if kind == result_blobs.PARTIAL
        for row in result_blobs.decode(blob).to_pylist()
    ]
    return ResultFiles(spark, rows, results), combine(partials, task[0])
