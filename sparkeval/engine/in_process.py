"""Evaluation without Spark: pandas DataFrames or Arrow tables, in this process.

``sparkeval.evaluate(None, run, qrels, measures)`` comes here. The rows go through
the same kernels and the same exact per-run sums as on Spark
(:func:`~sparkeval.engine.worker.assemble.evaluate_tables`,
:mod:`~sparkeval.engine.worker.exact_summary`), so the values are the same to the
bit; no JVM is started and pyspark is not imported.

Columns are found by name or alias, as in files (``user_id, item_id, prediction``
reads as ``query_id, doc_id, score``; :mod:`sparkeval.io.columns`). Ids must be
strings or integers (integers compare as their decimal text, as everywhere); scores
must be numbers and grades whole numbers. A run without a run id column is one run,
``run``.

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
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.engine.evaluation_report import (
    SUMMARY_COLUMNS,
    as_measures,
    build_report,
    name_labels,
    output_names,
    summary_rows,
)
from sparkeval.engine.long_rows import per_query_rows
from sparkeval.engine.worker.assemble import (
    EvalOptions,
    evaluate_tables,
    undefined_as_null,
)
from sparkeval.engine.worker.exact_summary import combine, partition_sums
from sparkeval.errors import InputError
from sparkeval.formats import DEFAULT_RUN_ID
from sparkeval.io.columns import parse_mapping, resolve_columns
from sparkeval.io.direct import is_id_type
from sparkeval.io.readers import NOT_UTF8
from sparkeval.io.utf8_check import first_invalid_utf8, raw_value, shown_text
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

    @cached_property
    def per_query(self) -> pd.DataFrame:
        return per_query_rows(self._wide, self.measures, self.names, ordered=True).to_pandas()

    @property
    def ordered_per_query(self) -> pd.DataFrame:
        """The per-query rows (already in output order)."""
        return self.per_query

    @cached_property
    def summary(self) -> pd.DataFrame:
        return pd.DataFrame(summary_rows(self.report, self.names), columns=list(SUMMARY_COLUMNS))

    def unpersist(self) -> None:
        """Nothing is cached outside this object (kept for the same use as on Spark)."""


def evaluate_in_process(
    run: pd.DataFrame | pa.Table,
    qrels: pd.DataFrame | pa.Table,
    measures: Sequence[str | Measure] | str,
    *,
    queries: str = "qrels",
    rel_level: int = 1,
    depth: int | None = None,
    names: str | Mapping[str, str] = "canonical",
    run_ids: Sequence[str] | None = None,
    run_columns: str | Mapping[str, str] | None = None,
    qrels_columns: str | Mapping[str, str] | None = None,
) -> LocalEvaluation:
    """Evaluate runs against qrels held in memory; see the module text.

    The arguments are those of :func:`sparkeval.evaluate` (``buckets`` and
    ``near_duplicates`` have no meaning here), plus explicit column mappings as in
    files (``query_id=user,doc_id=item``).
    """
    options = EvalOptions(queries=queries, rel_level=rel_level, depth=depth)  # type: ignore[arg-type]
    as_measures(measures)  # an unknown measure is named before the tables are read
    run_table = _canonical(run, "run", run_columns)
    qrels_table = _canonical(qrels, "qrels", qrels_columns)
    if run_ids is None:
        run_ids = sorted(pc.unique(run_table.column("run_id")).drop_null().to_pylist())
    if not run_ids:
        raise InputError("run table: no rows")
    return evaluate_held(run_table, qrels_table, measures, options, names, run_ids)


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
) -> LocalEvaluation:
    """Evaluate run and qrels rows this process holds (in the form
    :func:`~sparkeval.engine.worker.assemble.evaluate_tables` takes) with the workers'
    kernels and exact sums; ``result`` is the evaluation class to return, named
    ``reader``. ``in_worker`` marks bad-row errors as a worker's are marked."""
    measure_list = as_measures(measures)
    labels = name_labels(measures, names)
    out_names = output_names(measure_list, labels, options.rel_level)
    run_ids = list(run_ids)
    wide = evaluate_tables(
        run_table, qrels_table, measure_list, options, run_ids=run_ids, in_worker=in_worker
    )
    wide = undefined_as_null(wide, len(measure_list))
    stats = combine(partition_sums(wide, measure_list).to_pylist(), measure_list)
    report = build_report(stats, measure_list, out_names, run_ids, options, labels)
    return result(report, measure_list, out_names, reader, wide)


def _canonical(
    data: pd.DataFrame | pa.Table, kind: str, mapping: str | Mapping[str, str] | None
) -> pa.Table:
    """``[run_id,] query_id, doc_id, score`` or ``query_id, doc_id, relevance``, typed."""
    if isinstance(data, pd.DataFrame):
        data = pa.Table.from_pandas(data, preserve_index=False)
    elif not isinstance(data, pa.Table):
        raise TypeError(
            f"{kind}: expected a pandas DataFrame or an Arrow table without a SparkSession, "
            f"got {type(data).__name__}"
        )
    source = f"{kind} table"
    found = resolve_columns(data.column_names, kind, parse_mapping(mapping, kind), source)
    value = "score" if kind == "run" else "relevance"
    columns: dict[str, pa.Array | pa.ChunkedArray] = {}
    if kind == "run":
        if "run_id" in found:
            columns["run_id"] = _ids(data.column(found["run_id"]), source, found["run_id"])
        else:
            columns["run_id"] = pa.array([DEFAULT_RUN_ID] * data.num_rows, pa.string())
    for name in ("query_id", "doc_id"):
        columns[name] = _ids(data.column(found[name]), source, found[name])
    columns[value] = _values(data.column(found[value]), source, found[value], kind == "qrels")
    return pa.table(columns)


def _ids(column: pa.ChunkedArray, source: str, name: str) -> pa.ChunkedArray:
    """Strings as they are, integers as their decimal text; other types, and text that
    is not valid UTF-8 (an Arrow table keeps a string's bytes), are an error."""
    kind = column.type
    if pa.types.is_dictionary(kind):
        column, kind = column.cast(kind.value_type), kind.value_type
    if not is_id_type(kind):
        raise InputError(
            f"{source}: id column {name} has type {kind}; ids must be strings or integers"
        )
    broken = first_invalid_utf8(column)
    if broken is not None:
        value = shown_text(raw_value(column, broken))
        raise InputError(f"{source}: row {broken + 1}: column {name} value '{value}' is {NOT_UTF8}")
    return column.cast(pa.string())


def _values(column: pa.ChunkedArray, source: str, name: str, whole: bool) -> pa.ChunkedArray:
    """Scores as float64 (finite numbers); grades as int64 (whole numbers)."""
    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
        raise InputError(f"{source}: column {name} has type {column.type}; expected numbers")
    values = column.cast(pa.float64()).to_numpy(zero_copy_only=False)
    bad = np.flatnonzero(~np.isfinite(values) | (whole & (values != np.round(values))))
    if len(bad):
        what = "a whole number" if whole else "a finite number"
        row, value = int(bad[0]) + 1, float(values[bad[0]])
        raise InputError(f"{source}: row {row}: column {name} value {value!r} is not {what}")
    return column.cast(pa.int64()) if whole else column.cast(pa.float64())
