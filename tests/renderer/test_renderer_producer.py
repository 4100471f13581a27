"""The producer over real sockets, in this process: the status contract, tokens, parked
requests, lease expiry, and hostile clients that get disconnected while nothing else changes."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from renderer import protocol as proto
from renderer import scene as scene_mod
from renderer.consumer import Consumer
from renderer.fixed import MAX_SAMPLE
from renderer.producer import ProducerSettings
from tests.renderer.testkit import THREE, InProcessProducer, get_status, reference, wait_for


class Client:
    """A hand-driven protocol client on a real socket."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""

    def send(self, msg: proto.Message | bytes) -> None:
        self.sock.sendall(msg if isinstance(msg, bytes) else proto.encode(msg))

    def recv(self, timeout: float = 5.0) -> proto.Message:
        self.sock.settimeout(timeout)
        while (got := proto.decode_frame(self.buf, proto.FROM_PRODUCER)) is None:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise EOFError
            self.buf += chunk
        self.buf = self.buf[got[1]:]
        return got[0]

    def closed_by_peer(self, timeout: float = 5.0) -> bool:
        self.sock.settimeout(timeout)
        try:
            while self.sock.recv(1 << 16):
                pass
        except ConnectionResetError:
            pass
        return True

    def hello(self, token: bytes = b"", name: str = "raw") -> proto.Job:
        self.send(proto.Hello(token, name))
        job = self.recv()
        assert isinstance(job, proto.Job)
        return job

    def close(self) -> None:
        self.sock.close()


def http(port: int, path: str) -> tuple[str, bytes]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        return r.headers["Content-Type"], r.read()


@pytest.fixture(scope="module")
def scene() -> scene_mod.Scene:
    return scene_mod.load(THREE, width=24, height=16, spp=8, chunk=2, tile=8)  # 6 tiles x 4 chunks


@pytest.fixture(scope="module")
def ref(scene: scene_mod.Scene) -> np.ndarray:
    return reference(scene)


def run_consumer(port: int, name: str, token: bytes = b"") -> tuple[threading.Thread, list[int]]:
    rc: list[int] = []
    c = Consumer("127.0.0.1", port, token=token, name=name)
    t = threading.Thread(target=lambda: rc.append(c.run()), daemon=True)
    t.start()
    return t, rc


def test_job_status_metrics_and_image(tmp_path: Path, scene: scene_mod.Scene, ref: np.ndarray) -> None:
    out, raw = tmp_path / "out.png", tmp_path / "out.npy"
    with InProcessProducer(scene, output=out, raw=raw, serve_after_done=True) as p:
        st = get_status(p.status_port)
        assert st["scene"] == "three-spheres" and (st["width"], st["height"], st["spp"]) == (24, 16, 8)
        assert st["tasks"] == {"total": 24, "done": 0, "leased": 0, "queued": 24, "requeued": 0}
        assert st["finished"] is False and st["output"] is None and st["eta_seconds"] is None
        ctype, png = http(p.status_port, "/image.png")
        assert ctype == "image/png" and png.startswith(b"\x89PNG")
        threads = [run_consumer(p.port, f"t{i}") for i in range(2)]
        for t, _ in threads:
            t.join(60)
        assert [rc for _, rc in threads] == [[0], [0]]
        st = wait_for(lambda: (s := get_status(p.status_port)) and s["finished"] and s, 10, "finished")
        assert set(st) == {"scene", "width", "height", "spp", "tasks", "samples_done", "samples_total",
                           "samples_per_second", "eta_seconds", "elapsed_seconds", "finished", "output",
                           "consumers"}
        assert st["tasks"]["done"] == 24 and st["samples_done"] == st["samples_total"] == 24 * 16 * 8
        assert st["output"] == str(out) and st["eta_seconds"] == 0.0
        assert {c["id"] for c in st["consumers"]} == {"t0", "t1"}
        for c in st["consumers"]:
            assert set(c) == {"id", "address", "tasks_done", "samples_per_second", "state", "last_seen_seconds"}
            assert c["state"] == "gone" and c["address"].startswith("127.0.0.1:")
        assert sum(c["tasks_done"] for c in st["consumers"]) == 24
        _, final_png = http(p.status_port, "/image.png")  # the cached encoding equals the written PNG
        assert final_png == out.read_bytes() == http(p.status_port, "/image.png")[1]
        assert p.call(lambda: p.producer._status.png.builds) == 2  # one per progress step seen, not per request
        ctype, metrics = http(p.status_port, "/metrics")
        text = metrics.decode()
        assert ctype.startswith("text/plain")
        for line in ("renderer_tasks_total 24.0", "renderer_tasks_done 24.0", "renderer_samples_total 3072.0",
                     "renderer_consumers 0.0", "renderer_finished 1.0"):
            assert line in text, text
        # after DONE the producer keeps serving (Deployment mode) and says DONE to newcomers
        late = Client(p.port)
        late.hello()
        late.send(proto.Request())
        assert late.recv() == proto.Done()
        late.close()
    assert np.array_equal(np.load(raw), ref)
    assert out.read_bytes().startswith(b"\x89PNG")
    assert p.rc == 0


def test_token_is_required_when_set(tmp_path: Path, scene: scene_mod.Scene) -> None:
    with InProcessProducer(scene, output=tmp_path / "o.png", token=b"s3cret") as p:
        bad = Client(p.port)
        bad.send(proto.Hello(b"guess", "intruder"))
        assert bad.recv() == proto.Error("bad token")
        assert bad.closed_by_peer()
        assert Consumer("127.0.0.1", p.port, token=b"wrong", name="w").run() == 2
        good = Client(p.port)
        assert good.hello(b"s3cret").width == 24
        assert p.call(lambda: [c.id for c in p.producer.consumers.values()]) == ["raw"]


def test_parked_request_is_served_when_a_task_is_requeued(tmp_path: Path, scene: scene_mod.Scene) -> None:
    with InProcessProducer(scene, output=tmp_path / "o.png") as p:
        hog, hogs = [], []
        for i in range(12):  # 12 clients x 2 leases = all 24 tasks
            c = Client(p.port)
            c.hello(name=f"hog{i}")
            c.send(proto.Request())
            c.send(proto.Request())
            hogs.append(c)
            hog += [c.recv(), c.recv()]
        assert sorted(t.task_id for t in hog) == list(range(24))
        waiter = Client(p.port)
        waiter.hello(name="waiter")
        waiter.send(proto.Request())
        waiter.send(proto.Request())
        waiter.send(proto.Request())  # a third outstanding request is told to wait
        assert waiter.recv() == proto.Wait(500)  # (5 s: a loaded CI machine was once slower than 1 s)
        with pytest.raises(TimeoutError):
            waiter.recv(0.3)  # parked: no task free
        hogs[5].close()  # its two tasks go back to the queue and to the parked requests
        got = [waiter.recv(), waiter.recv()]
        assert sorted(t.task_id for t in got) == sorted(t.task_id for t in hog[10:12])
        st = get_status(p.status_port)
        assert st["tasks"]["requeued"] == 2 and st["tasks"]["leased"] == 24
        states = {c["id"]: c["state"] for c in st["consumers"]}
        assert states["hog5"] == "gone" and states["waiter"] == "working" and states["hog0"] == "working"


def test_expired_lease_is_requeued_and_late_result_counts_once(tmp_path: Path, scene: scene_mod.Scene) -> None:
    settings = ProducerSettings(lease_seconds=0.4, linger_seconds=0.2)
    with InProcessProducer(scene, output=tmp_path / "o.png", settings=settings) as p:
        slow = Client(p.port)
        slow.hello(name="slow")
        slow.send(proto.Request())
        task = slow.recv()
        wait_for(lambda: get_status(p.status_port)["tasks"]["requeued"] >= 1, 5, "lease expiry")
        other = Client(p.port)
        other.hello(name="other")
        other.send(proto.Request())
        assert other.recv().task_id == task.task_id
        from renderer.kernels import render_chunk

        data = render_chunk(scene, task.x, task.y, task.w, task.h, task.s0, task.s1)
        slow.send(proto.Result(task.task_id, data))  # late, but first: accepted
        wait_for(lambda: get_status(p.status_port)["tasks"]["done"] == 1, 30, "the late result")
        other.send(proto.Result(task.task_id, data))  # duplicate: ignored
        other.send(proto.Request())  # answered only after the duplicate was handled (one connection, in order)
        assert isinstance(other.recv(), proto.Task)
        st = get_status(p.status_port)
        assert st["tasks"]["done"] == 1 and st["samples_done"] == task.samples


def _task(c: Client) -> proto.Task:
    c.hello(name="x")
    c.send(proto.Request())
    task = c.recv()
    assert isinstance(task, proto.Task)
    return task


def _result_with_last(value: int) -> Callable[[Client], None]:
    """A result whose last sum is ``value`` (the encoder itself refuses a negative one)."""
    def send(c: Client) -> None:
        t = _task(c)
        frame = bytearray(proto.encode(proto.Result(t.task_id, np.ones((t.h, t.w, 3), dtype=np.int64))))
        frame[-8:] = np.array([value], dtype="<i8").tobytes()
        c.send(bytes(frame))
    return send


HELLO = proto.encode(proto.Hello(b"", "x"))
HOSTILE = {
    "random-bytes": lambda c: c.send(bytes(range(256)) * 4),
    "http-request": lambda c: c.send(b"GET /status HTTP/1.1\r\nHost: x\r\n\r\n"),
    "oversized-header": lambda c: c.send(proto.HEADER.pack(b"KR", proto.VERSION, proto.MsgType.RESULT, 2**31)),
    "bad-version": lambda c: c.send(proto.HEADER.pack(b"KR", 9, proto.MsgType.HELLO, 0)),
    "bad-type": lambda c: c.send(proto.HEADER.pack(b"KR", proto.VERSION, 77, 0)),
    "old-float-protocol": lambda c: c.send(proto.HEADER.pack(b"KR", 1, proto.MsgType.HELLO, 4) + bytes(4)),
    "request-before-hello": lambda c: c.send(proto.Request()),
    "producer-type": lambda c: c.send(HELLO + proto.encode(proto.Done())),
    "second-hello": lambda c: c.send(HELLO + HELLO),
    "result-never-leased": lambda c: c.send(HELLO + proto.encode(proto.Result(3, np.zeros((8, 8, 3), dtype=np.int64)))),
    "result-wrong-shape": lambda c: c.send(proto.Result((t := _task(c)).task_id, np.ones((t.h + 1, t.w, 3), dtype=np.int64))),
    "result-negative": _result_with_last(-1),
    "result-more-than-its-samples": _result_with_last(2 * MAX_SAMPLE + 1),  # a task here has 2 samples
    "result-float-nan-bits": _result_with_last(int(np.array([np.nan]).view("<i8")[0])),
    "truncated-then-close": lambda c: (c.send(HELLO[:-2]), c.close()),
}


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_hostile_client_is_disconnected_and_nothing_changes(tmp_path: Path, scene: scene_mod.Scene,
                                                           kind: str) -> None:
    with InProcessProducer(scene, output=tmp_path / "o.png") as p:
        before = get_status(p.status_port)["tasks"]
        c = Client(p.port)
        HOSTILE[kind](c)
        if kind != "truncated-then-close":
            assert c.closed_by_peer()
        wait_for(lambda: p.call(lambda: not p.producer.conns), 5, "disconnect")
        st = get_status(p.status_port)
        assert st["tasks"]["done"] == 0 and st["tasks"]["leased"] == 0
        assert st["tasks"]["queued"] == before["queued"]
        assert all(c["state"] == "gone" for c in st["consumers"])
        good = Client(p.port)  # and the producer still serves
        good.hello()
        good.send(proto.Request())
        assert isinstance(good.recv(), proto.Task)


def test_status_server_rejects_junk(tmp_path: Path, scene: scene_mod.Scene) -> None:
    with InProcessProducer(scene, output=tmp_path / "o.png") as p:
        with socket.create_connection(("127.0.0.1", p.status_port), timeout=5) as s:
            s.sendall(b"BREW /pot HTCPCP/1.0\r\n\r\n")
            assert s.recv(100).startswith(b"HTTP/1.1 400")
        with pytest.raises(urllib.error.HTTPError) as err:
            http(p.status_port, "/nope")
        assert err.value.code == 404
        assert json.loads(http(p.status_port, "/status")[1])["finished"] is False


def test_silent_and_stalled_clients_time_out(tmp_path: Path, scene: scene_mod.Scene) -> None:
    settings = ProducerSettings(hello_timeout=0.3, frame_timeout=0.3, linger_seconds=0.2)
    with InProcessProducer(scene, output=tmp_path / "o.png", settings=settings) as p:
        silent = Client(p.port)
        stalled = Client(p.port)
        stalled.hello()
        stalled.send(proto.encode(proto.Request())[:5])  # half a header, then nothing
        idle = Client(p.port)
        idle.hello()  # a consumer between frames may stay quiet as long as it likes
        t0 = time.monotonic()
        assert silent.closed_by_peer() and stalled.closed_by_peer()
        assert time.monotonic() - t0 < 3
        idle.send(proto.Request())
        assert isinstance(idle.recv(), proto.Task)
