"""Evaluating local files in this process, without Spark: the CLI's local engine.

``sparkeval evaluate --engine local`` (and ``auto`` on small local inputs, see
:mod:`sparkeval.engine.engine_choice`) reads the inputs as the Python workers read them
(:func:`~sparkeval.io.direct.read_unit`: Parquet row groups, TREC, CSV and TSV text),
evaluates them with the same kernels and combines the same exact per-run sums
(:func:`~sparkeval.engine.worker.assemble.evaluate_tables`,
:mod:`~sparkeval.engine.worker.exact_summary`), so the values are the same to the bit;
the per-query file is written as one writing task writes it
(:func:`~sparkeval.engine.transport.per_query_writer.write_held_per_query`).  No JVM
starts and pyspark is not imported.

A value the direct readers leave to Spark's readers (a null id, a grade out of
bounds: :class:`~sparkeval.io.direct_input.NotDirect`) ends the local evaluation; the caller
then runs the command on Spark, whose readers judge it.

Example (the demo's files; values as on Spark)::

    direct = plan_direct_inputs(None, ["run.txt"], "qrels.txt", None, None, None, None)
    evaluation = evaluate_direct(direct, plan_compat("trec", ["AP"], RelevanceRule("grade"), None))
    evaluation.write_per_query("out/per_query.parquet")
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from sparkeval.compat import CompatPlan
from sparkeval.engine.aggregation_modes import add_modes
from sparkeval.engine.evaluation_report import as_measures
from sparkeval.engine.held_near_dups import near_duplicate_flags
from sparkeval.engine.in_process import LocalEvaluation, evaluate_held, evaluation_of_wide
from sparkeval.engine.local_processes import evaluate_in_processes
from sparkeval.engine.long_rows import per_query_rows
from sparkeval.engine.transport.arrow_exchange import decoded_columns, run_and_qrels
from sparkeval.engine.transport.per_query_writer import write_held_per_query
from sparkeval.engine.worker.assemble import EvalOptions
from sparkeval.errors import InputError, clean_message
from sparkeval.faults import in_local_evaluation
from sparkeval.io.direct import read_unit
from sparkeval.io.direct_input import DirectPlan, NotDirect
from sparkeval.io.locate import with_line_number
from sparkeval.measures.near_dup import check_flags_available

#: the reader a local evaluation names in its status line
LOCAL = "local"


class LocalFileEvaluation(LocalEvaluation):
    """A :class:`~sparkeval.engine.in_process.LocalEvaluation` of files, which writes its
    per-query rows as the Spark engine does."""

    def write_per_query(self, directory: str | os.PathLike[str]) -> None:
        """Write ``per_query.parquet`` to the new directory ``directory``."""
        write_held_per_query(self._wide, self.measures, self.names, Path(directory))

    def per_query_records(self) -> list[dict[str, Any]]:
        """The rows of ``per_query.parquet`` as dicts, in its order (None where undefined)."""
        return per_query_rows(self._wide, self.measures, self.names, ordered=True).to_pylist()


def evaluate_direct(
    direct: DirectPlan,
    plan: CompatPlan,
    *,
    rel_level: int = 1,
    depth: int | None = None,
    names: str | Mapping[str, str] = "canonical",
    workers: int = 1,
    pairs: pa.Table | None = None,
) -> LocalFileEvaluation:
    """Evaluate the inputs of ``direct`` under ``plan`` (measures, query policy) here,
    in ``workers`` processes (:mod:`sparkeval.engine.local_processes`) when above 1;
    with near-duplicate ``pairs`` (``doc_a, doc_b``), in this process, the run rows
    flagged as on Spark (:mod:`sparkeval.engine.held_near_dups`).

    Raises:
        NotDirect: a value for Spark's readers to judge.
        InputError: a bad row, named as on Spark (file and line where it has one).
    """
    if plan.ties != "doc-id":
        raise NotDirect(f"--ties {plan.ties} needs the runs' rank columns")
    if names == "requested":
        names = plan.labels()
    options = EvalOptions(queries=plan.queries, rel_level=rel_level, depth=depth)  # type: ignore[arg-type]
    measures = as_measures(plan.measures)
    if pairs is None:
        check_flags_available(measures)
    in_local_evaluation()  # fault injection for reliability tests; off unless SPARKEVAL_FAULT
    evaluation = None
    if workers > 1 and pairs is None:
        try:
            wide, partials = evaluate_in_processes(direct, measures, options, workers=workers)
            evaluation = evaluation_of_wide(
                wide, partials, plan.measures, options, names, direct.run_ids,
                result=LocalFileEvaluation, reader=LOCAL,
            )  # fmt: skip
        except InputError:
            pass  # a bad row: named below as one process names it
    try:
        if evaluation is None:
            evaluation = _evaluate_here(direct, plan, options, names, pairs)
    except InputError as exc:
        raise InputError(with_line_number(clean_message(exc))) from None
    evaluation.report["compat"] = plan.describe(rel_level=rel_level)
    add_modes(evaluation, plan.modes, names, evaluation.measure_values)
    assert isinstance(evaluation, LocalFileEvaluation)
    return evaluation


def _evaluate_here(
    direct: DirectPlan,
    plan: CompatPlan,
    options: EvalOptions,
    names: str | Mapping[str, str],
    pairs: pa.Table | None = None,
) -> LocalEvaluation:
    """The evaluation of :func:`evaluate_direct` in this process alone."""
    pieces = (
        (source.kind == "run", decoded_columns(read_unit(source, unit, direct.run_ids)))
        for source, unit in direct.row_groups
    )
    run_table, qrels_table = run_and_qrels(pieces)
    flags = None
    if pairs is not None:
        run_table, flags = near_duplicate_flags(run_table, pairs, direct.run_ids)
    evaluation = evaluate_held(
        run_table, qrels_table, plan.measures, options, names, direct.run_ids,
        in_worker=True, result=LocalFileEvaluation, reader=LOCAL,
    )  # fmt: skip
    if flags is not None:
        evaluation.report["near_duplicates"] = flags
    return evaluation
