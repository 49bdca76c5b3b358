"""Running a command: load its config, start Spark if needed, run, print, exit code.

The same for every command, from the CLI, ``spark-submit jobs/NAME.py`` or Python.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, TextIO

from sparkeval.job.command import Command
from sparkeval.job.config import JobConfig

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def log(message: str) -> None:
    """A status line on stderr (stdout carries results only): :func:`sparkeval.status.status`."""
    from sparkeval.status import status

    status(message)


def start_spark(command: Command, config: JobConfig):
    """The SparkSession of a command (:func:`sparkeval.spark.build_session`)."""
    from sparkeval.spark import build_session, quiet_submitted_session

    session = build_session(
        getattr(config, "master", None),
        getattr(config, "app_name", None) or command.app_name,
        getattr(config, "spark", None) or {},
        command.jvm_profile(config),
        getattr(config, "remote", None),
    )
    quiet_submitted_session(session)
    return session


def run_command(
    command: Command,
    file: str | None = None,
    cli: Mapping[str, Any] | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Load the config (validated before Spark starts), run the command, return its exit code."""
    config = command.config.load(file, cli)
    if getattr(config, "remote", None) or os.environ.get("SPARK_REMOTE"):
        config = _absolute_paths(config)
    from sparkeval.status import set_quiet

    set_quiet(bool(getattr(config, "quiet", False)))
    _set_identity(config)
    _check_stores(config)
    config.preflight()
    local = command.local is not None and command.local.applies(config)
    if getattr(config, "dry_run", False):
        return _dry_run(config, stdout or sys.stdout)
    target = getattr(config, "append_to", None)
    with _claimed_output(config):
        result = _run_locally(command, config, target) if local else None
        spark = None
        if result is None:
            spark, result = _run_on_spark(command, config, target)
        if target:
            from sparkeval.summary_table import append_summary

            log(append_summary(spark, config.out, target))
    command.show(result, config, stdout or sys.stdout)
    return command.exit_code(result)


def _run_locally(command: Command, config: JobConfig, target: str | None) -> Any:
    """The command's result from its local engine (no JVM), or None when the inputs
    turn out to need Spark (:class:`~sparkeval.job.command.LocalEngine`)."""
    assert command.local is not None
    if target:
        _check_append_target(None, config, target)
    return command.local.run(config)


def _run_on_spark(command: Command, config: JobConfig, target: str | None) -> tuple[Any, Any]:
    """(the session, the command's result) of a run on Spark (no session for a command
    that does not use Spark)."""
    early = command.early(config) if command.uses_spark else None
    try:
        spark = start_spark(command, config) if command.uses_spark else None
        if spark is not None:
            _stores_of_session(spark, config)
        if target:
            _check_append_target(spark, config, target)
        with _command_settings(spark, config):
            if early is None:
                return spark, command.run(spark, config)
            return spark, command.run(spark, config, early)
    finally:
        if early is not None:
            early.discard()  # what the run did not take


def _check_append_target(spark: SparkSession | None, config: JobConfig, target: str) -> None:
    """``--append-to`` checked before the work, not after it."""
    from sparkeval.summary_table import check_append_target

    inputs = list(getattr(config, "input_paths", list)())
    check_append_target(spark, target, getattr(config, "out", None), inputs)


def _set_identity(config: JobConfig) -> None:
    """What identifies the evaluation beside its files and parameters
    (:func:`sparkeval.summary_table.set_identity`): ``--evaluation-key``, the SQL
    conditions, the catalog tables read."""
    from sparkeval.summary_table import set_identity

    conditions = {
        key: value
        for key in ("where", "qrels_where")
        if isinstance(value := getattr(config, key, None), str)
    }
    tables = list(getattr(config, "input_tables", list)())
    set_identity(getattr(config, "evaluation_key", None), conditions, tables)


def _check_stores(config: JobConfig) -> None:
    """Use the config's store settings (``spark.hadoop.fs.*``) and refuse, before any
    work, every path option naming a store sparkeval cannot open
    (:func:`sparkeval.storage.stores.check_paths`)."""
    from sparkeval.storage.stores import StoreSettings, check_paths, configure

    configure(StoreSettings.from_spark(getattr(config, "spark", None)))
    check_paths(_path_values(config))


def _path_values(config: JobConfig) -> list[str]:
    """Every path the config names: path options, ``--append-to``, the handoff directory."""
    values: list[str] = []
    for spec in type(config).options():
        value = getattr(config, spec.key)
        if spec.meta.path and isinstance(value, str):
            values.append(value)
        elif spec.meta.path and isinstance(value, tuple):
            values.extend(v for v in value if isinstance(v, str))
    append_to = getattr(config, "append_to", None)
    if append_to:
        values.append(append_to)
    return values


def _stores_of_session(spark: SparkSession, config: JobConfig) -> None:
    """The session's ``spark.hadoop.fs.*`` settings too (``spark-submit --conf``)."""
    from sparkeval.storage.stores import StoreSettings, configure

    try:
        session = dict(spark.sparkContext.getConf().getAll())
    except Exception:  # Spark Connect: no SparkContext; the config's settings stand
        session = {}
    configure(StoreSettings.from_spark({**session, **(getattr(config, "spark", None) or {})}))


def _command_settings(spark: SparkSession | None, config: JobConfig) -> AbstractContextManager:
    """The Spark settings the command runs with, the session's own put back after it
    (:mod:`sparkeval.job.small_inputs`); nothing without a session."""
    from sparkeval.job.small_inputs import command_settings
    from sparkeval.spark import session_settings

    if spark is None:
        return nullcontext()
    settings = command_settings(spark, config)
    return session_settings(spark, settings) if settings else nullcontext()


def _absolute_paths(config: JobConfig) -> JobConfig:
    """The config with relative local paths made absolute: a Spark Connect server
    resolves paths against its own working directory, not the client's."""
    import dataclasses

    def absolute(value: str) -> str:
        return value if "://" in value or ":" in value.split("/")[0] else os.path.abspath(value)

    changes: dict[str, object] = {}
    for spec in type(config).options():
        value = getattr(config, spec.key)
        if spec.meta.path and isinstance(value, str):
            changes[spec.key] = absolute(value)
        elif spec.meta.path and isinstance(value, tuple):
            changes[spec.key] = tuple(absolute(v) for v in value)
    return dataclasses.replace(config, **changes)


def _dry_run(config: JobConfig, stdout: TextIO) -> int:
    """``--dry-run``: the checks of :mod:`sparkeval.job.dry_run`, one line each; exit 0
    (a failed check raises, exit 2)."""
    from sparkeval.job.dry_run import probe_lock

    lines = ["config: keys, types and values"]
    lines += config.dry_run_checks()  # type: ignore[attr-defined]
    out = config.out  # type: ignore[attr-defined]
    probe_lock(out)
    lines.append(f"output: {out} can be written (no other writer holds it)")
    for line in lines:
        print(f"ok  {line}", file=stdout)
    log("dry run: every check passed; nothing was read beyond schemas, nothing written")
    return 0


def _claimed_output(config: JobConfig) -> AbstractContextManager[None]:
    """The writer lock of the command's ``--out`` (:func:`sparkeval.output.claim_output`),
    held from before Spark starts until the output is in place."""
    out = getattr(config, "out", None)
    if out is None:
        return nullcontext()
    from sparkeval.output import claim_output

    return claim_output(out, bool(getattr(config, "overwrite", False)))
