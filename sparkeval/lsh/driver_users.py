"""``similar-users`` of a small run, in the driver: one Spark job reads the rows.

A run of a few thousand users costs Spark a job per stage (about a second each) for
milliseconds of work. When Spark's size estimate of the run (no job) is at most
:data:`~sparkeval.engine.plans.driver_plan.DRIVER_BYTES`, its rows are collected as
Arrow in one job and the search runs on them in numpy
(:mod:`sparkeval.lsh.driver_sets`), with the same checks, the same top-k order and the
same pairs and statistics as the Spark stages.

Runs the driver path does not take (the Spark stages handle them, and report their
errors): ids of other types than text or integers, a null user or item, and, with a
list cutoff, a score that is missing, NaN or not a plain number.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sparkeval.io.run_choice import missing_run_id_column, repeated_item_error
from sparkeval.lsh.driver_sets import DriverSimilarSets, SetRows, set_rows, similar_sets_in_driver

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from sparkeval.io.lists import RunTable
    from sparkeval.lsh.options import LshOptions

#: Spark types of user and item ids the driver path takes (tokenised as their text)
ID_TYPES = frozenset({"string", "tinyint", "smallint", "int", "bigint"})
#: Spark types of scores the driver path's top-k cut takes
SCORE_TYPES = frozenset({"tinyint", "smallint", "int", "bigint", "float", "double"})


def small_enough(frame: DataFrame) -> bool:
    """Whether Spark's size estimate of ``frame`` (no job) is at most
    :data:`~sparkeval.engine.plans.driver_plan.DRIVER_BYTES`."""
    from sparkeval.engine.plans.driver_plan import fits_in_driver
    from sparkeval.engine.plans.spark_engine import plan_bytes

    return fits_in_driver(plan_bytes(frame))


def takes(rows: DataFrame, k: int | None) -> bool:
    """Whether the driver path takes these rows, by their types and Spark's size
    estimate (no job): text or integer ids, numeric scores when cut at ``k``."""
    types = dict(rows.dtypes)
    if types.get("query_id") not in ID_TYPES or types.get("doc_id") not in ID_TYPES:
        return False
    if k is not None and types.get("score") not in SCORE_TYPES:
        return False
    return small_enough(rows)


def _searchable(table: pa.Table, k: int | None) -> bool:
    """Whether collected rows are the driver's: no null id and, when cut at ``k``, no
    missing or NaN score (the Spark stages report those)."""
    if table.column("query_id").null_count or table.column("doc_id").null_count:
        return False
    if k is None:
        return True
    scores = table.column("score")
    if scores.null_count:
        return False
    return not (pa.types.is_floating(scores.type) and pc.any(pc.is_nan(scores)).as_py())


def _columns(k: int | None) -> list[str]:
    return ["query_id", "doc_id", *(["score"] if k is not None else [])]


def collect_run(run: DataFrame, k: int | None) -> pa.Table | None:
    """A run DataFrame's ``query_id, doc_id[, score]`` rows collected in one job when
    the driver path takes it (:func:`takes`); else None."""
    if not takes(run, k):
        return None
    table = run.select(*_columns(k)).toArrow()
    return table if _searchable(table, k) else None


def collect_small_runs(
    rows: DataFrame, path: str, run_id: str | None, k: int | None
) -> tuple[RunTable, dict[str, pa.Table | None]] | None:
    """A run file's rows (:func:`sparkeval.io.lists.read_run_rows`) collected in one
    job as :func:`collect_run` collects them, when the driver path takes them
    (:func:`takes`), with the choice of runs of :func:`sparkeval.io.lists.select_runs`
    made on the collected run ids; else None.

    Returns:
        ``(runs, tables)``: ``tables`` holds each run's rows, or None for a run the
        driver path does not take (a null id, a missing or NaN score under a cut).

    Raises:
        ConfigError: a ``run_id`` without run ids or not among them.
    """
    if "run_id" not in rows.columns and run_id is not None:
        raise missing_run_id_column(path, run_id)
    from sparkeval.io.lists import select_runs

    if not takes(rows, k):
        return None
    has_ids = "run_id" in rows.columns
    table = rows.select(*_columns(k), *(["run_id"] if has_ids else [])).toArrow()
    found = pc.unique(table.column("run_id")).to_pylist() if has_ids else []
    runs = select_runs(rows, path, run_id, found)
    tables: dict[str, pa.Table | None] = {}
    for rid in runs.ids:
        part = table
        if runs.has_ids:
            part = table.filter(pc.equal(table.column("run_id"), pa.scalar(rid, pa.string())))
        if "run_id" in part.column_names:
            part = part.drop_columns(["run_id"])
        tables[rid] = part if _searchable(part, k) else None
    return runs, tables


def user_sets(
    table: pa.Table, path: str | None, k: int | None, run_id: str | None = None
) -> SetRows:
    """Each user's set of items (the top ``k`` by score, ties by item text descending).

    Raises:
        InputError: an item listed twice for one user of the run file ``path`` (rows
            of a DataFrame, ``path`` None, are taken as they are, as on Spark); the
            message names run ``run_id`` when given.
    """
    if k is None or path is not None:
        every = set_rows(table.column("query_id"), table.column("doc_id"))
        if every.repeated_rows and path is not None:
            raise _repeated(table, path, run_id)
        if k is None:
            return every
    kept = top_k_rows(table, k)
    return set_rows(table.column("query_id").take(kept), table.column("doc_id").take(kept))


def top_k_rows(table: pa.Table, k: int) -> pa.Array:
    """Indices of each user's first ``k`` rows by score descending, ties by the item
    id's text descending (byte-wise), as :func:`sparkeval.io.lists.top_k` ranks them.

    Example:
        >>> t = pa.table({"query_id": ["u", "u", "u"], "doc_id": [99, 100, 7],
        ...               "score": [1.0, 1.0, 0.5]})
        >>> top_k_rows(t, 1).to_pylist()
        [0]
    """
    doc_text = table.column("doc_id").cast(pa.string())
    keys = pa.table({"q": table.column("query_id"), "s": table.column("score"), "d": doc_text})
    order = pc.sort_indices(keys, [("q", "ascending"), ("s", "descending"), ("d", "descending")])
    users = keys.column("q").take(order).combine_chunks()
    if len(users) == 0:
        return order
    new_user = np.ones(len(users), dtype=bool)
    new_user[1:] = pc.not_equal(users[1:], users[:-1]).to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(new_user)
    rank = np.arange(len(users)) - np.repeat(starts, np.diff(np.append(starts, len(users))))
    return order.filter(pa.array(rank < k))


def _repeated(table: pa.Table, path: str, run_id: str | None):
    """The error naming one item listed twice for one user."""
    counts = table.group_by(["query_id", "doc_id"]).aggregate([([], "count_all")])
    first = counts.filter(pc.greater(counts.column("count_all"), 1)).slice(0, 1).to_pylist()[0]
    return repeated_item_error(path, first["query_id"], first["doc_id"], first["count_all"], run_id)


def similar_users_in_driver(
    table: pa.Table,
    path: str | None,
    threshold: float | str,
    k: int | None,
    lsh: LshOptions,
    run_id: str | None = None,
) -> DriverSimilarSets:
    """Similar user pairs of collected run rows; ``pairs`` has ``user_a, user_b, jaccard``.

    Raises:
        InputError: an item twice in a user's list (:func:`user_sets`; of run ``run_id``).
        TooManyCandidates: the buckets hold too many pairs for the driver.
    """
    from sparkeval.lsh.search_stats import check_max_bucket

    params = lsh.banding(threshold)
    sets = user_sets(table, path, k, run_id)
    result = similar_sets_in_driver(
        sets, threshold, lsh.hasher(), params, check_max_bucket(lsh.max_bucket)
    )
    result.pairs = result.pairs.rename_columns(["user_a", "user_b", "jaccard"])
    return result
