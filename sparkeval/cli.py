"""The ``sparkeval`` command line: ``sparkeval <command> [options]``.

The CLI only parses: each command's parser is generated from its config's options
(:mod:`sparkeval.job.options`), and :func:`sparkeval.job.runner.run_command` does the
rest, the same way for every command.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# first: a Ctrl-C while the modules below load exits quietly (sparkeval.startup)
import sparkeval.startup
from sparkeval.commands import COMMAND_MODULES
from sparkeval.errors import EXIT_INTERNAL, classify_failure, clean_message
from sparkeval.job.command import Command
from sparkeval.job.options import OptionSpec

#: the exit code of an interrupted command (128 + SIGINT), as shells give it
EXIT_INTERRUPTED = 130


def command_name(module_name: str) -> str:
    """CLI name of a command module: ``...commands.rank_distance`` is ``rank-distance``."""
    return module_name.rsplit(".", 1)[1].replace("_", "-")


def load_command(module_name: str) -> Command:
    """The :class:`~sparkeval.job.command.Command` a command module defines."""
    return importlib.import_module(module_name).COMMAND


def add_command_parser(sub: argparse._SubParsersAction, command: Command) -> None:
    """The subparser of one command, generated from its config's options."""
    # no abbreviations: evaluate's --run-id would silently be --run-id-column, where the
    # other commands' --run-id chooses a run
    parser = sub.add_parser(
        command.name, help=command.help, description=command.description, allow_abbrev=False
    )
    keys = set()
    for spec in command.config.options():
        keys.add(spec.key)
        if spec.meta.cli:
            _add_option(parser, spec)
    if "spark" in keys:
        parser.add_argument(
            "--conf",
            dest="spark",
            action="append",
            metavar="KEY=VALUE",
            type=_spark_setting,
            help="a Spark setting, as spark-submit's --conf (repeatable; wins over the "
            "config file's spark: section, key by key)",
        )
    parser.add_argument(
        "--config", metavar="FILE", help="YAML or JSON file of options; options given here win"
    )
    parser.set_defaults(command=command)


def _add_option(parser: argparse.ArgumentParser, spec: OptionSpec) -> None:
    meta = spec.meta
    if meta.positional:
        parser.add_argument(spec.key, nargs="*", metavar=meta.metavar, help=meta.help)
    elif spec.is_flag:
        parser.add_argument(
            spec.flag,
            dest=spec.key,
            action="store_const",
            const=True,
            default=None,
            help=meta.help,
        )
    elif spec.is_list:
        parser.add_argument(
            spec.flag,
            dest=spec.key,
            action="extend",
            nargs="+",
            metavar=meta.metavar,
            help=meta.help,
        )
    else:
        parser.add_argument(
            spec.flag,
            dest=spec.key,
            type=spec.scalar_type() or str,
            choices=meta.choices,
            default=None,
            metavar=meta.metavar,
            help=meta.help,
        )


def _spark_setting(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` of ``--conf``: the value may hold ``=``; the key may not be empty.

    Example: ``spark.sql.shuffle.partitions=8`` is ``("spark.sql.shuffle.partitions", "8")``.
    """
    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key.strip(), value


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The CLI parser: every command, or only ``command`` when it names one.

    Building one command's parser imports only that command's module, so ``sparkeval
    evaluate`` does not import the modules (and pandas) of the other commands before
    Spark starts.
    """
    known = [command_name(m) for m in COMMAND_MODULES]
    modules = [m for m in COMMAND_MODULES if command not in known or command_name(m) == command]
    parser = argparse.ArgumentParser(
        prog="sparkeval",
        allow_abbrev=False,
        description="Evaluate rankings and recommendations at Spark scale "
        "(trec_eval-exact measures, LSH near-duplicates, run comparison).",
    )
    sub = parser.add_subparsers(dest="command_name", metavar="COMMAND", required=True)
    for module_name in modules:
        add_command_parser(sub, load_command(module_name))
    return parser


def _not_a_py4j_send_failure(record: logging.LogRecord) -> bool:
    """False for py4j's report of a command the JVM no longer answered.

    py4j logs it on the root logger with the socket error's traceback
    (``logging.exception("Exception while sending command.")``); the CLI says what
    happened in one line ("lost the connection to the Spark JVM").
    """
    return not (record.name == "root" and Path(record.pathname).parent.name == "py4j")


def _quiet_spark_error_logs() -> None:
    """PySpark logs every failed query with a JSON dump, py4j every command the dead
    JVM did not answer with a traceback; the CLI reports errors itself."""
    for name in ("DataFrameQueryContextLogger", "SQLQueryContextLogger"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    logging.getLogger().addFilter(_not_a_py4j_send_failure)  # added once, however often


def parse(argv: Sequence[str]) -> tuple[Command, str | None, dict[str, object]]:
    """The command, the ``--config`` file and the option values of a command line."""
    arguments = list(argv)
    args = build_parser(arguments[0] if arguments else None).parse_args(arguments)
    command: Command = args.command
    values = {s.key: getattr(args, s.key) for s in command.config.options() if s.meta.cli}
    if getattr(args, "spark", None):
        values["spark"] = dict(args.spark)
    return command, args.config, values


def run_argv(argv: Sequence[str]) -> int:
    """Run a command line; errors propagate (:func:`main` turns them into exit codes)."""
    from sparkeval.job.runner import run_command

    command, config_file, values = parse(argv)
    return run_command(command, config_file, values)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (see docs/exit-codes.md).

    Called as the program (``argv`` None: the process's own arguments), it returns once
    the JVM it started has exited; called with arguments (from Python), a session it
    started stays for the caller's next call.
    """
    if signal.getsignal(signal.SIGINT) is sparkeval.startup.interrupted_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # KeyboardInterrupt again
    _quiet_spark_error_logs()
    arguments = sys.argv[1:] if argv is None else list(argv)
    try:
        command, config_file, values = parse(arguments)
    except KeyboardInterrupt:
        print("sparkeval: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    code, completed = _outcome(command, config_file, values)
    if argv is None and code != EXIT_INTERRUPTED:  # the program's JVM ends with it
        _finish_jvm(graceful=completed)
    return code


def _outcome(command: Command, config_file: str | None, values: Any) -> tuple[int, bool]:
    """(the exit code, whether the command ran to its end) of running ``command``."""
    from sparkeval.job.runner import run_command

    try:
        code = run_command(command, config_file, values)
        sys.stdout.flush()  # a closed stdout shows here, not at the interpreter's exit
        return code, True
    except KeyboardInterrupt:
        _stop_jvm()
        print(f"sparkeval {command.name}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED, False
    except BrokenPipeError:
        return _closed_stdout(), True
    except Exception as exc:
        known = classify_failure(exc)
        if known is not None:
            print(
                f"sparkeval {command.name}: error: {_shown(clean_message(known))}", file=sys.stderr
            )
            return known.exit_code, False
        # an internal error: say so first, keep the traceback for bug reports
        import traceback

        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        first = _shown(first)
        print(f"sparkeval {command.name}: internal error: {first}", file=sys.stderr)
        traceback.print_exc()
        return EXIT_INTERNAL, False


def _stop_jvm() -> None:
    """Stop the JVM this process started, if any (nothing when pyspark was not used)."""
    if "pyspark" in sys.modules:
        from sparkeval.spark import stop_started_jvms

        stop_started_jvms()


def _finish_jvm(graceful: bool) -> None:
    """Wait for the JVM this program started to exit, after stopping its Spark session
    when the command ran to its end (``graceful``); nothing when pyspark was not used."""
    if "pyspark" in sys.modules:
        from sparkeval.spark import finish_started_jvm

        finish_started_jvm(stop_session=graceful)


def _shown(message: str) -> str:
    """An error message as the user sees it: inputs copied from a store named by their
    URIs, and no credential (:mod:`sparkeval.storage`)."""
    from sparkeval.storage.local_copies import original_names
    from sparkeval.storage.stores import redact

    return redact(original_names(message))


def _closed_stdout() -> int:
    """``sparkeval ... | head``: the reader left after the outputs were complete (they are
    written before anything is printed), so this is success; stdout is pointed at
    /dev/null so that the interpreter's final flush does not fail again."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
