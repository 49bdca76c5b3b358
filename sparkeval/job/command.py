"""What a command is: a name, a config class, ``run(spark, config)`` and how it reports.

Each module of :mod:`sparkeval.commands` defines one :class:`Command` as ``COMMAND``.
The CLI (:mod:`sparkeval.cli`) builds the command's parser from its config's options;
:func:`sparkeval.job.runner.run_command` loads the config, starts Spark when the command
needs it, runs it, prints its result and turns the outcome into the exit code.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TextIO, TypeVar

from sparkeval.job.config import JobConfig

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

C = TypeVar("C", bound=JobConfig)


def spark_job(target: str) -> Callable[[SparkSession | None, Any], Any]:
    """The ``run`` of a Spark command whose body lives in ``target``, ``"module:function"``.

    The body, ``function(spark, config)``, is imported on the first call, so that
    building a command's parser imports no pyspark; the runner always passes it a
    session.

    Example:
        >>> run = spark_job("sparkeval.diversity.job:run_diversity")
        >>> run.__qualname__
        'run_diversity'
    """
    module_name, _, function_name = target.partition(":")

    def run(spark: SparkSession | None, config: Any, early: Any = None) -> Any:
        if spark is None:
            raise TypeError(f"{target} runs on Spark: give it a SparkSession")
        body = getattr(importlib.import_module(module_name), function_name)
        return body(spark, config) if early is None else body(spark, config, early)

    run.__qualname__ = run.__name__ = function_name
    run.__doc__ = f"Run ``{target}`` on the session (imported on first use)."
    return run


def _nothing_to_print(result: Any, config: Any, stdout: TextIO) -> None:
    """The default :attr:`Command.show`: the command prints nothing on stdout."""


def _success(result: Any) -> int:
    """The default :attr:`Command.exit_code`: 0 whenever ``run`` returned."""
    return 0


def _no_early_work(config: Any) -> Any:
    """The default :attr:`Command.early`: nothing to do before Spark starts."""
    return None


def _no_profile(config: Any) -> str | None:
    """The default :attr:`Command.jvm_profile`: HotSpot's defaults for the driver."""
    return None


@dataclass(frozen=True)
class LocalEngine(Generic[C]):
    """How a command runs in this process without Spark, when its inputs allow.

    Attributes:
        applies: ``applies(config)``: whether to try the local engine (``--engine
            local``, or ``auto`` on small local inputs); raises ConfigError when
            ``--engine local`` was asked for inputs it cannot read.
        run: ``run(config) -> result``, the same result ``Command.run`` gives, or None
            when a value needs Spark after all (the runner then runs the command on Spark).
    """

    applies: Callable[[C], bool]
    run: Callable[[C], Any]


@dataclass(frozen=True)
class Command(Generic[C]):
    """One ``sparkeval`` command.

    Attributes:
        name: the CLI name (``rank-distance``); its ``jobs/`` entry is ``rank_distance.py``.
        help: one line for ``sparkeval --help``.
        description: the paragraph of ``sparkeval NAME --help``.
        config: the command's config class.
        run: ``run(spark, config) -> result``; ``spark`` is None when ``uses_spark`` is False.
        show: prints the result on stdout (results only: status goes to stderr).
        exit_code: the process exit code of a result (a failed quality gate is 3).
        uses_spark: whether the runner starts a SparkSession.
        jvm_profile: the driver JVM profile for a config
            (see :func:`sparkeval.spark.build_session`).
        early: work that needs no Spark, started in the background before the session
            (``early(config)`` returns a handle with ``discard()``, or None); ``run``
            receives the handle as its third argument.
        local: the command's :class:`LocalEngine`, or None when it always runs on Spark.
    """

    name: str
    help: str
    description: str
    config: type[C]
    run: Callable[..., Any]
    show: Callable[[Any, C, TextIO], None] = _nothing_to_print
    exit_code: Callable[[Any], int] = _success
    uses_spark: bool = True
    jvm_profile: Callable[[C], str | None] = _no_profile
    early: Callable[[C], Any] = _no_early_work
    local: LocalEngine[C] | None = None

    @property
    def app_name(self) -> str:
        """The Spark application name of the command's sessions."""
        return f"sparkeval-{self.name}"
