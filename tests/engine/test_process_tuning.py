"""Process tuning of local runs: the driver JVM's quick-start options and the Python
workers' malloc thresholds (:mod:`sparkeval.engine.worker.worker_memory`)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

# allocate 400 MB, touch it, free it; report whether the resident size came back down
_FREE_AND_MEASURE = textwrap.dedent(
    """
    import sys
    from sparkeval.engine.worker.worker_memory import keep_freed_memory

    def rss_mb():
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024

    raised = keep_freed_memory()
    import numpy as np
    before = rss_mb()
    block = np.ones(50_000_000)  # 400 MB
    del block
    print(raised, rss_mb() - before)
    """
)


def _run(env_value: str | None) -> tuple[bool, float]:
    env = {k: v for k, v in os.environ.items() if k != "SPARKEVAL_KEEP_FREED_MEMORY"}
    if env_value is not None:
        env["SPARKEVAL_KEEP_FREED_MEMORY"] = env_value
    done = subprocess.run(
        [sys.executable, "-c", _FREE_AND_MEASURE],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    raised, kept = done.stdout.split()
    return raised == "True", float(kept)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mallopt is glibc's (Linux)")
def test_worker_keeps_freed_memory_for_reuse():
    raised, kept_mb = _run(None)
    if not raised:
        pytest.skip("this C library has no mallopt (not glibc)")
    # the 400 MB block came from the heap and stays there for the next batch
    assert kept_mb > 300


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_switched_off_malloc_returns_big_blocks():
    raised, kept_mb = _run("off")
    assert raised is False
    # glibc's default: a block this big is mapped on its own and unmapped when freed
    assert kept_mb < 100


def test_keep_freed_memory_runs_once(monkeypatch):
    from sparkeval.engine.worker import worker_memory

    monkeypatch.setattr(worker_memory, "_raised", None)
    monkeypatch.setenv("SPARKEVAL_KEEP_FREED_MEMORY", "off")
    assert worker_memory.keep_freed_memory() is False
    # once decided, a worker keeps the decision (and calls mallopt no more) for every batch
    monkeypatch.delenv("SPARKEVAL_KEEP_FREED_MEMORY")
    assert worker_memory.keep_freed_memory() is False


def test_local_driver_jvm_profiles(monkeypatch):
    from sparkeval.spark import JVM_PROFILES, _local_defaults, local_java_options

    monkeypatch.delenv("SPARKEVAL_JVM_PROFILE", raising=False)
    assert "-XX:TieredStopAtLevel=1" in local_java_options("workers")
    assert "-XX:Tier4InvocationThreshold=100000" in local_java_options("spark")
    assert not any(o.startswith("-XX:") for o in local_java_options())
    java = _local_defaults("workers")["spark.driver.extraJavaOptions"]
    assert "-XX:TieredStopAtLevel=1" in java
    assert _local_defaults()["spark.ui.enabled"] == "false"
    with pytest.raises(ValueError, match="JVM profile"):
        local_java_options("fast")

    monkeypatch.setenv("SPARKEVAL_JVM_PROFILE", "off")
    for profile in JVM_PROFILES:
        assert not set(JVM_PROFILES[profile]) & set(local_java_options(profile))


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ({"run": ["run.parquet"], "qrels": "qrels.parquet"}, "workers"),
        ({"run": ["run.parquet"], "qrels": "qrels.parquet", "reader": "spark"}, "spark"),
        # TREC text, CSV and TSV are read by the workers too
        ({"run": ["run.txt"], "qrels": "qrels.parquet"}, "workers"),
        ({"run": ["run.parquet"], "qrels": "qrels.test"}, "workers"),
        ({"run": ["a.parquet", "b.csv"], "qrels": "qrels.tsv"}, "workers"),
        ({"run": ["a.parquet", "b.jsonl"], "qrels": "qrels.parquet"}, "spark"),
        ({"run": ["run.txt"], "qrels": "qrels.test", "reader": "spark"}, "spark"),
    ],
)
def test_evaluate_jobs_pick_the_jvm_profile_of_who_reads(inputs, expected):
    from sparkeval.evaluation.job import jvm_profile
    from sparkeval.evaluation.options import EvaluateConfig

    config = EvaluateConfig.load(measures=["AP"], out="out", **inputs)
    assert jvm_profile(config) == expected


def _fake_pyspark(root) -> tuple[str, str]:
    """An installed-looking pyspark under ``root/site`` with its zip inside the package."""
    package = root / "site" / "pyspark"
    (package / "python" / "lib").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    inner = package / "python" / "lib" / "pyspark.zip"
    inner.write_bytes(b"")
    return str(root / "site"), str(inner)


def test_daemon_moves_the_installed_pysparks_zips_behind_it(tmp_path):
    from sparkeval.worker_daemon import archives_behind_installed_pyspark

    site, inner = _fake_pyspark(tmp_path)
    jar = str(tmp_path / "spark-core.jar")
    stdlib_zip = str(tmp_path / "python311.zip")
    path = [inner, jar, "/stdlib", stdlib_zip, site]
    assert archives_behind_installed_pyspark(path) == ["/stdlib", stdlib_zip, site, inner, jar]


def test_daemon_keeps_another_sparks_pyspark_first(tmp_path):
    from sparkeval.worker_daemon import archives_behind_installed_pyspark

    site, _ = _fake_pyspark(tmp_path)
    foreign = str(tmp_path / "spark-home" / "python" / "lib" / "pyspark.zip")
    jar = str(tmp_path / "spark-core.jar")
    # only the jar moves: the foreign zip stays ahead of the installed package
    assert archives_behind_installed_pyspark([foreign, jar, site]) == [foreign, site, jar]
    # no pyspark outside archives at all: nothing moves
    assert archives_behind_installed_pyspark([foreign, "/stdlib"]) == [foreign, "/stdlib"]


def test_local_workers_import_compiled_pyspark(spark):
    """The local session's Python workers import pyspark from the installed package
    (cached bytecode), not from the zip Spark puts first on their path."""
    import pyspark

    from sparkeval.spark import PYTHON_DAEMON_KEY, PYTHON_DAEMON_MODULE

    assert spark.conf.get(PYTHON_DAEMON_KEY) == PYTHON_DAEMON_MODULE

    def where(_):
        import pyspark as worker_pyspark

        return worker_pyspark.__file__

    found = spark.sparkContext.parallelize([0, 1], 2).map(where).collect()
    assert found == [pyspark.__file__] * 2
    assert ".zip" not in found[0]


def test_importing_a_submodule_leaves_pandas_out():
    """Python workers import single engine modules; the package's API is loaded lazily."""
    code = (
        "import sys, sparkeval, sparkeval.engine.transport.arrow_exchange\n"
        "assert 'pandas' not in sys.modules, 'pandas imported'\n"
        "assert callable(sparkeval.evaluate)\n"
        "assert 'sparkeval.engine.api' in sys.modules\n"
        "assert 'rating_errors' in dir(sparkeval)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_command_builds_only_its_own_parser():
    """``sparkeval evaluate`` imports no other command's module (nor pandas) before Spark."""
    code = (
        "import sys\n"
        "from sparkeval.cli import build_parser\n"
        "from sparkeval.commands import COMMAND_MODULES\n"
        "args = build_parser('evaluate').parse_args(['evaluate', '--measures', 'AP'])\n"
        "assert args.command.name == 'evaluate'\n"
        "loaded = [m for m in COMMAND_MODULES if m in sys.modules]\n"
        "assert loaded == ['sparkeval.commands.evaluate'], loaded\n"
        "assert 'pandas' not in sys.modules, 'pandas imported'\n"
        "everything = build_parser().format_help()\n"
        "assert 'similar-users' in everything and 'rank-distance' in everything\n"
        "assert all(m in sys.modules for m in COMMAND_MODULES)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
