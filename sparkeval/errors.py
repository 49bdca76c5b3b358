"""Errors that the job reports to its user, and the exit codes that go with them."""

from __future__ import annotations

import re

#: process exit codes (documented in the README)
EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INPUT = 2
EXIT_GATE = 3


class SparkevalError(Exception):
    """Base class of errors that carry a message meant for the user."""

    exit_code = EXIT_INTERNAL


class InputError(SparkevalError, ValueError):
    """Bad input data: the message names the file, line or key and what was expected."""

    exit_code = EXIT_INPUT


class ConfigError(SparkevalError, ValueError):
    """A bad option or configuration key."""

    exit_code = EXIT_INPUT


class EnvironmentProblem(SparkevalError):
    """Something missing on the machine (for example Java)."""

    exit_code = EXIT_INPUT


_MARK = "sparkeval-input-error"
_FROM_WORKER = re.compile(re.escape(_MARK) + r"\[(.*?)\]" + re.escape(_MARK), re.S)


def worker_input_error(message: str) -> InputError:
    """An InputError raised inside a Spark task, marked so the driver can recover it."""
    return InputError(f"{_MARK}[{message}]{_MARK}")


def marked_message(message_column):
    """Spark expression: ``message_column`` marked like :func:`worker_input_error`'s text.

    Used with ``raise_error`` so that a bad row found by a Spark expression is
    reported like one found in a Python worker.
    """
    from pyspark.sql import functions as F

    return F.concat(F.lit(f"{_MARK}["), message_column, F.lit(f"]{_MARK}"))


def input_error_from_spark(exc: BaseException) -> InputError | None:
    """Recover an InputError raised in a Python worker from Spark's wrapped exception."""
    match = _FROM_WORKER.search(str(exc))
    return InputError(match.group(1)) if match else None


def clean_message(exc: BaseException) -> str:
    """The user-facing text of an error raised locally or in a worker."""
    match = _FROM_WORKER.search(str(exc))
    return match.group(1) if match else str(exc)
