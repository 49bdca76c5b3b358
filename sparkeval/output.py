"""Atomic output directories: results appear complete, or not at all.

Every job writes into a hidden staging directory next to the target and renames
it into place only after everything succeeded, so a reader never sees a partial
result and a failed run leaves the previous output untouched.  The staging name
records the host and process id of its writer (``.NAME.staging-HOST-PID-RANDOM``):
a process killed before it could clean up leaves its staging directory behind, and
the next run towards the same target on the same host removes it once that process
is gone.

Example:
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> with atomic_output_dir(root / "out") as staging:
    ...     _ = (staging / "summary.json").write_text("{}")
    >>> sorted(p.name for p in (root / "out").iterdir())
    ['_SUCCESS', 'summary.json']
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import shutil
import socket
import stat
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from sparkeval import faults
from sparkeval.errors import ConfigError
from sparkeval.scratch import host_name, process_alive
from sparkeval.stable_parquet import sort_footer_encodings
from sparkeval.storage.uris import is_remote

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

SUCCESS_MARKER = "_SUCCESS"


def check_output_path(
    out: str | os.PathLike[str], inputs: list[str], overwrite: bool
) -> Path | str:
    """Validate an output directory before any work starts.

    Refuses a target that holds or lies inside an input, a target under a file, in
    a directory this process cannot write, or that is itself a file, and an existing
    non-empty target unless ``overwrite`` is set. A URI of a remote store is checked
    by :func:`sparkeval.storage.targets.check_remote_output` and returned as it is.
    """
    if is_remote(out):
        from sparkeval.storage.targets import check_remote_output

        return check_remote_output(os.fspath(out), inputs, overwrite)
    target = Path(os.path.realpath(out))
    for raw in inputs:
        src = Path(os.path.realpath(raw))
        if src == target or target in src.parents or src in target.parents:
            raise ConfigError(
                f"output directory {out} overlaps the input {raw}; choose another --out"
            )
    existing = next(p for p in (target, *target.parents) if p.exists())
    if existing != target and not existing.is_dir():
        raise ConfigError(f"output path {out}: {existing} is a file, not a directory")
    writable_dir = existing
    if existing == target:
        writable_dir = target if os.path.ismount(target) else target.parent
    if not os.access(writable_dir, os.W_OK | os.X_OK) or not _can_create_in(writable_dir):
        raise ConfigError(
            f"output path {out}: cannot write in {writable_dir} (read-only or permission denied)"
        )
    if target.exists():
        if not target.is_dir():
            raise ConfigError(f"output path {out} exists and is not a directory")
        if _visible_entries(target) and not overwrite:
            raise ConfigError(
                f"output directory {out} already exists and is not empty; "
                "pass --overwrite to replace it"
            )
    return target


def _can_create_in(directory: Path) -> bool:
    """Whether a file can really be created in ``directory`` (a read-only mount or a
    pseudo file system such as /proc refuses even a process that may write anywhere)."""
    try:
        handle, name = tempfile.mkstemp(prefix=f"{_OWN_PREFIX}probe-", dir=directory)
    except OSError:
        return False
    os.close(handle)
    os.unlink(name)
    return True


def _visible_entries(directory: Path) -> list[Path]:
    """The entries of an output directory, without this module's own hidden ones."""
    return [p for p in directory.iterdir() if not p.name.startswith(_OWN_PREFIX)]


#: names of the lock, staging and retired entries kept inside a mount-point target
_OWN_PREFIX = ".sparkeval-"


def _lock_path(target: Path) -> Path:
    """Where the writer lock of ``target`` lives: beside it, or inside a mount point."""
    if os.path.ismount(target):
        return target / f"{_OWN_PREFIX}lock"
    return target.parent / f".{target.name}.lock"


@contextmanager
def claim_output(out: str | os.PathLike[str], overwrite: bool) -> Iterator[None]:
    """Hold the exclusive writer lock of ``out`` (``.NAME.lock`` beside it) while writing.

    A second writer without ``overwrite`` fails at once, naming the holder; with
    ``overwrite`` it waits, so writers serialise and each replaces the output whole.
    Holding it, the swap of a writer that died is finished or undone
    (:func:`remove_stale_staging`), so even a run that then fails leaves the last
    complete output in place.  The kernel releases the lock when its process ends,
    however it ends.  The lock file is removed on release; a writer that locked a
    file removed meanwhile locks the new one instead (it compares inodes), so two
    writers never both hold it.

    A remote ``out`` has the lock of :func:`sparkeval.storage.object_commit.claim_remote_output`.

    Raises:
        ConfigError: another process holds the lock and ``overwrite`` is not set.
    """
    if is_remote(out):
        from sparkeval.storage.object_commit import claim_remote_output

        with claim_remote_output(os.fspath(out), overwrite):
            yield
        return
    target = Path(os.path.realpath(out))
    target.parent.mkdir(parents=True, exist_ok=True)
    path = _lock_path(target)
    handle = _locked(path, out, overwrite)
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(f"process {os.getpid()} on {socket.gethostname()}\n")
        handle.flush()
        if not os.path.ismount(target):
            remove_stale_staging(target)  # finish or undo a dead writer's swap first
        if not overwrite and target.exists() and _visible_entries(target):
            raise ConfigError(
                f"output directory {out} already exists and is not empty; "
                "pass --overwrite to replace it"
            )
        yield
    finally:
        path.unlink(missing_ok=True)
        handle.close()


def _locked(path: Path, out: str | os.PathLike[str], wait: bool) -> IO[str]:
    """An open handle of ``path`` holding its exclusive ``flock``."""
    import fcntl

    while True:
        handle = open_lock_file(path, out, create=True)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            if not wait:
                handle.close()
                raise ConfigError(
                    f"output directory {out} is being written by {holder}; wait for it, "
                    "choose another --out, or pass --overwrite to replace its output after it"
                ) from None
            from sparkeval.status import status

            status(f"waiting for {holder} to finish writing {out}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            same = os.lstat(path).st_ino == os.fstat(handle.fileno()).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return handle
        handle.close()  # the holder removed the file as it finished: lock the new one


def open_lock_file(path: Path, out: str | os.PathLike[str], create: bool) -> IO[str]:
    """The writer lock file ``path`` of ``out``, opened without following a link.

    The lock file lives where others may create names (beside ``out``), and the writer
    truncates and writes it: a symbolic link planted there (even a dangling one), a
    hard link to another file, or anything but a regular file is refused, so no file
    elsewhere is ever created, truncated or read through it.  ``create``: opened for
    reading and appending, created when missing; else opened for reading only.

    Raises:
        ConfigError: ``path`` is a symbolic link or not a regular file (naming it).
        FileNotFoundError: no lock file, and ``create`` is false.
    """
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    flags |= os.O_RDWR | os.O_CREAT | os.O_APPEND if create else os.O_RDONLY
    try:
        descriptor = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _unsafe_lock(path, out, "is a symbolic link") from None
        if exc.errno in (errno.EISDIR, errno.ENXIO, errno.ENODEV, errno.EOPNOTSUPP):
            raise _unsafe_lock(path, out, "is not a regular file") from None
        raise
    info = os.fstat(descriptor)
    why = None
    if not stat.S_ISREG(info.st_mode):
        why = "is not a regular file"
    elif info.st_nlink > 1:
        why = f"is a hard link (one of {info.st_nlink} names of one file)"
    if why is not None:
        os.close(descriptor)
        raise _unsafe_lock(path, out, why)
    os.set_blocking(descriptor, True)
    return os.fdopen(descriptor, "a+" if create else "r")


def _unsafe_lock(path: Path, out: str | os.PathLike[str], why: str) -> ConfigError:
    """The error of a lock path that is not a lock file sparkeval may write."""
    return ConfigError(
        f"output directory {out}: its lock file {path} {why}; sparkeval never writes "
        "through it: remove it and run again"
    )


def remove_stale_staging(out: str | os.PathLike[str]) -> list[Path]:
    """Finish or undo the swap of a dead writer of ``out``, then remove its leftovers.

    Only directories named by :func:`atomic_output_dir` for this target, written on
    this host by a process that no longer exists, are touched; those of live
    processes and of other hosts are left alone.  A writer killed between the two
    renames of a swap leaves no ``out`` but a complete new output (its staging
    directory holds ``_SUCCESS``) and the previous one (retired): the new one is put
    in place, or else the previous one is put back, before anything is removed, so
    the last complete output is never deleted.  Returns the removed paths.
    """
    target = Path(out).resolve()
    if not target.parent.is_dir():
        return []
    dead = [entry for entry in _own_entries(target) if not process_alive(entry[1])]
    if not target.exists() and not target.is_symlink():
        complete = [p for p, _, kind in dead if kind == "staging" and (p / SUCCESS_MARKER).exists()]
        retired = [p for p, _, kind in dead if kind == "old"]
        if complete or retired:
            (complete + retired)[0].rename(target)
    removed = []
    for path, _, _ in dead:
        if path.exists():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _own_entries(target: Path) -> list[tuple[Path, int, str]]:
    """(path, writer pid, "staging" or "old") of this host's staging and retired
    directories of ``target``."""
    pattern = re.compile(
        r"^\."
        + re.escape(target.name)
        + r"\.(?P<kind>staging|old)-(?P<host>.+)-(?P<pid>\d+)-[0-9a-f]+$"
    )
    host = host_name()
    found = []
    for entry in target.parent.iterdir():
        match = pattern.match(entry.name)
        if not match or match["host"] != host or not entry.is_dir() or entry.is_symlink():
            continue
        found.append((entry, int(match["pid"]), match["kind"]))
    return found


def tidy_spark_output(directory: Path) -> list[Path]:
    """Give the part files of a Spark write stable names; drop Spark's bookkeeping.

    Spark names part files ``part-00000-<random uuid>-c000.snappy.parquet`` and adds
    ``.crc`` checksums and a ``_SUCCESS`` file.  Part files are renamed in Spark's own
    order to ``part-00000.parquet``, ``part-00001.parquet``, ...; hidden and
    ``_``-prefixed files are removed (Parquet readers skip them anyway), and the
    footer's encodings lists are put in a fixed order (see :mod:`sparkeval.stable_parquet`),
    so the same rows written the same way give the same file names and bytes.
    Returns the parts.
    """
    files = sorted(p for p in directory.iterdir() if p.is_file())
    for path in files:
        if path.name.startswith((".", "_")):
            path.unlink()
    parts = [p for p in files if p.name.startswith("part-")]
    renamed = []
    for index, path in enumerate(parts):
        final = directory / f"part-{index:05d}{path.suffix}"
        path.rename(final)
        if final.suffix == ".parquet":
            sort_footer_encodings(final)
        renamed.append(final)
    return renamed


@contextmanager
def atomic_output_dir(out: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a staging directory; on success it replaces ``out`` in one rename.

    On any exception the staging directory is removed and ``out`` is left as it was.
    A ``_SUCCESS`` marker is written last, inside the staging directory.  Stale
    staging directories of the same target (see :func:`remove_stale_staging`) are
    dealt with first.  A target that is a mount point cannot be renamed: the output
    is staged inside it and its entries are swapped one by one (:func:`_swap_entries`).
    A remote ``out`` is staged in a local directory, then uploaded and put in place by
    :func:`sparkeval.storage.object_commit.commit_directory`.
    """
    if is_remote(out):
        with _staged_for_store(os.fspath(out)) as staging:
            yield staging
        return
    target = Path(out).resolve()
    if os.path.ismount(target):
        with _staged_inside(target) as staging:
            yield staging
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(target)
    token = f"{host_name()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    staging = target.parent / f".{target.name}.staging-{token}"
    staging.mkdir()
    try:
        yield staging
        (staging / SUCCESS_MARKER).write_text("")
        faults.at_swap("staged")
        if target.exists():
            retired = target.parent / f".{target.name}.old-{token}"
            target.rename(retired)
            faults.at_swap("retired")
            staging.rename(target)
            faults.at_swap("placed")
            shutil.rmtree(retired, ignore_errors=True)
        else:
            staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


@contextmanager
def _staged_for_store(out: str) -> Iterator[Path]:
    """A local staging directory (:func:`sparkeval.storage.targets.local_staging_root`)
    whose files are committed to the remote ``out`` when the job succeeds; where the
    executors cannot see it, they write their tables' parts into the remote staging
    prefix instead (:mod:`sparkeval.storage.executor_parts`)."""
    from sparkeval.scratch import OUTPUTS_PREFIX, new_scratch_directory
    from sparkeval.storage import files
    from sparkeval.storage.executor_parts import executor_staging
    from sparkeval.storage.object_commit import commit_directory, new_generation, staging_prefix
    from sparkeval.storage.stores import current_settings
    from sparkeval.storage.targets import local_staging_root

    root, executors_see_it = local_staging_root()
    token = new_generation()
    staging = new_scratch_directory(OUTPUTS_PREFIX, root)
    try:
        if executors_see_it:
            yield staging
            commit_directory(staging, out, token)
            return
        prefix = staging_prefix(out, token)
        try:
            with executor_staging(staging, prefix, current_settings()) as parts:
                yield staging
                commit_directory(staging, out, token, parts.parts)
        except BaseException:
            files.delete_tree(prefix)  # the executors' parts of a job that failed
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@contextmanager
def _staged_inside(target: Path) -> Iterator[Path]:
    """Staging for a mount-point target: a hidden directory inside it."""
    for leftover in target.glob(f"{_OWN_PREFIX}staging-*"):
        shutil.rmtree(leftover, ignore_errors=True)
    staging = target / f"{_OWN_PREFIX}staging-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        yield staging
        (staging / SUCCESS_MARKER).write_text("")
        _swap_entries(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _swap_entries(staging: Path, target: Path) -> None:
    """Replace the visible entries of ``target`` with those of ``staging``.

    The old ``_SUCCESS`` goes first and the new one last, so a reader that checks the
    marker never takes a mix of old and new entries for a complete output.
    """
    retired = target / f"{_OWN_PREFIX}old-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    retired.mkdir()
    old = sorted(_visible_entries(target), key=lambda p: p.name != SUCCESS_MARKER)
    for entry in old:
        entry.rename(retired / entry.name)
    new = sorted(staging.iterdir(), key=lambda p: p.name == SUCCESS_MARKER)
    for entry in new:
        entry.rename(target / entry.name)
    shutil.rmtree(retired, ignore_errors=True)


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def write_json(path: Path, payload: dict[str, Any]) -> None:
    """Write JSON with sorted keys and NaN/inf as null (strict JSON, stable bytes)."""
    path.write_text(json.dumps(_json_safe(payload), indent=2, sort_keys=True) + "\n")


#: the keys of a summary that vary between identical runs; they go to ``timings.json``
TIMING_KEYS = ("timings_s",)


def write_summary(
    directory: Path, summary: dict[str, Any], command: str, inputs: Sequence[str]
) -> None:
    """``summary.json`` without timings, its long rows in ``summary.parquet``
    (:mod:`sparkeval.summary_table`), and the timings in ``timings.json`` beside them.

    Rerunning a job with the same inputs and settings gives byte-identical files,
    except ``timings.json`` and the ``evaluated_at`` column of ``summary.parquet``,
    documented to vary.
    """
    from sparkeval.summary_table import write_summary_table

    stable = {k: v for k, v in summary.items() if k not in TIMING_KEYS}
    write_json(directory / "summary.json", stable)
    write_summary_table(directory, stable, command, inputs)
    timings = {k: summary[k] for k in TIMING_KEYS if k in summary}
    if timings:
        write_json(directory / "timings.json", timings)


def write_parquet(frame: DataFrame, directory: Path) -> list[Path]:
    """Write a DataFrame as a Parquet directory with stable part names and bytes.

    The same rows in the same partitions give the same files (``part-00000.parquet``,
    ...; no ``.crc`` or ``_SUCCESS`` inside: see :func:`tidy_spark_output`). Returns the
    part files; none for a remote output on a cluster, whose executors write the parts
    into its staging prefix with pyarrow
    (:func:`sparkeval.storage.executor_parts.write_frame_parts`: the same rows, another
    Parquet writer than Spark's).
    """
    from sparkeval.storage.executor_parts import remote_table, write_frame_parts

    remote = remote_table(directory)
    if remote is not None:  # a remote output on a cluster: the executors upload their parts
        write_frame_parts(frame, *remote)
        return []
    frame.write.parquet(str(directory))
    return tidy_spark_output(directory)


def write_arrow_parquet(table: pa.Table, directory: Path) -> list[Path]:
    """Write an Arrow table as a Parquet directory of one part, ``part-00000.parquet``
    (pyarrow's defaults, one chunk per column): the same rows give the same bytes,
    whichever engine computed them. Returns the part file."""
    import pyarrow.parquet as pq

    directory.mkdir()
    part = directory / "part-00000.parquet"
    pq.write_table(table.combine_chunks().replace_schema_metadata(None), part)
    return [part]


#: a table of at most this many rows, computed on Spark, is collected and written by the
#: driver as the local engine writes it (:func:`write_arrow_parquet`: the same bytes);
#: a larger one by Spark's writer (:func:`write_parquet`)
DRIVER_WRITE_ROWS = 4_000_000
#: the Spark setting that changes :data:`DRIVER_WRITE_ROWS` (``0``: Spark's writer for
#: every table with a row)
DRIVER_WRITE_ROWS_KEY = "spark.sparkeval.driverWriteRows"


def driver_write_rows(frame: DataFrame) -> int:
    """The largest table the driver writes itself: ``spark.sparkeval.driverWriteRows``
    of ``frame``'s session, else :data:`DRIVER_WRITE_ROWS`.

    Raises:
        ConfigError: the setting is not a whole number >= 0.
    """
    raw = frame.sparkSession.conf.get(DRIVER_WRITE_ROWS_KEY, None)
    if raw is None or str(raw).strip() == "":
        return DRIVER_WRITE_ROWS
    text = str(raw).strip().replace("_", "")
    if not text.isdigit():
        raise ConfigError(
            f"{DRIVER_WRITE_ROWS_KEY}: expected a whole number of rows >= 0, got {raw!r}"
        )
    return int(text)


def write_spark_table(
    frame: DataFrame,
    directory: Path,
    schema: pa.Schema | Callable[[pa.Schema], pa.Schema],
    rows: int | None = None,
    sort_by: Sequence[str] = (),
) -> list[Path]:
    """Write a Spark table (in its final order) as the local engine writes the same table.

    A table of at most :func:`driver_write_rows` rows is collected (``toArrow()``), cast
    to the local engine's Arrow ``schema`` (its types and nullable flags; a function
    makes it from the collected schema, for a table whose id types follow the input)
    and written by :func:`write_arrow_parquet`: the same bytes as the local engine. A
    larger one is written by Spark's writer (:func:`write_parquet`, its part files).

    ``rows`` is the table's row count where the caller knows it (no Spark pass to
    count). Without it, at most N + 1 rows are collected (``frame.limit(N + 1)``, one
    pass): up to N they are the table written; past N the collected rows are dropped
    and Spark's writer computes the table again. ``sort_by`` names columns the driver
    sorts the collected rows by (ascending, byte-wise as Spark and the local engine
    sort text), for a frame that Spark leaves in the order of its joins; Spark's writer
    keeps that order.

    Example: with N = 4,000,000 a 10-row table is one ``part-00000.parquet`` of
    pyarrow's bytes; a 5,000,000-row table keeps Spark's parts.
    """
    limit = driver_write_rows(frame)
    if rows is not None and rows > limit:
        return write_parquet(frame, directory)
    table = (frame if rows is not None else frame.limit(limit + 1)).toArrow()
    if table.num_rows > limit:
        del table
        return write_parquet(frame, directory)
    target = schema(table.schema) if callable(schema) else schema
    if sort_by:
        table = table.sort_by([(name, "ascending") for name in sort_by])
    return write_arrow_parquet(table.cast(target), directory)


def shown_path(path: str | Path) -> str:
    """``path`` as logs and summaries name it: a local path absolute (the same from
    any working directory, under ``spark-submit`` too), a URI or table as given.

    Example:
        >>> shown_path("s3a://bucket/eval")
        's3a://bucket/eval'
        >>> shown_path("/data/out")
        '/data/out'
    """
    text = str(path)
    if is_remote(text) or text.startswith("table:") or "://" in text:
        return text
    return str(Path(text.removeprefix("file:")).absolute())
