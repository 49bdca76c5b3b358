"""Long rows, one per (run, query, measure), made from an evaluation's wide rows.

An evaluation keeps one wide row per (run, query) with one column per measure
(:func:`~sparkeval.engine.worker.assemble.evaluate_tables`); its per-query output holds
one long row per evaluated query and measure: ``run_id, query_id, measure, value``, the
measures in their order within each query, a null value where the measure is
undefined. The writer of ``per_query.parquet``
(:mod:`sparkeval.engine.transport.per_query_writer`) makes them in the Python workers,
and :func:`per_query_rows` makes them where the wide rows are held in this process: the
in-process evaluation, and a Spark evaluation made in the driver. The distributed plan
makes the same rows in Spark (``explode``).

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
import pyarrow.compute as pc

from sparkeval.engine.worker.assemble import per_query_indexes
from sparkeval.formats import measure_column
from sparkeval.measures import Measure

#: the columns of ``per_query.parquet``
PER_QUERY_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("query_id", pa.string()),
        ("measure", pa.string()),
        ("value", pa.float64()),
    ]
)
#: the order of the wide rows in the files
WIDE_ORDER = [("run_id", "ascending"), ("query_id", "ascending")]
#: :data:`PER_QUERY_SCHEMA` as :func:`long_rows` builds it; the file holds plain strings
WRITTEN_SCHEMA = pa.schema(
    [
        (f.name, pa.dictionary(pa.int32(), f.type) if f.type == pa.string() else f.type)
        for f in PER_QUERY_SCHEMA
    ]
)
#: the per-query rows as a DataFrame has them: a measure name is never null (as in the
#: distributed plan's frame), ...
FRAME_SCHEMA = pa.schema(
    [f.with_nullable(False) if f.name == "measure" else f for f in PER_QUERY_SCHEMA]
)
#: ... and Spark's ``per_query`` frame has ``_order`` (the measure's position) before
#: ``value``
_WITH_ORDER = FRAME_SCHEMA.insert(3, pa.field("_order", pa.int32(), nullable=False))


def long_rows(wide: pa.Table, columns: Sequence[str], names: Sequence[str]) -> pa.Table:
    """One row per (wide row, measure), the measures in the given order.

    Example: wide rows ``(r, q1, m0=0.5, m1=null)`` and ``(r, q2, m0=1.0, m1=0.25)`` with
    names ``AP, RR`` give ``(r,q1,AP,0.5) (r,q1,RR,null) (r,q2,AP,1.0) (r,q2,RR,0.25)``.

    The id and measure columns are dictionary arrays (:data:`WRITTEN_SCHEMA`): each
    wide row's strings are held once, and the Parquet writer stores them as its
    dictionary pages without hashing the string of every long row.
    """
    n, k = wide.num_rows, len(columns)
    repeat = pa.array(np.repeat(np.arange(n, dtype=np.int32), k))
    values = np.empty((n, k), dtype=np.float64)
    valid = np.empty((n, k), dtype=bool)
    for j, column in enumerate(columns):
        data = wide.column(column)
        valid[:, j] = data.is_valid().to_numpy(zero_copy_only=False)
        values[:, j] = data.fill_null(0.0).to_numpy(zero_copy_only=False)
    measure = pa.DictionaryArray.from_arrays(
        pa.array(np.tile(np.arange(k, dtype=np.int32), n)), pa.array(list(names), pa.string())
    )
    return pa.table(
        {
            "run_id": _repeated(wide.column("run_id"), repeat),
            "query_id": _repeated(wide.column("query_id"), repeat),
            "measure": measure,
            "value": pa.array(values.ravel(), mask=~valid.ravel()),
        },
        schema=WRITTEN_SCHEMA,
    )


def _repeated(strings: pa.ChunkedArray, repeat: pa.Array) -> pa.DictionaryArray:
    """``strings.take(repeat)`` as a dictionary array over the distinct strings
    (in order of first appearance, the dictionary a Parquet writer would build)."""
    encoded = pc.dictionary_encode(strings.combine_chunks())
    return pa.DictionaryArray.from_arrays(encoded.indices.take(repeat), encoded.dictionary)


def evaluated_order(wide: pa.Table) -> pa.Array:
    """Indices of ``wide``'s evaluated rows, sorted by run id and query id in byte-wise
    string order (as Spark's range partitioning sorts).

    Only the two key columns are sorted, as one array each; the rows are then taken
    one row group at a time.  Sorting and taking whole tables touched about twice the
    wide rows' size in new memory, which costs more than the sort itself where page
    faults are dear (measured at 1M queries: 0.48-0.86 s before, 0.13 s after).

    Example (the second row is not evaluated)::

        >>> wide = pa.table({"run_id": ["r", "r", "r"], "query_id": ["q2", "q10", "q1"],
        ...                  "evaluated": [True, False, True]})
        >>> evaluated_order(wide).to_pylist()
        [2, 0]
    """
    keys = wide.select(["run_id", "query_id"]).combine_chunks()
    order = pc.sort_indices(keys, sort_keys=WIDE_ORDER)
    evaluated = wide.column("evaluated").combine_chunks()
    return order.filter(evaluated.take(order))


def per_query_rows(
    wide: pa.Table,
    measures: Sequence[Measure],
    names: Sequence[str],
    ordered: bool,
    with_order: bool = False,
) -> pa.Table:
    """The long rows of ``wide``'s evaluated rows, for the measures with a per-query
    value, as plain strings (:data:`FRAME_SCHEMA`): sorted by run and query when
    ``ordered`` (byte-wise, as Spark sorts strings), else in the wide rows' order.
    ``with_order`` adds ``_order``: the measure's position among those measures.

    ``wide`` has ``run_id, query_id, evaluated`` and ``m<i>`` for measure ``i``, null
    where undefined.
    """
    chosen = per_query_indexes(measures)
    if ordered:
        rows = evaluated_order(wide)
    else:
        rows = pa.array(np.flatnonzero(wide.column("evaluated").to_numpy()))
    columns = [measure_column(i) for i in chosen]
    long = long_rows(wide.take(rows), columns, [names[i] for i in chosen]).cast(FRAME_SCHEMA)
    if not with_order:
        return long
    order = np.tile(np.arange(len(chosen), dtype=np.int32), len(rows))
    return pa.table([*long.columns[:3], pa.array(order), long.column(3)], schema=_WITH_ORDER)
