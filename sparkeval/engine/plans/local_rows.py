"""Small inputs whose rows the driver already holds: collected without a Spark job.

A DataFrame built from local data (``spark.createDataFrame(pandas_df)`` or a list of
rows: what unit tests and notebooks build) is a *local relation*: its rows sit in the
driver's JVM, and Spark's optimizer folds a projection or a filter over it into another
local relation.  ``collect()`` of such a plan hands those rows over as they are, with
no job; ``toArrow()`` always runs one.  In a warm local session, one
``sparkeval.evaluate`` call on 5 queries x 10 docs made this way takes about a
quarter of the time it takes with the job.

Python's values are converted as the plain driver plan's casts convert them in Spark
(:func:`sparkeval.engine.plans.driver_plan.plain_projections`), so the rows, and the
values, are the same to the bit:

* an integer id becomes its decimal text (``str(-7) == "-7"``, as Java's
  ``Long.toString``); a string id stays as it is;
* a score or grade becomes ``float(value)``: an integer is rounded to the nearest double,
  ties to even, as Java's ``(double)`` conversion rounds it; a ``float`` is widened
  exactly.

One thing does not survive the trip: Spark replaces bytes that are not UTF-8 by U+FFFD
when it hands text to Python.  Text holding U+FFFD therefore takes the Arrow path,
whose rows keep their bytes and are checked.

Bigger local relations are left to that path too: Python builds one object per value,
which costs more than the job from about :data:`LOCAL_ROWS_BYTES` of Spark's estimate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.engine.formats import IS_QRELS, SHIPPED_VALUE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: largest estimated input (run and qrels together) collected as Python rows
LOCAL_ROWS_BYTES = 1 << 20

#: the character Spark puts in place of bytes that are not UTF-8
_REPLACEMENT = "\ufffd"


def held_in_driver(*frames: DataFrame) -> bool:
    """Whether each frame's optimised plan is a local relation, whose ``collect()``
    runs no Spark job (False for a cached frame, a file scan, a Connect DataFrame)."""
    try:
        return all(
            frame._jdf.queryExecution().optimizedPlan().getClass().getSimpleName()
            == "LocalRelation"
            for frame in frames
        )
    except Exception:  # a Connect DataFrame has no JVM handle
        return False


def _columns(frame: DataFrame, names: Sequence[str]) -> list[tuple[Any, ...]] | None:
    """The values of the named columns of ``frame``'s rows (collected without a job),
    or None when a name is missing or not unique."""
    columns = frame.columns
    if any(columns.count(name) != 1 for name in names):
        return None
    positions = [columns.index(name) for name in names]
    rows = frame.collect()
    if not rows:
        return [() for _ in names]
    by_column = list(zip(*rows, strict=True))
    return [by_column[p] for p in positions]


def _texts(values: Sequence[Any]) -> pa.Array | None:
    """Ids as Spark's ``CAST(id AS STRING)`` gives them, or None when a text holds
    U+FFFD (maybe bytes that were not UTF-8 before the trip to Python).

    Example:
        >>> _texts([-7, 12, None]).to_pylist()
        ['-7', '12', None]
        >>> _texts(["caf\\u00e9", "q\\ufffd"]) is None
        True
    """
    texts = pa.array(
        [v if v is None or isinstance(v, str) else str(v) for v in values], pa.string()
    )
    if pc.any(pc.match_substring(texts, _REPLACEMENT)).as_py():
        return None
    return texts


def _doubles(values: Sequence[Any]) -> pa.Array:
    """Scores or grades as Spark's ``CAST(value AS DOUBLE)`` gives them.

    Example:
        >>> _doubles([2**53 + 1, 0.1, None]).to_pylist()
        [9007199254740992.0, 0.1, None]
    """
    return pa.array([None if v is None else float(v) for v in values], pa.float64())


def plain_local_rows(run_df: DataFrame, qrels_df: DataFrame, has_run_id: bool) -> pa.Table | None:
    """The plain driver plan's rows (``run_id, query_id, doc_id, _value, _is_qrels``;
    a null run id where the run has none) of two local relations, collected without a
    job; None when a column is missing or not unique, or text would not survive.

    The caller has checked the columns' Spark types (plain ids and numeric values) and
    checks the rows afterwards, as it does the Arrow path's.
    """
    ids = ["query_id", "doc_id"]
    run = _columns(run_df, ["run_id"] * has_run_id + ids + ["score"])
    qrels = _columns(qrels_df, [*ids, "relevance"])
    if run is None or qrels is None:
        return None
    n_run, n_qrels = len(run[-1]), len(qrels[-1])
    if has_run_id:
        run_ids = _texts(run[0])
        if run_ids is None:
            return None
        run_id = pa.concat_arrays([run_ids, pa.nulls(n_qrels, pa.string())])
    else:
        run_id = pa.nulls(n_run + n_qrels, pa.string())
    columns: dict[str, pa.Array] = {"run_id": run_id}
    for i, name in enumerate(ids):
        texts = _texts(run[i + has_run_id] + qrels[i])
        if texts is None:
            return None
        columns[name] = texts
    columns[SHIPPED_VALUE] = _doubles(run[-1] + qrels[-1])
    columns[IS_QRELS] = pa.array([False] * n_run + [True] * n_qrels, pa.bool_())
    return pa.table(columns)
