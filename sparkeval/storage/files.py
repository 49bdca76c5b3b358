"""Reading and writing files by path or URI: the operating system's calls for local
paths, the store's filesystem (:func:`sparkeval.storage.stores.filesystem_for`) for
URIs.

Example:
    >>> import tempfile, os
    >>> root = tempfile.mkdtemp()
    >>> write_bytes(os.path.join(root, "a.txt"), b"hi")
    >>> read_bytes(os.path.join(root, "a.txt")), file_size(os.path.join(root, "a.txt"))
    (b'hi', 2)
    >>> [os.path.basename(p) for p in list_files(root)], kind(root)
    (['a.txt'], 'directory')
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import IO, Any

from sparkeval.storage.stores import filesystem_for
from sparkeval.storage.uris import is_remote, join, local_path


def kind(path: str) -> str | None:
    """``file``, ``directory`` or None (nothing there)."""
    if not is_remote(path):
        local = local_path(path)
        if os.path.isdir(local):
            return "directory"
        return "file" if os.path.exists(local) else None
    import pyarrow.fs as pafs

    filesystem, inner = filesystem_for(path)
    info = filesystem.get_file_info(inner)
    if info.type == pafs.FileType.File:
        return "file"
    if info.type == pafs.FileType.Directory:
        return "directory"
    return None


def file_size(path: str) -> int:
    """The size of a file in bytes."""
    if not is_remote(path):
        return os.path.getsize(local_path(path))
    filesystem, inner = filesystem_for(path)
    size = filesystem.get_file_info(inner).size
    if size is None:
        raise FileNotFoundError(path)
    return int(size)


def stat(path: str) -> tuple[int | None, int | None]:
    """``(size, modification time in ns)`` of a file, None for what the store lacks."""
    if not is_remote(path):
        found = os.stat(local_path(path))
        return found.st_size, found.st_mtime_ns
    filesystem, inner = filesystem_for(path)
    info = filesystem.get_file_info(inner)
    return info.size, info.mtime_ns


def list_files(directory: str, recursive: bool = False) -> list[str]:
    """The files in ``directory`` (sorted paths or URIs; with ``recursive``, below it)."""
    if not is_remote(directory):
        local = local_path(directory)
        if recursive:
            found = [os.path.join(d, f) for d, _, files in os.walk(local) for f in files]
        else:
            found = [
                os.path.join(local, e)
                for e in os.listdir(local)
                if os.path.isfile(os.path.join(local, e))
            ]
        return sorted(found)
    return sorted(p for p, is_file in list_entries(directory, recursive) if is_file)


def list_entries(directory: str, recursive: bool = False) -> list[tuple[str, bool]]:
    """``(path, is a file)`` of the entries of ``directory``, sorted."""
    if not is_remote(directory):
        local = local_path(directory)
        return sorted(
            (os.path.join(local, e), os.path.isfile(os.path.join(local, e)))
            for e in os.listdir(local)
        )
    import pyarrow.fs as pafs

    filesystem, inner = filesystem_for(directory)
    selector = pafs.FileSelector(inner, allow_not_found=True, recursive=recursive)
    base = directory.rstrip("/")
    entries = []
    for info in filesystem.get_file_info(selector):
        relative = info.path[len(inner) :].strip("/") if inner else info.path.split("/", 1)[-1]
        entries.append((join(base, relative), info.type == pafs.FileType.File))
    return sorted(entries)


def open_input(path: str) -> Any:
    """A binary, seekable reader of a file (close it, or use it in ``with``)."""
    if not is_remote(path):
        return open(local_path(path), "rb")
    filesystem, inner = filesystem_for(path)
    return filesystem.open_input_file(inner)


def parquet_source(path: str) -> Any:
    """What :class:`pyarrow.parquet.ParquetFile` reads ``path`` from: the path itself when
    local (pyarrow maps it), else a random-access file of the store."""
    return local_path(path) if not is_remote(path) else open_input(path)


def read_bytes(path: str) -> bytes:
    """The whole file."""
    with open_input(path) as handle:
        return handle.read()


def write_bytes(path: str, data: bytes) -> None:
    """Write a whole file (one upload on an object store: it appears whole or not at all)."""
    if not is_remote(path):
        with open(local_path(path), "wb") as handle:
            handle.write(data)
        return
    filesystem, inner = filesystem_for(path)
    with filesystem.open_output_stream(inner) as stream:
        stream.write(data)


@contextmanager
def open_output(path: str) -> Iterator[IO[bytes]]:
    """A binary writer of a new file (an object appears when it is closed)."""
    if not is_remote(path):
        with open(local_path(path), "wb") as handle:
            yield handle
        return
    filesystem, inner = filesystem_for(path)
    with filesystem.open_output_stream(inner) as stream:
        yield stream


def delete_file(path: str) -> None:
    """Remove a file if it exists."""
    if not is_remote(path):
        with suppress(FileNotFoundError):
            os.unlink(local_path(path))
        return
    filesystem, inner = filesystem_for(path)
    with suppress(FileNotFoundError):
        filesystem.delete_file(inner)


def delete_tree(path: str) -> None:
    """Remove a directory (a prefix of an object store) and everything below it."""
    if not is_remote(path):
        import shutil

        shutil.rmtree(local_path(path), ignore_errors=True)
        return
    filesystem, inner = filesystem_for(path)
    with suppress(FileNotFoundError):
        filesystem.delete_dir(inner)


def copy_file(source: str, target: str) -> None:
    """Copy one file within a store (server-side where the store can) or from or to
    the local file system."""
    if is_remote(source) and is_remote(target):
        src_fs, src = filesystem_for(source)
        dst_fs, dst = filesystem_for(target)
        if src_fs is dst_fs:
            src_fs.copy_file(src, dst)
            return
    with open_input(source) as reader, open_output(target) as writer:
        while True:
            chunk = reader.read(8 << 20)
            if not chunk:
                break
            writer.write(chunk)
