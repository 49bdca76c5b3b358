"""Evaluation without Spark: pandas DataFrames or Arrow tables, in this process.

``sparkeval.evaluate(None, run, qrels, measures)`` comes here. The rows go through
the same kernels and the same exact per-run sums as on Spark
(:func:`~sparkeval.engine.worker.assemble.evaluate_tables`,
:mod:`~sparkeval.engine.worker.exact_summary`), so the values are the same to the
bit; no JVM is started and pyspark is not imported.

The keywords are those of the Spark path, with the same meaning
(:mod:`sparkeval.engine.api_request`: compatibility profiles, relevance rules, column
mappings), and the tables are read as on Spark (:mod:`sparkeval.engine.held_inputs`:
columns by name or alias, rank-only runs, ids as text). A run without a run id
column is one run, ``run``; a run without rows scores its queries as retrieving
nothing. ``near_duplicates`` pairs flag the rows as on Spark
(:mod:`sparkeval.engine.held_near_dups`).

Example:
    >>> import pandas as pd
    >>> run = pd.DataFrame({"qid": ["q", "q"], "docno": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pd.DataFrame({"qid": ["q"], "docno": ["b"], "rel": [1]})
    >>> ev = evaluate_in_process(run, qrels, ["RR", "P@1"])
    >>> ev.summary[["measure", "value"]].to_dict("list")
    {'measure': ['RR', 'P@1'], 'value': [0.5, 0.0]}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.engine.aggregation_modes import RunValues, add_modes, wide_values
from sparkeval.engine.api_request import ApiRequest, api_request
from sparkeval.engine.evaluation_report import (
    SUMMARY_COLUMNS,
    as_measures,
    build_report,
    name_labels,
    output_names,
    summary_rows,
)
from sparkeval.engine.held_inputs import as_arrow, held_pairs, held_qrels, held_run
from sparkeval.engine.held_near_dups import near_duplicate_flags
from sparkeval.engine.long_rows import per_query_rows
from sparkeval.engine.min_score import keep_held_rows
from sparkeval.engine.worker.assemble import (
    EvalOptions,
    evaluated_wide,
)
from sparkeval.engine.worker.exact_summary import combine, partition_sums
from sparkeval.formats import found_run_ids
from sparkeval.io.readers import rank_only
from sparkeval.measures.registry import Measure

#: the reader named in the report of an in-process evaluation
IN_PROCESS = "in-process"


@dataclass
class LocalEvaluation:
    """The result of an in-process evaluation: the same fields as Spark's ``Evaluation``,
    with pandas DataFrames.

    Attributes:
        report: the summary as a JSON-ready dict (the same content as on Spark).
        measures: the evaluated measures, in output order.
        names: output name of every measure.
        reader: ``in-process``.
        per_query: ``run_id, query_id, measure, value`` sorted by run, query and the
            measures' order (value NaN where undefined).
        summary: ``run_id, measure, value, queries, undefined`` — the ``all`` values.
    """

    report: dict[str, Any]
    measures: list[Measure]
    names: list[str]
    reader: str = IN_PROCESS
    _wide: pa.Table = field(default_factory=pa.table, repr=False)
    #: output names of the values the report holds beside ``names``, in ``summary``
    #: without per-query rows: RePlay's aggregation modes (``NDCG-Median@10``) and the
    #: measures of the recommendation set (``Coverage@10``, ...)
    set_names: list[str] = field(default_factory=list)

    def measure_values(self, indexes: Sequence[int]) -> dict[int, RunValues]:
        """The defined per-query values of each measure of ``indexes``, by run (for the
        modes of :mod:`sparkeval.engine.aggregation_modes`)."""
        return wide_values(self._wide, indexes)

    @cached_property
    def per_query(self) -> pd.DataFrame:
        return per_query_rows(self._wide, self.measures, self.names, ordered=True).to_pandas()

    @property
    def ordered_per_query(self) -> pd.DataFrame:
        """The per-query rows (already in output order)."""
        return self.per_query

    @cached_property
    def summary(self) -> pd.DataFrame:
        return pd.DataFrame(
            summary_rows(self.report, [*self.names, *self.set_names]), columns=list(SUMMARY_COLUMNS)
        )

    def unpersist(self) -> None:
        """Nothing is cached outside this object (kept for the same use as on Spark)."""


def evaluate_in_process(
    run: pd.DataFrame | pa.Table,
    qrels: pd.DataFrame | pa.Table,
    measures: Sequence[str | Measure] | str,
    **keywords: Any,
) -> LocalEvaluation:
    """Evaluate runs against qrels held in memory; the keywords are those of
    :func:`sparkeval.evaluate` (see the module text)."""
    return evaluate_held_request(run, qrels, api_request(measures, **keywords))


def evaluate_held_request(
    run: pd.DataFrame | pa.Table, qrels: pd.DataFrame | pa.Table, request: ApiRequest
) -> LocalEvaluation:
    """Evaluate a checked request of the API (:mod:`sparkeval.engine.api_request`) on
    tables held in memory; a run without rows is evaluated (its queries retrieved
    nothing)."""
    plan = request.plan
    columns = as_arrow(run, "run").column_names
    ranks = plan.ranks(rank_only(columns, request.run_columns))
    options = replace(request.options, ranks=ranks)  # type: ignore[arg-type]
    every_row = held_run(run, request.run_columns, request.naming, plan.ties)
    run_table = keep_held_rows(every_row, plan.min_score)
    qrels_table = held_qrels(qrels, plan.relevance, request.qrels_columns, request.naming)
    run_ids = request.run_ids
    if run_ids is None:
        run_ids = found_run_ids(pc.unique(run_table.column("run_id")).to_pylist())
    flags = None
    if request.near_duplicates is not None:
        pairs = held_pairs(request.near_duplicates)
        run_table, flags = near_duplicate_flags(run_table, pairs, run_ids)
    evaluation = evaluate_held(
        run_table, qrels_table, plan.measures, options, request.names, run_ids,
        empty_runs=True,
    )  # fmt: skip
    below = None if plan.min_score is None else every_row.num_rows - run_table.num_rows
    evaluation.report["compat"] = plan.describe(below, options.rel_level)
    add_modes(evaluation, plan.modes, request.names, evaluation.measure_values)
    if flags is not None:
        evaluation.report["near_duplicates"] = flags
    return evaluation


def evaluate_held(
    run_table: pa.Table,
    qrels_table: pa.Table,
    measures: Sequence[str | Measure] | str,
    options: EvalOptions,
    names: str | Mapping[str, str],
    run_ids: Sequence[str],
    *,
    in_worker: bool = False,
    result: type[LocalEvaluation] = LocalEvaluation,
    reader: str = IN_PROCESS,
    empty_runs: bool = False,
) -> LocalEvaluation:
    """Evaluate run and qrels rows this process holds (in the form
    :func:`~sparkeval.engine.worker.assemble.evaluate_tables` takes) with the workers'
    kernels and exact sums; ``result`` is the evaluation class to return, named
    ``reader``. ``in_worker`` marks bad-row errors as a worker's are marked;
    ``empty_runs`` evaluates a run without rows instead of raising
    :class:`~sparkeval.errors.EmptyRunError`."""
    measure_list = as_measures(measures)
    wide = evaluated_wide(run_table, qrels_table, measure_list, options, list(run_ids), in_worker)
    partials = partition_sums(wide, measure_list).to_pylist()
    return evaluation_of_wide(
        wide, partials, measures, options, names, run_ids,
        result=result, reader=reader, empty_runs=empty_runs,
    )  # fmt: skip


def evaluation_of_wide(
    wide: pa.Table,
    partials: Sequence[Mapping[str, Any]],
    measures: Sequence[str | Measure] | str,
    options: EvalOptions,
    names: str | Mapping[str, str],
    run_ids: Sequence[str],
    *,
    result: type[LocalEvaluation] = LocalEvaluation,
    reader: str = IN_PROCESS,
    empty_runs: bool = False,
) -> LocalEvaluation:
    """The evaluation of evaluated wide rows (undefined values null) and their partial
    sums (:func:`~sparkeval.engine.worker.exact_summary.partition_sums` rows, of one
    table or of several whose rows make ``wide``); see :func:`evaluate_held`."""
    measure_list = as_measures(measures)
    labels = name_labels(measures, names)
    out_names = output_names(measure_list, labels, options.rel_level)
    stats = combine(list(partials), measure_list)
    report = build_report(
        stats, measure_list, out_names, list(run_ids), options, labels, empty_runs
    )
    return result(report, measure_list, out_names, reader, wide)
