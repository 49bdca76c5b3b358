"""Errors that the job reports to its user, and the exit codes that go with them.

Every error raised for bad input, a bad option or a bad measure name is a
:class:`SparkevalError`; those about values are also ``ValueError`` (:class:`InputError`,
:class:`ConfigError`, :class:`MeasureError`) and those about an argument's type also
``TypeError`` (:class:`OptionTypeError`), so ``except ValueError`` keeps working.
"""

from __future__ import annotations

import re

#: process exit codes (documented in docs/exit-codes.md)
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


class EmptyRunError(InputError):
    """A run id the caller named has no rows (``run_id``: which)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id!r} has no rows")
        self.run_id = run_id

    def __reduce__(self) -> tuple[type[EmptyRunError], tuple[str]]:
        """Pickled by its run id (as a local worker process raises it)."""
        return type(self), (self.run_id,)


class ConfigError(SparkevalError, ValueError):
    """A bad option or configuration key."""

    exit_code = EXIT_INPUT


class MeasureError(ConfigError):
    """A measure name or parameter that is not valid (still a ``ValueError``)."""


class OptionTypeError(SparkevalError, TypeError):
    """An argument of the wrong type given to the Python API (a ``TypeError`` too)."""

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


class EnvironmentFailure(SparkevalError):
    """The machine failed the job (disk full, the JVM died, out of memory): exit 1, but
    with a first line that says which, not a Py4J call name."""

    exit_code = EXIT_INTERNAL


_READ_FAILED = re.compile(r"Encountered error while reading file (?P<file>\S+?)\.?\s+SQLSTATE")
_CAUSE = re.compile(r"^Caused by: (?P<type>[\w.$]+)(?::\s*(?P<message>.*))?$", re.M)
_NOT_PARQUET = re.compile(r"(?P<file>\S+) is not a Parquet file")
#: (pattern in the text of an error, what the user is told) for failures of the machine
_ENVIRONMENT = (
    ("No space left on device", "disk full (No space left on device)"),
    ("java.lang.OutOfMemoryError", "the JVM ran out of memory (raise spark.driver.memory)"),
    ("JAVA_GATEWAY_EXITED", "the Spark JVM could not start or exited"),
    ("Answer from Java side is empty", "the Spark JVM exited (killed, or out of memory?)"),
    ("Error while receiving", "the Spark JVM exited (killed, or out of memory?)"),
    ("Connection refused", "lost the connection to the Spark JVM (it exited?)"),
)


def _local_name(uri: str) -> str:
    return uri[len("file:") :].replace("///", "/", 1) if uri.startswith("file:") else uri


#: Spark's refusal of a setting's value (``spark.conf`` or the session's settings)
_BAD_SETTING = re.compile(
    r"\[INVALID_CONF_VALUE[.A-Z_]*\] The value '(?P<value>[^']*)' in the config "
    r'"(?P<key>[^"]+)" is invalid\. (?P<why>[^.]*)'
)


def classify_failure(exc: BaseException) -> SparkevalError | None:
    """The user-facing error a failure stands for, or None for an internal error.

    * a bad row found inside a Spark task (:func:`worker_input_error`,
      :func:`marked_message`): an InputError with the line number looked up;
    * a file Spark could not read (a truncated ``.gz``, a file that is not Parquet, a
      permission problem): an InputError naming the file and the root cause;
    * disk full, out of memory, a JVM that died: an EnvironmentFailure saying which.
    """
    if isinstance(exc, SparkevalError):
        return exc
    text = str(exc)
    found = _FROM_WORKER.search(text)
    if found:
        from sparkeval.io.locate import with_line_number

        return InputError(with_line_number(found.group(1)))
    for pattern, meaning in _ENVIRONMENT:
        if pattern in text or pattern in type(exc).__name__:
            return EnvironmentFailure(meaning)
    bad_setting = _BAD_SETTING.search(text)
    if bad_setting:
        why = bad_setting["why"]
        return ConfigError(
            f"Spark setting {bad_setting['key']}={bad_setting['value']}: "
            f"{why[:1].lower()}{why[1:]} (from --conf, the config file's spark: section "
            "or spark-submit)"
        )
    not_parquet = _NOT_PARQUET.search(text)
    if not_parquet:
        return InputError(f"{_local_name(not_parquet['file'])}: not a Parquet file")
    read_failed = _READ_FAILED.search(text)
    if read_failed:
        causes = list(_CAUSE.finditer(text))
        cause = causes[-1] if causes else None
        why = (cause["message"] or cause["type"]) if cause else "unreadable"
        if cause and cause["type"] in ("java.io.EOFException", "java.util.zip.ZipException"):
            why += " (a truncated or corrupt compressed file?)"
        return InputError(f"{_local_name(read_failed['file'])}: cannot be read: {why.strip()}")
    return None
