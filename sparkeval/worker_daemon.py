"""The Python worker daemon of local sessions: pyspark's own, with compiled imports.

Spark starts its Python workers with ``pyspark.zip`` and the py4j zip first on their
``PYTHONPATH``.  Python does not cache the bytecode of modules imported from a zip,
so the daemon and every worker it forks compile pyspark's sources anew: about 0.7 s
before the first Python task of a job can start.  When the zip is the copy inside the
installed ``pyspark`` package (a pip-installed pyspark, as in local sessions), the
same modules are on ``sys.path`` as compiled files; this daemon moves those zips (and
the jars Spark adds) to the end of ``sys.path`` and then runs ``pyspark.daemon``
unchanged.

Local sessions sparkeval starts itself select it with ``spark.python.daemon.module``
(:func:`sparkeval.spark.build_session`).  Nothing else is imported before the daemon
forks its workers (pyspark asks for that: numpy, pyarrow and pandas start threads).
"""

from __future__ import annotations

import runpy
import sys
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


def main() -> None:
    sys.path[:] = archives_behind_installed_pyspark(sys.path)
    runpy.run_module("pyspark.daemon", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
