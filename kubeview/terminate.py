"""SIGTERM ends kubeview as Ctrl-C does: the `finally` blocks clean up on the way out, `cli.main`
says `kubeview: terminated` (Ctrl-C: `interrupted`) and the exit code is 143 (128 + SIGTERM).

`Terminated` is a SystemExit so that `except Exception` handlers (Optuna's trial runner, worker
loops) let it through as they let Ctrl-C through. Commands that treat SIGTERM as a normal stop (the
extender, a server) install their own handler for the time they run.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

EXIT_CODE = 128 + signal.SIGTERM


class Terminated(SystemExit):
    """Raised in the main thread by the SIGTERM handler."""

    def __init__(self) -> None:
        super().__init__(EXIT_CODE)


def raise_terminated(signum: int, frame: object) -> None:
    raise Terminated()


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises `Terminated` (main thread only; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def discard_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's last flush does not fail again (the reader of a
    pipe went away: `cli.main` and `snapshot` stop quietly, as Unix tools do)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
