"""The local cluster's kubelet: runs pods' containers as real OS processes and watches them.

One supervisor thread owns every child: it starts them (in their own session, so a Ctrl-C in the
terminal reaches kubeview and not the consumers, and with PR_SET_PDEATHSIG so they die with the
supervisor thread even if kubeview is SIGKILLed), polls them, restarts crashed ones with a doubling
backoff the way a kubelet does, stops deleted ones with SIGTERM then SIGKILL after the grace period,
and samples CPU and RSS with psutil. Other threads only enqueue requests and read `pids()`; results
go out through the `report` callback (called on the supervisor thread). No Kubernetes objects here.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psutil

Key = tuple[str, str]  # (namespace, pod name)

_PR_SET_PDEATHSIG = 1
_prctl: Callable[..., int] | None
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux
    _prctl = None


def _child_setup() -> None:  # runs in the child between fork and exec: keep it tiny
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class ContainerSpec:
    key: Key
    argv: list[str]
    restart_policy: str = "Always"  # Always | OnFailure | Never, as in a pod spec
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    log_path: str | None = None


@dataclass(frozen=True, slots=True)
class _Stop:
    """A request to the supervisor thread: stop this pod's process (SIGKILL after `grace` seconds)."""

    key: Key
    grace: float


@dataclass(frozen=True, slots=True)
class _Close:
    """A request to the supervisor thread: stop every process, then end."""

    grace: float


@dataclass(frozen=True, slots=True)
class Started:
    key: Key
    pid: int
    restarts: int


@dataclass(frozen=True, slots=True)
class Exited:
    """The process ended on its own; `restart_in` is None when it stays down (policy says so)."""

    key: Key
    exit_code: int  # k8s convention: 128 + signal for a signalled process
    restarts: int  # after this exit
    restart_in: float | None


@dataclass(frozen=True, slots=True)
class Stopped:
    """A process that was asked to stop is gone (or never ran); the pod can be removed."""

    key: Key
    exit_code: int | None


@dataclass(frozen=True, slots=True)
class Usage:
    samples: dict[Key, tuple[float, int]]  # key -> (cpu cores, rss bytes)


Report = Started | Exited | Stopped | Usage


@dataclass(slots=True)
class _Child:
    spec: ContainerSpec
    proc: subprocess.Popen | None = None
    ps: psutil.Process | None = None
    restarts: int = 0
    in_row: int = 0  # crashes since the backoff last reset
    started_at: float = 0.0
    restart_at: float | None = None  # backoff deadline while waiting to restart
    kill_at: float | None = None  # SIGKILL deadline once stopping
    stopping: bool = False


@dataclass(frozen=True, slots=True)
class KubeletSettings:
    poll_interval: float = 0.05
    """Seconds between looks at the children."""
    usage_interval: float = 1.0
    """Seconds between psutil samples (CPU % needs an interval between two readings)."""
    backoff_initial: float = 0.5
    """First restart delay after a crash; doubles per crash (kubelet: 10 s, small here)."""
    backoff_max: float = 10.0
    """Cap of the restart delay (kubelet: 5 min)."""
    backoff_reset: float = 30.0
    """A container that ran this long before crashing starts its backoff again from the beginning."""


def exit_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


class Supervisor:
    """Starts, restarts and stops child processes; reports what happens through `report`."""

    def __init__(self, report: Callable[[Report], None], settings: KubeletSettings | None = None) -> None:
        self._report = report
        self.settings = settings or KubeletSettings()
        self._requests: queue.Queue[ContainerSpec | _Stop | _Close] = queue.Queue()  # a spec: start it
        self._children: dict[Key, _Child] = {}
        self._pids: dict[Key, int] = {}
        self._pids_lock = threading.Lock()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="kubeview-local-kubelet", daemon=True)
        self._thread.start()

    # --- called from any thread ---------------------------------------------------------------
    def start(self, spec: ContainerSpec) -> None:
        self._requests.put(spec)

    def stop(self, key: Key, grace: float) -> None:
        self._requests.put(_Stop(key, grace))

    def pids(self) -> dict[Key, int]:
        """Live processes by pod."""
        with self._pids_lock:
            return dict(self._pids)

    def close(self, grace: float = 5.0, timeout: float = 15.0) -> None:
        """Stop every child (SIGTERM, SIGKILL after `grace`) and end the supervisor thread."""
        if self._closed.is_set():
            return
        self._requests.put(_Close(grace))
        self._thread.join(timeout)
        self._closed.set()
        for child in list(self._children.values()):  # only if the thread did not finish in time
            self._signal(child, signal.SIGKILL)

    # --- supervisor thread ---------------------------------------------------------------------
    def _loop(self) -> None:
        closing: float | None = None
        next_usage = time.monotonic() + self.settings.usage_interval
        while True:
            try:
                while True:
                    request = self._requests.get_nowait()
                    if isinstance(request, ContainerSpec):
                        if closing is None:
                            self._start(request)
                    elif isinstance(request, _Stop):
                        self._begin_stop(request.key, request.grace)
                    elif closing is None:
                        closing = request.grace
                        for key in list(self._children):
                            self._begin_stop(key, request.grace)
            except queue.Empty:
                pass
            self._poll()
            if closing is not None and not self._children:
                return
            now = time.monotonic()
            if now >= next_usage and closing is None:
                next_usage = now + self.settings.usage_interval
                self._sample()
            time.sleep(self.settings.poll_interval)

    def _start(self, spec: ContainerSpec) -> None:
        child = self._children.get(spec.key)
        if child is not None and (child.proc is not None or child.stopping):
            return
        child = child or _Child(spec)
        self._children[spec.key] = child
        self._spawn(child)

    def _spawn(self, child: _Child) -> None:
        spec = child.spec
        env = dict(os.environ)
        env.update(spec.env)
        log = open(spec.log_path, "ab") if spec.log_path else None  # noqa: SIM115
        out = log if log is not None else subprocess.DEVNULL
        try:
            child.proc = subprocess.Popen(spec.argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env,
                                          cwd=spec.cwd, start_new_session=True, preexec_fn=_child_setup)
        except OSError as exc:
            child.proc = None
            if log is not None:
                log.write(f"kubeview: cannot start {spec.argv[0]}: {exc.strerror or exc}\n".encode())
            self._after_exit(child, 127)
            return
        finally:
            if log is not None:
                log.close()
        child.started_at = time.monotonic()
        child.restart_at = None
        try:
            child.ps = psutil.Process(child.proc.pid)
            child.ps.cpu_percent(None)
        except psutil.Error:
            child.ps = None
        with self._pids_lock:
            self._pids[spec.key] = child.proc.pid
        self._report(Started(spec.key, child.proc.pid, child.restarts))

    def _begin_stop(self, key: Key, grace: float) -> None:
        child = self._children.get(key)
        if child is None:
            self._report(Stopped(key, None))
            return
        if child.stopping:
            return
        child.stopping = True
        child.restart_at = None
        if child.proc is None:
            self._finish(child, None)
            return
        child.kill_at = time.monotonic() + max(0.0, grace)
        self._signal(child, signal.SIGTERM if grace > 0 else signal.SIGKILL)

    def _signal(self, child: _Child, sig: int) -> None:
        if child.proc is None or child.proc.returncode is not None:
            return
        try:
            os.killpg(child.proc.pid, sig)
        except ProcessLookupError:
            pass
        except PermissionError:
            with contextlib.suppress(ProcessLookupError):
                child.proc.send_signal(sig)

    def _poll(self) -> None:
        now = time.monotonic()
        for child in list(self._children.values()):
            if child.proc is None:
                if child.restart_at is not None and now >= child.restart_at and not child.stopping:
                    self._spawn(child)
                continue
            code = child.proc.poll()
            if code is None:
                if child.stopping and child.kill_at is not None and now >= child.kill_at:
                    self._signal(child, signal.SIGKILL)
                    child.kill_at = None
                continue
            # reap anything left in its process group (a child's own children)
            self._signal(child, signal.SIGKILL)
            child.proc = None
            child.ps = None
            with self._pids_lock:
                self._pids.pop(child.spec.key, None)
            if child.stopping:
                self._finish(child, exit_code(code))
            else:
                self._after_exit(child, exit_code(code))

    def _after_exit(self, child: _Child, code: int) -> None:
        policy = child.spec.restart_policy
        restart = policy == "Always" or (policy == "OnFailure" and code != 0)
        delay = None
        if restart:
            ran = time.monotonic() - child.started_at if child.started_at else 0.0
            if ran >= self.settings.backoff_reset:
                child.in_row = 0
            child.restarts += 1
            child.in_row += 1
            delay = min(self.settings.backoff_max, self.settings.backoff_initial * 2 ** (child.in_row - 1))
            child.restart_at = time.monotonic() + delay
        self._report(Exited(child.spec.key, code, child.restarts, delay))
        if not restart:
            del self._children[child.spec.key]

    def _finish(self, child: _Child, code: int | None) -> None:
        self._children.pop(child.spec.key, None)
        self._report(Stopped(child.spec.key, code))

    def _sample(self) -> None:
        samples: dict[Key, tuple[float, int]] = {}
        for key, child in self._children.items():
            if child.ps is None:
                continue
            try:
                with child.ps.oneshot():
                    samples[key] = (child.ps.cpu_percent(None) / 100.0, child.ps.memory_info().rss)
            except psutil.Error:
                continue
        self._report(Usage(samples))
