"""The local kubelet's process supervisor, on real processes (sh, sleep): start, restart, stop, close."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import psutil
import pytest

from kubeview.cluster.local.kubelet import (
    ContainerSpec,
    Exited,
    KubeletSettings,
    Started,
    Stopped,
    Supervisor,
    Usage,
)

FAST = KubeletSettings(poll_interval=0.02, usage_interval=0.2, backoff_initial=0.05, backoff_max=0.2)


class Recorder:
    def __init__(self) -> None:
        self.reports: list = []
        self.lock = threading.Lock()

    def __call__(self, report) -> None:  # noqa: ANN001
        with self.lock:
            self.reports.append(report)

    def of(self, kind: type) -> list:
        with self.lock:
            return [r for r in self.reports if isinstance(r, kind)]

    def wait(self, check: Callable[[], bool], timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; reports: {self.reports[-10:]}")
            time.sleep(0.02)


@pytest.fixture
def sup():
    rec = Recorder()
    s = Supervisor(rec, FAST)
    s.rec = rec  # type: ignore[attr-defined]
    yield s
    s.close(grace=0.5)


def test_crash_is_restarted_with_a_growing_restart_count(sup) -> None:  # noqa: ANN001
    sup.start(ContainerSpec(("ns", "crash"), ["sh", "-c", "exit 3"], restart_policy="Always"))
    sup.rec.wait(lambda: len(sup.rec.of(Exited)) >= 3)
    exits = sup.rec.of(Exited)[:3]
    assert [e.exit_code for e in exits] == [3, 3, 3]
    assert [e.restarts for e in exits] == [1, 2, 3]
    assert [e.restart_in for e in exits] == [0.05, 0.1, 0.2]  # doubling backoff, capped
    assert [s.restarts for s in sup.rec.of(Started)[:3]] == [0, 1, 2]


def test_on_failure_does_not_restart_a_clean_exit(sup) -> None:  # noqa: ANN001
    sup.start(ContainerSpec(("ns", "done"), ["sh", "-c", "exit 0"], restart_policy="OnFailure"))
    sup.rec.wait(lambda: sup.rec.of(Exited))
    time.sleep(0.3)
    assert len(sup.rec.of(Started)) == 1
    assert sup.rec.of(Exited)[0].restart_in is None and sup.rec.of(Exited)[0].exit_code == 0


def test_stop_sends_sigterm_then_sigkill_after_the_grace_period(sup) -> None:  # noqa: ANN001
    sup.start(ContainerSpec(("ns", "stubborn"), ["sh", "-c", "trap '' TERM; sleep 60 & wait; sleep 60"]))
    sup.rec.wait(lambda: sup.rec.of(Started))
    pid = sup.pids()[("ns", "stubborn")]
    family = [pid] + [c.pid for c in psutil.Process(pid).children(recursive=True)]
    t0 = time.monotonic()
    sup.stop(("ns", "stubborn"), 0.5)
    sup.rec.wait(lambda: sup.rec.of(Stopped))
    assert time.monotonic() - t0 >= 0.45  # SIGTERM was ignored: it took the SIGKILL
    assert sup.rec.of(Stopped)[0].exit_code == 137
    assert not sup.rec.of(Exited)  # a requested stop is not a crash
    assert not [p for p in family if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]


def test_usage_is_sampled_with_psutil(sup) -> None:  # noqa: ANN001
    sup.start(ContainerSpec(("ns", "busy"), ["sh", "-c", "while :; do :; done"]))
    sup.rec.wait(lambda: any(("ns", "busy") in u.samples and u.samples[("ns", "busy")][0] > 0.1
                             for u in sup.rec.of(Usage)))
    cores, rss = next(u.samples[("ns", "busy")] for u in reversed(sup.rec.of(Usage)) if u.samples)
    assert 0 < cores <= 1.5 and rss > 0


def test_close_leaves_no_process_behind() -> None:
    rec = Recorder()
    sup = Supervisor(rec, FAST)
    for i in range(3):
        sup.start(ContainerSpec(("ns", f"p{i}"), ["sleep", "60"]))
    rec.wait(lambda: len(sup.pids()) == 3)
    pids = list(sup.pids().values())
    sup.close(grace=1.0)
    assert not [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert len(rec.of(Stopped)) == 3


def test_a_command_that_cannot_start_is_a_crash(sup) -> None:  # noqa: ANN001
    sup.start(ContainerSpec(("ns", "missing"), ["/nonexistent/binary"], restart_policy="Never"))
    sup.rec.wait(lambda: sup.rec.of(Exited))
    assert sup.rec.of(Exited)[0].exit_code == 127 and not sup.rec.of(Started)
