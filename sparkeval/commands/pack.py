"""``sparkeval pack``: a packed environment for executors without sparkeval installed."""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self, TextIO

from sparkeval.errors import ConfigError
from sparkeval.job.command import Command
from sparkeval.job.config import JobConfig
from sparkeval.job.options import option

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from sparkeval.packing.build import PackedEnvironment


@dataclass(frozen=True, kw_only=True)
class PackConfig(JobConfig):
    """Where to write the archive, or only which packages it would hold."""

    archive: str = option(
        "sparkeval-env.tar.gz",
        flag="--out",
        metavar="FILE",
        path=True,
        help="the archive to write, ending in .tar.gz or .tgz (default "
        "sparkeval-env.tar.gz); written under a temporary name and renamed when complete",
    )
    overwrite: bool = option(False, help="replace an existing archive")
    requirements: bool = option(
        False,
        help="only print the pinned requirements the archive would hold, one a line, "
        "and build nothing",
    )

    def validate(self) -> Self:
        from sparkeval.packing.build import ARCHIVE_SUFFIXES

        if "://" in self.archive and not self.archive.startswith("file://"):
            raise ConfigError(
                f"{self.archive}: the archive is built as a local file; give a local "
                "path (spark-submit --archives also takes a URI: upload it there after)"
            )
        if not self.archive.endswith(ARCHIVE_SUFFIXES):
            raise ConfigError(
                f"--out {self.archive}: the archive must end in {' or '.join(ARCHIVE_SUFFIXES)} "
                "(Spark unpacks those with their links and file modes)"
            )
        return self

    def preflight(self) -> None:
        if self.requirements:
            return
        if Path(self.archive).is_dir():
            raise ConfigError(f"{self.archive} is a directory; name the archive file to write")
        if not self.overwrite and Path(self.archive).exists():
            raise ConfigError(f"{self.archive} already exists; pass --overwrite to replace it")


def run(spark: SparkSession | None, config: PackConfig) -> PackedEnvironment | list[str]:
    """Build the archive (or, with ``requirements``, list what it would hold)."""
    from sparkeval.packing.requirements import pinned_requirements

    if config.requirements:
        return pinned_requirements()
    from sparkeval.packing.build import build_archive
    from sparkeval.status import status

    packed = build_archive(Path(config.archive), config.overwrite)
    status(
        f"packed environment written to {packed.path} ({packed.size >> 20} MiB, "
        f"{len(packed.requirements)} packages besides sparkeval) in {packed.seconds:.0f} s"
    )
    return packed


def submit_lines(packed: PackedEnvironment, driver_python: str) -> list[str]:
    """How to submit a job with the archive: client mode (the driver runs here, with
    ``driver_python``) and cluster mode (the driver unpacks the archive too)."""
    from sparkeval.packing.build import ALIAS

    archive = shlex.quote(f"{packed.path}#{ALIAS}")
    executors = f"--conf spark.pyspark.python=./{ALIAS}/bin/python"
    driver = f"--conf spark.pyspark.driver.python={shlex.quote(driver_python)}"
    job = "jobs/evaluate.py --config job.yaml"
    return [
        f"# executors need Python {sys.version.split()[0]} at {packed.interpreter} "
        "(the archive holds no interpreter)",
        "# client mode: the driver runs here, on this Python",
        f"spark-submit --master MASTER --archives {archive} {executors} {driver} {job}",
        "# cluster mode (YARN, Kubernetes): the driver runs from the archive too",
        f"spark-submit --master MASTER --deploy-mode cluster --archives {archive} {executors} "
        f"{job}",
    ]


def show(result: PackedEnvironment | list[str], config: PackConfig, stdout: TextIO) -> None:
    """The pinned requirements, or the spark-submit lines that use the archive."""
    lines = result if isinstance(result, list) else submit_lines(result, sys.executable)
    for line in lines:
        print(line, file=stdout)


COMMAND = Command(
    name="pack",
    help="pack sparkeval and its dependencies for executors that do not have them",
    description="Build a packed virtual environment (with venv-pack: pip install "
    "'sparkeval[pack]') holding sparkeval and its runtime dependencies at the versions "
    "installed here, without pyspark and py4j, which Spark gives its Python workers. "
    "Ship it with spark-submit --archives FILE#environment --conf "
    "spark.pyspark.python=./environment/bin/python; the lines to use are printed. "
    "The archive holds no interpreter: every executor needs the same Python at the same "
    "path as this one (conda-pack's archives include one). Needs pip and the package "
    "index (or pip's cache); takes about a minute.",
    config=PackConfig,
    run=run,
    show=show,
    uses_spark=False,
)
