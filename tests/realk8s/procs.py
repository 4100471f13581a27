"""Child processes of the real plane that cannot outlive the test session.

Each process runs in a process group of its own (so a stop reaches whatever it forked) with
PR_SET_PDEATHSIG=SIGKILL (so even a SIGKILLed pytest leaves nothing behind: the kernel kills the
children when their parent dies). Every `Proc` is registered in `LIVE`; `stop_all` is what the
session teardown, `atexit` and the SIGTERM/SIGINT handlers call.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

PR_SET_PDEATHSIG = 1
LIVE: list[Proc] = []
DIRS: list[Path] = []  # removed by stop_all once the processes that write there are gone
_LOCK = threading.Lock()


def _die_with_parent() -> None:  # runs in the child between fork and exec
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port() -> int:
    """A loopback port nobody listens on now (the kernel's choice for port 0)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proc:
    """One started binary with its log file; `stop()` is idempotent."""

    def __init__(self, name: str, argv: list[str], log_dir: Path, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.argv = argv
        self.log_path = log_dir / f"{name}.log"
        self._log = open(self.log_path, "ab")  # noqa: SIM115 (closed in stop)
        self.popen = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      start_new_session=True, preexec_fn=_die_with_parent,
                                      env={**os.environ, **(env or {})})
        with _LOCK:
            LIVE.append(self)

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None

    def tail(self, lines: int = 30) -> str:
        """The end of its log, for failure messages."""
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> None:
        """Signal the whole group, wait, then SIGKILL what is left."""
        if self.alive:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)  # anything it forked that ignored the first signal
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(5)
        self._log.close()
        with _LOCK:
            if self in LIVE:
                LIVE.remove(self)


def stop_all() -> None:
    """Stop every live process, newest first (kwok and the scheduler before the API server, etcd last)."""
    with _LOCK:
        procs = list(reversed(LIVE))
    for p in procs:
        p.stop(timeout=5)
    while DIRS:
        shutil.rmtree(DIRS.pop(), ignore_errors=True)


def wait_until(predicate, timeout: float, what: str, interval: float = 0.05):
    """Poll `predicate` until it returns a truthy value; AssertionError naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def _on_signal(signum, frame) -> None:  # noqa: ARG001
    stop_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


_installed = False


def install_cleanup() -> None:
    """atexit and SIGTERM run `stop_all`; SIGINT is pytest's KeyboardInterrupt, whose teardown stops the
    session fixture (and atexit follows)."""
    global _installed
    if _installed:
        return
    _installed = True
    atexit.register(stop_all)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_signal)
