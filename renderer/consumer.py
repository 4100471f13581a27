"""The consumer: connect to a producer, get the scene, trace tasks, send the sums back.

Single-threaded by default (one pod = one core).  The next task is requested before the
current one is traced, so the round trip to the producer overlaps the computation.  While
the producer is not reachable the consumer retries with backoff.  SIGTERM (or SIGINT)
lets the task in hand finish, hands the prefetched one back, and exits 0; so does DONE.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numba

from renderer import protocol as proto
from renderer.kernels_cuda import tile_renderer
from renderer.scene import Scene, SceneError, bundled, load, parse

log = logging.getLogger("renderer.consumer")


@dataclass(frozen=True)
class ConsumerSettings:
    backoffs: Sequence[float] = (0.05,) * 10 + (0.1,) * 5 + (0.25, 0.5, 1.0, 2.0, 3.0, 5.0)
    """Seconds between connection attempts; the last value repeats. Short at first: consumers usually
    start beside their producer, and every tenth of a second waited is render time lost (a refused
    connection on loopback costs microseconds)."""
    give_up_seconds: float = 300.0
    """Exit 1 after this long without reaching the producer."""
    poll_seconds: float = 0.25
    """How often a blocked receive checks for SIGTERM."""
    connect_timeout: float = 5.0
    send_timeout: float = 120.0
    """A frame (a result can be megabytes) must be sent within this time."""


class TokenRejected(Exception):
    pass


class Stopped(Exception):
    pass


class Consumer:
    """One consumer process; :meth:`run` returns the exit code."""

    def __init__(self, host: str, port: int, *, token: bytes = b"", name: str | None = None,
                 threads: int = 1, settings: ConsumerSettings | None = None, kernel: str = "cpu") -> None:
        self.host, self.port, self.token = host, port, token
        self.kernel = kernel
        """``"cpu"`` or ``"cuda"`` (resolved by the command line: see ``kernels_cuda.choose_kernel``)."""
        self._render_chunk = tile_renderer(kernel)
        self.name = (name or f"{socket.gethostname()}-{os.getpid()}")[: proto.MAX_NAME]
        self.threads = threads
        self.settings = settings or ConsumerSettings()
        self.stopping = False
        self.tasks_done = 0
        self._scene: Scene | None = None
        self._job_id: bytes | None = None
        self._buf = bytearray()
        self._got_job = False

    def request_stop(self, *_: object) -> None:
        self.stopping = True

    # -- main loop --------------------------------------------------------------------------
    def run(self) -> int:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, self.request_stop)
        if self.threads > 1:
            numba.set_num_threads(min(self.threads, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]  # numba sets its config names at import
        self._warm_up()
        attempt = fails = 0
        last_ok = time.monotonic()
        while not self.stopping:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=self.settings.connect_timeout)
            except OSError as e:
                if time.monotonic() - last_ok > self.settings.give_up_seconds:
                    log.error("cannot reach producer %s:%d for %.0fs (%s); giving up", self.host, self.port,
                              self.settings.give_up_seconds, e)
                    return 1
                delay = self.settings.backoffs[min(attempt, len(self.settings.backoffs) - 1)]
                attempt += 1
                log.debug("producer %s:%d not reachable (%s); retry in %.1fs", self.host, self.port, e, delay)
                self._sleep(delay)
                continue
            attempt = 0
            try:
                with sock:
                    sock.settimeout(self.settings.poll_seconds)
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    self._buf.clear()
                    if self._session(sock):
                        log.info("job done; %d tasks traced here", self.tasks_done)
                        return 0
            except TokenRejected:
                log.error("producer %s:%d rejected the token", self.host, self.port)
                return 2
            except Stopped:
                break
            except SceneError as e:
                log.error("producer sent an unusable scene: %s", e)
                return 2
            except (OSError, proto.ProtocolError, EOFError) as e:
                log.warning("lost the producer (%s); reconnecting", e)
                fails = 0 if self._got_job else fails + 1
                if fails:  # turned away before any JOB (e.g. the producer is full): do not spin
                    self._sleep(self.settings.backoffs[min(fails + 9, len(self.settings.backoffs) - 1)])
            last_ok = time.monotonic()
        log.info("stopped; %d tasks traced here", self.tasks_done)
        return 0

    def _session(self, sock: socket.socket) -> bool:
        """One connection's worth of work; True when the producer says the job is done."""
        self._got_job = False
        self._send(sock, proto.encode(proto.Hello(self.token, self.name)))
        job = self._recv(sock)
        if isinstance(job, proto.Error):
            if "token" in job.text:
                raise TokenRejected(job.text)
            raise proto.ProtocolError(f"producer error: {job.text}")
        if not isinstance(job, proto.Job):
            raise proto.ProtocolError(f"expected JOB, got {type(job).__name__}")
        self._got_job = True
        scene = self._load(job)
        self._send(sock, proto.encode(proto.Request()))
        cur = self._recv(sock)
        while True:
            if isinstance(cur, proto.Done):
                return True
            if isinstance(cur, proto.Wait):
                self._sleep(cur.ms / 1000)
                if self.stopping:
                    raise Stopped
                self._send(sock, proto.encode(proto.Request()))
                cur = self._recv(sock)
                continue
            if not isinstance(cur, proto.Task):
                raise proto.ProtocolError(f"expected TASK, WAIT or DONE, got {type(cur).__name__}")
            if self.stopping:  # a task we have not started: hand it back
                self._send(sock, proto.encode(proto.Return(cur.task_id)))
                raise Stopped
            self._check_task(scene, cur)
            self._send(sock, proto.encode(proto.Request()))  # prefetch: the reply arrives while we trace
            data = self._render_chunk(scene, cur.x, cur.y, cur.w, cur.h, cur.s0, cur.s1, parallel=self.threads > 1)
            self._send(sock, proto.encode(proto.Result(cur.task_id, data)))
            self.tasks_done += 1
            cur = self._recv(sock)

    def _warm_up(self) -> None:
        """Compile the kernel, or load it from numba's cache, before taking any work: the
        compiled code depends on argument types only, so a bundled scene serves for all."""
        t0 = time.monotonic()
        self._render_chunk(load(bundled("three-spheres")), 0, 0, 1, 1, 0, 1, parallel=self.threads > 1)
        log.debug("%s kernel ready in %.2fs", self.kernel, time.monotonic() - t0)

    def _load(self, job: proto.Job) -> Scene:
        if job.job_id != self._job_id or self._scene is None:
            scene = parse(job.scene_text, "scene from producer", width=job.width, height=job.height,
                          spp=job.spp, tile=job.tile, chunk=job.chunk)
            if bytes.fromhex(scene.fingerprint()) != job.job_id:
                raise proto.ProtocolError("job id does not match the scene (different renderer version?)")
            self._scene, self._job_id = scene, job.job_id
            log.info("job %s %dx%d spp %d from %s:%d", scene.name, scene.width, scene.height, scene.spp,
                     self.host, self.port)
        return self._scene

    @staticmethod
    def _check_task(scene: Scene, t: proto.Task) -> None:
        if t.x + t.w > scene.width or t.y + t.h > scene.height or t.s1 > scene.spp:
            raise proto.ProtocolError(f"task {t.task_id} lies outside the job")

    # -- I/O -------------------------------------------------------------------------------
    def _recv(self, sock: socket.socket) -> proto.Message:
        """Next frame from the producer.  While waiting, a stop request ends the session
        (the producer requeues whatever it leased us when the connection closes)."""
        while True:
            got = proto.decode_frame(self._buf, proto.FROM_PRODUCER)
            if got is not None:
                msg, used = got
                del self._buf[:used]
                return msg
            if self.stopping and not self._buf:
                raise Stopped
            try:
                chunk = sock.recv(1 << 16)
            except TimeoutError:
                continue
            if not chunk:
                raise EOFError("producer closed the connection")
            self._buf += chunk

    def _send(self, sock: socket.socket, frame: bytes) -> None:
        sock.settimeout(self.settings.send_timeout)
        try:
            sock.sendall(frame)
        finally:
            sock.settimeout(self.settings.poll_seconds)

    def _sleep(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while not self.stopping and (left := end - time.monotonic()) > 0:
            time.sleep(min(left, self.settings.poll_seconds))
