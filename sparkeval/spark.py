"""The one place that builds SparkSessions."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping

from sparkeval.errors import EnvironmentProblem

#: settings every sparkeval session gets unless the caller overrides them
DEFAULT_CONF: dict[str, str] = {
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "100000",
}


def check_java() -> None:
    """Fail early, with an install hint, when no Java runtime can be found."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.path.exists(os.path.join(java_home, "bin", "java")):
        return
    if shutil.which("java"):
        return
    raise EnvironmentProblem(
        "Java was not found (no 'java' on PATH and no JAVA_HOME). Spark needs Java 17 or "
        "newer: on Debian/Ubuntu 'sudo apt-get install -y openjdk-17-jre-headless', on "
        "macOS 'brew install openjdk@17', then run sparkeval again."
    )


def build_session(
    master: str | None = None,
    app_name: str = "sparkeval",
    conf: Mapping[str, str] | None = None,
):
    """Get or create the SparkSession with sparkeval's defaults.

    Args:
        master: Spark master URL; ``None`` keeps what ``spark-submit`` set, or
            ``local[*]`` when running outside spark-submit.
        app_name: application name shown by the cluster manager.
        conf: extra Spark settings (they win over the defaults).
    """
    check_java()
    # Python workers must run the interpreter that runs the driver (venv installs).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    settings = {**DEFAULT_CONF, **(conf or {})}
    if master:
        builder = builder.master(master)
    elif not _submitted():
        builder = builder.master("local[*]")
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def _submitted() -> bool:
    """True inside spark-submit (it starts the JVM and hands Python its gateway)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ
