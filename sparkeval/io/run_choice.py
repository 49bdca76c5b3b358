"""Which runs of a run table a command evaluates, and the errors of a run's lists,
without Spark: shared by the Spark readers (:mod:`sparkeval.io.lists`) and the local
engines, which read the same tables with pyarrow.

A table with run ids (a ``run_id`` column, a TREC file's tag) holds one run per id:
every run is evaluated, or ``--run-id``'s alone. A table without them is one run
named by its file (:func:`~sparkeval.io.readers.default_run_id`).

Example::

    chosen_runs("runs.parquet", True, None, ["b", "a"])   # (True, ("a", "b"))
    chosen_runs("run.csv", False, None, [])               # (False, ("run",))
"""

from __future__ import annotations

from collections.abc import Sequence

from sparkeval.errors import ConfigError, InputError
from sparkeval.io.readers import default_run_id


def chosen_runs(
    path: str, has_column: bool, run_id: str | None, found: Sequence[str | None]
) -> tuple[bool, tuple[str, ...]]:
    """``(whether the rows keep their run ids, the runs to evaluate, sorted)`` of a run
    table ``path`` whose run id column (``has_column``) holds ``found`` (``None`` for
    rows without one): every run, or ``run_id`` alone. A ``run_id`` column without a
    value is no run id (one run, named by its file).

    Raises:
        ConfigError: ``run_id`` given for a table without run ids or not among them.
        InputError: rows without a run id beside rows with one.
    """
    if not has_column or all(i is None for i in found):
        if run_id is not None:
            raise missing_run_id_column(path, run_id)
        return False, (default_run_id(path),)
    named = sorted(str(i) for i in found if i is not None)
    if run_id is not None:
        if run_id not in named:
            raise ConfigError(f"--run-id {run_id}: {path} holds no such run ({shown_ids(named)})")
        return True, (run_id,)
    if None in found:
        raise InputError(
            f"{path}: some rows have no run id, others do ({shown_ids(named)}); "
            "give every row its run's id"
        )
    return True, tuple(named)


def shown_ids(ids: Sequence[object]) -> str:
    """Up to five run ids, then ``...``."""
    return ", ".join(map(str, ids[:5])) + (", ..." if len(ids) > 5 else "")


def missing_run_id_column(path: str, run_id: str) -> ConfigError:
    """The error of a ``--run-id`` given for a table without run ids."""
    return ConfigError(f"--run-id {run_id} given but {path} has no run_id column")


def repeated_item_error(
    path: str, user: object, item: object, count: int, run_id: object = None
) -> InputError:
    """The error of an item listed ``count`` times for one user (of run ``run_id``)."""
    of_run = "" if run_id is None else f" of run {run_id}"
    return InputError(
        f"{path}: item {item} appears {count} times in the list of "
        f"user {user}{of_run}; each item may appear once per user"
    )


def check_k(k: int | None) -> int | None:
    """Validate a list cutoff: ``None`` or an integer >= 1."""
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a positive integer (list cutoff), got {k!r}")
    return k
