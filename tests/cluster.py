"""A Spark standalone cluster on loopback: one master and workers, started with the
pyspark package's own launcher (``spark-class``) and stopped without leftovers.

Every daemon runs in its own process group, so stopping a worker also stops the
executor JVM and Python workers it launched.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


def spark_class() -> Path | None:
    """The ``spark-class`` launcher beside the interpreter, or inside the pyspark package."""
    beside = Path(sys.executable).parent / "spark-class"
    if beside.exists():
        return beside
    import pyspark

    packaged = Path(pyspark.__file__).parent / "bin" / "spark-class"
    return packaged if packaged.exists() else None


def spark_submit_launcher() -> Path:
    """pyspark's ``spark-submit``: beside the interpreter, else inside the pyspark package."""
    beside = Path(sys.executable).parent / "spark-submit"
    if beside.exists():
        return beside
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-submit"


def cluster_env(**extra: str) -> dict[str, str]:
    """Environment of daemons and submissions: loopback, this interpreter for Python
    workers, and *not* this checkout on the path (the code travels in ``--py-files``)."""
    from tests.conftest import ROOT
    from tests.jobs import job_env

    env = job_env(**extra)
    kept = [
        p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and Path(p).resolve() != ROOT
    ]
    env["PYTHONPATH"] = os.pathsep.join(kept)
    env.setdefault("SPARK_DAEMON_MEMORY", "512m")
    return env


#: settings of every test submission to the cluster: loopback, no UI, small executors
SUBMIT_CONF = (
    "spark.driver.host=127.0.0.1",
    "spark.driver.bindAddress=127.0.0.1",
    "spark.executor.memory=512m",
    "spark.ui.enabled=false",
)


def spark_submit(url: str, package: Path, *options: str) -> list[str]:
    """``spark-submit`` to the master ``url`` with the package zip in ``--py-files``,
    :data:`SUBMIT_CONF` and ``options`` (more spark-submit options); the job file and
    its arguments follow."""
    conf = [item for setting in SUBMIT_CONF for item in ("--conf", setting)]
    submit = str(spark_submit_launcher())
    return [submit, "--master", url, "--py-files", str(package), *conf, *options]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def build_zip(root: Path, target: Path) -> Path:
    """Zip the package as the guide says: ``python -m zipfile -c sparkeval.zip sparkeval``."""
    subprocess.run(
        [sys.executable, "-m", "zipfile", "-c", str(target), "sparkeval"], cwd=root, check=True
    )
    return target


@dataclass
class StandaloneCluster:
    """A running master with its workers; ``url`` is the ``spark://`` master URL."""

    launcher: Path
    directory: Path
    env: dict[str, str]
    worker_memory: str = "1g"
    port: int = field(default_factory=free_port)
    ui_port: int = field(default_factory=free_port)
    master: subprocess.Popen | None = None
    workers: list[subprocess.Popen] = field(default_factory=list)
    _stopped: list[subprocess.Popen] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _launch(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.directory / f"{name}.log", "ab")  # noqa: SIM115 (closed with the process)
        try:
            return subprocess.Popen(
                [str(self.launcher), *args],
                cwd=self.directory,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            log.close()

    def start(self, workers: int = 2, timeout: float = 240) -> StandaloneCluster:
        """Start the master and ``workers`` workers; wait until all are registered."""
        self.master = self._launch(
            "master",
            [
                MASTER_CLASS,
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--webui-port",
                str(self.ui_port),
            ],
        )
        # the workers bind random ports: started only once the master holds its own
        # two, none of them can take the web UI port this harness reads the status from
        self.wait_for_master(timeout)
        for _ in range(workers):
            self.start_worker()
        self.wait_for_workers(workers, timeout)
        return self

    def start_worker(self) -> subprocess.Popen:
        """Start one more worker (1 core, ``worker_memory``) with its own work directory."""
        index = len(self.workers) + len(self._stopped)
        work = self.directory / f"worker-{index}"
        work.mkdir()
        worker = self._launch(
            f"worker-{index}",
            [
                WORKER_CLASS,
                self.url,
                "--cores",
                "1",
                "--memory",
                self.worker_memory,
                "--host",
                "127.0.0.1",
                "--webui-port",
                "0",
                "--work-dir",
                str(work),
            ],
        )
        self.workers.append(worker)
        return worker

    def status(self) -> dict:
        """The master's status page as JSON (``workers``, ``activeapps``, ...)."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as page:
            return json.load(page)

    def alive_workers(self) -> int:
        try:
            workers = self.status().get("workers", [])
        except OSError:
            return 0
        return sum(1 for w in workers if w.get("state") == "ALIVE")

    def wait_for_master(self, timeout: float) -> None:
        """Wait until the master's status page answers, as this master's."""

        def answers() -> bool:
            try:
                page = self.status()
            except (OSError, ValueError):
                return False
            if page.get("url") != self.url:  # another process holds the port
                raise RuntimeError(
                    f"port {self.ui_port} answers for {page.get('url') or 'another service'}, "
                    f"not this master; see {self.directory}/master.log"
                )
            return True

        failure = f"the Spark master's status page (port {self.ui_port}) did not answer"
        self._wait(answers, timeout, failure)

    def wait_for_workers(self, count: int, timeout: float) -> None:
        self._wait(
            lambda: self.alive_workers() >= count, timeout, f"{count} workers did not register"
        )

    def _wait(self, ready: Callable[[], bool], timeout: float, failure: str) -> None:
        """Poll ``ready()`` until it holds; fail when a daemon exits, or with ``failure``
        after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not ready():
            if self.master is None or self.master.poll() is not None:
                raise RuntimeError(f"the Spark master exited; see {self.directory}/master.log")
            if any(w.poll() is not None for w in self.workers):
                raise RuntimeError(f"a Spark worker exited; see {self.directory}/worker-*.log")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{failure} within {timeout:.0f} s; see {self.directory}")
            time.sleep(0.25)

    def kill_worker(self, worker: subprocess.Popen) -> None:
        """SIGKILL a worker with everything it launched (a lost machine)."""
        _kill_tree(worker, signal.SIGKILL)
        self.workers.remove(worker)
        self._stopped.append(worker)

    def worker_of(self, pid: int) -> subprocess.Popen | None:
        """The worker that launched ``pid`` (an executor's Python worker), if any."""
        ancestors = set(_ancestors(pid))
        return next((w for w in self.workers if w.pid in ancestors), None)

    def launched(self) -> list[int]:
        """The ids of every live process the workers launched (executor JVMs, their
        Python daemons and workers)."""
        return [pid for worker in self.workers for pid in _descendants(worker.pid)]

    def stop(self) -> None:
        """Stop every daemon and what it launched; never leaves a JVM behind."""
        processes = [p for p in [*self.workers, *self._stopped, self.master] if p is not None]
        for process in processes:
            _kill_tree(process, signal.SIGTERM)
        for process in processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=20)
            _kill_tree(process, signal.SIGKILL)
        self.workers.clear()


def _parents() -> dict[int, int]:
    """{pid: parent pid} of every process (from /proc, else from ``ps``)."""
    parents: dict[int, int] = {}
    proc = Path("/proc")
    if proc.is_dir():
        for entry in proc.iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                # pid (comm) state ppid ...; comm may hold spaces and parentheses
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        return parents
    listing = subprocess.run(["ps", "-A", "-o", "pid=,ppid="], capture_output=True, text=True)
    for line in listing.stdout.splitlines():
        pid, ppid = line.split()
        parents[int(pid)] = int(ppid)
    return parents


def _ancestors(pid: int) -> list[int]:
    parents = _parents()
    chain = []
    while pid in parents and pid not in chain and pid > 1:
        chain.append(pid)
        pid = parents[pid]
    return chain


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _kill_tree(process: subprocess.Popen, sig: int) -> None:
    """Signal a daemon's process group and every descendant (PySpark's Python daemon
    moves its workers into a group of their own)."""
    for pid in _descendants(process.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)
    if sig == signal.SIGKILL:
        process.wait(timeout=30)
