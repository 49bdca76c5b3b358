"""The checks and messages of run lists that need no Spark: the list cutoff, a
``--run-id`` without run ids, an item listed twice; shared by the Spark readers
(:mod:`sparkeval.io.lists`) and the diversity command's local engine."""

from __future__ import annotations

from collections.abc import Sequence

from sparkeval.errors import ConfigError, InputError


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
