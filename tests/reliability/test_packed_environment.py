"""sparkeval shipped to executors that do not have it, as the user guide's "Running on a
cluster" says: the archive ``sparkeval pack`` writes, given to the real ``spark-submit``
with ``--archives ARCHIVE#environment`` and ``spark.pyspark.python=./environment/bin/python``,
on a standalone cluster (loopback) whose workers' Python has neither sparkeval nor
pyspark. The driver runs here (client mode) on the test interpreter; the executors'
Python workers run the archive's interpreter, and nothing on their path but the
archive offers sparkeval. The results equal local mode's.

The same archive, with pyspark and py4j beside it (what ``pip install pyspark`` brings
without its ``connect`` extra), is also a real machine without Spark Connect's client
libraries: asking it for Spark Connect is one line naming the extra.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
import venv
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import import_module, metadata
from pathlib import Path

import pytest
from isal import igzip

from sparkeval.cli import main
from sparkeval.errors import EXIT_INPUT, EXIT_OK
from tests.cluster import (
    SUBMIT_CONF,
    StandaloneCluster,
    cluster_env,
    spark_class,
    spark_submit_launcher,
)
from tests.conftest import ROOT
from tests.jobs import CLI, MEASURES, assert_same_results, collection, run_job

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ALIAS = "environment"
SITE = f"lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"


@pytest.fixture(scope="session")
def packed(tmp_path_factory) -> Path:
    """The archive ``sparkeval pack`` writes (once per test session)."""
    pytest.importorskip("venv_pack", reason="venv-pack is not installed (the test extra has it)")
    directory = tmp_path_factory.mktemp("packed")
    archive = directory / "sparkeval-env.tar.gz"
    done = run_job([*CLI, "pack", "--out", str(archive)], directory, timeout=900)
    assert done.returncode == EXIT_OK, done.stderr[-3000:]
    assert f"--archives '{archive}#{ALIAS}'" in done.stdout, done.stdout
    assert sorted(p.name for p in directory.iterdir()) == [archive.name]  # nothing partial
    return archive


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> str:
    """A Python with neither sparkeval nor pyspark: a new virtual environment of the
    base interpreter, the default Python of the cluster's workers."""
    directory = tmp_path_factory.mktemp("bare") / "python"
    venv.EnvBuilder(symlinks=True).create(directory)
    return str(directory / "bin" / "python")


@pytest.fixture(scope="module")
def bare_cluster(tmp_path_factory, bare_python) -> Iterator[StandaloneCluster]:
    """A master and two one-core workers on 127.0.0.1 whose Python is ``bare_python``."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java is not installed; Spark tests need Java 17+")
    launcher = spark_class()
    if launcher is None:
        pytest.skip("no spark-class launcher in this pyspark installation")
    env = cluster_env(PYSPARK_PYTHON=bare_python)
    cluster = StandaloneCluster(launcher, tmp_path_factory.mktemp("bare-cluster"), env)
    try:
        yield cluster.start(workers=2)
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Path:
    """The small graded collection's job config (three TREC runs, read by the workers)."""
    return collection(tmp_path_factory.mktemp("packed-job") / "data")


@pytest.fixture(scope="module")
def local_result(job, spark, tmp_path_factory) -> Path:
    """The same evaluation in local mode (in process)."""
    out = tmp_path_factory.mktemp("packed-local") / "out"
    assert main(["evaluate", "--config", str(job), "--out", str(out)]) == EXIT_OK
    return out


def test_the_workers_python_has_neither_sparkeval_nor_pyspark(bare_python, tmp_path) -> None:
    env = cluster_env(PYSPARK_PYTHON=bare_python)
    for module in ("sparkeval", "pyspark"):
        done = subprocess.run(
            [bare_python, "-c", f"import {module}"],
            cwd=tmp_path,  # not the checkout, which ``-c`` would put on the path
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode != 0 and f"No module named '{module}'" in done.stderr


def test_the_archive_holds_sparkeval_and_the_installed_versions_of_its_dependencies(
    packed,
) -> None:
    dist_info = f"{SITE}/sparkeval-"  # sparkeval's dist-info
    names, texts = [], {}
    # one pass over the stream, decompressed by ISA-L (several times faster than zlib)
    with igzip.open(packed) as stream, tarfile.open(fileobj=stream, mode="r|") as archive:
        for member in archive:
            names.append(member.name)
            if member.isfile() and member.name.startswith(("pyvenv.cfg", "bin/", dist_info)):
                texts[member.name] = archive.extractfile(member).read()  # type: ignore[union-attr]
    assert f"{SITE}/sparkeval/evaluation/job.py" in names
    assert f"{SITE}/sparkeval/log4j2.properties" in names  # package data
    for dependency in ("numpy", "pandas", "pyarrow", "datasketch", "scipy", "isal", "matplotlib"):
        assert f"{SITE}/{dependency}-{metadata.version(dependency)}.dist-info/METADATA" in names
    tops = {name.split("/")[3] for name in names if name.startswith(f"{SITE}/") and name != SITE}
    assert not {t for t in tops if t.startswith(("pyspark", "py4j"))}, tops
    assert not [name for name in names if name.endswith(".pth") or "__editable__" in name]
    assert not [name for name in names if "__pycache__" in name]  # compiled on the executors
    # no path of the machine that built it: the checkout, the build directory
    machine = (str(ROOT).encode(), b"sparkeval-pack-")
    leaks = [name for name, text in texts.items() if any(path in text for path in machine)]
    assert not leaks, leaks
    assert b"home = " in texts["pyvenv.cfg"]


@dataclass(frozen=True)
class PythonProcess:
    """A Python process an executor launched: its command line, working directory and
    ``PYTHONPATH``."""

    argv: tuple[str, ...]
    cwd: Path
    pythonpath: tuple[str, ...]


@contextmanager
def watching_python_workers(cluster: StandaloneCluster) -> Iterator[list[PythonProcess]]:
    """Collect, while the block runs, the Python daemons and workers that the cluster's
    executors launch (they fork from a daemon started as ``PYTHON -m ... pyspark.worker``)."""
    seen: dict[int, PythonProcess] = {}
    stop = threading.Event()

    def look() -> None:
        while not stop.wait(0.25):
            for pid in cluster.launched():
                if pid not in seen:
                    found = _python_worker(pid)
                    if found is not None:
                        seen[pid] = found

    watcher = threading.Thread(target=look, daemon=True)
    watcher.start()
    found: list[PythonProcess] = []
    try:
        yield found
    finally:
        stop.set()
        watcher.join()
        found.extend(seen.values())


def _python_worker(pid: int) -> PythonProcess | None:
    proc = Path(f"/proc/{pid}")
    try:
        argv = tuple(a.decode() for a in (proc / "cmdline").read_bytes().split(b"\0") if a)
        if "pyspark.worker" not in argv:
            return None
        environ = (proc / "environ").read_bytes().split(b"\0")
        cwd = Path(os.readlink(proc / "cwd"))
    except OSError:  # ended meanwhile
        return None
    paths = [e[len(b"PYTHONPATH=") :].decode() for e in environ if e.startswith(b"PYTHONPATH=")]
    pythonpath = tuple(p for p in (paths[0].split(os.pathsep) if paths else []) if p)
    return PythonProcess(argv, cwd, pythonpath)


def test_executors_without_sparkeval_run_it_from_the_packed_environment(
    bare_cluster, bare_python, packed, job, local_result, tmp_path
) -> None:
    out = tmp_path / "out"
    conf = [item for setting in SUBMIT_CONF for item in ("--conf", setting)]
    submit = [
        str(spark_submit_launcher()),
        *("--master", bare_cluster.url, *conf),
        *("--archives", f"{packed}#{ALIAS}"),
        *("--conf", f"spark.pyspark.python=./{ALIAS}/bin/python"),
        *("--conf", f"spark.pyspark.driver.python={sys.executable}"),
        *(str(ROOT / "jobs" / "evaluate.py"), "--config", str(job), "--out", str(out)),
    ]
    # the driver (here) runs this checkout; no variable gives it to the executors
    env = cluster_env(PYSPARK_PYTHON=bare_python)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env["PYTHONPATH"]) if p)
    with watching_python_workers(bare_cluster) as workers:
        done = subprocess.run(
            submit, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
        )
    output = done.stdout + done.stderr
    assert done.returncode == EXIT_OK, output[-4000:]
    # worker code evaluated the inputs: the workers read the TREC files themselves
    assert "sparkeval: inputs read by the Python workers" in output, output[-4000:]
    assert_same_results(out, local_result)
    for values in json.loads((out / "summary.json").read_text())["runs"].values():
        assert sorted(values["measures"]) == sorted(MEASURES.split(","))
    assert workers, "no Python worker of an executor was seen"
    for worker in workers:
        assert worker.argv[0] == f"./{ALIAS}/bin/python", worker
        assert (worker.cwd / ALIAS / SITE / "sparkeval" / "__init__.py").is_file(), worker
        assert bare_cluster.directory in worker.cwd.parents, worker
        # nothing else on the workers' path offers sparkeval: not the checkout, not a
        # site-packages directory of this machine, not the working directory
        places = (*worker.pythonpath, str(worker.cwd))
        assert not [p for p in places if Path(p, "sparkeval").exists()], worker


@pytest.fixture(scope="module")
def without_connect(packed, tmp_path_factory) -> tuple[str, dict[str, str]]:
    """A Python with sparkeval and ``pip install pyspark`` without its ``connect`` extra:
    the packed environment (every dependency of sparkeval, no pyspark) with pyspark and
    py4j, the two packages that install brings, on its path; no grpc, no protobuf.

    Returns the interpreter and the environment to run it in.
    """
    directory = tmp_path_factory.mktemp("without-connect")
    with igzip.open(packed) as stream, tarfile.open(fileobj=stream, mode="r|") as archive:
        archive.extractall(directory / "env", filter="tar")
    plain_pyspark = directory / "pyspark-only"
    plain_pyspark.mkdir()
    for package in ("pyspark", "py4j"):
        (plain_pyspark / package).symlink_to(Path(import_module(package).__file__).parent)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_REMOTE")}
    env["PYTHONPATH"] = str(plain_pyspark)
    return str(directory / "env" / "bin" / "python"), env


def test_the_environment_without_the_connect_extra_has_pyspark_but_no_grpc(
    without_connect, tmp_path
) -> None:
    python, env = without_connect
    for module, present in (("pyspark.sql", True), ("sparkeval", True), ("grpc", False)):
        done = subprocess.run(
            [python, "-c", f"import {module}"], cwd=tmp_path, env=env, capture_output=True
        )
        assert (done.returncode == 0) == present, (module, done.stderr[-2000:])


@pytest.mark.parametrize("asked_by", ["option", "variable", "config"])
def test_spark_connect_without_the_connect_extra_is_one_line_naming_the_extra(
    without_connect, asked_by: str, tmp_path: Path
) -> None:
    # the refusal comes before any connection: nothing listens at this address
    python, env = without_connect
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 2.0 r\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    argv = [python, "-m", "sparkeval.cli", "evaluate", "--run", "run.txt", "--qrels"]
    argv += ["qrels.txt", "--measures", "P@1", "--out", "out"]
    remote = "sc://127.0.0.1:9"
    if asked_by == "option":
        argv += ["--remote", remote]
    elif asked_by == "variable":
        env = {**env, "SPARK_REMOTE": remote}
    else:
        (tmp_path / "job.yaml").write_text(f"remote: '{remote}'\n")
        argv += ["--config", "job.yaml"]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == EXIT_INPUT, done.stderr[-3000:]
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Spark Connect needs pyspark's connect extra" in lines[0], lines
    assert "pip install 'pyspark[connect]'" in lines[0], lines
    assert "grpc" in lines[0], lines  # the missing library, as pyspark names it
    assert not (tmp_path / "out").exists()
