"""Small inputs whose rows the driver already holds: collected without a Spark job.

A DataFrame built from local data (``spark.createDataFrame`` of a pandas DataFrame or
an Arrow table: what unit tests and notebooks build; a list of rows becomes an RDD
instead) is a *local relation*: its rows sit in the driver's JVM, and Spark's
optimizer folds a projection or a filter over it into another local relation.
``collect()`` of such a plan hands those rows over as they are, with no job;
``toArrow()`` always runs one.  In a warm local session, one
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

Bigger local relations are collected otherwise (:func:`plain_local_arrow`): Python
builds one object per value, which costs more than a job from about
:data:`LOCAL_ROWS_BYTES` of Spark's estimate.  Each frame is then collected as Arrow as
it is, by one job, and cast in Arrow: Spark's casts would cost more than the jobs, since
its optimiser evaluates a projection of a local relation row by row in the driver.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.engine.formats import IS_QRELS, SHIPPED_VALUE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

T = TypeVar("T")

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


def _each_once(columns: Sequence[str], names: Sequence[str]) -> bool:
    """Whether each of ``names`` is exactly one of ``columns``."""
    return all(columns.count(name) == 1 for name in names)


def _columns(frame: DataFrame, names: Sequence[str]) -> list[tuple[Any, ...]] | None:
    """The values of the named columns of ``frame``'s rows (collected without a job),
    or None when a name is missing or not unique."""
    columns = frame.columns
    if not _each_once(columns, names):
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


#: the id columns of both inputs, in the plain rows' order
_IDS = ("query_id", "doc_id")


def _converted(
    columns: Sequence[Any] | None,
    texts: Callable[[Any], pa.Array | None],
    doubles: Callable[[Any], pa.Array],
) -> list[pa.Array] | None:
    """An input's columns (ids first, the value last) as text and doubles; None when
    a column is missing or text would not survive."""
    if columns is None:
        return None
    converted = [texts(column) for column in columns[:-1]]
    if any(column is None for column in converted):
        return None
    return [*converted, doubles(columns[-1])]


def _plain_table(run: list[pa.Array], qrels: list[pa.Array], has_run_id: bool) -> pa.Table:
    """The plain rows of converted columns (run: ``[run_id], query_id, doc_id, score``;
    qrels: ``query_id, doc_id, relevance``): run rows, then qrels rows."""
    n_run, n_qrels = len(run[-1]), len(qrels[-1])
    if has_run_id:
        run_id = pa.concat_arrays([run[0], pa.nulls(n_qrels, pa.string())])
    else:
        run_id = pa.nulls(n_run + n_qrels, pa.string())
    columns: dict[str, pa.Array] = {"run_id": run_id}
    for i, name in enumerate(_IDS):
        columns[name] = pa.concat_arrays([run[i + has_run_id], qrels[i]])
    columns[SHIPPED_VALUE] = pa.concat_arrays([run[-1], qrels[-1]])
    marks = [pa.repeat(pa.scalar(False), n_run), pa.repeat(pa.scalar(True), n_qrels)]
    columns[IS_QRELS] = pa.concat_arrays(marks)
    return pa.table(columns)


def _names(has_run_id: bool) -> tuple[list[str], list[str]]:
    """The columns the plain rows take from the run and from the qrels."""
    return ["run_id"] * has_run_id + [*_IDS, "score"], [*_IDS, "relevance"]


def plain_local_rows(run_df: DataFrame, qrels_df: DataFrame, has_run_id: bool) -> pa.Table | None:
    """The plain driver plan's rows (``run_id, query_id, doc_id, _value, _is_qrels``;
    a null run id where the run has none) of two local relations, collected without a
    job; None when a column is missing or not unique, or text would not survive.

    The caller has checked the columns' Spark types (plain ids and numeric values) and
    checks the rows afterwards, as it does the Arrow path's.
    """
    run_names, qrels_names = _names(has_run_id)
    run = _converted(_columns(run_df, run_names), _texts, _doubles)
    qrels = _converted(_columns(qrels_df, qrels_names), _texts, _doubles)
    if run is None or qrels is None:
        return None
    return _plain_table(run, qrels, has_run_id)


def _arrow_columns(frame: DataFrame, names: Sequence[str]) -> list[pa.Array] | None:
    """The named columns of ``frame`` collected as Arrow as the frame is (one job, no
    new plan), or None when a name is missing or not unique, or the job fails."""
    if not _each_once(frame.columns, names):
        return None
    try:
        table = frame.toArrow()
    except Exception:  # the caller's other path runs it again and reports the failure
        return None
    return [table.column(name).combine_chunks() for name in names]


def _arrow_texts(ids: pa.Array) -> pa.Array:
    """Ids as Spark's ``CAST(id AS STRING)`` gives them: text as it is (its bytes
    checked later), an integer as its decimal text (Arrow's cast writes the digits
    as Java's ``Long.toString``).

    Example:
        >>> _arrow_texts(pa.array([-(2**63), 7], pa.int64())).to_pylist()
        ['-9223372036854775808', '7']
    """
    return pc.cast(ids, pa.string())


def _arrow_doubles(values: pa.Array) -> pa.Array:
    """Scores or grades as Spark's ``CAST(value AS DOUBLE)`` gives them: an integer
    rounded to the nearest double, ties to even (unchecked: the cast of a 64-bit
    integer beyond 2**53 rounds, as Java's does), a ``float`` widened exactly.

    Example:
        >>> _arrow_doubles(pa.array([2**53 + 1], pa.int64())).to_pylist()
        [9007199254740992.0]
    """
    return pc.cast(values, pa.float64(), safe=False)


def side_by_side(first: Callable[[], T], second: Callable[[], T]) -> tuple[T, T]:
    """``(first(), second())``, ``first`` run in a thread that inherits this thread's
    Spark job properties (job group, description, scheduler pool), so that the jobs of
    both run together and are still the caller's."""
    from pyspark import InheritableThread

    results: dict[str, Any] = {}

    def run_first() -> None:
        try:
            results["value"] = first()
        except BaseException as exc:  # raised in the caller's thread below
            results["error"] = exc

    thread = InheritableThread(target=run_first)
    thread.start()
    try:
        second_value = second()
    finally:
        thread.join()
    if "error" in results:
        raise results["error"]
    return results["value"], second_value


def plain_local_arrow(run_df: DataFrame, qrels_df: DataFrame, has_run_id: bool) -> pa.Table | None:
    """What :func:`plain_local_rows` gives, for local relations too big to be built as
    Python values: each frame is collected as Arrow as it is, by one job (the two jobs
    run together), and its columns are cast in Arrow.

    Spark would otherwise analyse and optimise the casts over the local rows (its
    optimiser evaluates a projection of a local relation row by row, in the driver)
    and then collect them: at 1,000 queries x 100 docs, about 0.47 s against 0.14 s.
    """
    run_names, qrels_names = _names(has_run_id)
    run_columns, qrels_columns = side_by_side(
        lambda: _arrow_columns(run_df, run_names), lambda: _arrow_columns(qrels_df, qrels_names)
    )
    run = _converted(run_columns, _arrow_texts, _arrow_doubles)
    qrels = _converted(qrels_columns, _arrow_texts, _arrow_doubles)
    if run is None or qrels is None:
        return None
    return _plain_table(run, qrels, has_run_id)
