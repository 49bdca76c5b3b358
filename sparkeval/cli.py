"""The ``sparkeval`` command line: ``sparkeval <command> [options]``."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from sparkeval.commands import COMMAND_MODULES
from sparkeval.errors import EXIT_INTERNAL, SparkevalError, clean_message


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sparkeval",
        description="Evaluate rankings and recommendations at Spark scale "
        "(trec_eval-exact measures, LSH near-duplicates, run comparison).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).add_parser(sub)
    return parser


def _quiet_spark_error_logs() -> None:
    """PySpark logs every failed query with a JSON dump; the CLI reports errors itself."""
    for name in ("DataFrameQueryContextLogger", "SQLQueryContextLogger"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (see the README's exit codes)."""
    _quiet_spark_error_logs()
    parser = build_parser()
    args = parser.parse_args(argv)
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
