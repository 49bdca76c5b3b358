"""Shared fixtures: one local SparkSession per test session, paths to shared data."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# sessions map a JVM class archive when there is one, but the tests' sessions never
# start the background builder (tests/engine/test_jvm_archive.py asks for it where tested)
os.environ.setdefault("SPARKEVAL_JVM_ARCHIVE", "use")
SHARED = Path(os.environ.get("SPARKEVAL_SHARED", ROOT.parent / "shared"))
TREC_DIR = SHARED / "conformance" / "trec_eval"


#: fixtures that start a JVM (a Spark session, a standalone cluster, the class-archive
#: build): a test that uses one, directly or through its fixtures, is a Spark test
JVM_FIXTURES = frozenset({"spark", "standalone_cluster", "archive"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses a JVM fixture ``spark``, so that ``-m "not spark and
    not slow"`` (the quick tier) starts no JVM through a fixture."""
    for item in items:
        if JVM_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.spark)


def shared_file(*parts: str) -> Path:
    """A file of the shared conformance data; skips the test where it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared conformance data not found at {path} (set SPARKEVAL_SHARED)")
    return path


@pytest.fixture(scope="session")
def spark():
    """A real local SparkSession: local[2], 2 shuffle partitions, UI off, UTC."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java is not installed; Spark tests need Java 17+")
    from sparkeval.spark import build_session

    local_dir = tempfile.mkdtemp(prefix="sparkeval-test-")
    session = build_session(
        master="local[2]",
        app_name="sparkeval-tests",
        conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.local.dir": local_dir,
            "spark.ui.enabled": "false",
            # saveAsTable writes here, not into the checkout
            "spark.sql.warehouse.dir": os.path.join(local_dir, "warehouse"),
        },
    )
    yield session
    session.stop()
    shutil.rmtree(local_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def standalone_cluster(tmp_path_factory):
    """A Spark standalone master and two workers (1 core, 1 GiB each) on 127.0.0.1.

    Module-scoped: tests of a module share it; a test that kills a worker starts a
    replacement.  Every daemon, executor and Python worker is stopped at teardown.
    """
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java is not installed; Spark tests need Java 17+")
    from tests.cluster import StandaloneCluster, cluster_env, spark_class

    launcher = spark_class()
    if launcher is None:
        pytest.skip("no spark-class launcher in this pyspark installation")
    cluster = StandaloneCluster(launcher, tmp_path_factory.mktemp("standalone"), cluster_env())
    try:
        yield cluster.start(workers=2)
    finally:
        cluster.stop()
