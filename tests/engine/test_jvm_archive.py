"""The driver JVM's class archive: written by ``sparkeval jvm-archive``, mapped by local
sessions, never able to change a result or stop a session from starting."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.jobs import CLI, collection, dead_pid, evaluate_cmd, run_job, tree


def _need_java() -> None:
    if shutil.which("java") is None:
        pytest.skip("Java is not installed; the JVM archive needs Java 17+")


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    """A cache directory of its own holding an archive written by ``sparkeval
    jvm-archive``: a copy of the user's current one when there is one (the test command
    writes it before the tests start), else one written here. The background build is
    written from scratch by its own test below."""
    _need_java()
    cache = tmp_path_factory.mktemp("cache")
    existing = _users_archive()
    if existing is not None:
        shutil.copy2(existing, cache / existing.name)
        shutil.copy2(existing.with_suffix(".jars"), cache / existing.with_suffix(".jars").name)
        return cache
    done = run_job([*CLI, "jvm-archive"], cache, SPARKEVAL_CACHE_DIR=str(cache))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "JVM archive written to" in done.stdout
    return cache


def _users_archive() -> Path | None:
    """The current archive in the user's cache, with the file naming its jars beside it,
    or None."""
    from sparkeval import jvm_archive

    if os.environ.get(jvm_archive.CACHE_ENV):
        return None
    path = jvm_archive.archive_path()
    return path if path is not None and path.with_suffix(".jars").is_file() else None


def source_of(log: Path, class_name: str) -> str:
    """The line of HotSpot's class-load ``log`` that loaded ``class_name`` first."""
    lines = [line for line in log.read_text().splitlines() if f"{class_name} " in line]
    assert lines, f"{class_name} was never loaded according to {log.name}"
    return lines[0]


def _archive_file(cache: Path) -> Path:
    (path,) = cache.glob("jvm-classes-*.jsa")
    return path


def test_no_archive_means_no_options(tmp_path, monkeypatch):
    from sparkeval import jvm_archive

    monkeypatch.setenv("SPARKEVAL_CACHE_DIR", str(tmp_path))
    assert jvm_archive.java_options() == []


def test_archive_is_named_by_key_and_size(archive):
    from sparkeval.jvm_archive import jars_directory

    path = _archive_file(archive)
    size = int(path.stem.rsplit("-", 1)[1])
    assert size == path.stat().st_size > 10_000_000
    assert not list(archive.glob(".*partial")), "the partial file was left behind"
    # beside it, the jars directory it was written from (see remove_superseded)
    assert path.with_suffix(".jars").read_text() == str(jars_directory())


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
    """HotSpot's class-load log names the archive as the source of Spark's classes:
    those of a session's start, and those the Python API's users load as they read
    Parquet files into DataFrames (Spark's Parquet reader, analyser and optimiser)."""
    log = tmp_path / "classes.log"
    table = tmp_path / "table.parquet"
    script = textwrap.dedent(
        f"""
        import pyarrow as pa
        import pyarrow.parquet as pq

        from sparkeval.jvm_archive import java_options
        from sparkeval.spark import build_session, local_java_options

        options = [*local_java_options(), *java_options(), "-Xlog:class+load=info:file={log}"]
        assert any(o.startswith("-XX:SharedArchiveFile=") for o in options), options
        spark = build_session(
            "local[1]", conf={{"spark.driver.extraJavaOptions": " ".join(options)}}
        )
        assert spark.range(5).count() == 5
        pq.write_table(pa.table({{"x": [1.0, -1.0, 2.0]}}), "{table}")
        assert spark.read.parquet("{table}").where("x > 0").count() == 2
        spark.stop()
        """
    )
    done = run_job([sys.executable, "-c", script], tmp_path, SPARKEVAL_CACHE_DIR=str(archive))
    assert done.returncode == 0, done.stderr[-3000:]
    lines = log.read_text().splitlines()
    for name in (
        "org.apache.spark.SparkContext",
        "org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat",
        "org.apache.spark.sql.catalyst.analysis.Analyzer",
        "org.apache.spark.sql.catalyst.optimizer.Optimizer",
    ):
        loaded = [line for line in lines if f"{name} " in line]
        assert loaded and "shared objects file (top)" in loaded[0], (name, loaded)


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


def test_java_options_prints_only_the_options_that_map_the_archive(archive, tmp_path):
    """What ``--driver-java-options "$(sparkeval jvm-archive --java-options)"`` gets."""
    done = run_job(
        [*CLI, "jvm-archive", "--java-options"], tmp_path, SPARKEVAL_CACHE_DIR=str(archive)
    )
    assert done.returncode == 0, done.stderr[-3000:]
    options = done.stdout.strip().split(" ")
    assert done.stdout.count("\n") == 1
    assert options[0] == f"-XX:SharedArchiveFile={_archive_file(archive)}"
    assert "-Xshare:auto" in options
    off = run_job(
        [*CLI, "jvm-archive", "--java-options"],
        tmp_path,
        SPARKEVAL_CACHE_DIR=str(archive),
        SPARKEVAL_JVM_ARCHIVE="off",
    )
    assert off.returncode == 2 and off.stdout == ""
    assert "switched off" in off.stderr
    profiled = run_job(
        [*CLI, "jvm-archive", "--java-options", "--jvm-profile", "workers"],
        tmp_path,
        SPARKEVAL_CACHE_DIR=str(archive),
    )
    assert profiled.stdout.split() == [*options, "-XX:TieredStopAtLevel=1", "-XX:+UseParallelGC"]
    alone = run_job([*CLI, "jvm-archive", "--jvm-profile", "workers"], tmp_path)
    assert alone.returncode == 2 and "--jvm-profile goes with --java-options" in alone.stderr


@pytest.mark.slow
def test_spark_submit_driver_and_executors_map_the_archive(archive, standalone_cluster, tmp_path):
    """The spark-submit recipe of docs/clusters.md on a standalone cluster whose executors run on
    this machine's install: HotSpot's class-load logs of the driver and of every
    executor name the archive as the source of Spark's classes."""
    from tests.cluster import build_zip, cluster_env, spark_submit
    from tests.conftest import ROOT

    printed = run_job(
        [*CLI, "jvm-archive", "--java-options", "--jvm-profile", "workers"],
        tmp_path,
        SPARKEVAL_CACHE_DIR=str(archive),
    )
    options = printed.stdout.strip()
    logs = tmp_path / "class-logs"
    logs.mkdir()
    config = collection(tmp_path / "data")
    package = build_zip(ROOT, tmp_path / "sparkeval.zip")
    cmd = [
        *spark_submit(
            standalone_cluster.url,
            package,
            "--driver-java-options",
            f"{options} -Xlog:class+load=info:file={logs / 'driver.log'}",
            "--conf",
            f"spark.executor.extraJavaOptions={options} "
            f"-Xlog:class+load=info:file={logs / 'executor-%p.log'}",
        ),
        str(ROOT / "jobs" / "evaluate.py"),
        "--config",
        str(config),
        "--out",
        str(tmp_path / "out"),
    ]
    done = subprocess.run(
        cmd, cwd=tmp_path, env=cluster_env(), capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "out" / "summary.json").is_file()

    assert "shared objects file (top)" in source_of(
        logs / "driver.log", "org.apache.spark.SparkContext"
    )
    executors = sorted(logs.glob("executor-*.log"))
    assert executors, "no executor wrote a class-load log"
    for log in executors:
        # the archive holds the classes the driver loaded: the executor's own entry
        # point is not among them, the Spark core both use is
        assert "shared objects file (top)" in source_of(log, "org.apache.spark.SparkConf")
        mapped = log.read_text().count("shared objects file (top)")
        assert mapped > 1000, f"only {mapped} classes mapped from the archive"


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


@pytest.mark.spark
def test_a_fresh_install_builds_its_archive_in_the_background(archive, tmp_path):
    """No separate step: the first local run leaves a builder behind as it exits, and
    the next run maps the archive it wrote.

    These runs have an empty SPARK_CONF_DIR, which is on the class path the JVM checks
    before it maps an archive: the archive written without one is not mapped under it,
    so the one written here has a key of its own (one build covers both claims)."""
    from sparkeval import jvm_archive

    _need_java()
    conf = tmp_path / "empty-conf"
    conf.mkdir()
    cache = tmp_path / "cache"
    env = {
        "SPARKEVAL_CACHE_DIR": str(cache),
        "SPARKEVAL_JVM_ARCHIVE": "auto",
        "SPARK_CONF_DIR": str(conf),
    }
    config = collection(tmp_path / "data")
    first = run_job(evaluate_cmd(config, tmp_path / "out1"), tmp_path, **env)
    assert first.returncode == 0, first.stderr[-3000:]
    deadline = time.monotonic() + 420
    while not list(cache.glob("jvm-classes-*.jsa")) or list(cache.glob(".*.building")):
        assert time.monotonic() < deadline, sorted(p.name for p in cache.iterdir())
        time.sleep(2)
    assert not list(cache.glob(".*partial"))
    status = run_job([*CLI, "jvm-archive", "--status"], tmp_path, **env)
    assert "in use" in status.stdout, status.stdout
    second = run_job(evaluate_cmd(config, tmp_path / "out2"), tmp_path, **env)
    assert second.returncode == 0, second.stderr[-3000:]
    assert tree(tmp_path / "out1") == tree(tmp_path / "out2")
    # an archive of its own, mapped under the empty directory
    (ours,) = cache.glob("jvm-classes-*.jsa")
    assert ours.name.split("-")[2] != _archive_file(archive).name.split("-")[2]
    assert _maps_spark_from_archive(tmp_path, **env)
    # the archive written without it is not mapped under it
    shutil.copy(_archive_file(archive), cache / "foreign.jsa")
    foreign = jvm_archive.mapping_options(cache / "foreign.jsa")
    assert not _maps_spark_from_archive(tmp_path, foreign, SPARK_CONF_DIR=str(conf))


@pytest.mark.parametrize("value", ["use", "off"])
def test_no_background_build_unless_automatic(tmp_path, monkeypatch, value):
    from sparkeval import jvm_archive

    _need_java()
    monkeypatch.setenv("SPARKEVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("SPARKEVAL_JVM_ARCHIVE", value)
    assert jvm_archive.prepare_in_background() is False
    assert list(tmp_path.iterdir()) == []


def test_one_builder_at_a_time_and_a_stale_lock_is_taken_over(tmp_path):
    from sparkeval import jvm_archive

    lock = tmp_path / ".jvm-classes-key.building"
    lock.write_text(str(os.getpid()))  # a live holder
    assert jvm_archive._take_lock(lock) is False
    lock.write_text(str(dead_pid()))  # a holder that has exited
    assert jvm_archive._take_lock(lock) is True
    assert lock.read_text() == str(os.getpid())


def _pyspark_copy(root: Path, jars: Path) -> Path:
    """A pyspark package at ``root`` whose jars have the names and sizes of ``jars``
    (sparse files: nothing is copied) and their modification times."""
    package = root / "pyspark"
    (package / "jars").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for jar in jars.iterdir():
        copy = package / "jars" / jar.name
        with copy.open("wb") as handle:
            handle.truncate(jar.stat().st_size)
        os.utime(copy, ns=(jar.stat().st_atime_ns, jar.stat().st_mtime_ns))
    return package


def test_another_install_of_the_same_pyspark_has_its_own_archive(tmp_path, monkeypatch):
    """HotSpot maps an archive only with the very jars it was written from (path, size,
    time): a second virtual environment with the same pyspark must not take the first
    one's archive, which its JVM would silently refuse at every start."""
    import pyspark

    from sparkeval import jvm_archive

    _need_java()
    installed = Path(pyspark.__file__).parent / "jars"
    key = jvm_archive.archive_key()
    other = _pyspark_copy(tmp_path / "other-env", installed)
    monkeypatch.setattr(pyspark, "__file__", str(other / "__init__.py"))
    other_key = jvm_archive.archive_key()
    assert other_key is not None and other_key != key
    # the same install, one jar rewritten (same name and size): another key again
    jar = sorted((other / "jars").iterdir())[0]
    os.utime(jar, ns=(jar.stat().st_atime_ns, jar.stat().st_mtime_ns + 10**9))
    assert jvm_archive.archive_key() not in (key, other_key)


def test_archives_no_install_can_map_are_removed(tmp_path):
    """Writing an archive deletes those of the same install's older jars and those of
    removed installs; other installs' archives, and older ones without an owner file,
    stay."""
    from sparkeval.jvm_archive import remove_superseded

    ours, other_install = tmp_path / "env" / "jars", tmp_path / "other" / "jars"
    ours.mkdir(parents=True)
    other_install.mkdir(parents=True)
    cache = tmp_path / "cache"
    cache.mkdir()

    def archive(key: str, jars: Path | None) -> Path:
        path = cache / f"jvm-classes-{key}-10.jsa"
        path.write_bytes(b"0123456789")
        if jars is not None:
            path.with_suffix(".jars").write_text(str(jars))
        return path

    current = archive("new", ours)
    superseded = archive("old", ours)
    removed_install = archive("gone", tmp_path / "deleted-env" / "jars")
    kept = [archive("other", other_install), archive("unowned", None)]
    assert remove_superseded(cache, current) == sorted([superseded, removed_install])
    assert sorted(cache.iterdir()) == sorted(
        [current, current.with_suffix(".jars"), *kept, kept[0].with_suffix(".jars")]
    )


def test_the_cache_keeps_the_new_archive_and_the_most_recently_used_other(tmp_path):
    """Archives of other installs pile up at about 170 MiB each: after a write, the cache
    keeps the new one and the other one a session mapped last, nothing older."""
    from sparkeval.jvm_archive import KEPT_ARCHIVES, remove_least_recently_used

    assert KEPT_ARCHIVES == 2
    paths = []
    for age, key in enumerate(["new", "used-yesterday", "used-last-week", "used-last-month"]):
        path = tmp_path / f"jvm-classes-{key}-10.jsa"
        path.write_bytes(b"0123456789")
        path.with_suffix(".jars").write_text("/nowhere")
        used = time.time() - age * 86400 * (1 if age < 2 else 7 if age == 2 else 30)
        os.utime(path, (used, used))
        paths.append(path)
    (tmp_path / "notes.txt").write_text("not an archive")
    assert remove_least_recently_used(tmp_path, paths[0]) == sorted(paths[2:])
    kept = [paths[0], paths[1], *(p.with_suffix(".jars") for p in paths[:2])]
    assert sorted(tmp_path.iterdir()) == sorted([*kept, tmp_path / "notes.txt"])


def test_status_says_when_a_build_is_under_way(tmp_path, monkeypatch):
    """While a builder holds the lock, the status says so (not "no archive")."""
    from sparkeval import jvm_archive
    from sparkeval.commands.jvm_archive import _status

    _need_java()
    monkeypatch.setenv("SPARKEVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("SPARKEVAL_JVM_ARCHIVE", "auto")
    if jvm_archive.archive_blocker() is not None:
        pytest.skip(f"no archive can be used here: {jvm_archive.archive_blocker()}")
    key = jvm_archive.archive_key()
    assert "no JVM archive for this Java and pyspark" in _status(None)
    (tmp_path / f".jvm-classes-{key}.building").write_text(str(os.getpid()))  # live
    line = _status(None)
    assert "is being built" in line and f"process {os.getpid()}" in line, line
    (tmp_path / f".jvm-classes-{key}.building").write_text(str(dead_pid()))  # gone
    assert "no JVM archive for this Java and pyspark" in _status(None)


def _maps_spark_from_archive(
    tmp_path: Path, archive_options: list[str] | None = None, **env: str
) -> bool:
    """Whether a local session started with ``env`` maps SparkContext from a class
    archive (HotSpot's class-load log names the archive as its source): the one
    ``archive_options`` map, or, when None, the one sparkeval finds for that
    environment (``java_options()`` in the session's process)."""
    log = tmp_path / "classes.log"
    log.unlink(missing_ok=True)
    script = textwrap.dedent(
        f"""
        from sparkeval.jvm_archive import java_options
        from sparkeval.spark import build_session, local_java_options

        archive = {archive_options!r}
        archive = java_options() if archive is None else archive
        options = [*local_java_options(), *archive, "-Xlog:class+load=info:file={log}"]
        spark = build_session(
            "local[1]", conf={{"spark.driver.extraJavaOptions": " ".join(options)}}
        )
        assert spark.range(3).count() == 3
        spark.stop()
        """
    )
    done = run_job([sys.executable, "-c", script], tmp_path, **env)
    assert done.returncode == 0, done.stderr[-3000:]
    return "shared objects file (top)" in source_of(log, "org.apache.spark.SparkContext")


@pytest.mark.spark
def test_a_configuration_directory_holding_files_means_no_archive(tmp_path):
    """Spark's launcher puts SPARK_CONF_DIR on the driver's class path before its jars,
    and HotSpot can neither write nor map an archive while a directory there holds
    files: a run then starts no builder (one would fail after every run), and
    ``sparkeval jvm-archive`` says why, naming the directory."""
    _need_java()
    conf = tmp_path / "spark-conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text("spark.ui.showConsoleProgress false\n")
    cache = tmp_path / "cache"
    env = {
        "SPARK_CONF_DIR": str(conf),
        "SPARKEVAL_CACHE_DIR": str(cache),
        "SPARKEVAL_JVM_ARCHIVE": "auto",
    }
    config = collection(tmp_path / "data")
    done = run_job(evaluate_cmd(config, tmp_path / "out"), tmp_path, **env)
    assert done.returncode == 0, done.stderr[-3000:]
    # a builder takes its lock before the run's process exits
    left = sorted(p.name for p in cache.iterdir()) if cache.exists() else []
    assert left == [], left
    status = run_job([*CLI, "jvm-archive", "--status"], tmp_path, **env)
    assert "no JVM archive can be used" in status.stdout and str(conf) in status.stdout
    written = run_job([*CLI, "jvm-archive"], tmp_path, **env)
    assert written.returncode == 2
    assert str(conf) in written.stderr and "SPARK_CONF_DIR" in written.stderr
    assert not list(cache.glob("jvm-classes-*.jsa"))


def test_a_configuration_directory_of_templates_is_named_as_such(tmp_path, monkeypatch):
    """A Spark distribution's conf directory holds only templates, which Spark does
    not read: the reason says an empty SPARK_CONF_DIR would do; real settings do not
    get that advice."""
    from sparkeval import jvm_archive

    home = tmp_path / "spark-home"
    (home / "conf").mkdir(parents=True)
    (home / "conf" / "spark-defaults.conf.template").write_text("# spark.master local\n")
    monkeypatch.delenv("SPARK_CONF_DIR", raising=False)
    monkeypatch.setenv("SPARK_HOME", str(home))
    reason = jvm_archive.archive_blocker()
    assert reason is not None and str(home / "conf") in reason
    assert "conf in SPARK_HOME" in reason and "only templates" in reason
    assert jvm_archive.archive_path() is None and jvm_archive.java_options() == []
    (home / "conf" / "spark-defaults.conf").write_text("spark.ui.enabled false\n")
    reason = jvm_archive.archive_blocker()
    assert reason is not None and "only templates" not in reason


def test_a_failed_background_build_is_not_tried_again_for_a_day(tmp_path, monkeypatch):
    """A builder that fails keeps its reason beside the archives; for a day no run
    starts another, and ``--status`` shows the reason; after that one is tried again."""
    from sparkeval import jvm_archive

    _need_java()
    env = {"SPARKEVAL_CACHE_DIR": str(tmp_path), "SPARKEVAL_JVM_ARCHIVE": "auto"}
    # the builder's own code, with a build that fails as a full disk would
    failing = textwrap.dedent(
        """
        from sparkeval import jvm_archive
        from sparkeval.errors import EnvironmentProblem

        def full_disk():
            raise EnvironmentProblem("the JVM archive could not be written: disk full")

        jvm_archive.build_archive = full_disk
        jvm_archive._build_holding()
        """
    )
    done = run_job([sys.executable, "-c", failing], tmp_path, **env)
    assert done.returncode == 0, done.stderr[-3000:]
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    failure = jvm_archive.recent_failure()
    assert failure is not None and "disk full" in failure[0]
    assert jvm_archive.prepare_in_background() is False
    assert not list(tmp_path.glob(".*.building"))
    status = run_job([*CLI, "jvm-archive", "--status"], tmp_path, **env)
    assert "the last background build failed" in status.stdout
    assert "disk full" in status.stdout
    (marker,) = tmp_path.glob(".jvm-classes-*.failed")
    day_ago = time.time() - jvm_archive.RETRY_AFTER_SECONDS - 60
    os.utime(marker, (day_ago, day_ago))
    assert jvm_archive.recent_failure() is None
    # --remove forgets the failure too
    os.utime(marker, None)
    assert jvm_archive.recent_failure() is not None
    jvm_archive.remove_archives()
    assert jvm_archive.recent_failure() is None and not marker.exists()


def test_a_failed_write_names_what_the_jvm_printed():
    """The JVM prints why it cannot start to standard output; sparkeval's status lines
    go to standard error, and must not push the JVM's reason out of the message."""
    import subprocess as sp

    from sparkeval.jvm_archive import _what_went_wrong

    done = sp.CompletedProcess(
        [],
        1,
        stdout="Error occurred during initialization of VM\nCannot have non-empty directory\n",
        stderr="".join(f"sparkeval: line {i} (0.{i} s)\n" for i in range(30)),
    )
    message = _what_went_wrong(done)
    assert "Cannot have non-empty directory" in message and "sparkeval: line" not in message
