"""tests/thread_guard.py in a real pytest subprocess: a leaked non-daemon thread is a line and an exit
status, never a hang; a thread that ends within the grace period changes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
CONFTEST = """
import pytest
import thread_guard
_status = []
def pytest_sessionfinish(session, exitstatus):
    _status.append(int(session.exitstatus))
@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    thread_guard.exit_if_threads_are_left(_status[-1])
"""
LEAK = """
import threading, time
def test_leaks():
    threading.Thread(target=time.sleep, args=({seconds},), name="leaked-sleeper").start()
    assert {passes}
"""


def run(tmp_path: Path, seconds: float, passes: bool) -> tuple[subprocess.CompletedProcess, float]:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_leak.py").write_text(LEAK.format(seconds=seconds, passes=passes))
    env = {**os.environ, "PYTHONPATH": str(TESTS), "KUBEVIEW_TEST_THREAD_GRACE": "1"}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    return proc, time.monotonic() - start


@pytest.mark.parametrize(("passes", "status"), [(True, 1), (False, 1)])
def test_a_leaked_thread_is_a_line_and_a_status_not_a_hang(tmp_path: Path, passes: bool, status: int) -> None:
    proc, took = run(tmp_path, 600, passes)
    assert proc.returncode == status
    assert "1 thread(s) started by tests are still running" in proc.stderr and "leaked-sleeper" in proc.stderr
    assert took < 60  # the thread sleeps 600 s: without the guard the run would wait for it


def test_a_thread_that_ends_within_the_grace_changes_nothing(tmp_path: Path) -> None:
    proc, _ = run(tmp_path, 0.2, True)
    assert proc.returncode == 0 and "still running" not in proc.stderr
