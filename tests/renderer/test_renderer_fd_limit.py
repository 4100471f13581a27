"""Issue 16 item 12: at a low ``nofile`` limit the producer caps connections below it, keeps fds
for its output, logs a refused burst in a line (no traceback storm), and loses nothing.

Before: a 4,096 cap at ``nofile`` 128 gave 178,729 accept tracebacks and an image that could not be
written."""

from __future__ import annotations

import asyncio
import errno
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from renderer import fd_budget, image
from renderer import result_files as result_files
from renderer import scene as scene_mod
from tests.renderer.test_renderer_producer import run_consumer
from tests.renderer.testkit import (
    ROOT,
    THREE,
    InProcessProducer,
    env,
    free_port,
    get_status,
    reference,
    wait_for,
)

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
    clog = tmp_path / "consumer.log"

    def logs() -> str:
        return f"producer:\n{log.read_text()[-3000:]}\nconsumer:\n{clog.read_text()[-2000:] if clog.exists() else ''}"

    try:
        wait_for(lambda: get_status(status), 30, "producer status")
        held = _flood(port, 300) + _flood(status, 300)  # bursts past the limit: accept() meets EMFILE
        time.sleep(2.5)
        text = log.read_text()
        assert f"fd limit {NOFILE}" in text, logs()
        assert "at the cap of" in text, logs()
        for s in held:
            s.close()
        with open(clog, "wb") as f:
            consumer = subprocess.Popen([sys.executable, "-m", "renderer", "consumer", "--connect",
                                         f"127.0.0.1:{port}"], cwd=ROOT, env=env(), stdout=f, stderr=subprocess.STDOUT)
        assert prod.wait(60) == 0, logs()
        assert consumer.wait(30) == 0, logs()
    finally:
        for p in (prod, consumer):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait(10)
    text = log.read_text()
    assert "Traceback" not in text, logs()
    assert len(text.splitlines()) < 60, f"{len(text.splitlines())} log lines\n{logs()}"
    ref = reference(scene_mod.load(THREE, width=24, height=16, spp=8, chunk=2, tile=8))
    assert np.load(tmp_path / "o.npy").tobytes() == ref.tobytes()


_NO_FD_LEFT = """
import os, sys
import numpy as np
from renderer import image
if sys.argv[1] == "prepared":
    image.prepare_to_write()
held = []
try:
    while True:
        held.append(os.open(os.devnull, os.O_RDONLY))
except OSError:
    pass
image.png_bytes(np.zeros((2, 2, 3)))
print("encoded")
"""


def test_the_first_png_needs_no_free_fd_once_prepared() -> None:
    """Issue 23: the producer exited 1 with the image computed ("Too many open files" on PIL's
    PNG plugin module): PIL imports its plugins on the first save. The producer prepares
    at start; unprepared, the same encode fails, which is what this test would see if it did not."""
    def encode(mode: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", _NO_FD_LEFT, mode], cwd=ROOT, env=env(), capture_output=True,
                              text=True, timeout=60, preexec_fn=_limit)

    prepared = encode("prepared")
    assert (prepared.returncode, prepared.stdout) == (0, "encoded\n"), prepared.stderr
    cold = encode("cold")
    assert cold.returncode != 0 and "Too many open files" in cold.stderr, cold.stderr[-2000:]


def test_out_of_fds_is_raised_for_a_retry_not_kept_elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = image.write_atomic

    def short(path: Path, data: bytes) -> None:  # out of fds for the target; the fallback would work
        if Path(path).parent == tmp_path:
            raise OSError(errno.EMFILE, "Too many open files")
        real(path, data)

    monkeypatch.setattr(image, "write_atomic", short)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "kept"))
    (tmp_path / "kept").mkdir()
    with pytest.raises(OSError) as e:
        image.write_or_keep(np.zeros((2, 2, 3)), tmp_path / "o.png", tmp_path / "o.npy", "t")
    assert e.value.errno == errno.EMFILE and not isinstance(e.value, image.OutputError)
    assert list((tmp_path / "kept").iterdir()) == []  # not "kept elsewhere" (exit 3) for a moment's shortage


@pytest.mark.usefixtures("warm_kernels")
def test_the_result_write_is_retried_while_out_of_fds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A burst of connections holds every fd for a moment (fd_budget.py): the image is written
    once fds are back, exit 0, instead of "cannot write the result" and exit 1."""
    real, calls = result_files.write_or_keep, []

    def short_twice(*args: object) -> None:
        calls.append(args)
        if len(calls) <= 2:
            raise OSError(errno.EMFILE, "Too many open files")
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(result_files, "write_or_keep", short_twice)
    sc = scene_mod.load(THREE, width=24, height=16, spp=8, chunk=2, tile=8)
    raw = tmp_path / "o.npy"
    with InProcessProducer(sc, raw=raw) as p:
        t, rc = run_consumer(p.port, "w")
        t.join(60)
        wait_for(lambda: not p.thread.is_alive(), 30, "the producer to end")
    assert (p.error, p.rc, rc, len(calls)) == (None, 0, [0], 3)
    assert np.load(raw).tobytes() == reference(sc).tobytes()


def test_a_stale_accept_retry_after_close_is_not_a_traceback() -> None:
    """asyncio retries accept 1 s after EMFILE and closing the server does not cancel it: on the
    closed socket it raised ValueError, a traceback each (1,812 log lines after a finished render)."""
    loop = asyncio.new_event_loop()
    try:
        defaults: list[dict] = []
        loop.default_exception_handler = defaults.append  # type: ignore[method-assign]
        handler = fd_budget.AcceptErrors(lambda: 0.0)
        retry = asyncio.Handle(loop._start_serving, (), loop)  # type: ignore[attr-defined]
        handler(loop, {"exception": ValueError("Invalid file descriptor: -1"), "handle": retry})
        assert defaults == []
        other = {"exception": ValueError("x"), "handle": asyncio.Handle(print, (), loop)}
        handler(loop, other)
        assert defaults == [other]  # anything else still reaches the default handler
    finally:
        loop.close()
