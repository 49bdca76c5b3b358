"""Status lines: what sparkeval is doing, on stderr, never on stdout.

Every line reads ``sparkeval: MESSAGE (ELAPSED s)``, the seconds since the process
started sparkeval.  ``--quiet`` silences them (errors are still reported).  Under
``spark-submit`` the Python driver's stderr is merged into stdout by Spark's
launcher, so there the lines go through the JVM's log4j (logger ``sparkeval``, level
INFO, on the JVM's stderr) and stdout carries the results alone.

Example:
    >>> set_quiet(True); status("reading run.txt"); set_quiet(False)
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_START = time.monotonic()
_QUIET = False
_JVM_LOGGER: Any = None


def set_quiet(quiet: bool) -> None:
    """Silence (or restore) status lines."""
    global _QUIET
    _QUIET = quiet


def route_to_jvm_log(spark: SparkSession) -> None:
    """Send status lines through the JVM's log4j (used under ``spark-submit``)."""
    global _JVM_LOGGER
    jvm: Any = spark._jvm
    level = jvm.org.apache.logging.log4j.Level.INFO
    jvm.org.apache.logging.log4j.core.config.Configurator.setLevel("sparkeval", level)
    _JVM_LOGGER = jvm.org.apache.logging.log4j.LogManager.getLogger("sparkeval")


def status(message: str) -> None:
    """One status line (see the module docstring)."""
    if _QUIET:
        return
    line = f"{message} ({time.monotonic() - _START:.1f} s)"
    if _JVM_LOGGER is not None:
        _JVM_LOGGER.info(line)
    else:
        print(f"sparkeval: {line}", file=sys.stderr, flush=True)
