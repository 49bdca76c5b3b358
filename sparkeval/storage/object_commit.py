"""Outputs on object stores (S3, GCS, Azure, HDFS through pyarrow): the writer lock and
the commit, without a rename.

An object store replaces one object atomically but has no rename of a directory, so
the local protocol (stage, then one rename) cannot be used. Instead, for ``--out
s3://b/eval``:

1. **Lock.** A writer puts a claim ``s3://b/.eval.lock/HOST-PID-RANDOM`` and lists the
   claims: it holds the lock only when its own is the only live one; otherwise it
   deletes its claim and is refused (without ``--overwrite``) or waits and tries
   again. Two writers that race both see both claims, and both back off; with the
   read-after-write listing S3, GCS and Azure guarantee, two writers never both hold
   it. A holder renews its claim every :data:`RENEW_S`; a claim not renewed for
   :data:`LEASE_S` (a killed writer's), or one of a dead process of this host, is
   removed by the next writer.
2. **Stage.** The job writes its files into a local staging directory (every executor
   of a local master sees it; on a cluster with a shared handoff directory it lies
   there), and the driver uploads them to ``s3://b/.eval.staging-TOKEN/``. On a
   cluster without one, the executors write their parts of a table straight into
   that prefix, each under its partition's name
   (:mod:`sparkeval.storage.executor_parts`). Then the driver writes a manifest
   ``_SUCCESS`` there: the generation token, every file with its size, and the staged
   name of each part that the swap copies under its final name (``sources``). An
   interrupted job or upload leaves the previous output untouched.
3. **Swap.** An intent ``s3://b/.eval.swap`` names the staged generation; then the old
   ``_SUCCESS`` is deleted, each staged file is copied into place (server-side), the
   old files the new manifest does not list are deleted, and the new manifest is
   copied to ``s3://b/eval/_SUCCESS`` last; the staging prefix and the intent go.
4. **Recovery.** Holding the lock, a writer first finishes an interrupted swap (an
   intent whose staging is complete is rolled forward) and deletes staging prefixes
   of writers that died before theirs was complete.

What a reader checks: ``OUT/_SUCCESS`` exists. Read it, read the files it lists, read it
again: the same generation both times means no swap happened in between, so the
files were of one complete output.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from sparkeval import faults
from sparkeval.errors import ConfigError
from sparkeval.storage import files
from sparkeval.storage.uris import join, name, parent

SUCCESS_MARKER = "_SUCCESS"
#: seconds after which a claim that was not renewed is a dead writer's
LEASE_S = 60.0
#: seconds between renewals of a held claim
RENEW_S = 15.0
#: parallel uploads and copies
TRANSFERS = 8


def _lock_dir(target: str) -> str:
    return join(parent(target), f".{name(target)}.lock")


def _intent(target: str) -> str:
    return join(parent(target), f".{name(target)}.swap")


def _staging(target: str, token: str) -> str:
    return join(parent(target), f".{name(target)}.staging-{token}")


def _host() -> str:
    from sparkeval.scratch import host_name

    return host_name()


def _claims(lock_dir: str) -> list[tuple[str, int | None]]:
    """``(claim, modification time in ns)`` of every claim in the lock directory."""
    found = []
    for path in files.list_files(lock_dir):
        _, mtime = files.stat(path)
        found.append((path, mtime))
    return found


def _stale(claim: str, mtime: int | None, now_ns: int | None) -> bool:
    """A claim of a dead process of this host, or one not renewed within the lease."""
    from sparkeval.scratch import process_alive

    host, _, rest = name(claim).rpartition("-")[0].rpartition("-")
    pid = rest
    if host == _host() and pid.isdigit() and not process_alive(int(pid)):
        return True
    return mtime is not None and now_ns is not None and now_ns - mtime > LEASE_S * 1e9


def _holder(claim: str) -> str:
    try:
        return files.read_bytes(claim).decode(errors="replace").strip() or "another process"
    except OSError:
        return "another process"


@contextmanager
def claim_remote_output(out: str, overwrite: bool) -> Iterator[None]:
    """Hold the writer lock of a remote ``out`` (module docstring, step 1), finishing a
    dead writer's swap first; with ``overwrite`` wait for another holder, else refuse.

    Raises:
        ConfigError: another writer holds it and ``overwrite`` is not set, or the output
            exists and is not empty and ``overwrite`` is not set.
    """
    lock_dir = _lock_dir(out)
    token = f"{_host()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    mine = join(lock_dir, token)
    body = f"process {os.getpid()} on {socket.gethostname()}\n".encode()
    announced = False
    while True:
        files.write_bytes(mine, body)
        claims = _claims(lock_dir)
        now = dict(claims).get(mine)
        others = []
        for claim, mtime in claims:
            if claim == mine:
                continue
            if _stale(claim, mtime, now):
                files.delete_file(claim)
            else:
                others.append(claim)
        if not others:
            break
        holder = _holder(others[0])
        files.delete_file(mine)
        if not overwrite:
            raise ConfigError(
                f"output directory {out} is being written by {holder}; wait for it, "
                "choose another --out, or pass --overwrite to replace its output after it"
            )
        if not announced:
            from sparkeval.status import status

            status(f"waiting for {holder} to finish writing {out}")
            announced = True
        time.sleep(random.uniform(0.5, 1.5))
    stop = threading.Event()
    renewal = threading.Thread(target=_renew, args=(mine, body, stop), daemon=True)
    renewal.start()
    try:
        recover(out)
        if not overwrite and visible_entries(out):
            raise ConfigError(
                f"output directory {out} already exists and is not empty; "
                "pass --overwrite to replace it"
            )
        yield
    finally:
        stop.set()
        renewal.join()
        files.delete_file(mine)


def probe_remote_lock(out: str) -> None:
    """Fail as a real run would if a live writer holds the lock of ``out``; writes nothing.

    Raises:
        ConfigError: naming the holder.
    """
    claims = _claims(_lock_dir(out))
    newest = max((m for _, m in claims if m is not None), default=None)
    now = max(newest or 0, time.time_ns())
    for claim, mtime in claims:
        if not _stale(claim, mtime, now):
            raise ConfigError(f"output directory {out} is being written by {_holder(claim)}")


def _renew(claim: str, body: bytes, stop: threading.Event) -> None:
    while not stop.wait(RENEW_S):
        with contextlib.suppress(OSError):  # the next renewal tries again
            files.write_bytes(claim, body)


def visible_entries(out: str) -> list[str]:
    """The files of an output, without hidden (``.``) and ``_`` names at its top."""
    if files.kind(out) != "directory":
        return []
    base = out.rstrip("/") + "/"
    return [
        p
        for p in files.list_files(out, recursive=True)
        if not p[len(base) :].startswith((".", "_"))
    ]


def _manifest(path: str) -> dict | None:
    try:
        return json.loads(files.read_bytes(path))
    except (OSError, ValueError):
        return None


def recover(out: str) -> list[str]:
    """Finish a dead writer's swap, remove dead writers' staging; returns what was removed.

    Called with the lock held, so every staging prefix and intent found is a dead
    writer's.
    """
    removed = []
    intent = _manifest(_intent(out))
    if intent is not None:
        staging = _staging(out, intent["generation"])
        staged = _manifest(join(staging, SUCCESS_MARKER))
        if staged is not None:
            _swap(staging, out, staged)
        files.delete_file(_intent(out))
    prefix = f".{name(out)}.staging-"
    for path, is_file in files.list_entries(parent(out)):
        if not is_file and name(path).startswith(prefix):
            files.delete_tree(path)
            removed.append(path)
    return removed


def new_generation() -> str:
    """A token naming an output's new generation (its staging prefix and manifest)."""
    return uuid.uuid4().hex


def staging_prefix(out: str, token: str) -> str:
    """Where the generation ``token`` of ``out`` is staged before the swap."""
    return _staging(out, token)


def commit_directory(
    local: Path,
    out: str,
    token: str | None = None,
    staged: Mapping[str, tuple[str, int]] | None = None,
) -> None:
    """Upload a complete local staging directory and put it in place of ``out``
    (module docstring, steps 2 and 3). The caller holds the lock.

    Args:
        local: the driver's staging directory.
        out: the remote output.
        token: the generation (:func:`new_generation`) whose staging prefix
            (:func:`staging_prefix`) the executors may already have written into.
        staged: files already in that prefix: final name -> (staged name, size)
            (:class:`sparkeval.storage.executor_parts.ExecutorStaging`'s parts).
    """
    token = token or new_generation()
    staging = _staging(out, token)
    staged = dict(staged or {})
    local_files = sorted(p for p in local.rglob("*") if p.is_file() and p.name != SUCCESS_MARKER)
    relative = [p.relative_to(local).as_posix() for p in local_files]
    try:
        with ThreadPoolExecutor(TRANSFERS) as pool:
            list(
                pool.map(
                    lambda pair: files.copy_file(str(pair[0]), join(staging, pair[1])),
                    zip(local_files, relative, strict=True),
                )
            )
        sizes = {r: p.stat().st_size for r, p in zip(relative, local_files, strict=True)}
        sizes.update({final: size for final, (_, size) in staged.items()})
        manifest: dict = {"generation": token, "files": sizes}
        sources = {final: name for final, (name, _) in staged.items() if final != name}
        if sources:
            manifest["sources"] = sources
        files.write_bytes(join(staging, SUCCESS_MARKER), _encode(manifest))
    except BaseException:
        files.delete_tree(staging)
        raise
    faults.at_swap("staged")
    files.write_bytes(_intent(out), _encode({"generation": token}))
    _swap(staging, out, manifest)
    files.delete_file(_intent(out))


def _encode(payload: dict) -> bytes:
    return (json.dumps(payload, indent=2, sort_keys=True) + "\n").encode()


def _swap(staging: str, out: str, manifest: dict) -> None:
    """Replace the output's files with the staged ones; ``_SUCCESS`` goes first and
    comes back last, so no reader takes a mix for a complete output."""
    files.delete_file(join(out, SUCCESS_MARKER))
    faults.at_swap("retired")
    listed = manifest["files"]
    sources = manifest.get("sources", {})  # parts staged under their task's name

    def place(relative: str) -> None:
        files.copy_file(join(staging, sources.get(relative, relative)), join(out, relative))

    with ThreadPoolExecutor(TRANSFERS) as pool:
        list(pool.map(place, sorted(listed)))
    base = out.rstrip("/") + "/"
    for path in files.list_files(out, recursive=True) if files.kind(out) else []:
        if path[len(base) :] not in listed and name(path) != SUCCESS_MARKER:
            files.delete_file(path)
    files.copy_file(join(staging, SUCCESS_MARKER), join(out, SUCCESS_MARKER))
    faults.at_swap("placed")
    files.delete_tree(staging)
