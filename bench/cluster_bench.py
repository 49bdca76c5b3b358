"""sparkeval and Spark MLlib on one Spark standalone cluster on loopback.

Usage: python bench/cluster_bench.py [--size 100000x100] [--repeat 3] [--results FILE]

Starts a master and two workers of one core each (the pyspark package's own
``spark-class``), submits each system with ``spark-submit`` to that cluster, as whole
processes in alternation, and prints medians and ratios against MLlib the usual way;
the cluster is stopped afterwards, whatever happens.  On a cluster sparkeval's Python
workers still read the Parquet row groups themselves, but the rows reach their query
buckets through Spark's exchange (there is no local hand-off between executors);
MLlib's lists go through Spark's shuffle as usual.

Systems: ``sparkeval`` (``jobs/evaluate.py``, the package shipped in ``--py-files`` as
the README says), ``sparkeval_c1`` (the same with :data:`C1_EXECUTORS` as the
executors' JVM options), ``sparkeval_installed`` (that, plus sparkeval's Python worker
daemon, ``spark.python.daemon.module``: on this cluster sparkeval is installed in the
executors' Python, as it is in an image or a packed environment), ``sparkeval_archived``
(that, with the driver's JVM too given the options ``sparkeval jvm-archive --java-options
--jvm-profile workers`` prints, and the executors' as well: sparkeval's class archive and
its ``workers`` profile, as the README says for executors on the driver's install),
``sparkeval_shared_dir`` (that, with ``spark.sparkeval.handoffDirectory`` naming a
directory of this machine, which the executors on loopback share: the rows reach their
buckets as files there instead of through the exchange),
``sparkeval_shared_dir_driver_read`` (that, the driver reading the inputs itself), ``mllib``
(``RankingEvaluator``, 4 metrics, nothing cached), ``mllib_cached`` (the lists cached
once) and ``mllib_archived`` (the usual way, its driver and executors mapping a
class archive of MLlib's own driver, written at the exit of a small local MLlib run, with
the ``spark`` profile, as ``bench_evaluate.py`` gives MLlib).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:0] = [str(BENCH), str(ROOT)]

from bench_evaluate import (  # noqa: E402
    median_cell,
    mllib_java_options,
    results_header,
    run_measured,
)
from runners.common import SPARKEVAL_MEASURES  # noqa: E402
from synthetic import generate  # noqa: E402

from sparkeval.engine.transport.early_pieces import DRIVER_READ_KEY  # noqa: E402
from sparkeval.engine.transport.local_handoff import SHARED_DIRECTORY_KEY  # noqa: E402
from sparkeval.spark import PYTHON_DAEMON_KEY, PYTHON_DAEMON_MODULE  # noqa: E402
from tests.cluster import StandaloneCluster, spark_class  # noqa: E402

SYSTEMS = (
    "sparkeval",
    "sparkeval_c1",
    "sparkeval_installed",
    "sparkeval_archived",
    "sparkeval_shared_dir",
    "sparkeval_shared_dir_driver_read",
    "mllib",
    "mllib_cached",
    "mllib_archived",
)
LABELS = {
    "sparkeval": "sparkeval evaluate (10 measures), spark-submit to the cluster",
    "sparkeval_c1": "sparkeval evaluate, executors with C1 only and the parallel collector",
    "sparkeval_installed": "sparkeval evaluate, C1 executors and sparkeval's worker daemon "
    "(sparkeval installed on the executors)",
    "sparkeval_archived": "sparkeval evaluate, as above, driver and executor JVMs with "
    "sparkeval's class archive and workers profile",
    "sparkeval_shared_dir": "sparkeval evaluate, prepared as above, the rows handed over as "
    "files in a directory the executors share (spark.sparkeval.handoffDirectory), not "
    "through the exchange",
    "sparkeval_shared_dir_driver_read": "sparkeval evaluate, as above, the driver reading the "
    "inputs itself (spark.sparkeval.driverRead=true)",
    "mllib": "Spark MLlib RankingEvaluator (4 metrics), the usual way: no cache",
    "mllib_cached": "Spark MLlib RankingEvaluator, tuned: per-query lists cached once",
    "mllib_archived": "Spark MLlib RankingEvaluator, the usual way, driver and executor JVMs "
    "with a class archive of MLlib's driver and sparkeval's spark profile",
}
#: each archived system against the MLlib row it is compared with
ARCHIVED_PAIRS = {
    "sparkeval_archived": "mllib_archived",
    "sparkeval_shared_dir": "mllib_archived",
    "sparkeval_shared_dir_driver_read": "mllib_archived",
}
#: the systems prepared as ``sparkeval_archived`` is (archive, profile, daemon)
PREPARED = ("sparkeval_archived", "sparkeval_shared_dir", "sparkeval_shared_dir_driver_read")
#: executor JVM options for when the Python workers do the work (as sparkeval's local
#: ``workers`` profile): C1 alone leaves C2's CPU to the workers on one-core executors
C1_EXECUTORS = "-XX:TieredStopAtLevel=1 -XX:+UseParallelGC"
#: sparkeval's command line, run by this interpreter
SPARKEVAL_CLI = (sys.executable, "-m", "sparkeval.cli")
#: settings of every submission: loopback, no UI, executors of the workers' size
SUBMIT_CONF = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.ui.enabled": "false",
    "spark.executor.memory": "2g",
    "spark.executor.cores": "1",
}


def environment() -> dict[str, str]:
    """Daemons and submissions: loopback, this interpreter for the Python workers."""
    env = dict(os.environ)
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env["PYTHONPATH"] = os.pathsep.join([str(BENCH), env.get("PYTHONPATH", "")])
    env.setdefault("SPARK_DAEMON_MEMORY", "512m")
    return env


def archive_options(work: Path) -> dict[str, str]:
    """JVM options that map a class archive, by system family: sparkeval's (as printed
    by ``sparkeval jvm-archive --java-options``, which writes it) and MLlib's own."""
    cache = work / "jvm-cache"
    env = {**environment(), "SPARKEVAL_CACHE_DIR": str(cache)}
    printed = subprocess.run(
        [*SPARKEVAL_CLI, "jvm-archive", "--java-options", "--jvm-profile", "workers"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    run, qrels = generate(work / "warm-up", 2000, 10)
    mllib = mllib_java_options(cache, run, qrels)
    return {"sparkeval": printed.stdout.strip(), "mllib": mllib}


def submit_command(
    system: str,
    url: str,
    package: Path,
    run: Path,
    qrels: Path,
    out: Path,
    archives: dict[str, str] | None = None,
) -> list[str]:
    submit = [str(Path(sys.executable).parent / "spark-submit"), "--master", url]
    conf = dict(SUBMIT_CONF)
    if system in ("sparkeval_c1", "sparkeval_installed", *PREPARED):
        conf["spark.executor.extraJavaOptions"] = C1_EXECUTORS
    if system in ("sparkeval_installed", *PREPARED):
        conf[PYTHON_DAEMON_KEY] = PYTHON_DAEMON_MODULE  # sparkeval is installed there
    if system in (*PREPARED, "mllib_archived"):
        if archives is None:
            raise ValueError(f"{system} needs the archives' options")
        # the archive and the JVM profile, for the driver and the executors alike
        options = archives[system.split("_")[0]]
        submit += ["--driver-java-options", options]
        conf["spark.executor.extraJavaOptions"] = options
    if system.startswith("sparkeval_shared_dir"):
        shared = out.parent / "handoff"  # the cluster's machine is the executors' too
        shared.mkdir(parents=True, exist_ok=True)
        conf[SHARED_DIRECTORY_KEY] = str(shared)
    if system == "sparkeval_shared_dir_driver_read":
        conf[DRIVER_READ_KEY] = "true"
    for key, value in conf.items():
        submit += ["--conf", f"{key}={value}"]
    if system.startswith("sparkeval"):
        return [
            *submit,
            "--py-files",
            str(package),
            str(ROOT / "jobs" / "evaluate.py"),
            "--run",
            str(run),
            "--qrels",
            str(qrels),
            "--measures",
            ",".join(SPARKEVAL_MEASURES),
            "--out",
            str(out),
            "--overwrite",
        ]
    cache = ["--cache"] if system == "mllib_cached" else []
    runner = BENCH / "runners" / "mllib.py"
    return [*submit, str(runner), str(run), str(qrels), "--master", "submitted", *cache]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="100000x100", help="QUERIESxDOCS")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    parser.add_argument("--worker-memory", default="3g", help="memory each worker offers")
    parser.add_argument("--results", type=Path, default=None, help="write the table here")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    launcher = spark_class()
    if launcher is None:
        sys.exit("no spark-class launcher beside the interpreter or in the pyspark package")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="sparkeval-cluster-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    queries, docs = (int(x) for x in args.size.lower().split("x"))
    run, qrels = generate(work / args.size, queries, docs)
    package = work / "sparkeval.zip"
    subprocess.run(
        [sys.executable, "-m", "zipfile", "-c", str(package), "sparkeval"], cwd=ROOT, check=True
    )
    env = environment()
    # the daemons' directories are new each time, so a --workdir can be used again
    daemons = Path(tempfile.mkdtemp(prefix="cluster-", dir=work))
    archived = [system for system in args.systems if system in (*PREPARED, "mllib_archived")]
    archives = archive_options(work) if archived else None
    cluster = StandaloneCluster(launcher, daemons, env, worker_memory=args.worker_memory)
    walls: dict[str, list[float]] = {system: [] for system in args.systems}
    peaks: dict[str, list[float]] = {system: [] for system in args.systems}
    try:
        cluster.start(workers=2)
        print(f"cluster {cluster.url}: 2 workers of 1 core", flush=True)
        for rep in range(args.repeat):
            for system in args.systems:
                cmd = submit_command(
                    system, cluster.url, package, run, qrels, work / "out", archives
                )
                wall, peak, _, _ = run_measured(cmd, env, BENCH)
                walls[system].append(wall)
                peaks[system].append(peak)
                print(f"  rep {rep + 1} {system:<14} wall {wall:7.1f}s", flush=True)
    finally:
        cluster.stop()
    rows = queries * docs
    base = statistics.median(walls["mllib"]) if walls.get("mllib") else None
    lines = [
        *results_header(
            "# sparkeval on a Spark standalone cluster",
            "bench/cluster_bench.py",
            ". Cluster on loopback: one master and two workers of "
            f"1 core and {args.worker_memory} each; every system is a `spark-submit` to it "
            f"(executors of {SUBMIT_CONF['spark.executor.memory']}), timed as a whole process "
            f"(driver JVM start included), {args.repeat} alternating repetitions, medians.",
        ),
        "",
        f"### {queries:,} queries × {docs} docs = {rows:,} run rows",
        "",
        "| system | median wall s (min–max) | rows/s | MLlib wall / system wall |",
        "|---|---|---|---|",
    ]
    for system in args.systems:
        wall = statistics.median(walls[system])
        ratio = f"{base / wall:.2f}×" if base else "-"
        cell = median_cell(walls[system])
        lines.append(f"| {LABELS[system]} | {cell} | {rows / wall:,.0f} | {ratio} |")
    lines += ["", "### Target: sparkeval ≥ 4× MLlib the usual way on the same cluster", ""]
    for system in args.systems:
        if not system.startswith("sparkeval"):
            continue
        against = ARCHIVED_PAIRS.get(system, "mllib")
        if not walls.get(against):
            continue
        ratio = statistics.median(walls[against]) / statistics.median(walls[system])
        verdict = "met" if ratio >= 4 else "NOT met"
        lines.append(f"- {LABELS[system]} vs {LABELS[against]}: {ratio:.2f}× ({verdict})")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.results:
        args.results.write_text(text)


if __name__ == "__main__":
    main()
