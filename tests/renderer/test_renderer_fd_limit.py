"""Issue 16 item 12: at a low ``nofile`` limit the producer caps connections below it, keeps fds
for its output, logs a refused burst in a line (no traceback storm), and loses nothing.

Before: a 4,096 cap at ``nofile`` 128 gave 178,729 accept tracebacks and an image that could not be
written."""

from __future__ import annotations

import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from renderer import fd_budget
from renderer import scene as scene_mod
from tests.renderer.testkit import ROOT, THREE, env, free_port, get_status, reference, wait_for

NOFILE = 64
JOB = ("--width", "24", "--height", "16", "--spp", "8", "--chunk", "2", "--tile", "8")


def test_budget_leaves_a_reserve() -> None:
    b = fd_budget.budget(128, 10)
    assert b.tasks + b.status == 128 - 10 - fd_budget.RESERVE and b.status >= 1
    assert fd_budget.budget(1 << 20, 10) == fd_budget.FdBudget(1 << 20, 10, 4096, 32)
    assert fd_budget.budget(16, 12).tasks >= 1  # never zero: one consumer can always work


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))


def _flood(port: int, n: int) -> list[socket.socket]:
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        socks.append(s)
    return socks


@pytest.mark.usefixtures("warm_kernels")
def test_low_fd_limit_is_one_line_and_loses_nothing(tmp_path: Path) -> None:
    port, status = free_port(), free_port()
    log = tmp_path / "producer.log"
    with open(log, "wb") as f:
        prod = subprocess.Popen([sys.executable, "-m", "renderer", "producer", str(THREE), "--listen",
                                 f"127.0.0.1:{port}", "--status", f"127.0.0.1:{status}", "-o", str(tmp_path / "o.png"),
                                 "--raw", str(tmp_path / "o.npy"), *JOB], cwd=ROOT, env=env(), stdout=f,
                                stderr=subprocess.STDOUT, preexec_fn=_limit)
    consumer = None
    try:
        wait_for(lambda: get_status(status), 30, "producer status")
        held = _flood(port, 300) + _flood(status, 300)  # bursts past the limit: accept() meets EMFILE
        time.sleep(2.5)
        text = log.read_text()
        assert f"fd limit {NOFILE}" in text
        assert "at the cap of" in text
        for s in held:
            s.close()
        consumer = subprocess.Popen([sys.executable, "-m", "renderer", "consumer", "--connect", f"127.0.0.1:{port}"],
                                    cwd=ROOT, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert prod.wait(60) == 0
        assert consumer.wait(30) == 0
    finally:
        for p in (prod, consumer):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait(10)
    text = log.read_text()
    assert "Traceback" not in text, text[-3000:]
    assert len(text.splitlines()) < 60, f"{len(text.splitlines())} log lines"
    ref = reference(scene_mod.load(THREE, width=24, height=16, spp=8, chunk=2, tile=8))
    assert np.load(tmp_path / "o.npy").tobytes() == ref.tobytes()
