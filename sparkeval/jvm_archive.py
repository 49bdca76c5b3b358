"""A class-data archive for the driver JVM of the local sessions sparkeval starts.

A local Spark session loads, parses and verifies the same tens of thousands of classes
every time it starts, which is most of its start-up time.  HotSpot can instead map
them from a class-data archive written once (dynamic AppCDS, Java 13+):
``-XX:ArchiveClassesAtExit=F`` writes the classes a run loaded to ``F`` when the JVM
exits, and ``-XX:SharedArchiveFile=F`` maps them on the next start.

``sparkeval jvm-archive`` writes such an archive by running two small evaluations (one
read by the Python workers, one by Spark's readers) in a JVM that dumps its classes at
exit.  Sessions sparkeval starts itself (not ``spark-submit``) then use it.  The
archive's name carries a key of the Java installation and the pyspark version and jars,
so another Java or pyspark never picks up a foreign archive; should the JVM still
refuse it, it starts as usual (``-Xshare:auto``) with its warnings silenced.

The archive lives in ``$SPARKEVAL_CACHE_DIR``, else ``$XDG_CACHE_HOME/sparkeval``, else
``~/.cache/sparkeval``.  ``SPARKEVAL_JVM_ARCHIVE=off`` ignores it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from sparkeval.errors import EnvironmentProblem

#: set to ``off`` to start sessions without the archive
SWITCH_ENV = "SPARKEVAL_JVM_ARCHIVE"
#: where archives are kept (default: the user's cache directory)
CACHE_ENV = "SPARKEVAL_CACHE_DIR"
#: HotSpot logs a warning for every class it cannot archive (signed jars, ...)
_QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")


def cache_dir() -> Path:
    """The directory that holds sparkeval's JVM archives."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sparkeval"


def archive_key() -> str | None:
    """A digest of what the archive depends on: the Java build, pyspark and its jars."""
    from sparkeval.spark import java_binary

    java = java_binary()
    if java is None:
        return None
    import pyspark

    digest = hashlib.sha256()
    stat = java.stat()
    digest.update(f"{java}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    release = java.parent.parent / "release"
    if release.exists():
        digest.update(release.read_bytes())
    digest.update(f"\0pyspark {pyspark.__version__}\0".encode())
    jars = Path(pyspark.__file__).parent / "jars"
    if jars.is_dir():
        for jar in sorted(jars.iterdir()):
            digest.update(f"{jar.name}:{jar.stat().st_size}\0".encode())
    return digest.hexdigest()[:20]


def archive_path() -> Path | None:
    """The usable archive for this Java and pyspark, or None.

    An archive is named ``jvm-classes-<key>-<bytes>.jsa``: one whose size is not the
    size in its name (cut short, say) is never handed to the JVM, which would crash
    on it rather than start without it.
    """
    key = archive_key()
    if key is None:
        return None
    for path in sorted(cache_dir().glob(f"jvm-classes-{key}-*.jsa")):
        size = path.stem.rsplit("-", 1)[1]
        if size.isdigit() and path.is_file() and path.stat().st_size == int(size):
            return path
    return None


def java_options() -> list[str]:
    """Driver JVM options that map the archive, or ``[]`` when there is none to use."""
    if os.environ.get(SWITCH_ENV, "").lower() == "off":
        return []
    path = archive_path()
    if path is None:
        return []
    return [f"-XX:SharedArchiveFile={path}", "-Xshare:auto", *_QUIET]


def build_archive() -> Path:
    """Write the archive for this Java and pyspark (replacing older ones); its path.

    Runs :func:`_dump` in a child Python whose driver JVM writes its classes at exit;
    the archive is renamed into place only once that JVM has exited cleanly.
    """
    key = archive_key()
    if key is None:
        raise EnvironmentProblem("Java was not found; a JVM archive needs Java 17 or newer")
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    partial = directory / f".jvm-classes-{key}.{os.getpid()}.partial"
    env = {**os.environ, SWITCH_ENV: "off", "PYSPARK_PYTHON": sys.executable}
    with tempfile.TemporaryDirectory(prefix="sparkeval-jvm-archive-") as work:
        done = subprocess.run(
            [sys.executable, "-m", "sparkeval.jvm_archive", str(partial), work],
            env=env,
            capture_output=True,
            text=True,
        )
    if done.returncode != 0 or not partial.is_file() or partial.stat().st_size == 0:
        partial.unlink(missing_ok=True)
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise EnvironmentProblem(f"the JVM archive could not be written:\n{tail}")
    for older in directory.glob(f"jvm-classes-{key}-*.jsa"):
        older.unlink()
    path = directory / f"jvm-classes-{key}-{partial.stat().st_size}.jsa"
    os.replace(partial, path)
    return path


def remove_archives() -> list[Path]:
    """Delete every archive in the cache directory (any Java or pyspark); the paths."""
    directory = cache_dir()
    if not directory.is_dir():
        return []
    removed = sorted(directory.glob("jvm-classes-*.jsa"))
    for path in removed:
        path.unlink()
    return removed


def _dump(archive: Path, work: Path) -> None:
    """Evaluate a small collection both ways in a JVM that archives its classes at exit."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sparkeval.commands.evaluate import EvaluateConfig, show
    from sparkeval.demo_data import generate
    from sparkeval.evaluate_job import run_evaluate
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

    options = " ".join([*local_java_options(), f"-XX:ArchiveClassesAtExit={archive}", *_QUIET])
    spark = build_session(
        "local[2]", "sparkeval-jvm-archive", {"spark.driver.extraJavaOptions": options}
    )
    for name, run_paths, qrels_path in (
        ("parquet", [str(work / "run.parquet")], str(work / "qrels.parquet")),
        ("trec", [str(p) for p in paths.runs], str(paths.qrels)),
    ):
        config = EvaluateConfig.load(
            run=run_paths,
            qrels=qrels_path,
            measures=["official", "nDCG@10", "ERR@20"],
            out=str(work / f"out-{name}"),
        )
        with open(os.devnull, "w") as quiet:
            show(run_evaluate(spark, config), config, quiet)
    gateway = spark.sparkContext._gateway
    spark.stop()
    # the JVM writes the archive while it exits: wait for it
    gateway.proc.stdin.close()
    gateway.proc.wait()


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


if __name__ == "__main__":
    _dump(Path(sys.argv[1]), Path(sys.argv[2]))
