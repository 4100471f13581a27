"""Helpers for the renderer tests: real processes, real sockets, no mocks."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import numpy as np

from renderer import scene as scene_mod
from renderer.producer import Producer, ProducerSettings

ROOT = Path(__file__).resolve().parents[2]
THREE = scene_mod.bundled("three-spheres")
SPHERES = scene_mod.bundled("spheres")


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    e["PYTHONUNBUFFERED"] = "1"
    return e


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "renderer", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env())


def spawn(*args: str, log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as f:
        return subprocess.Popen([sys.executable, "-m", "renderer", *args], stdout=f, stderr=subprocess.STDOUT,
                                cwd=ROOT, env=env())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_status(port: int, timeout: float = 2.0) -> dict | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=timeout) as r:
            return json.loads(r.read())
    except OSError:
        return None


def wait_for(pred: Callable[[], object], timeout: float, what: str, step: float = 0.05) -> object:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Procs:
    """Processes started by a test; whatever is still running at the end is killed."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.all: list[subprocess.Popen[bytes]] = []

    def start(self, *args: str, log: str) -> subprocess.Popen[bytes]:
        p = spawn(*args, log=self.tmp / log)
        self.all.append(p)
        return p

    def log(self, name: str) -> str:
        return (self.tmp / name).read_text(errors="replace")

    def cleanup(self) -> None:
        for p in self.all:
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                p.wait(10)


class InProcessProducer:
    """A Producer on its own event loop in a thread, listening on ephemeral ports."""

    def __init__(self, scene: scene_mod.Scene, **kw: object) -> None:
        self.scene = scene
        kw.setdefault("settings", ProducerSettings(linger_seconds=0.2))
        self.kw = kw
        self.producer: Producer | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.rc: int | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._thread, daemon=True)

    def _thread(self) -> None:
        async def main() -> int:
            self.loop = asyncio.get_running_loop()
            self.producer = Producer(self.scene, **self.kw)  # type: ignore[arg-type]
            return await self.producer.run(("127.0.0.1", 0), ("127.0.0.1", 0))

        try:
            self.rc = asyncio.run(main())
        except BaseException as e:  # surfaced by the test
            self.error = e

    def __enter__(self) -> InProcessProducer:
        self.thread.start()
        wait_for(lambda: self.error or (self.producer and self.producer.status_address
                                        and self.producer.listen_address), 10, "producer to listen")
        if self.error:
            raise self.error
        return self

    def __exit__(self, *exc: object) -> None:
        if self.thread.is_alive() and self.loop is not None and self.producer is not None:
            self.loop.call_soon_threadsafe(self.producer.stop)
        self.thread.join(15)

    @property
    def port(self) -> int:
        return self.producer.listen_address[1]  # type: ignore[union-attr]

    @property
    def status_port(self) -> int:
        return self.producer.status_address[1]  # type: ignore[union-attr]

    def call(self, fn: Callable[[], object]) -> object:
        """Run ``fn`` on the producer's loop (the only safe way to read its state)."""
        return asyncio.run_coroutine_threadsafe(_call(fn), self.loop).result(10)  # type: ignore[arg-type]


async def _call(fn: Callable[[], object]) -> object:
    return fn()


def reference(scene: scene_mod.Scene) -> np.ndarray:
    from renderer.kernels import accumulate_image

    return accumulate_image(scene, parallel=True)
