"""Fault injection for reliability tests; does nothing unless ``SPARKEVAL_FAULT`` is set.

The variable holds one fault, ``KIND`` or ``KIND:ARGUMENT``:

``kill-worker-once:DIR``
    The first bucket evaluation of the job ends its Python worker process with
    ``os._exit`` (as a crash or an out-of-memory kill would).  It first creates the
    marker file ``DIR/killed`` atomically, so only one attempt of one task dies and
    Spark's task retry must finish the job.
``kill-writer-once:DIR``
    The first task that writes a part of ``per_query.parquet`` ends its Python worker
    after writing the file under its attempt's name, before renaming it into place
    (marker ``DIR/killed-writer``): the retry must leave one whole file and the driver
    must remove the dead attempt's file.
``fail-task``
    Every bucket evaluation raises :class:`FaultInjected`: the job fails (exit code 1).
``fail-write``
    The driver raises :class:`FaultInjected` after ``per_query.parquet`` was written
    into the staging directory, before ``summary.json``.
``kill-at-swap:STEP``
    The driver ends its process with ``os._exit`` (as ``kill -9`` would) at one step of
    the output swap: ``staged`` (the new output is complete in its staging directory),
    ``retired`` (the previous output was moved aside, the new one is not yet in place)
    or ``placed`` (the new output is in place, the previous one not yet removed).
``slow-task:SECONDS[:DIR]``
    Every bucket evaluation sleeps for SECONDS; with DIR it first creates a file
    ``DIR/started-<pid>-<n>``, so a test can tell that tasks are running.

Task faults are read in the Python worker: the variable must be in the environment of
the executors (inherited in local mode; on a cluster pass
``--conf spark.executorEnv.SPARKEVAL_FAULT=...``).  ``fail-write`` is read by the driver.
An evaluation without Spark (``evaluate``'s local engine) applies ``slow-task`` and
``fail-task`` once, in its own process; ``kill-worker-once`` ends the first of its worker
processes to evaluate a bucket (``--local-workers`` above 1), which nothing retries: the
run must fail with a clear message and write nothing.

Example:
    SPARKEVAL_FAULT=kill-worker-once:/tmp/marks sparkeval evaluate --master 'local[2,4]' ...
"""

from __future__ import annotations

import os
import time
from pathlib import Path

#: name of the environment variable that selects a fault
FAULT_ENV = "SPARKEVAL_FAULT"

_TASK_KINDS = ("kill-worker-once", "kill-writer-once", "fail-task", "slow-task")
_DRIVER_KINDS = ("fail-write", "kill-at-swap")
#: the steps of the output swap :func:`at_swap` can stop at
SWAP_STEPS = ("staged", "retired", "placed")


class FaultInjected(RuntimeError):
    """The failure raised by an injected fault (an internal error, exit code 1)."""


def _fault() -> tuple[str, str] | None:
    """(kind, argument) of the configured fault, or None when none is set."""
    raw = os.environ.get(FAULT_ENV, "").strip()
    if not raw:
        return None
    kind, _, argument = raw.partition(":")
    if kind not in _TASK_KINDS + _DRIVER_KINDS:
        raise ValueError(
            f"{FAULT_ENV}={raw!r}: unknown fault {kind!r}; expected one of "
            f"{', '.join(_TASK_KINDS + _DRIVER_KINDS)}"
        )
    if kind == "kill-at-swap" and argument not in SWAP_STEPS:
        raise ValueError(f"{FAULT_ENV}={raw!r}: expected kill-at-swap:{'|'.join(SWAP_STEPS)}")
    if kind in ("kill-worker-once", "kill-writer-once", "slow-task") and not argument:
        raise ValueError(f"{FAULT_ENV}={raw!r}: fault {kind!r} needs an argument")
    return kind, argument


def in_task() -> None:
    """Apply a task fault; called at the start of every bucket evaluation."""
    fault = _fault()
    if fault is None:
        return
    kind, argument = fault
    if kind == "kill-worker-once":
        _die_once(Path(argument) / "killed")
    elif kind == "fail-task":
        raise FaultInjected(f"injected task failure ({FAULT_ENV}=fail-task)")
    elif kind == "slow-task":
        seconds_text, _, marker_dir = argument.partition(":")
        try:
            seconds = float(seconds_text)
        except ValueError:
            raise ValueError(
                f"{FAULT_ENV}: slow-task needs SECONDS[:DIR], got {argument!r}"
            ) from None
        if marker_dir:
            name = f"started-{os.getpid()}-{time.monotonic_ns()}"
            (Path(marker_dir) / name).write_text("")
        time.sleep(seconds)


def in_local_evaluation() -> None:
    """Apply a task fault to an evaluation without Spark (the local engine): ``slow-task``
    and ``fail-task`` as in a task; the ``kill-*-once`` faults, which test Spark's
    retry of a lost worker, do not apply (there is no worker to retry)."""
    fault = _fault()
    if fault is not None and fault[0] in ("slow-task", "fail-task"):
        in_task()


def in_local_worker() -> None:
    """Apply ``kill-worker-once`` in a worker process of the local engine, at the start
    of a bucket's evaluation."""
    fault = _fault()
    if fault is not None and fault[0] == "kill-worker-once":
        _die_once(Path(fault[1]) / "killed")


def in_write_task() -> None:
    """Apply a writer fault; called between writing a part file and renaming it."""
    fault = _fault()
    if fault is not None and fault[0] == "kill-writer-once":
        _die_once(Path(fault[1]) / "killed-writer")


def _die_once(marker: Path) -> None:
    """End this process (as a crash would) unless ``marker`` exists; create it first."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    os._exit(17)


def in_driver(stage: str) -> None:
    """Apply a driver fault at ``stage`` (``"write"``: output partly written)."""
    fault = _fault()
    if fault is not None and fault[0] == "fail-write" and stage == "write":
        raise FaultInjected(f"injected failure while writing ({FAULT_ENV}=fail-write)")


def at_swap(step: str) -> None:
    """Apply ``kill-at-swap:STEP`` when the output swap reaches ``step``."""
    fault = _fault()
    if fault is not None and fault == ("kill-at-swap", step):
        os._exit(137)
