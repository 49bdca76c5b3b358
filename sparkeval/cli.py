"""The ``sparkeval`` command line: ``sparkeval <command> [options]``."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from sparkeval.commands import COMMAND_MODULES
from sparkeval.errors import EXIT_INTERNAL, SparkevalError, clean_message


def command_name(module_name: str) -> str:
    """CLI name of a command module: ``...commands.rank_distance`` is ``rank-distance``."""
    return module_name.rsplit(".", 1)[1].replace("_", "-")


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
        description="Evaluate rankings and recommendations at Spark scale "
        "(trec_eval-exact measures, LSH near-duplicates, run comparison).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in modules:
        importlib.import_module(module_name).add_parser(sub)
    return parser


def _quiet_spark_error_logs() -> None:
    """PySpark logs every failed query with a JSON dump; the CLI reports errors itself."""
    for name in ("DataFrameQueryContextLogger", "SQLQueryContextLogger"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (see the README's exit codes)."""
    _quiet_spark_error_logs()
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(arguments[0] if arguments else None)
    args = parser.parse_args(arguments)
    try:
        return int(args.func(args) or 0)
    except SparkevalError as exc:
        print(f"sparkeval {args.command}: error: {clean_message(exc)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"sparkeval {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # an internal error: say so, keep the traceback for bug reports
        import traceback

        traceback.print_exc()
        print(f"sparkeval {args.command}: internal error: {exc}", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
