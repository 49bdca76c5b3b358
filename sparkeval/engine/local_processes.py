"""The local engine on every core: processes over query buckets, without Spark.

``sparkeval evaluate --engine local`` reads, splits and evaluates large inputs in
worker processes, the way the Spark engine's local handoff does with Spark's tasks
(:mod:`sparkeval.engine.transport.local_handoff`), with a process pool in their place::

    step 1: one call per row group or text range (sparkeval.io.direct.read_unit)
              -> rows split by bucket = crc32(query_id) mod B
              -> one Arrow IPC file per (unit, bucket) in a scratch directory
    step 2: one call per non-empty bucket
              -> its files concatenated in unit order -> evaluate_tables
              -> (wide rows, partial sums) back to this process

The wide rows of the buckets are concatenated and their exact partial sums combined
(:mod:`~sparkeval.engine.worker.exact_summary`), so every value, and every output
file, is the one the single-process engine gives (the per-query file is written in
run and query order whatever the buckets).  A bad row is named as the single-process
engine names it: on an input error the inputs are evaluated again in this process,
whose error is the one raised.

The pool's processes are forked on Linux (they start with the kernels imported; a
fork server would need a Unix socket under ``TMPDIR``, whose path may be too long on a
cluster's container), else spawned; a worker holds one unit's rows or one bucket's at
a time.  The scratch directory is removed at the end,
and one that a killed process left behind is removed by the next run's sweep
(:mod:`sparkeval.scratch`).

Example::

    wide, partials = evaluate_in_processes(direct, measure_list, options, workers=2)
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sys
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sparkeval.engine.transport.arrow_exchange import buckets_for, run_and_qrels
from sparkeval.engine.transport.local_handoff import piece_path, read_arrow_file, write_buckets
from sparkeval.engine.worker.assemble import EvalOptions, evaluated_wide
from sparkeval.engine.worker.exact_summary import partition_sums
from sparkeval.engine.worker.worker_memory import keep_freed_memory
from sparkeval.errors import SparkevalError
from sparkeval.faults import in_local_worker
from sparkeval.io.direct import read_unit
from sparkeval.io.direct_input import DirectPlan
from sparkeval.measures.registry import Measure
from sparkeval.scratch import HANDOFF_PREFIX, new_scratch_directory

#: buckets per worker process at least: more, smaller buckets even out the workers'
#: shares (and large inputs get more, see :func:`evaluate_in_processes`)
BUCKETS_PER_WORKER = 4
#: inputs of at least this many bytes are split over processes when the workers are
#: not given (``--local-workers 0``); below it one process is faster than starting more
PARALLEL_BYTES = 16 << 20
#: the most worker processes ``--local-workers`` takes
MAX_WORKERS = 256


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def worker_count(requested: int, input_bytes: int) -> int:
    """The worker processes for ``requested`` (0: one per core for inputs of at least
    :data:`PARALLEL_BYTES`, else 1) and inputs of ``input_bytes``.

    >>> worker_count(3, 0)
    3
    >>> worker_count(0, 1000)
    1
    """
    if requested > 0:
        return requested
    return cores() if input_bytes >= PARALLEL_BYTES else 1


@dataclass(frozen=True)
class _Job:
    """What every worker needs: the inputs, the evaluation and the scratch directory."""

    direct: DirectPlan
    measures: list[Measure]
    options: EvalOptions
    buckets: int
    directory: str


#: the job of this worker process (set by :func:`_start_worker`)
_JOB: _Job | None = None


def _start_worker(job: _Job) -> None:
    global _JOB
    _JOB = job
    keep_freed_memory()  # as a Spark worker does: about half the kernels' time at 10M rows


def _split_unit(index: int) -> tuple[int, bool, list[int]]:
    """Step 1 in a worker: read unit ``index`` and write its rows by bucket; returns
    ``(unit, is run, buckets written)``."""
    assert _JOB is not None
    source, unit = _JOB.direct.row_groups[index]
    # its slices come decoded; a tie key keeps the rows' places in the input
    table = read_unit(source, unit, _JOB.direct.run_ids, _JOB.options.ties)
    written = write_buckets(table, index, _JOB.buckets, _JOB.directory, attempt=os.getpid())
    return index, source.kind == "run", written


#: a bucket and the ``(unit, is run)`` pieces written for it, in unit order
_BucketTask = tuple[int, list[tuple[int, bool]]]


def _evaluate_bucket(task: _BucketTask) -> tuple[pa.Table, pa.Table]:
    """Step 2 in a worker: :func:`_bucket_result` of this worker's job."""
    assert _JOB is not None
    in_local_worker()  # fault injection for reliability tests; off unless SPARKEVAL_FAULT
    return _bucket_result(_JOB, task)


def _bucket_result(job: _Job, task: _BucketTask) -> tuple[pa.Table, pa.Table]:
    """The wide rows and partial sums of one bucket of ``job``."""
    bucket, units = task
    pieces = (
        (is_run, read_arrow_file(piece_path(job.directory, unit, bucket))) for unit, is_run in units
    )
    run_table, qrels_table = run_and_qrels(pieces, job.options.ties)
    run_ids = list(job.direct.run_ids)
    wide = evaluated_wide(run_table, qrels_table, job.measures, job.options, run_ids, True)
    return wide, pa.Table.from_batches([partition_sums(wide, job.measures)])


def _context() -> Any:
    """``fork`` on Linux (the workers start with this process's modules imported; Arrow
    restarts its thread pools in a forked child), else ``spawn``."""
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def evaluate_in_processes(
    direct: DirectPlan,
    measures: Sequence[Measure],
    options: EvalOptions,
    *,
    workers: int,
) -> tuple[pa.Table, list[dict[str, Any]]]:
    """The wide rows (buckets concatenated in bucket order) and the partial-sum rows of
    the inputs of ``direct``, evaluated by ``workers`` processes (see the module text).

    Raises:
        NotDirect: a value for Spark's readers to judge (the first unit's in order).
        InputError: a bad row (the caller names it as the single-process engine does).
    """
    directory = new_scratch_directory(HANDOFF_PREFIX)
    # as on Spark, at most about BUCKET_BYTES of input a bucket: a worker's memory
    # does not grow with the input
    buckets = buckets_for(direct, workers * BUCKETS_PER_WORKER)
    job = _Job(direct, list(measures), options, buckets, str(directory))
    pool = ProcessPoolExecutor(
        workers, mp_context=_context(), initializer=_start_worker, initargs=(job,)
    )
    try:
        pieces: dict[int, list[tuple[int, bool]]] = defaultdict(list)
        # in unit order, so that the first failing unit's error is the one raised
        for unit, is_run, written in pool.map(_split_unit, range(len(direct.row_groups))):
            for bucket in written:
                pieces[bucket].append((unit, is_run))
        tasks = [(bucket, pieces[bucket]) for bucket in sorted(pieces)]
        results = list(pool.map(_evaluate_bucket, tasks))
    except BrokenProcessPool:
        raise SparkevalError(
            "a worker process of the local engine ended without finishing its part (killed, "
            "or out of memory?); nothing was written: try fewer --local-workers, or "
            "--engine spark"
        ) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(directory, ignore_errors=True)
    if not results:  # inputs without a row
        results = [_bucket_result(job, (0, []))]
    wide = pa.concat_tables([table for table, _ in results])
    partials = [row for _, sums in results for row in sums.to_pylist()]
    return wide, partials
