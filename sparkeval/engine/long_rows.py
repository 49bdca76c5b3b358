"""Per-query rows built from the wide rows held in this process.

An evaluation's wide rows hold one row per (run, query) and one column per measure
(:func:`~sparkeval.engine.worker.assemble.evaluate_tables`); its per-query output has
one row per evaluated query and measure: ``run_id, query_id, measure, value``, the
measures in their order within each query, a null value where the measure is
undefined. The in-process evaluation and a Spark evaluation made in the driver both
hold their wide rows as Arrow, and build those rows here; the distributed plan builds
the same rows in Spark (``explode``).

Example:
    >>> from sparkeval.measures.names import parse_measures
    >>> wide = pa.table({"run_id": ["r", "r"], "query_id": ["q2", "q1"],
    ...                  "evaluated": [True, True], "m0": [1.0, None], "m1": [0.5, 0.25]})
    >>> rows = per_query_rows(wide, parse_measures(["P@1", "AP"]), ["P@1", "AP"], True)
    >>> rows.to_pydict()["query_id"], rows.to_pydict()["value"]
    (['q1', 'q1', 'q2', 'q2'], [None, 0.25, 1.0, 0.5])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from sparkeval.engine.formats import measure_column
from sparkeval.engine.worker.assemble import per_query_indexes
from sparkeval.measures import Measure

#: the per-query rows' columns and their Arrow types (a measure name is never null, as
#: in the distributed plan's frame)
PER_QUERY_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("query_id", pa.string()),
        pa.field("measure", pa.string(), nullable=False),
        ("value", pa.float64()),
    ]
)
#: the same with ``_order`` (the measure's position) before ``value``
_WITH_ORDER = PER_QUERY_SCHEMA.insert(3, pa.field("_order", pa.int32(), nullable=False))


def per_query_rows(
    wide: pa.Table,
    measures: Sequence[Measure],
    names: Sequence[str],
    ordered: bool,
    with_order: bool = False,
) -> pa.Table:
    """``run_id, query_id, measure, value`` of the evaluated wide rows (one row per
    query and measure with a per-query value, in the measures' order); sorted by run
    and query when ``ordered`` (byte-wise, as Spark sorts strings), else in the wide
    rows' order. ``with_order`` adds ``_order`` (int32) before ``value``: the measure's
    position among those, as the Spark ``per_query`` frame has it.

    ``wide`` has ``run_id, query_id, evaluated`` and ``m<i>`` for measure ``i``, null
    where undefined.
    """
    evaluated = wide.filter(wide.column("evaluated"))
    if ordered:
        evaluated = evaluated.sort_by([("run_id", "ascending"), ("query_id", "ascending")])
    chosen = per_query_indexes(measures)
    queries, per_query = evaluated.num_rows, len(chosen)
    schema = _WITH_ORDER if with_order else PER_QUERY_SCHEMA
    if queries == 0 or per_query == 0:
        return schema.empty_table()
    # row k * per_query + j: query k, measure j (the values of measure j sit at
    # j * queries + k once the measure columns are laid end to end)
    query = np.repeat(np.arange(queries), per_query)
    measure = np.tile(np.arange(per_query), queries)
    values = pa.concat_arrays(
        [evaluated.column(measure_column(i)).combine_chunks().cast(pa.float64()) for i in chosen]
    )
    labels = pa.array([names[i] for i in chosen], pa.string())
    columns = [
        evaluated.column("run_id").take(query),
        evaluated.column("query_id").take(query),
        labels.take(measure),
        *([pa.array(measure, pa.int32())] if with_order else []),
        values.take(measure * queries + query),
    ]
    return pa.table(columns, schema=schema)
