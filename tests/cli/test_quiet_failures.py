"""Failures the CLI reports in one line are not preceded by tracebacks from pyspark's
daemon or py4j (the one-line messages themselves are tested in ``tests/reliability``).

Both cases are made to happen for real in a child process: a py4j client talking to a
server that hangs up, and the daemon's worker function failing on a closed connection.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# a py4j gateway client whose "JVM" accepts each connection and hangs up at once:
# py4j then logs "Exception while sending command." with a traceback on the root logger
_HANGING_UP_GATEWAY = textwrap.dedent(
    """
    import logging, socket, sys, threading
    if sys.argv[1] == "cli":
        from sparkeval.cli import _quiet_spark_error_logs
        _quiet_spark_error_logs()
    from py4j.java_gateway import GatewayParameters, JavaGateway

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def hang_up():
        while True:
            connection, _ = server.accept()
            connection.recv(1 << 16)
            connection.close()

    threading.Thread(target=hang_up, daemon=True).start()
    gateway = JavaGateway(gateway_parameters=GatewayParameters(port=server.getsockname()[1]))
    try:
        gateway.jvm.System.currentTimeMillis()
    except Exception as exc:
        print("raised", type(exc).__name__)
    logging.error("an error of the program's own")
    """
)


def _python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120
    )


def test_py4j_send_failures_print_no_traceback_in_the_cli() -> None:
    plain = _python(_HANGING_UP_GATEWAY, "plain")
    assert "raised Py4J" in plain.stdout
    # without the CLI's logging set-up py4j prints the traceback (what is filtered)
    assert "Exception while sending command." in plain.stderr
    assert "Traceback" in plain.stderr

    cli = _python(_HANGING_UP_GATEWAY, "cli")
    assert "raised Py4J" in cli.stdout
    assert "Exception while sending command." not in cli.stderr
    assert "Traceback" not in cli.stderr
    # other errors logged on the root logger still show
    assert "an error of the program's own" in cli.stderr


_WORKER_ON_A_CLOSED_CONNECTION = textwrap.dedent(
    """
    import socket, sys
    from pyspark.serializers import UTF8Deserializer
    from sparkeval.worker_daemon import ending_quietly_on_a_closed_connection

    def worker(sock, authenticated):
        if authenticated:
            return 0
        ours, theirs = socket.socketpair()
        theirs.close()
        with ours.makefile("wb") as outfile:  # the flush finds the other end gone
            outfile.write(b"x" * 1_000_000)
            outfile.flush()
        return 0

    def authenticating_worker(sock, authenticated):
        if authenticated:
            return 0
        ours, theirs = socket.socketpair()
        theirs.close()
        with ours.makefile("rb") as infile:  # the JVM went before sending its secret
            UTF8Deserializer().loads(infile)
        return 0

    chosen = worker if sys.argv[1] == "flush" else authenticating_worker
    quiet = ending_quietly_on_a_closed_connection(chosen)
    print("returned", quiet(None, True), flush=True)
    if sys.argv[2] == "quiet":
        quiet(None, False)
    else:
        chosen(None, False)
    print("not reached")
    """
)


@pytest.mark.parametrize(("where", "error"), [("flush", "BrokenPipeError"), ("read", "EOFError")])
def test_a_worker_finding_its_connection_closed_ends_quietly_with_code_1(
    where: str, error: str
) -> None:
    loud = _python(_WORKER_ON_A_CLOSED_CONNECTION, where, "loud")
    assert error in loud.stderr  # the error the wrapper is there for

    quiet = _python(_WORKER_ON_A_CLOSED_CONNECTION, where, "quiet")
    assert quiet.returncode == 1
    assert quiet.stdout == "returned 0\n"
    assert quiet.stderr == ""
