"""Issue 16 item 13: idle HELLO'd connections give their slot up, the HELLO deadline is disarmed by
HELLO, and leases follow observed task times instead of a fixed 300 s."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import numpy as np
import pytest

from renderer import protocol as proto
from renderer import scene as scene_mod
from renderer.producer import ProducerSettings
from renderer.tasks import lease_seconds
from tests.renderer.test_renderer_producer import Client, run_consumer
from tests.renderer.testkit import THREE, InProcessProducer, Procs, get_status, reference, wait_for


@pytest.fixture(scope="module")
def scene() -> scene_mod.Scene:
    return scene_mod.load(THREE, width=24, height=16, spp=8, chunk=2, tile=8)


def test_lease_time_follows_task_times() -> None:
    assert lease_seconds([0.01] * 7, 10.0, 300.0) == 300.0  # too few timed tasks: the ceiling
    assert lease_seconds([0.01] * 100, 10.0, 300.0) == 10.0  # fast tasks: the floor
    assert lease_seconds([5.0] * 95 + [20.0] * 5, 10.0, 300.0) == 80.0  # 4 x p95
    assert lease_seconds([500.0] * 10, 10.0, 300.0) == 300.0
    assert lease_seconds([0.01] * 10, 10.0, 0.5) == 0.5  # a ceiling below the floor wins


def test_hello_deadline_is_disarmed_when_hello_shares_a_read(tmp_path: Path, scene: scene_mod.Scene) -> None:
    settings = ProducerSettings(hello_timeout=0.4, linger_seconds=0.1)
    with InProcessProducer(scene, output=tmp_path / "o.png", settings=settings) as p:
        c = Client(p.port)
        request = proto.encode(proto.Request())
        c.send(proto.encode(proto.Hello(b"", "one-read")) + request[:3])  # HELLO and the start of a frame
        assert isinstance(c.recv(), proto.Job)
        time.sleep(1.2)  # three HELLO deadlines
        p.call(lambda: None)  # and the producer's loop has turned since: a deadline due has fired
        c.send(request[3:])
        assert isinstance(c.recv(), proto.Task)  # still connected: the deadline went with HELLO
        c.close()


def test_idle_consumers_make_room_for_a_new_one_at_the_cap(tmp_path: Path, scene: scene_mod.Scene,
                                                           ref: np.ndarray) -> None:
    raw = tmp_path / "o.npy"
    settings = ProducerSettings(max_connections=3, idle_evict=0.3, linger_seconds=0.1)
    with InProcessProducer(scene, raw=raw, settings=settings) as p:
        squatters = [Client(p.port) for _ in range(3)]
        for i, s in enumerate(squatters):
            s.hello(name=f"idle{i}")
        wait_for(lambda: (st := get_status(p.status_port)) and len(st["consumers"]) == 3, 5, "3 consumers")
        time.sleep(0.4)
        t, rc = run_consumer(p.port, "worker")  # the cap is held by idle connections
        t.join(60)
        assert rc == [0]
        dropped = 0
        for s in squatters:
            try:
                if s.recv(2.0) == proto.Error("idle too long"):
                    dropped += 1
            except (EOFError, OSError):
                pass
            s.close()
        assert dropped >= 1
    assert np.load(raw).tobytes() == ref.tobytes()


def test_idle_connection_is_dropped_after_the_idle_timeout(tmp_path: Path, scene: scene_mod.Scene) -> None:
    settings = ProducerSettings(idle_timeout=0.5, linger_seconds=0.1)
    with InProcessProducer(scene, output=tmp_path / "o.png", settings=settings) as p:
        c = Client(p.port)
        t0 = time.monotonic()  # before HELLO: the producer's silence clock starts after this by construction
        c.hello(name="sleepy")
        assert c.recv(10.0) == proto.Error("idle too long")
        assert 0.5 <= time.monotonic() - t0 < 3.0  # 0.5 s of silence, plus up to one 1 s expirer tick
        assert c.closed_by_peer()
        c.close()


@pytest.fixture(scope="module")
def ref(scene: scene_mod.Scene) -> np.ndarray:
    return reference(scene)


@pytest.mark.usefixtures("warm_kernels")
def test_stopped_consumer_loses_its_leases_in_seconds(tmp_path: Path, procs: Procs) -> None:
    """A consumer that stops answering kept its leases for 300 s; now 4 x p95 of the task times (floor
    0.5 s here). The stopped consumer is a protocol client that takes a task and never answers: it
    holds a lease by construction (a SIGSTOPped process may hold none at that instant, issue 23)."""
    sc = scene_mod.load(THREE, width=48, height=32, spp=1024, chunk=8, tile=16)  # 768 tasks
    raw = tmp_path / "o.npy"
    settings = ProducerSettings(lease_floor=0.5, linger_seconds=0.1)
    with InProcessProducer(sc, raw=raw, settings=settings) as p:
        working = procs.start("consumer", "--connect", f"127.0.0.1:{p.port}", "--name", "working", log="b.log")
        wait_for(lambda: (st := get_status(p.status_port)) and st["tasks"]["done"] >= 64, 60, "64 tasks done")
        working.send_signal(signal.SIGSTOP)  # so tasks are still queued when the silent one asks
        silent = Client(p.port)
        try:
            silent.hello(name="stopped")
            silent.send(proto.Request())
            assert isinstance(silent.recv(), proto.Task)  # it holds a lease, and will never answer
        finally:
            working.send_signal(signal.SIGCONT)
        t0 = time.monotonic()
        st = wait_for(lambda: (s := get_status(p.status_port)) and s["finished"] and s, 60, "the render")
        assert p.call(lambda: p.producer.lease_now) < 5.0
        assert st["tasks"]["requeued"] >= 1
        assert time.monotonic() - t0 < 30
        silent.close()
    assert np.load(raw).tobytes() == reference(sc).tobytes()
