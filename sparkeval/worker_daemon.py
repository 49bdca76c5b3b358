"""The Python worker daemon of local sessions: pyspark's own, with compiled imports.

Spark starts its Python workers with ``pyspark.zip`` and the py4j zip first on their
``PYTHONPATH``.  Python does not cache the bytecode of modules imported from a zip,
so the daemon and every worker it forks compile pyspark's sources anew: about 0.7 s
before the first Python task of a job can start.  When the zip is the copy inside the
installed ``pyspark`` package (a pip-installed pyspark, as in local sessions), the
same modules are on ``sys.path`` as compiled files; this daemon moves those zips (and
the jars Spark adds) to the end of ``sys.path`` and then runs ``pyspark.daemon``.

One thing is changed in that daemon: when a worker finds its connection already
closed by the JVM (the task was failed or cancelled, e.g. after a bad input row: its
last flush meets a ``BrokenPipeError``, or its first read an ``EOFError``), pyspark's
daemon prints the traceback on the job's standard error before ending the worker.
Here the worker ends the same way (exit code 1) without the traceback, so a command
that fails on bad input prints only its own one-line error.

Local sessions sparkeval starts itself select it with ``spark.python.daemon.module``
(:func:`sparkeval.spark.build_session`).  A cluster's executors can use it too when
sparkeval is installed in their Python (an image, a packed environment), by the same
setting; it cannot be chosen for them, since a daemon module they cannot import fails
every task.  Nothing else is imported before the daemon
forks its workers (pyspark asks for that: numpy, pyarrow and pandas start threads).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from importlib.machinery import PathFinder
from pathlib import Path


def archives_behind_installed_pyspark(path: list[str]) -> list[str]:
    """``path`` with the installed pyspark's own zips, and jars, moved to its end.

    Zips of another Spark (a ``SPARK_HOME`` elsewhere) keep their place, so that the
    pyspark Spark chose is still the one imported.

    Example:
        ``[".../pyspark/python/lib/pyspark.zip", ".../spark-core.jar", "/site"]`` becomes
        ``["/site", ".../pyspark/python/lib/pyspark.zip", ".../spark-core.jar"]`` when
        ``/site/pyspark`` is the package holding that zip.
    """
    plain = [entry for entry in path if not entry.endswith((".zip", ".jar"))]
    spec = PathFinder.find_spec("pyspark", plain)
    if spec is None or not spec.submodule_search_locations:
        return path
    package = Path(next(iter(spec.submodule_search_locations))).resolve()

    def behind(entry: str) -> bool:
        if entry.endswith(".jar"):
            return True
        return entry.endswith(".zip") and package in Path(entry).resolve().parents

    return [e for e in path if not behind(e)] + [e for e in path if behind(e)]


def ending_quietly_on_a_closed_connection(worker: Callable[..., int]) -> Callable[..., int]:
    """``worker``, ending its process with code 1 and no traceback when the JVM has
    closed the connection (what pyspark's daemon does after printing the traceback)."""

    def quiet_worker(*args: object) -> int:
        try:
            return worker(*args)
        except (ConnectionError, EOFError):
            os._exit(1)

    return quiet_worker


def main() -> None:
    sys.path[:] = archives_behind_installed_pyspark(sys.path)
    from pyspark import daemon

    daemon.worker = ending_quietly_on_a_closed_connection(daemon.worker)
    daemon.manager()


if __name__ == "__main__":
    main()
