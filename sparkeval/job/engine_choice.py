"""Which engine runs a command: Spark, or this process without a JVM (``--engine``).

``auto`` (the default) runs a command in this process when

* the command has a local engine and its config uses nothing only Spark does (a
  catalog table, a SQL condition, ... : the command's own reason; and for every
  command, `--append-to` a catalog table),
* no Spark is asked for: no cluster master (``--master local[...]`` is this machine),
  no Spark Connect (``--remote``, ``SPARK_REMOTE``), not under ``spark-submit``, and no
  session already running in this process (a notebook's or pipeline's is used), and
* its inputs are local files of at most :data:`LOCAL_ENGINE_BYTES` in all.

``local`` runs it in this process whatever the inputs' size (an error, exit 2, names
what needs Spark); ``spark`` always starts (or uses) a Spark session.

Why a size: starting the JVM costs a few seconds, which small inputs do not repay
(the MovieLens-100k run, 283k rows: about 7 s through Spark, under a second here),
while Spark uses every core on large ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sparkeval.errors import ConfigError, InputError

R = TypeVar("R")

#: the values of ``--engine``
ENGINES = ("auto", "spark", "local")
#: ``auto`` runs local inputs of at most this many bytes (files, or directories walked)
#: in this process
LOCAL_ENGINE_BYTES = 64 << 20
#: the help text of ``--engine``
ENGINE_HELP = (
    "who runs the command: auto (default: this process, without a JVM, when the inputs "
    f"are local files of at most {LOCAL_ENGINE_BYTES >> 20} MiB and nothing needs Spark; "
    "else Spark), local (this process, any size) or spark"
)


def spark_asked_for(config: Any) -> bool:
    """Whether ``config`` runs on Spark whatever its inputs: a master that is not local,
    Spark Connect, ``spark-submit``, or a session already running in this process
    (:func:`sparkeval.spark.local_session_cores` is None for the first three)."""
    from sparkeval.spark import local_session_cores, session_running

    master, remote = getattr(config, "master", None), getattr(config, "remote", None)
    return local_session_cores(master, remote) is None or session_running()


def runs_locally(config: Any, command_reason: Callable[[Any], str | None]) -> bool:
    """Whether the command of ``config`` runs in this process (see the module text).

    ``command_reason(config)`` says why the command needs Spark for this config (None:
    it does not).

    Raises:
        ConfigError: ``--engine local`` with a config that needs Spark.
    """
    engine = getattr(config, "engine", "auto")
    if engine == "spark":
        return False
    reason = command_reason(config) or _job_reason(config)
    if engine == "local":
        if reason is not None:
            raise ConfigError(f"--engine local: {reason}; use --engine spark (or auto)")
        return True
    if reason is not None or spark_asked_for(config):
        return False
    from sparkeval.job.small_inputs import local_input_bytes

    size = local_input_bytes(config.input_paths())
    return size is not None and size <= LOCAL_ENGINE_BYTES


def _job_reason(config: Any) -> str | None:
    """Why a config needs Spark whatever its command: ``--append-to`` a catalog table
    (every command's summary rows go there through a session), else None."""
    target = getattr(config, "append_to", None)
    if target:
        from sparkeval.summary_table import is_path_target

        if not is_path_target(target):
            return "--append-to a catalog table needs Spark"
    return None


def run_here_or_on_spark(config: Any, run: Callable[[Any], R]) -> R | None:
    """``run(config)`` in this process; when an input or value needs Spark's readers
    (:class:`~sparkeval.io.direct_input.NotDirect`), None, so that an ``auto`` run goes
    to Spark (a status line says why), and an error, exit 2, under ``--engine local``.

    Raises:
        InputError: ``--engine local`` and what needs Spark, named.
    """
    from sparkeval.io.direct_input import NotDirect
    from sparkeval.status import status

    try:
        return run(config)
    except NotDirect as exc:
        if getattr(config, "engine", "auto") == "local":
            raise InputError(
                f"--engine local: {exc.reason}, which Spark's readers judge; "
                "use --engine spark (or auto)"
            ) from None
        status(f"{exc.reason}; the inputs are read by Spark instead")
        return None
