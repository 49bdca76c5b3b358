"""The driver JVM's class archive: written by ``sparkeval jvm-archive``, mapped by local
sessions, never able to change a result or stop a session from starting."""

from __future__ import annotations

import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from tests.jobs import CLI, collection, evaluate_cmd, run_job, tree


def _need_java() -> None:
    if shutil.which("java") is None:
        pytest.skip("Java is not installed; the JVM archive needs Java 17+")


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    """A cache directory holding a freshly written archive."""
    _need_java()
    cache = tmp_path_factory.mktemp("cache")
    done = run_job([*CLI, "jvm-archive"], cache, SPARKEVAL_CACHE_DIR=str(cache))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "JVM archive written to" in done.stdout
    return cache


def _archive_file(cache: Path) -> Path:
    (path,) = cache.glob("jvm-classes-*.jsa")
    return path


def test_no_archive_means_no_options(tmp_path, monkeypatch):
    from sparkeval import jvm_archive

    monkeypatch.setenv("SPARKEVAL_CACHE_DIR", str(tmp_path))
    assert jvm_archive.java_options() == []


def test_archive_is_named_by_key_and_size(archive):
    path = _archive_file(archive)
    size = int(path.stem.rsplit("-", 1)[1])
    assert size == path.stat().st_size > 10_000_000
    assert not list(archive.glob(".*partial")), "the partial file was left behind"


def test_status_reports_the_archive_and_the_switch(archive):
    shown = run_job([*CLI, "jvm-archive", "--status"], archive, SPARKEVAL_CACHE_DIR=str(archive))
    assert "in use" in shown.stdout and _archive_file(archive).name in shown.stdout
    off = run_job(
        [*CLI, "jvm-archive", "--status"],
        archive,
        SPARKEVAL_CACHE_DIR=str(archive),
        SPARKEVAL_JVM_ARCHIVE="off",
    )
    assert "switched off" in off.stdout


def test_local_sessions_map_spark_classes_from_the_archive(archive, tmp_path):
    """HotSpot's class-load log names the archive as the source of Spark's classes."""
    log = tmp_path / "classes.log"
    script = textwrap.dedent(
        f"""
        from sparkeval.jvm_archive import java_options
        from sparkeval.spark import build_session, local_java_options

        options = [*local_java_options(), *java_options(), "-Xlog:class+load=info:file={log}"]
        assert any(o.startswith("-XX:SharedArchiveFile=") for o in options), options
        spark = build_session(
            "local[1]", conf={{"spark.driver.extraJavaOptions": " ".join(options)}}
        )
        assert spark.range(5).count() == 5
        spark.stop()
        """
    )
    done = run_job([sys.executable, "-c", script], tmp_path, SPARKEVAL_CACHE_DIR=str(archive))
    assert done.returncode == 0, done.stderr[-3000:]
    lines = log.read_text().splitlines()
    context = [line for line in lines if "org.apache.spark.SparkContext " in line]
    assert context and "shared objects file (top)" in context[0], context


def test_results_are_identical_with_and_without_the_archive(archive, tmp_path):
    config = collection(tmp_path / "data")
    outputs = {}
    for switch in ("on", "off"):
        out = tmp_path / f"out-{switch}"
        done = run_job(
            evaluate_cmd(config, out),
            tmp_path,
            SPARKEVAL_CACHE_DIR=str(archive),
            SPARKEVAL_JVM_ARCHIVE=switch,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        outputs[switch] = tree(out)
    assert outputs["on"] == outputs["off"]


def test_a_cut_short_archive_is_not_used(archive, tmp_path):
    """The JVM crashes on a truncated archive: sparkeval must not hand it one."""
    damaged = tmp_path / "cache"
    damaged.mkdir()
    original = _archive_file(archive)
    with original.open("rb") as source:
        (damaged / original.name).write_bytes(source.read(1_000_000))
    config = collection(tmp_path / "data")
    done = run_job(
        evaluate_cmd(config, tmp_path / "out"), tmp_path, SPARKEVAL_CACHE_DIR=str(damaged)
    )
    assert done.returncode == 0, done.stderr[-3000:]
    status = run_job([*CLI, "jvm-archive", "--status"], tmp_path, SPARKEVAL_CACHE_DIR=str(damaged))
    assert "no JVM archive" in status.stdout


def test_remove_deletes_the_archives(archive, tmp_path):
    copy = tmp_path / "cache"
    copy.mkdir()
    shutil.copy(_archive_file(archive), copy)
    done = run_job([*CLI, "jvm-archive", "--remove"], tmp_path, SPARKEVAL_CACHE_DIR=str(copy))
    assert "removed 1" in done.stdout
    assert not list(copy.glob("*.jsa"))
