"""A real S3-protocol server for the storage tests: moto's HTTP server on 127.0.0.1.

The server runs as its own process (``python -m moto.server``) on a free loopback
port for the whole test session; nothing in any process is patched. Buckets are made
through pyarrow's own S3 client, and jobs get an environment in which the standard
AWS variables point at the server and nothing else: no other credentials, no other
store's settings, and ``AWS_EC2_METADATA_DISABLED=true`` so that no AWS client ever
asks the instance metadata service (no call leaves 127.0.0.1).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.jobs import job_env

# this process's own AWS clients never ask the instance metadata service either
os.environ["AWS_EC2_METADATA_DISABLED"] = "true"

#: the key pair every job uses (moto accepts any; they are only distinctive)
ACCESS_KEY = "sparkeval-test-access"
SECRET_KEY = "sparkeval-test-secret-0a1b2c3d4e"

#: variables of any store's settings or credentials, removed from every job's environment
_STORE_PREFIXES = ("AWS_", "GOOGLE_", "GCE_", "CLOUDSDK_", "AZURE_", "MSI_", "IDENTITY_")
_STORE_NAMES = (
    "STORAGE_EMULATOR_HOST",
    "HADOOP_HOME",
    "HADOOP_CONF_DIR",
    "ARROW_LIBHDFS_DIR",
    "CLASSPATH",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "http_proxy",
    "https_proxy",
)


def storeless_env(**extra: str) -> dict[str, str]:
    """:func:`tests.jobs.job_env` without any store's settings or credentials, with
    ``AWS_EC2_METADATA_DISABLED=true``, then ``extra``."""
    env = {
        k: v
        for k, v in job_env().items()
        if not k.upper().startswith(_STORE_PREFIXES) and k not in _STORE_NAMES
    }
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env.update(extra)
    return env


def empty_home(directory: Path) -> dict[str, str]:
    """Variables that give a job an empty home directory (no ``~/.aws``, no gcloud
    credentials), keeping the JVM class archive of the real cache directory."""
    from sparkeval.jvm_archive import cache_dir

    directory.mkdir(parents=True, exist_ok=True)
    return {"HOME": str(directory), "SPARKEVAL_CACHE_DIR": str(cache_dir())}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class S3Server:
    """moto's S3 on ``endpoint``, with pyarrow's client for the tests' own reads."""

    endpoint: str

    def __post_init__(self) -> None:
        from pyarrow.fs import S3FileSystem

        self.filesystem = S3FileSystem(
            endpoint_override=self.endpoint,
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            region="us-east-1",
            allow_bucket_creation=True,
            allow_bucket_deletion=True,
        )

    def bucket(self, label: str = "b") -> str:
        """A new empty bucket; returns its name."""
        name = f"{label}-{uuid.uuid4().hex[:10]}".lower()
        self.filesystem.create_dir(name)
        return name

    def env(self, **extra: str) -> dict[str, str]:
        """A job's environment: the standard AWS variables for this server, nothing else."""
        return storeless_env(
            AWS_ENDPOINT_URL=self.endpoint,
            AWS_ACCESS_KEY_ID=ACCESS_KEY,
            AWS_SECRET_ACCESS_KEY=SECRET_KEY,
            AWS_REGION="us-east-1",
            **extra,
        )

    @staticmethod
    def _key(uri: str) -> str:
        scheme, _, rest = uri.partition("://")
        assert scheme in ("s3", "s3a"), uri
        return rest.rstrip("/")

    def put(self, uri: str, data: bytes) -> None:
        with self.filesystem.open_output_stream(self._key(uri)) as stream:
            stream.write(data)

    def upload(self, local: Path, uri: str) -> None:
        """Upload a file, or every file below a directory, to ``uri``."""
        if local.is_file():
            self.put(uri, local.read_bytes())
            return
        for path in sorted(p for p in local.rglob("*") if p.is_file()):
            self.put(f"{uri.rstrip('/')}/{path.relative_to(local).as_posix()}", path.read_bytes())

    def get(self, uri: str) -> bytes:
        with self.filesystem.open_input_stream(self._key(uri)) as stream:
            return stream.read()

    def exists(self, uri: str) -> bool:
        from pyarrow.fs import FileType

        return self.filesystem.get_file_info(self._key(uri)).type != FileType.NotFound

    def files(self, uri: str) -> dict[str, int]:
        """{path relative to ``uri``: size} of every object below ``uri``."""
        from pyarrow.fs import FileSelector, FileType

        base = self._key(uri)
        selector = FileSelector(base, allow_not_found=True, recursive=True)
        return {
            info.path[len(base) + 1 :]: info.size
            for info in self.filesystem.get_file_info(selector)
            if info.type == FileType.File
        }

    def names(self, uri: str) -> list[str]:
        """The names directly below ``uri`` (objects and prefixes)."""
        from pyarrow.fs import FileSelector

        base = self._key(uri)
        infos = self.filesystem.get_file_info(FileSelector(base, allow_not_found=True))
        return sorted(info.path[len(base) + 1 :] for info in infos)

    def download(self, uri: str, local: Path) -> Path:
        """Copy every object below ``uri`` into ``local``; returns ``local``."""
        for relative in self.files(uri):
            target = local / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(self.get(f"{uri.rstrip('/')}/{relative}"))
        return local


def _wait_until_up(endpoint: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"moto's server ended: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(endpoint + "/moto-api/", timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline:
                tail = log.read_text()[-2000:]
                raise RuntimeError(f"moto's server did not answer: {tail}") from None
            time.sleep(0.2)


@pytest.fixture(scope="session")
def s3(tmp_path_factory) -> Iterator[S3Server]:
    """moto's S3 server on a free port of 127.0.0.1, for the whole test session."""
    pytest.importorskip("moto.server", reason="moto[server] is not installed")
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("moto") / "server.log"
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=storeless_env(),
        )
    try:
        _wait_until_up(endpoint, process, log)
        yield S3Server(endpoint)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
