"""What a Spark session needs of the machine, checked before the JVM starts.

A variable pointing nowhere or a setting Spark cannot use otherwise shows up as the
launcher's exit (``JAVA_GATEWAY_EXITED``), a Py4J call name after a minute's wait for
an unreachable master, or a task failure deep in a job. Each check here fails with one
line naming the variable or setting and what to do (:class:`EnvironmentProblem`, exit
2); none starts a process. :func:`sparkeval.spark.build_session` runs them for the
sessions it starts itself (not for one ``spark-submit`` or a notebook already started).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
from collections.abc import Mapping
from pathlib import Path

from sparkeval.errors import EnvironmentProblem

#: the master URLs Spark accepts (a cluster manager's scheme, or a local master)
_MASTER = re.compile(
    r"local(\[(\*|\d+)(,\s*\d+)?\])?$|local-cluster\[\d+,\s*\d+,\s*\d+\]$"
    r"|spark://\S+$|yarn$|k8s://\S+$"
)
#: settings that must be whole numbers of at least 1
_POSITIVE_SETTINGS = ("spark.sql.shuffle.partitions", "spark.default.parallelism")
#: how long to wait for a standalone master to accept a connection
MASTER_TIMEOUT_SECONDS = 5.0


def java_binary() -> Path | None:
    """The ``java`` that Spark's launcher runs (``$JAVA_HOME/bin/java``, else ``PATH``)."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return (Path(home) / "bin" / "java").resolve()
    found = shutil.which("java")
    return Path(found).resolve() if found else None


def check_spark_environment(master: str | None, settings: Mapping[str, str]) -> None:
    """Every check of a session about to start on ``master`` with ``settings``.

    Raises:
        EnvironmentProblem: the first problem found, naming the variable or setting.
    """
    check_java_home()
    check_spark_home()
    check_pythons()
    if master is not None:
        check_master(master)
    check_settings(settings)


def check_java_home() -> None:
    """``JAVA_HOME``, when set, holds ``bin/java``: Spark's launcher uses it before PATH."""
    _check_home("JAVA_HOME", "bin/java", "a Java 17+ installation", "the java on PATH")


def check_spark_home() -> None:
    """``SPARK_HOME``, when set, holds Spark's launcher (``bin/spark-submit``)."""
    _check_home("SPARK_HOME", "bin/spark-submit", "a Spark installation", "the one pyspark brings")


def _check_home(variable: str, needed: str, what: str, otherwise: str) -> None:
    """The installation directory in ``variable``, when set, holds ``needed``."""
    home = os.environ.get(variable)
    if home and not (Path(home) / needed).is_file():
        raise EnvironmentProblem(
            f"{variable}={home} holds no {needed}; point {variable} at {what} or unset it "
            f"to use {otherwise}"
        )


def check_pythons() -> None:
    """``PYSPARK_PYTHON`` and ``PYSPARK_DRIVER_PYTHON``, when set, name an interpreter."""
    for name in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        value = os.environ.get(name)
        if value and shutil.which(value) is None:
            raise EnvironmentProblem(
                f"{name}={value} is not an executable Python; point it at the Python "
                "that has sparkeval installed, or unset it"
            )


def check_master(master: str) -> None:
    """A master URL Spark knows; a standalone master (``spark://HOST:PORT``) must accept
    a connection within :data:`MASTER_TIMEOUT_SECONDS`."""
    if not _MASTER.match(master):
        raise EnvironmentProblem(
            f"--master {master}: not a Spark master URL (local, local[N], local[*], "
            "spark://HOST:PORT, yarn, k8s://URL)"
        )
    if master.startswith("spark://"):
        for address in master[len("spark://") :].split(","):
            host, _, port = address.rpartition(":")
            if not host or not port.isdigit():
                raise EnvironmentProblem(f"--master {master}: expected spark://HOST:PORT")
            try:
                with socket.create_connection((host, int(port)), MASTER_TIMEOUT_SECONDS):
                    pass
            except OSError as exc:
                raise EnvironmentProblem(
                    f"--master {master}: cannot reach {host}:{port} ({exc.strerror or exc}); "
                    "is the master running, and is this the port its log names?"
                ) from None


def check_settings(settings: Mapping[str, str]) -> None:
    """``spark.local.dir`` directories can be made and written; partition counts are
    whole numbers of at least 1."""
    for key in _POSITIVE_SETTINGS:
        value = settings.get(key)
        if value is not None and not (str(value).strip().isdigit() and int(value) >= 1):
            raise EnvironmentProblem(f"Spark setting {key}={value}: expected a whole number >= 1")
    local_dirs = settings.get("spark.local.dir")
    for directory in str(local_dirs or "").split(","):
        if directory.strip():
            _check_local_dir(directory.strip())


def _check_local_dir(directory: str) -> None:
    path = Path(directory).expanduser()
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    problem = None
    if existing is None:
        problem = "no part of it exists"
    elif not existing.is_dir():
        problem = f"{existing} is a file, not a directory"
    elif not os.access(existing, os.W_OK | os.X_OK):
        problem = f"{existing} cannot be written"
    if problem:
        raise EnvironmentProblem(
            f"Spark setting spark.local.dir={directory}: {problem}; Spark keeps its "
            "scratch files there"
        )


def check_connect_client() -> None:
    """The client libraries of Spark Connect (pyspark's ``connect`` extra) are installed."""
    try:
        from pyspark.sql.connect.utils import check_dependencies

        check_dependencies()
    except ImportError as exc:
        raise EnvironmentProblem(
            f"Spark Connect needs pyspark's connect extra ({exc}); install it with "
            "pip install 'pyspark[connect]'"
        ) from None
