"""``sparkeval jvm-archive``: write (or show, or remove) the driver JVM's class archive.

The archive itself (where it lives, its key, its build in a child process, the
background builder) is :mod:`sparkeval.jvm_archive`; the evaluations whose classes it
holds run here, in that child process (``python -m sparkeval.commands.jvm_archive
ARCHIVE WORK``).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self, TextIO

from sparkeval.errors import ConfigError
from sparkeval.job.command import Command
from sparkeval.job.config import JobConfig
from sparkeval.job.options import option
from sparkeval.spark import JVM_PROFILES

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True, kw_only=True)
class JvmArchiveConfig(JobConfig):
    """Write the archive (default), or only show or remove it, or print the JVM options
    that map it."""

    status: bool = option(False, help="only say whether one exists")
    remove: bool = option(False, help="delete every archive")
    java_options: bool = option(
        False,
        help="print only the JVM options that map the archive (written first when there "
        'is none), for spark-submit: --driver-java-options "$(sparkeval jvm-archive '
        "--java-options)\", and for executors on this machine's install, "
        "spark.executor.extraJavaOptions",
    )
    jvm_profile: str | None = option(
        None,
        choices=tuple(JVM_PROFILES),
        help="with --java-options, add the HotSpot options of sparkeval's JVM profile for "
        "who does the heavy work: workers (the Python workers read the inputs: C1 only, "
        "the parallel collector) or spark (Spark's readers do)",
    )

    def validate(self) -> Self:
        if self.jvm_profile is not None and not self.java_options:
            raise ConfigError("--jvm-profile goes with --java-options")
        chosen = [flag for flag in ("status", "remove", "java_options") if getattr(self, flag)]
        if len(chosen) > 1:
            named = " and ".join("--" + flag.replace("_", "-") for flag in chosen)
            raise ConfigError(f"{named} exclude each other")
        return self


def run(spark: SparkSession | None, config: JvmArchiveConfig) -> str:
    """Do what the config asks; returns the line that says what was done."""
    from sparkeval import jvm_archive

    if config.remove:
        removed = jvm_archive.remove_archives()
        return f"sparkeval: removed {len(removed)} JVM archive(s) from {jvm_archive.cache_dir()}"
    path = jvm_archive.archive_path()
    if config.java_options:
        if jvm_archive.switch() == "off":
            raise ConfigError(
                f"JVM archives are switched off ({jvm_archive.SWITCH_ENV}=off); "
                "there are no options to print"
            )
        mapping = jvm_archive.mapping_options(path or jvm_archive.build_archive())
        profile = JVM_PROFILES[config.jvm_profile] if config.jvm_profile else ()
        return " ".join([*mapping, *profile])
    if config.status:
        return _status(path)
    started = time.time()
    path = jvm_archive.build_archive()
    seconds = time.time() - started
    size = path.stat().st_size >> 20
    return f"sparkeval: JVM archive written to {path} ({size} MiB) in {seconds:.0f} s"


def _status(path: Path | None) -> str:
    """The status line: the archive in use, or why there is none."""
    from sparkeval import jvm_archive

    blocker = jvm_archive.archive_blocker()
    if blocker is not None:
        return f"sparkeval: no JVM archive can be used with this Spark: {blocker}"
    if path is not None:
        in_use = "in use" if jvm_archive.java_options() else "not in use (switched off)"
        return f"sparkeval: JVM archive {path} ({path.stat().st_size >> 20} MiB), {in_use}"
    where = jvm_archive.cache_dir()
    building = jvm_archive.build_in_progress()
    if building is not None:
        pid, started = building
        since = time.strftime("%Y-%m-%d %H:%M", time.localtime(started))
        return (
            f"sparkeval: the JVM archive for this Java and pyspark is being built in {where} "
            f"(process {pid}, since {since}); sessions start without it until it is written"
        )
    then = {
        "auto": "the next local session builds one in the background as it exits",
        "use": "none is built unless asked (SPARKEVAL_JVM_ARCHIVE=use)",
        "off": "archives are switched off",
    }[jvm_archive.switch()]
    failure = jvm_archive.recent_failure()
    if failure is not None and jvm_archive.switch() == "auto":
        reason, failed_at = failure
        retry = time.strftime(
            "%Y-%m-%d %H:%M", time.localtime(failed_at + jvm_archive.RETRY_AFTER_SECONDS)
        )
        then = (
            f"the last background build failed ({reason}); it is tried again after "
            f"{retry}, or at once by sparkeval jvm-archive"
        )
    return f"sparkeval: no JVM archive for this Java and pyspark in {where}; {then}"


def show(line: str, config: JvmArchiveConfig, stdout: TextIO) -> None:
    print(line, file=stdout)


#: the measures the archive's evaluations compute
_MEASURES = ("official", "nDCG@10", "ERR@20")


def _dump(archive: Path, work: Path) -> None:
    """Evaluate a small collection both ways in a JVM that archives its classes at exit
    (:data:`sparkeval.jvm_archive.WORKLOAD`: ``python -m sparkeval.commands.jvm_archive
    ARCHIVE WORK``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sparkeval.demo_data import generate
    from sparkeval.jvm_archive import QUIET_OPTIONS
    from sparkeval.spark import build_session, local_java_options

    paths = generate(work / "data", queries=30)
    qrels = _trec_rows(paths.qrels, (0, 2, 3))
    run = _trec_rows(paths.runs[0], (0, 2, 4))
    pq.write_table(
        pa.table({"query_id": qrels[0], "doc_id": qrels[1], "relevance": list(map(int, qrels[2]))}),
        work / "qrels.parquet",
    )
    pq.write_table(
        pa.table({"query_id": run[0], "doc_id": run[1], "score": list(map(float, run[2]))}),
        work / "run.parquet",
    )

    options = " ".join(
        [*local_java_options(), f"-XX:ArchiveClassesAtExit={archive}", *QUIET_OPTIONS]
    )
    spark = build_session(
        "local[2]", "sparkeval-jvm-archive", {"spark.driver.extraJavaOptions": options}
    )
    _command_line(spark, [str(work / "run.parquet")], str(work / "qrels.parquet"), work / "p")
    _command_line(spark, [str(p) for p in paths.runs], str(paths.qrels), work / "trec")
    _large_input_paths(spark, work, paths.runs[0], paths.qrels)
    gateway = spark.sparkContext._gateway
    spark.stop()
    # the JVM writes the archive while it exits: wait for it
    gateway.proc.stdin.close()
    gateway.proc.wait()


def _large_input_paths(spark: SparkSession, work: Path, trec_run: Path, trec_qrels: Path) -> None:
    """Evaluate the small collection on the paths large inputs take, so that the classes
    they load are archived too: Spark's Parquet reader, analyser and optimiser under the
    Python API on ``spark.read.parquet`` DataFrames (a projection, a filter, a score the
    workers compute, one Spark computes) and the command line's ``--reader spark``.

    Inputs this small are otherwise evaluated in the driver, which loads few of them;
    the driver's size limit is lifted for these calls only.
    """
    from pyspark.sql import functions as F

    from sparkeval.engine.api import evaluate
    from sparkeval.engine.plans import driver_plan

    run = spark.read.parquet(str(work / "run.parquet")).select("query_id", "doc_id", "score")
    qrels = spark.read.parquet(str(work / "qrels.parquet")).select(
        "query_id", "doc_id", "relevance"
    )
    runs = (
        run,
        run.where("score >= 0"),
        run.withColumn("score", F.col("score") + F.lit(0.0)),
        run.withColumn("score", F.col("score") / F.lit(1.0)),
    )
    driver_limit = driver_plan.DRIVER_BYTES
    driver_plan.DRIVER_BYTES = -1
    try:
        for frame in runs:
            evaluation = evaluate(spark, frame, qrels, list(_MEASURES))
            evaluation.per_query.count()
            evaluation.unpersist()
        parquet_run, parquet_qrels = str(work / "run.parquet"), str(work / "qrels.parquet")
        _command_line(spark, [parquet_run], parquet_qrels, work / "spark-p", reader="spark")
        _command_line(spark, [str(trec_run)], str(trec_qrels), work / "spark-trec", reader="spark")
    finally:
        driver_plan.DRIVER_BYTES = driver_limit


def _command_line(
    spark: SparkSession, runs: list[str], qrels: str, out: Path, reader: str = "auto"
) -> None:
    """``sparkeval evaluate`` of ``runs`` against ``qrels`` into ``out``, its table
    printed to nowhere."""
    from sparkeval.commands.evaluate import show as show_evaluation
    from sparkeval.evaluation.job import run_evaluate
    from sparkeval.evaluation.options import EvaluateConfig

    config = EvaluateConfig.load(
        run=runs, qrels=qrels, measures=list(_MEASURES), out=str(out), reader=reader
    )
    with open(os.devnull, "w") as quiet:
        show_evaluation(run_evaluate(spark, config), config, quiet)


def _trec_rows(path: Path, fields: tuple[int, ...]) -> list[list[str]]:
    """Columns ``fields`` of a TREC text file (comment lines skipped)."""
    columns: list[list[str]] = [[] for _ in fields]
    with path.open() as lines:
        for line in lines:
            if line.strip() and not line.startswith("#"):
                parts = line.split()
                for column, field in zip(columns, fields, strict=True):
                    column.append(parts[field])
    return columns


COMMAND = Command(
    name="jvm-archive",
    help="write the class archive that makes local Spark sessions start faster",
    description="Write a class-data archive of the driver JVM for this Java and "
    "pyspark (about 190 MB in the user cache directory, ~45 s to write). Local "
    "sessions started by sparkeval then map Spark's classes from it instead of "
    "loading them, which saves seconds per run. Without this step the first local "
    "session builds it in the background as its process exits. For spark-submit, "
    "--java-options prints the options to give its driver JVM (and executors that run "
    "on this machine's install).",
    config=JvmArchiveConfig,
    run=run,
    show=show,
    uses_spark=False,
)


if __name__ == "__main__":
    _dump(Path(sys.argv[1]), Path(sys.argv[2]))
