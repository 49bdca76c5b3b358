"""The one place that builds SparkSessions, and the helpers that adjust how they run."""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sparkeval.errors import ConfigError, EnvironmentProblem
from sparkeval.spark_environment import java_binary

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession

#: settings every sparkeval session gets unless the caller overrides them
DEFAULT_CONF: dict[str, str] = {
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "100000",
    # a failing job is reported once, not retried without Arrow behind a warning
    "spark.sql.execution.arrow.pyspark.fallback.enabled": "false",
    # rows holding long arrays (a document's shingles) would otherwise make one Arrow
    # batch of hundreds of MB; small rows never reach this bound
    "spark.sql.execution.arrow.maxBytesPerBatch": str(64 << 20),
    # pyspark records the user's call site on every column function (three JVM calls
    # each); sparkeval's errors name files and rows instead, and a small evaluation
    # builds hundreds of columns
    "spark.python.sql.dataFrameDebugging.enabled": "false",
}


#: Spark's bound on the bytes of one Arrow batch of rows sent to the Python workers
ARROW_BATCH_BYTES_KEY = "spark.sql.execution.arrow.maxBytesPerBatch"
#: the bound at which Spark stops measuring the batch it builds (Java's largest int)
UNMEASURED_BATCH_BYTES = str(2**31 - 1)


@contextlib.contextmanager
def session_settings(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """Within the block, the session runs with ``settings``; on exit each key's own
    value (or its absence) is put back, also on error.  When the error took the
    session with it (the JVM gone), that error is what propagates.  Jobs other
    threads run on the same session meanwhile see the settings too.
    """
    saved = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)

    def restore() -> None:
        for key, value in saved.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)

    try:
        yield
    except BaseException:
        with contextlib.suppress(Exception):
            restore()
        raise
    restore()


def arrow_batches_bounded_by_rows(spark: SparkSession) -> contextlib.AbstractContextManager:
    """Within the block, Arrow batches of rows sent to the Python workers end at
    ``spark.sql.execution.arrow.maxRecordsPerBatch`` rows only, with no byte bound.

    Under a byte bound (Spark 4's default is 64 MiB) Spark measures the batch after
    every row it adds, walking the Arrow vectors of every column: on 2 cores that was
    about a third of the JVM's time in turning 10M evaluation rows into Arrow, and
    handing those rows to a Python function that only counts them took 3.2 s instead
    of 2.0 s (second runs in one session).  Evaluation rows hold a few ids and a
    number, so a batch of ``maxRecordsPerBatch`` rows is megabytes, not hundreds.
    The session's own value is put back on exit (:func:`session_settings`).
    """
    return session_settings(spark, {ARROW_BATCH_BYTES_KEY: UNMEASURED_BATCH_BYTES})


@contextlib.contextmanager
def without_call_sites() -> Iterator[None]:
    """Build plans without pyspark's call-site capture, in a session sparkeval did not
    build too (the setting above is read once per process, so it is switched for the
    duration of the block only). Where pyspark lacks the switch, nothing changes."""
    try:
        from pyspark.errors import utils
    except ImportError:  # pragma: no cover - older pyspark
        yield
        return
    if not hasattr(utils, "_enable_debugging_cache"):
        yield
        return
    saved = utils._enable_debugging_cache
    setattr(utils, "_enable_debugging_cache", False)  # noqa: B010 - typed as None
    try:
        yield
    finally:
        setattr(utils, "_enable_debugging_cache", saved)  # noqa: B010


def to_pandas(df: DataFrame) -> pd.DataFrame:
    """``df.toPandas()`` without pyspark's ``UserWarning`` when the job fails.

    When a job collected through Arrow fails (a bad value found in a task), pyspark
    warns that it "attempted Arrow optimization" and repeats the whole error before
    raising it. The error still propagates, and sparkeval reports it in one line.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="toPandas attempted Arrow optimization", category=UserWarning
        )
        return df.toPandas()


#: the Spark setting naming the module that runs the Python worker daemon
PYTHON_DAEMON_KEY = "spark.python.daemon.module"
#: sparkeval's daemon for local sessions (:mod:`sparkeval.worker_daemon`)
PYTHON_DAEMON_MODULE = "sparkeval.worker_daemon"


def check_java() -> None:
    """Fail early, with an install hint, when no Java runtime can be found."""
    if java_binary() is not None:
        return
    raise EnvironmentProblem(
        "Java was not found (no 'java' on PATH and no JAVA_HOME). Spark needs Java 17 or "
        "newer: on Debian/Ubuntu 'sudo apt-get install -y openjdk-17-jre-headless', on "
        "macOS 'brew install openjdk@17', then run sparkeval again."
    )


def build_session(
    master: str | None = None,
    app_name: str = "sparkeval",
    conf: Mapping[str, str] | None = None,
    jvm_profile: str | None = None,
    remote: str | None = None,
):
    """Get or create the SparkSession with sparkeval's defaults.

    A session that already runs in this process (a notebook's, a test suite's, the
    one ``spark-submit`` started) is returned with its own settings: sparkeval's
    defaults are for sessions it starts itself, and only ``conf`` is applied.

    Args:
        master: Spark master URL; ``None`` keeps what ``spark-submit`` set, or
            ``local[*]`` when running outside spark-submit.
        app_name: application name shown by the cluster manager.
        conf: extra Spark settings (they win over the defaults).
        jvm_profile: who will do the heavy work, ``workers`` or ``spark``: tunes the
            driver JVM of a session started here (:data:`JVM_PROFILES`).
        remote: a Spark Connect server (``sc://HOST:PORT``); default ``SPARK_REMOTE``.
            No JVM starts here: the server runs the job (its Python workers need
            sparkeval installed), and ``conf`` becomes the session's settings.
    """
    remote = remote or os.environ.get("SPARK_REMOTE")
    if remote:
        if master:
            raise ConfigError("give either --master or --remote (Spark Connect), not both")
        from sparkeval.spark_environment import check_connect_client

        check_connect_client()
        from pyspark.sql import SparkSession

        builder = SparkSession.builder.remote(remote)
        for key, value in (conf or {}).items():
            builder = builder.config(key, value)
        return builder.getOrCreate()
    check_java()
    # Python workers must run the interpreter that runs the driver (venv installs).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    _quiet_accumulator_server()
    builder = SparkSession.builder.appName(app_name)
    submitted = _submitted()
    context = _running_context()
    running = context is not None
    if running and not submitted:
        _note_running_session(context.master, master)
    # Under spark-submit, or in a process whose session already runs (a notebook, a
    # test suite), that session's settings stand; only the caller's own are applied.
    adopted = submitted or running
    defaults = {} if adopted else _local_defaults(jvm_profile)
    if not adopted and (master is None or master.startswith("local")):
        # workers on this machine import the installed sparkeval, so its daemon can
        # start them (a cluster's executors may get sparkeval only from --py-files,
        # which arrive with the first task, after the daemon started)
        defaults[PYTHON_DAEMON_KEY] = PYTHON_DAEMON_MODULE
    settings = {**defaults, **(conf or {})}
    if master and not running:
        builder = builder.master(master)
    elif not adopted:
        builder = builder.master("local[*]")
    from sparkeval.storage.stores import is_secret_key

    # a secret on the JVM's command line is readable by every user of the machine (ps):
    # it goes into the session's Hadoop configuration once the JVM runs instead
    secrets = {k: v for k, v in settings.items() if is_secret_key(k)}
    for key, value in settings.items():
        if key not in secrets:
            builder = builder.config(key, value)
    if not adopted:
        from sparkeval.spark_environment import check_spark_environment

        check_spark_environment(master, settings)
        conf_of_jvm = {k: v for k, v in settings.items() if k not in secrets}
        _start_gateway(master or "local[*]", app_name, conf_of_jvm)
    session = builder.getOrCreate()
    if secrets:
        hadoop = session._jsc.hadoopConfiguration()
        for key, value in secrets.items():
            hadoop.set(key[len("spark.hadoop.") :], str(value))
    return session


#: lines the driver JVM prints as it starts, which say nothing to a sparkeval user:
#: Java's note on the vector module Spark loads, and the note of Spark's default log
#: settings on how to change the level from a shell
JVM_BANNER_LINES = (
    b"WARNING: Using incubator modules: jdk.incubator.vector",
    b'Setting default log level to "',
    b"To adjust logging level use sc.setLogLevel(newLevel).",
)


def _start_gateway(master: str, app_name: str, settings: Mapping[str, str]) -> None:
    """Start the driver JVM of a session started here, its stderr passed on line by line
    but for :data:`JVM_BANNER_LINES` (:func:`_pass_on_stderr`).

    pyspark starts the JVM when the first SparkContext needs it
    (``launch_gateway(conf)``, the JVM's stderr the process's own); here it is started
    the same way, with the same settings, before the session, and the session uses it.
    """
    import subprocess
    import threading

    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return  # the JVM of an earlier session of this process
    conf = SparkConf(loadDefaults=False)
    conf.set("spark.master", master).set("spark.app.name", app_name)
    for key, value in settings.items():
        conf.set(key, value)
    # the JVM writes nothing for stdout's reader (the results): its stdout goes to
    # stderr, so a pipe of the results ends when sparkeval does
    streams = {"stderr": subprocess.PIPE, "stdout": 2}  # file descriptor 2: stderr
    try:
        gateway = launch_gateway(conf, popen_kwargs=streams)
    except BaseException:  # interrupted (Ctrl-C) or failed while the JVM starts
        stop_started_jvms()
        raise
    thread = threading.Thread(
        target=_pass_on_stderr,
        args=(gateway.proc.stderr,),
        name="sparkeval-jvm-stderr",
        daemon=True,
    )
    thread.start()
    SparkContext._gateway = gateway
    SparkContext._jvm = gateway.jvm


def stop_started_jvms() -> None:
    """Stop the driver JVMs this process started (pyspark starts them ignoring SIGINT, so
    Ctrl-C alone leaves them running): the gateway's, and on Linux any Spark launcher
    child of this process, for one whose start was interrupted."""
    import signal

    from pyspark import SparkContext

    gateway = SparkContext._gateway if "pyspark" in sys.modules else None
    proc = getattr(gateway, "proc", None)
    if proc is not None and proc.poll() is None:
        proc.kill()
    for pid in _spark_children():
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def finish_started_jvm(stop_session: bool = True, timeout: float = 30.0) -> None:
    """Wait until the driver JVM this process started has exited, so that no JVM
    outlives the ``sparkeval`` program: the JVM ends when its standard input closes,
    after Spark's shutdown hooks (which stop the session and remove its temporary
    directories); one still running after ``timeout`` seconds is killed. With
    ``stop_session`` the session is stopped first, from here (a command that ran to
    its end; after a failure the JVM may not answer). Nothing when this process
    started no JVM."""
    import subprocess

    if "pyspark" not in sys.modules:
        return
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if proc is None or proc.poll() is not None:
        return
    context = SparkContext._active_spark_context
    if stop_session and context is not None:
        with contextlib.suppress(Exception):  # a JVM already failing: it is ended below
            context.stop()
    with contextlib.suppress(OSError):
        if proc.stdin is not None:
            proc.stdin.close()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _spark_children() -> list[int]:
    """The ids of this process's children running Spark's launcher (Linux ``/proc``)."""
    found: list[int] = []
    proc_root = Path("/proc")
    if not proc_root.is_dir():
        return found
    me = os.getpid()
    for entry in proc_root.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            if parent == me and b"org.apache.spark" in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _pass_on_stderr(stream) -> None:
    """Copy the JVM's stderr to this process's (file descriptor 2) line by line, but for
    its start-up banner lines; ends when the JVM closes it."""
    for line in iter(stream.readline, b""):
        if not line.startswith(JVM_BANNER_LINES):
            with contextlib.suppress(OSError):  # stderr closed: nowhere to show the line
                os.write(2, line)


def session_running() -> bool:
    """Whether this process already runs a SparkContext (a notebook's or a test suite's
    session, or the one ``spark-submit`` started), which ``getOrCreate`` would return."""
    return _running_context() is not None


def _running_context():
    """This process's active SparkContext, or None (pyspark not even imported)."""
    if "pyspark" not in sys.modules:
        return None
    from pyspark import SparkContext

    return SparkContext._active_spark_context


def _note_running_session(running_master: str, master: str | None) -> None:
    """A status line when ``master`` asks for another master than the running session's
    (Spark runs one context per process, so the running one is used)."""
    if master and master != running_master:
        from sparkeval.status import status

        status(
            f"a Spark session is already running in this process (master {running_master}); "
            f"it is used as it is, not a new one on {master}"
        )


#: HotSpot options of a local session's driver JVM, by who does the heavy work.
#:
#: ``workers``: the Python workers compute and the JVM mostly moves Arrow batches, while
#: its start-up and warm-up compete with the workers for the cores.  C1 alone
#: (``TieredStopAtLevel=1``) leaves the C2 compiler's CPU to the workers; the parallel
#: collector starts with less machinery than G1.  ``spark``: Spark's own readers and
#: operators do the work and need C2, but only for their hottest code: C2's
#: thresholds are raised tenfold or more so that it does not compile the start-up's
#: lukewarm code.  Measured on 2 cores, 10M run rows, whole job, median of 2–3:
#: evaluate on the workers 14.6 s (HotSpot's defaults) → 11.8 s (``workers``, 13.9 s
#: with ``spark``); with Spark's readers 22.3 s → 19.5 s (``spark``; 23.7 s with
#: ``workers``).
JVM_PROFILES: dict[str, tuple[str, ...]] = {
    "workers": ("-XX:TieredStopAtLevel=1", "-XX:+UseParallelGC"),
    "spark": (
        "-XX:Tier4InvocationThreshold=100000",
        "-XX:Tier4MinInvocationThreshold=50000",
        "-XX:Tier4CompileThreshold=120000",
        "-XX:Tier4BackEdgeThreshold=1000000",
        "-XX:+UseParallelGC",
    ),
}


def local_java_options(profile: str | None = None) -> list[str]:
    """Driver JVM options of local sessions: quiet logs and the :data:`JVM_PROFILES`
    entry of ``profile`` (None: HotSpot's defaults; the class archive comes on top).

    ``SPARKEVAL_JVM_PROFILE=off`` leaves HotSpot's own compiler and collector choice.
    """
    if profile is not None and profile not in JVM_PROFILES:
        raise ValueError(f"JVM profile must be one of {sorted(JVM_PROFILES)}, got {profile!r}")
    log_config = Path(__file__).with_name("log4j2.properties")
    tuned = os.environ.get("SPARKEVAL_JVM_PROFILE", "").lower() != "off"
    return [
        f"-Dlog4j.configurationFile={log_config.as_uri()}",
        *(JVM_PROFILES[profile] if tuned and profile else ()),
    ]


def _local_defaults(jvm_profile: str | None = None) -> dict[str, str]:
    """Defaults for sessions sparkeval starts itself: few shuffle partitions, no web UI,
    quiet logs, the JVM profile, the driver JVM's class archive when one was written
    (:mod:`sparkeval.jvm_archive`)."""
    from sparkeval.jvm_archive import java_options, prepare_at_exit

    archive = java_options()
    if not archive:
        prepare_at_exit()
    return {
        **DEFAULT_CONF,
        # the web UI costs ~0.3 s of start-up; a local batch job is watched from its log
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": str(local_shuffle_partitions()),
        "spark.driver.extraJavaOptions": " ".join([*local_java_options(jvm_profile), *archive]),
    }


def local_shuffle_partitions() -> int:
    """``spark.sql.shuffle.partitions`` of the local sessions sparkeval starts: four per core."""
    return 4 * (os.cpu_count() or 2)


def local_session_cores(master: str | None, remote: str | None) -> int | None:
    """The cores of the local session :func:`build_session` would start for ``master``
    and ``remote``; None when it would not start a local one (a cluster master, Spark
    Connect, or a session ``spark-submit`` already started).

    Example: ``local[2]`` gives 2, ``local`` 1, ``local[*]`` (and no master) the
    machine's cores; ``spark://host:7077`` gives None.
    """
    if _submitted() or remote or os.environ.get("SPARK_REMOTE"):
        return None
    machine = os.cpu_count() or 1
    master = master or "local[*]"
    if master == "local":
        return 1
    if not (master.startswith("local[") and master.endswith("]")):
        return None
    threads = master[len("local[") : -1].split(",")[0].strip()
    if threads == "*":
        return machine
    return min(machine, int(threads)) if threads.isdigit() and int(threads) > 0 else None


def _quiet_accumulator_server() -> None:
    """Keep pyspark's accumulator server from printing a traceback when the JVM dies.

    Its thread reports the closed connection (EOFError) on stderr before the job can
    say in one line what happened (exit 1, "lost the connection to the Spark JVM");
    other errors are still printed as before.
    """
    import socketserver

    from pyspark import accumulators

    def handle_error(server, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], (EOFError, ConnectionError)):
            return
        socketserver.BaseServer.handle_error(server, request, client_address)

    for name in ("AccumulatorTCPServer", "AccumulatorUnixServer"):
        server_class = getattr(accumulators, name, None)
        if server_class is not None:
            server_class.handle_error = handle_error


def is_connect(spark: SparkSession) -> bool:
    """Whether ``spark`` is a Spark Connect session (no JVM in this process)."""
    return "connect" in type(spark).__module__.split(".")


def spark_type(name: str) -> Any:
    """The Spark data type ``name`` (``"double"``, ``"long"``, ``"int"``, ``"string"``,
    ``"boolean"``, ``"binary"``, or ``"array<...>"`` of one of them) as an object, for
    ``Column.cast``.

    A type given as text goes through Spark's SQL parser on every cast: about 0.17 s
    for the parser's first use in a new session, then 6-11 ms a cast; a type object is
    sent as JSON, 0.03 s the first time, then about 2 ms.

    Example: ``F.col("score").cast(spark_type("double"))``.
    """
    from pyspark.sql import types as T

    if name.startswith("array<") and name.endswith(">"):
        return T.ArrayType(spark_type(name[len("array<") : -1]))
    kinds = {
        "double": T.DoubleType,
        "long": T.LongType,
        "int": T.IntegerType,
        "string": T.StringType,
        "boolean": T.BooleanType,
        "binary": T.BinaryType,
    }
    return kinds[name]()


def parallelism(spark: SparkSession) -> int:
    """The cluster's default parallelism; on Spark Connect, which cannot ask the
    cluster, ``spark.default.parallelism`` or the shuffle partitions."""
    if not is_connect(spark):
        return int(spark.sparkContext.defaultParallelism)
    value = spark.conf.get("spark.default.parallelism", None)
    return int(value or spark.conf.get("spark.sql.shuffle.partitions") or 200)


def quiet_submitted_session(session) -> None:
    """Under ``spark-submit``: Spark's INFO lines off (``WARN``, or the level in
    ``SPARKEVAL_SPARK_LOG_LEVEL``) and sparkeval's status lines through the JVM's log
    (the launcher merges the Python driver's stderr into stdout). Sessions started
    here already log at WARN (``log4j2.properties``)."""
    if not _submitted():
        return
    from sparkeval.status import route_to_jvm_log

    session.sparkContext.setLogLevel(os.environ.get("SPARKEVAL_SPARK_LOG_LEVEL", "WARN"))
    route_to_jvm_log(session)


def _submitted() -> bool:
    """True inside spark-submit (it starts the JVM and hands Python its gateway)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ
