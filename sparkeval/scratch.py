"""Scratch directories of this process, and the removal of those a dead process left.

An evaluation on a local master keeps rows in scratch directories under
``spark.local.dir`` (the buckets handed to the evaluation, the evaluated rows) and
copies piped inputs to the system's temporary directory. It removes them when it ends,
even when it fails; a process that is killed (``SIGKILL``, the machine's out-of-memory
killer, a pipeline's timeout) cannot, and its directories would stay until the disk
fills. So each is named with its host and process id, ``PREFIX-HOST-PID-RANDOM``, and
the first scratch directory a process makes in a parent removes that parent's scratch
directories of processes on this host that no longer exist. Those of live processes,
of other hosts, and names this module did not make are left alone.

Example: ``sparkeval-handoff-node7-4242-k3j_x9q1`` is removed by the next evaluation on
``node7`` once process 4242 has ended.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile
import threading
from pathlib import Path

#: directories of the rows handed to the evaluation by bucket
HANDOFF_PREFIX = "sparkeval-handoff-"
#: directories of evaluated (wide) rows
RESULTS_PREFIX = "sparkeval-results-"
#: directories of copies of piped inputs
INPUTS_PREFIX = "sparkeval-inputs-"
#: local staging directories of outputs bound for a remote store
OUTPUTS_PREFIX = "sparkeval-outputs-"
#: the prefixes of every scratch directory
SCRATCH_PREFIXES = (HANDOFF_PREFIX, RESULTS_PREFIX, INPUTS_PREFIX, OUTPUTS_PREFIX)
#: the Spark setting naming a directory the driver and every executor share: the
#: evaluation's handoff files go there (and other masters than ``local`` hand them
#: over too: :mod:`sparkeval.engine.transport.local_handoff`), and so do the staged
#: files of a remote output (:func:`sparkeval.storage.targets.local_staging_root`)
SHARED_DIRECTORY_KEY = "spark.sparkeval.handoffDirectory"

_NAME = re.compile(
    r"^(?P<prefix>" + "|".join(re.escape(p) for p in SCRATCH_PREFIXES) + r")"
    r"(?P<host>[A-Za-z0-9_]+)-(?P<pid>\d+)-[A-Za-z0-9_]+$"
)
_swept: set[str] = set()
_sweeping = threading.Lock()


def host_name() -> str:
    """This host's name with every character but letters and digits made ``_``."""
    return re.sub(r"[^A-Za-z0-9]", "_", socket.gethostname()) or "host"


def process_alive(pid: int) -> bool:
    """Whether a process with this id exists on this host."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, owned by another user
        return True
    return True


def new_scratch_directory(prefix: str, parent: str | None = None) -> Path:
    """A new directory ``PREFIX-HOST-PID-RANDOM`` under ``parent`` (None: the system's
    temporary directory), after the parent's first sweep by this process
    (:func:`remove_dead_scratch`)."""
    if prefix not in SCRATCH_PREFIXES:
        raise ValueError(f"scratch prefix must be one of {SCRATCH_PREFIXES}, got {prefix!r}")
    where = parent or tempfile.gettempdir()
    with _sweeping:
        if where not in _swept:
            _swept.add(where)
            remove_dead_scratch(where)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{host_name()}-{os.getpid()}-", dir=where))


def remove_dead_scratch(parent: str | os.PathLike[str]) -> list[Path]:
    """Remove the scratch directories in ``parent`` that processes of this host left
    when they ended without removing them; returns what was removed."""
    host = host_name()
    removed = []
    try:
        entries = list(os.scandir(parent))
    except OSError:  # a parent that cannot be listed holds nothing to remove
        return []
    for entry in entries:
        found = _NAME.match(entry.name)
        if found is None or found["host"] != host:
            continue
        if not entry.is_dir(follow_symlinks=False) or process_alive(int(found["pid"])):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed


_copies_lock = threading.Lock()
_copies_directory: Path | None = None


def copies_directory() -> Path:
    """This process's one directory of input copies (piped inputs, inputs copied from a
    store), made on first use and removed when the process exits."""
    global _copies_directory
    with _copies_lock:
        if _copies_directory is None:
            import atexit

            _copies_directory = new_scratch_directory(INPUTS_PREFIX)
            atexit.register(shutil.rmtree, _copies_directory, ignore_errors=True)
        return _copies_directory
