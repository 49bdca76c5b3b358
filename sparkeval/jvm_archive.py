"""A class-data archive for the driver JVM of the local sessions sparkeval starts.

A local Spark session loads, parses and verifies the same tens of thousands of classes
every time it starts, which is most of its start-up time.  HotSpot can instead map
them from a class-data archive written once (dynamic AppCDS, Java 13+):
``-XX:ArchiveClassesAtExit=F`` writes the classes a run loaded to ``F`` when the JVM
exits, and ``-XX:SharedArchiveFile=F`` maps them on the next start.

``sparkeval jvm-archive`` writes such an archive by running small evaluations in a JVM
that dumps its classes at exit: the command line's (read by the Python workers and by
Spark's readers) and the Python API's on ``spark.read.parquet`` DataFrames, on the paths
large inputs take (:data:`WORKLOAD`), so that Spark's reader, analyser and
optimiser are mapped too (measured at 10M rows on 2 cores, medians of alternating
pairs: the API on such DataFrames 0.92x the time, ``--reader spark`` 0.94x; a session's
start is unchanged).  Sessions sparkeval starts itself then use it; ``spark-submit`` starts its JVMs
before sparkeval runs, and ``sparkeval jvm-archive --java-options`` prints the options
(:func:`mapping_options`) to give them by hand.  The
archive's name carries a key of the Java installation, the pyspark version and its jars
(their directory, sizes and times), so another Java, pyspark or install of it never
picks up a foreign archive; should the JVM still refuse it, it starts as usual
(``-Xshare:auto``) with its warnings silenced.  A file beside each archive names the
jars directory it was written from, so that writing a new archive deletes those no
install can map any more (:func:`remove_superseded`).

**No separate step is needed**: when a local session sparkeval started finds no archive,
the process, as it exits, starts one detached, low-priority builder
(:func:`prepare_in_background`), so the first run is not slowed and the next ones
start fast. One builder at a time holds a lock file (a stale lock, whose process is
gone, is taken over); the archive is renamed into place only when complete, so a
session never maps half an archive. ``sparkeval jvm-archive`` still writes it at once.
A build that fails is not tried again in the background for a day
(:data:`RETRY_AFTER_SECONDS`; the reason is kept beside the archives and shown by
``sparkeval jvm-archive --status``).

**Where no archive can work** (:func:`archive_blocker`): HotSpot archives and maps
classes only while every directory on the class path before the jars it loads from is
empty, and Spark's launcher puts its configuration directory (``SPARK_CONF_DIR``, else
``conf`` in the Spark home) before its jars.  When that directory holds files, no
archive is built or mapped, and ``sparkeval jvm-archive`` says why.  An empty one is
part of the key, since the JVM then checks it is still there and empty.

The archive lives in ``$SPARKEVAL_CACHE_DIR``, else ``$XDG_CACHE_HOME/sparkeval``, else
``~/.cache/sparkeval``.  ``SPARKEVAL_JVM_ARCHIVE`` says what to do with it: ``auto``
(the default: use it, and build it in the background when missing), ``use`` (use it,
never build it unasked) or ``off`` (neither).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sparkeval.errors import EnvironmentProblem
from sparkeval.scratch import process_alive

#: ``auto`` (default), ``use`` or ``off``: see the module text
SWITCH_ENV = "SPARKEVAL_JVM_ARCHIVE"
SWITCH_VALUES = ("auto", "use", "off")
#: where archives are kept (default: the user's cache directory)
CACHE_ENV = "SPARKEVAL_CACHE_DIR"
#: HotSpot logs a warning for every class it cannot archive (signed jars, ...)
QUIET_OPTIONS = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")
#: a background build that failed is not tried again before this many seconds
RETRY_AFTER_SECONDS = 24 * 3600
#: archives kept in the cache directory: the one just written and the most recently
#: used others (each is about 170 MiB; a session that maps one marks it used)
KEPT_ARCHIVES = 2

#: the module whose ``__main__`` evaluates a small collection in a JVM that archives its
#: classes at exit (run in a child process by :func:`build_archive`)
WORKLOAD = "sparkeval.commands.jvm_archive"


def cache_dir() -> Path:
    """The directory that holds sparkeval's JVM archives."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sparkeval"


def archive_key() -> str | None:
    """A digest of what the archive depends on: the Java build, pyspark and its jars.

    HotSpot maps an archive only while every jar it was written from is at the same
    path with the same size and modification time; otherwise it starts without the
    archive, silently under ``-Xshare:auto``. So the jars' directory and each jar's
    size and time are in the key: a second install of the same pyspark (another
    virtual environment) gets its own archive instead of one that is never mapped.
    """
    from sparkeval.spark_environment import java_binary

    java = java_binary()
    if java is None:
        return None
    import pyspark

    digest = hashlib.sha256()
    stat = java.stat()
    digest.update(f"{java}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    release = java.parent.parent / "release"
    if release.exists():
        digest.update(release.read_bytes())
    digest.update(f"\0pyspark {pyspark.__version__}\0".encode())
    jars = jars_directory()
    if jars.is_dir():
        digest.update(f"{jars}\0".encode())
        for jar in sorted(jars.iterdir()):
            stat = jar.stat()
            digest.update(f"{jar.name}:{stat.st_size}:{stat.st_mtime_ns}\0".encode())
    conf = spark_conf_dir()
    if conf.is_dir():  # an (empty) directory on the class path: see archive_blocker
        digest.update(f"conf {conf.resolve()}\0".encode())
    return digest.hexdigest()[:20]


def spark_home() -> Path:
    """The Spark installation pyspark launches: ``SPARK_HOME``, else the pyspark
    package itself (a pip install)."""
    import pyspark

    home = os.environ.get("SPARK_HOME")
    return Path(home) if home else Path(pyspark.__file__).parent


def jars_directory() -> Path:
    """The resolved directory of the jars pyspark's driver JVM runs."""
    return (spark_home() / "jars").resolve()


def spark_conf_dir() -> Path:
    """The configuration directory Spark's launcher puts on the driver JVM's class path,
    before its jars: ``SPARK_CONF_DIR``, else ``conf`` in :func:`spark_home`."""
    conf = os.environ.get("SPARK_CONF_DIR")
    return Path(conf) if conf else spark_home() / "conf"


def archive_blocker() -> str | None:
    """Why no class archive can serve this install's driver JVM, or None when one can.

    HotSpot refuses to archive classes while a directory on the class path, before
    the jars it loads from, holds files ("Cannot have non-empty directory in paths"),
    and maps an archive only while such directories are still empty ("shared class
    paths mismatch"). Spark's launcher puts :func:`spark_conf_dir` there.
    Directories it puts after the jars (``HADOOP_CONF_DIR``, ``YARN_CONF_DIR``) do not
    matter.
    """
    conf = spark_conf_dir()
    try:
        held = sorted(entry.name for entry in conf.iterdir()) if conf.is_dir() else []
    except OSError:
        held = []
    if not held:
        return None
    named = "SPARK_CONF_DIR" if os.environ.get("SPARK_CONF_DIR") else "conf in SPARK_HOME"
    reason = (
        f"Spark's configuration directory {conf} ({named}) holds files, and Spark's "
        "launcher puts it on the driver JVM's class path before Spark's jars; HotSpot "
        "maps a class archive only while every directory there is empty"
    )
    if all(name.endswith(".template") for name in held):
        reason += (
            " (it holds only templates, which Spark does not read: SPARK_CONF_DIR set "
            "to an empty directory gives the same settings and an archive)"
        )
    return reason


def archive_path() -> Path | None:
    """The usable archive for this Java and pyspark, or None.

    An archive is named ``jvm-classes-<key>-<bytes>.jsa``: one whose size is not the
    size in its name (cut short, say) is never handed to the JVM, which would crash
    on it rather than start without it; none is usable while :func:`archive_blocker`
    gives a reason.
    """
    key = archive_key()
    if key is None or archive_blocker() is not None:
        return None
    for path in sorted(cache_dir().glob(f"jvm-classes-{key}-*.jsa")):
        size = path.stem.rsplit("-", 1)[1]
        if size.isdigit() and path.is_file() and path.stat().st_size == int(size):
            return path
    return None


def switch() -> str:
    """The ``SPARKEVAL_JVM_ARCHIVE`` setting (``auto`` when unset or not understood;
    ``on``, an older spelling, means ``auto``)."""
    value = os.environ.get(SWITCH_ENV, "").strip().lower()
    return value if value in SWITCH_VALUES else "auto"


def java_options() -> list[str]:
    """Driver JVM options that map the archive, or ``[]`` when there is none to use."""
    if switch() == "off":
        return []
    path = archive_path()
    if path is None:
        return []
    with contextlib.suppress(OSError):  # marks it used: pruning keeps recent ones
        os.utime(path)
    return mapping_options(path)


def mapping_options(path: Path) -> list[str]:
    """HotSpot options that map the archive ``path`` when it fits the JVM's jars, and
    otherwise start the JVM as usual, without a word (a JVM that cannot find the file,
    an executor on another machine, say, starts as usual too)."""
    return [f"-XX:SharedArchiveFile={path}", "-Xshare:auto", *QUIET_OPTIONS]


def build_archive() -> Path:
    """Write the archive for this Java and pyspark (replacing older ones); its path.

    Runs :data:`WORKLOAD` in a child Python whose driver JVM writes its classes at exit;
    the archive is renamed into place only once that JVM has exited cleanly.
    """
    key = archive_key()
    if key is None:
        raise EnvironmentProblem("Java was not found; a JVM archive needs Java 17 or newer")
    blocker = archive_blocker()
    if blocker is not None:
        raise EnvironmentProblem(
            f"no JVM archive can be used with this Spark: {blocker}. Sessions start "
            "as usual, without one"
        )
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    partial = directory / f".jvm-classes-{key}.{os.getpid()}.partial"
    env = {**os.environ, SWITCH_ENV: "off", "PYSPARK_PYTHON": sys.executable}
    with tempfile.TemporaryDirectory(prefix="sparkeval-jvm-archive-") as work:
        done = subprocess.run(
            [sys.executable, "-m", WORKLOAD, str(partial), work],
            env=env,
            capture_output=True,
            text=True,
        )
    if done.returncode != 0 or not partial.is_file() or partial.stat().st_size == 0:
        partial.unlink(missing_ok=True)
        raise EnvironmentProblem(f"the JVM archive could not be written:\n{_what_went_wrong(done)}")
    _failure_file(key).unlink(missing_ok=True)
    for older in directory.glob(f"jvm-classes-{key}-*.jsa"):
        older.unlink()
        _owner_file(older).unlink(missing_ok=True)
    path = directory / f"jvm-classes-{key}-{partial.stat().st_size}.jsa"
    _owner_file(path).write_text(str(jars_directory()))
    os.replace(partial, path)
    remove_superseded(directory, path)
    remove_least_recently_used(directory, path)
    return path


def _what_went_wrong(done: subprocess.CompletedProcess) -> str:
    """The last lines the archive's writer printed, its status lines left out (the
    JVM's own error goes to standard output, sparkeval's lines to standard error)."""
    lines = [
        line
        for line in (done.stdout + "\n" + done.stderr).splitlines()
        if line.strip() and not line.startswith("sparkeval: ")
    ]
    return "\n".join(lines[-15:]) or f"its process exited with code {done.returncode}"


def _owner_file(archive: Path) -> Path:
    """The file beside ``archive`` that names the jars directory it was written from."""
    return archive.with_suffix(".jars")


def remove_superseded(directory: Path, current: Path) -> list[Path]:
    """Delete the archives that no install can map any more; the paths.

    An archive whose owner file names the jars directory of ``current`` was written
    from this install before its jars changed (an upgrade, a reinstall), and one whose
    jars directory is gone belongs to a removed install: neither will be mapped again.
    Archives of other installs, and archives without an owner file (written by an
    earlier sparkeval), are kept; ``sparkeval jvm-archive --remove`` deletes them all.
    """
    owner = _owner_file(current).read_text()
    removed = []
    for path in sorted(directory.glob("jvm-classes-*.jsa")):
        if path == current or not _owner_file(path).is_file():
            continue
        try:  # a file another user owns, or one removed meanwhile, is left alone
            jars = _owner_file(path).read_text()
            if jars == owner or not Path(jars).is_dir():
                path.unlink(missing_ok=True)
                _owner_file(path).unlink(missing_ok=True)
                removed.append(path)
        except OSError:
            continue
    return removed


def remove_least_recently_used(
    directory: Path, current: Path, kept: int = KEPT_ARCHIVES
) -> list[Path]:
    """Delete all but ``kept`` archives (``current`` and the most recently used others,
    by modification time, which :func:`java_options` refreshes); the paths deleted.

    Archives of other installs (virtual environments, Java builds) would otherwise pile
    up at about 170 MiB each; one removed here is written again when that install next
    needs it.
    """
    others = [path for path in directory.glob("jvm-classes-*.jsa") if path != current]
    by_use = sorted(others, key=lambda path: path.stat().st_mtime, reverse=True)
    removed = []
    for path in by_use[max(kept - 1, 0) :]:
        try:  # a file another user owns, or one removed meanwhile, is left alone
            path.unlink(missing_ok=True)
            _owner_file(path).unlink(missing_ok=True)
            removed.append(path)
        except OSError:
            continue
    return sorted(removed)


def build_in_progress() -> tuple[int, float] | None:
    """``(process id, start time)`` of a live builder of this install's archive; None
    when no build is under way."""
    key = archive_key()
    if key is None:
        return None
    lock = _lock_path(key)
    try:
        holder = int(lock.read_text().strip() or "0")
        started = lock.stat().st_mtime
    except (OSError, ValueError):
        return None
    return (holder, started) if holder and process_alive(holder) else None


def _lock_path(key: str) -> Path:
    return cache_dir() / f".jvm-classes-{key}.building"


def _failure_file(key: str) -> Path:
    """The file that keeps why the last background build of ``key`` failed."""
    return cache_dir() / f".jvm-classes-{key}.failed"


def recent_failure() -> tuple[str, float] | None:
    """``(reason, time)`` of a build of this install's archive that failed less than
    :data:`RETRY_AFTER_SECONDS` ago; None otherwise."""
    key = archive_key()
    if key is None:
        return None
    marker = _failure_file(key)
    try:
        failed_at = marker.stat().st_mtime
        if time.time() - failed_at >= RETRY_AFTER_SECONDS:
            return None
        return " | ".join(marker.read_text().strip().splitlines()), failed_at
    except OSError:
        return None


def _take_lock(lock: Path) -> bool:
    """Create ``lock`` holding this process id; False when a live builder holds it."""
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                holder = int(lock.read_text().strip() or "0")
            except (OSError, ValueError):
                holder = 0
            if holder and process_alive(holder):
                return False
            lock.unlink(missing_ok=True)  # stale: its builder is gone
            continue
        with os.fdopen(fd, "w") as handle:
            handle.write(str(os.getpid()))
        return True
    return False


def prepare_in_background() -> bool:
    """Start a detached builder of the missing archive; whether one was started.

    Nothing happens when the switch is not ``auto``, an archive exists, none can be
    used (:func:`archive_blocker`), the last build failed less than a day ago
    (:func:`recent_failure`), Java is missing, the cache directory cannot be written
    or another builder is at work. The builder runs at the lowest CPU priority and
    writes nothing but the archive (or, when it fails, why).
    """
    if switch() != "auto" or archive_blocker() is not None or archive_path() is not None:
        return False
    if recent_failure() is not None:
        return False
    key = archive_key()
    if key is None:
        return False
    try:
        cache_dir().mkdir(parents=True, exist_ok=True)
        lock = _lock_path(key)
        if not _take_lock(lock):
            return False
    except OSError:
        return False
    code = "from sparkeval.jvm_archive import _build_holding; _build_holding()"
    try:
        builder = subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, SWITCH_ENV: "use"},
        )
    except OSError:
        lock.unlink(missing_ok=True)
        return False
    lock.write_text(str(builder.pid))  # the builder holds the lock from now on
    return True


def _build_holding() -> None:
    """The background builder: write the archive, then release the lock; a failure
    leaves no archive (sessions start as usual) and its reason in the failure file."""
    os.nice(19)
    key = archive_key()
    if key is None:
        return
    lock = _lock_path(key)
    try:
        if archive_path() is None:
            build_archive()
    except Exception as failure:
        with contextlib.suppress(OSError):
            _failure_file(key).write_text(f"{failure}\n")
    finally:
        lock.unlink(missing_ok=True)


@functools.cache
def prepare_at_exit() -> None:
    """Build the archive when this process exits, if it is missing (registered once)."""
    if switch() == "auto":
        atexit.register(prepare_in_background)


def remove_archives() -> list[Path]:
    """Delete every archive in the cache directory (any Java or pyspark) and the
    reasons of failed builds; the archives' paths."""
    directory = cache_dir()
    if not directory.is_dir():
        return []
    removed = sorted(directory.glob("jvm-classes-*.jsa"))
    for path in removed:
        path.unlink()
    for owner in directory.glob("jvm-classes-*.jars"):
        owner.unlink()
    for failure in directory.glob(".jvm-classes-*.failed"):
        failure.unlink()  # the next run may try again
    return removed
