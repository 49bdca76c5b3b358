"""The first thing the ``sparkeval`` program does: a Ctrl-C while it starts exits quietly.

Loading the command's modules (numpy, pandas, pyarrow) takes most of a second; a Ctrl-C
then would print a traceback of some import.  Imported first by :mod:`sparkeval.cli`
when it runs as the program (``python -m sparkeval.cli`` or the ``sparkeval`` script),
this module makes such a Ctrl-C print one line and exit 130;
:func:`sparkeval.cli.main` puts Python's own handler back once it runs, and from there
an interrupt stops any JVM the command started.  Imported by a library user, it does
nothing.
"""

from __future__ import annotations

import os
import signal
import sys


def interrupted_while_starting(signum: int, stack_frame: object) -> None:
    """Ctrl-C before :func:`sparkeval.cli.main` runs: one line, exit 130."""
    os.write(2, b"sparkeval: interrupted\n")
    os._exit(130)


def _is_the_program() -> bool:
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    return getattr(spec, "name", None) == "sparkeval.cli" or (
        os.path.basename(sys.argv[0]) == "sparkeval" if sys.argv else False
    )


if _is_the_program():
    signal.signal(signal.SIGINT, interrupted_while_starting)
