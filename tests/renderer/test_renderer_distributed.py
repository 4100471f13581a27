"""Distributed renders with real producer and consumer processes: consumers SIGKILLed,
the producer SIGKILLed and restarted from its checkpoint, a fuzzer throwing bad frames at
it.  Every time, the raw image is bit-identical to ``python -m renderer render --raw``."""

from __future__ import annotations

import contextlib
import random
import re
import signal
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Callable

import numpy as np
import psutil
import pytest

from renderer import checkpoint as ckpt
from renderer import protocol as proto
from renderer import scene as scene_mod
from renderer.tasks import TaskBook
from tests.renderer.testkit import THREE, Procs, free_port, get_status, run_cli, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180), pytest.mark.usefixtures("warm_kernels")]

# three-spheres, long enough to kill things mid-render: 6 tiles x 32 chunks = 192 tasks
JOB = ["--spp", "4096", "--chunk", "128"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, warm_kernels: None) -> np.ndarray:
    out = tmp_path_factory.mktemp("ref") / "ref.npy"
    r = run_cli("render", str(THREE), *JOB, "--raw", str(out), "--no-progress")
    assert r.returncode == 0, r.stderr
    return np.load(out)


def start_producer(procs: Procs, port: int, status: int, *extra: str,
                   log: str = "producer.log") -> subprocess.Popen[bytes]:
    p = procs.start("producer", str(THREE), *JOB, "--listen", f"127.0.0.1:{port}",
                    "--status", f"127.0.0.1:{status}", "--raw", str(procs.tmp / "out.npy"),
                    "-o", str(procs.tmp / "out.png"), *extra, log=log)
    wait_for(lambda: p.poll() is not None or get_status(status), 30, "producer status")
    assert p.poll() is None, procs.log(log)
    return p


def start_consumer(procs: Procs, port: int, name: str) -> subprocess.Popen[bytes]:
    return procs.start("consumer", "--connect", f"127.0.0.1:{port}", "--name", name, log=f"{name}.log")


def done_fraction(status_port: int) -> float:
    st = get_status(status_port)
    return st["tasks"]["done"] / st["tasks"]["total"] if st else 0.0


def connected(proc: subprocess.Popen[bytes], port: int) -> bool:
    """Whether ``proc`` has an established TCP connection to ``port``."""
    try:
        conns = psutil.Process(proc.pid).net_connections(kind="tcp")
    except psutil.Error:
        return False
    return any(c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED for c in conns)


def all_working(status_port: int, names: list[str]) -> bool:
    st = get_status(status_port)
    if not st:
        return False
    done = {c["id"]: c["tasks_done"] for c in st["consumers"] if c["state"] != "gone"}
    return all(done.get(n, 0) >= 1 for n in names) and st["tasks"]["done"] < st["tasks"]["total"]


def test_consumers_killed_and_a_new_one_joining(procs: Procs, reference: np.ndarray) -> None:
    port, status = free_port(), free_port()
    producer = start_producer(procs, port, status)
    consumers = [start_consumer(procs, port, f"c{i}") for i in range(3)]
    wait_for(lambda: all_working(status, ["c0", "c1", "c2"]), 60, "three working consumers")
    for c in consumers[:2]:  # working consumers always hold a lease (prefetch)
        c.send_signal(signal.SIGKILL)
    # Pause the producer so that the render is certainly still running while a new consumer
    # starts and connects (the kernel completes the TCP handshake for the stopped producer).
    producer.send_signal(signal.SIGSTOP)
    try:
        joiner = start_consumer(procs, port, "late")
        wait_for(lambda: connected(joiner, port), 60, "the new consumer to connect")
    finally:
        producer.send_signal(signal.SIGCONT)
    assert producer.wait(90) == 0, procs.log("producer.log")
    assert consumers[2].wait(30) == 0 and joiner.wait(30) == 0
    log = procs.log("producer.log")
    assert re.search(r"consumer c[01] disconnected; \d task\(s\) requeued", log), log
    assert "consumer late connected" in log and "done: wrote" in log and "Traceback" not in log
    assert int(re.search(r"job done; (\d+) tasks", procs.log("late.log")).group(1)) >= 1
    assert np.array_equal(np.load(procs.tmp / "out.npy"), reference)
    assert (procs.tmp / "out.png").read_bytes().startswith(b"\x89PNG")


def test_producer_killed_and_restarted_from_checkpoint(procs: Procs, reference: np.ndarray) -> None:
    port, status = free_port(), free_port()
    ck = procs.tmp / "job.ckpt"
    producer = start_producer(procs, port, status, "--checkpoint", str(ck))
    consumers = [start_consumer(procs, port, f"c{i}") for i in range(2)]
    wait_for(lambda: done_fraction(status) >= 0.3, 60, "30% of the tasks")
    producer.send_signal(signal.SIGKILL)
    producer.wait(10)
    scene = scene_mod.load(THREE, spp=4096, chunk=128)
    book = TaskBook(scene)
    snap = ckpt.load(ck, book, scene.fingerprint())
    book.restore(snap.acc, snap.done)
    assert 0 < book.done < book.total
    time.sleep(0.5)  # consumers notice and start retrying with backoff
    producer = start_producer(procs, port, status, "--checkpoint", str(ck), log="producer2.log")
    m = re.search(r"resumed from .*: (\d+)/192 tasks already done", procs.log("producer2.log"))
    assert m and int(m.group(1)) == book.done
    first = get_status(status)
    assert first["tasks"]["done"] >= book.done and first["tasks"]["total"] == 192
    # a consumer stopped with SIGTERM mid-render (the producer paused to be sure it is
    # mid-render) hands its work back and exits 0
    wait_for(lambda: done_fraction(status) > first["tasks"]["done"] / 192, 30, "progress after restart")
    producer.send_signal(signal.SIGSTOP)
    try:
        consumers[0].send_signal(signal.SIGTERM)
        assert consumers[0].wait(30) == 0
    finally:
        producer.send_signal(signal.SIGCONT)
    assert "stopped;" in procs.log("c0.log")
    assert producer.wait(90) == 0, procs.log("producer2.log")
    assert consumers[1].wait(30) == 0
    assert np.array_equal(np.load(procs.tmp / "out.npy"), reference)
    # the finished checkpoint makes a restarted producer write the same image at once
    (procs.tmp / "out.npy").unlink()
    again = procs.start("producer", str(THREE), *JOB, "--listen", f"127.0.0.1:{port}", "--checkpoint", str(ck),
                        "--raw", str(procs.tmp / "out.npy"), log="producer3.log")
    assert again.wait(30) == 0
    assert np.array_equal(np.load(procs.tmp / "out.npy"), reference)


class Fuzzer:
    """Throws random, truncated, oversized and out-of-protocol frames at a producer."""

    def __init__(self, port: int, finished: Callable[[], bool], seed: int = 1) -> None:
        self.port = port
        self.finished = finished
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.attacks = 0
        self.errors: list[BaseException] = []

    def frames(self) -> list[bytes]:
        r = self.rng
        hello = proto.encode(proto.Hello(b"", f"fuzz{r.randrange(1000)}"))
        result = proto.encode(proto.Result(r.randrange(192), np.ones((16, 16, 3), dtype=np.int64)))
        header = proto.HEADER.pack
        choices = [
            [r.randbytes(r.randrange(1, 4000))],
            [header(b"KR", 1, r.choice(list(proto.MsgType)), 2**32 - 1)],
            [header(b"KR", r.randrange(2, 256), 1, 10)],
            [header(b"KR", 1, r.randrange(10, 256), 0)],
            [hello[: r.randrange(1, len(hello))]],
            [hello, r.randbytes(r.randrange(1, 100))],
            [hello, result],  # a result for a task never leased to it
            [hello, result[: r.randrange(len(result))]],
            [hello, proto.encode(proto.Request()), proto.encode(proto.Request())],  # lease two, vanish
            [hello, proto.encode(proto.Request()), header(b"KR", 1, proto.MsgType.RESULT, 12)
             + struct.pack(">3I", 0, 600, 600)],
            [hello, proto.encode(proto.Job(bytes(32), 1, 1, 1, 1, 1, "x"))],
            [hello, proto.encode(proto.Return(r.randrange(2**32)))],
            [hello, hello],
        ]
        return r.choice(choices)

    def attack(self, s: socket.socket) -> None:
        for f in self.frames():
            s.sendall(f)
        s.shutdown(socket.SHUT_WR)
        while s.recv(1 << 16):  # until the producer hangs up (or we do, after a timeout)
            pass

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                s = socket.create_connection(("127.0.0.1", self.port), timeout=2)
            except OSError as e:  # the producer must stay up until it has written the image
                if not self.finished():
                    self.errors.append(e)
                return
            with s, contextlib.suppress(OSError):  # the producer hanging up on us is the point
                self.attack(s)
            self.attacks += 1


def test_fuzzed_producer_stays_up_and_the_image_is_exact(procs: Procs, reference: np.ndarray) -> None:
    port, status = free_port(), free_port()
    producer = start_producer(procs, port, status)
    fuzz = Fuzzer(port, finished=(procs.tmp / "out.npy").exists)
    thread = threading.Thread(target=fuzz.run, daemon=True)
    thread.start()  # before the consumer starts, so that the whole render happens under fire
    consumer = start_consumer(procs, port, "real")
    try:
        wait_for(lambda: producer.poll() is not None or (s := get_status(status)) and s["finished"], 120,
                 "render to finish under fuzzing", step=0.2)
    finally:
        fuzz.stop.set()
        thread.join(10)
    assert producer.wait(30) == 0, procs.log("producer.log")
    assert consumer.wait(30) == 0
    assert not fuzz.errors, fuzz.errors
    assert fuzz.attacks >= 20
    log = procs.log("producer.log")
    assert log.count("protocol error") >= 5 and "Traceback" not in log, log[-3000:]
    assert np.array_equal(np.load(procs.tmp / "out.npy"), reference)
