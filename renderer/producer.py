"""The producer: an asyncio TCP server that hands out tasks and accumulates the image.

Consumers say HELLO (with the shared token, if one is set), get the JOB (scene text and
settings), then REQUEST tasks and send RESULTs.  Tasks are leased: a consumer that
disconnects or whose lease runs out loses its tasks to the queue; a duplicate or late
result is ignored.  A REQUEST that cannot be served yet is parked and answered when a task
is requeued or the job is done, so nobody polls.  A client that breaks the protocol is
logged and disconnected; its leases go back to the queue and nothing else changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import signal
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from renderer import checkpoint as ckpt
from renderer import fd_budget
from renderer import protocol as proto
from renderer.consumer_stats import ConsumerInfo, RateMeter
from renderer.fixed import MAX_SAMPLE
from renderer.image import OutputError, prepare_to_write, write_or_keep
from renderer.link import Link
from renderer.scene import Scene
from renderer.status import StatusServer
from renderer.tasks import TaskBook, lease_seconds
from renderer.verify import Verifier

log = logging.getLogger("renderer.producer")
EXIT_OUTPUT = 3  # the image could not be written where asked and was kept elsewhere: rendering again won't help
FD_RETRY_SECONDS = 60.0
"""How long writing the result is retried while the process is out of fds (see fd_budget.py)."""


@dataclass(frozen=True)
class ProducerSettings:
    lease_seconds: float = 300.0
    """The longest lease: a task not returned within this time goes back to the queue. Once tasks
    were timed, leases last ``lease_multiple`` x the p95 task time, at least ``lease_floor``."""
    lease_floor: float = 10.0
    lease_multiple: float = 4.0
    idle_timeout: float = 60.0
    """A consumer holding no lease and no parked request, silent this long, is dropped; at the
    connection cap one idle for ``idle_evict`` seconds makes room for a newcomer."""
    idle_evict: float = 2.0
    hello_timeout: float = 10.0
    """A new connection must say HELLO within this time."""
    frame_timeout: float = 60.0
    """Once a frame header arrived, its payload must follow within this time."""
    max_connections: int | None = None
    """Consumer connections held at once; None: derived from the fd limit (see fd_budget.py)."""
    max_outstanding: int = 2
    """Leases plus parked requests per consumer (one task in hand, one prefetched)."""
    max_gone: int = 256
    """Disconnected consumers kept in the status list."""
    linger_seconds: float = 2.0
    """After the image is written, wait this long for consumers to hear DONE."""


class Producer:
    """One render job served over TCP; see the module docstring."""

    def __init__(self, scene: Scene, *, output: str | Path | None = None, raw: str | Path | None = None,
                 checkpoint: str | Path | None = None, token: bytes | None = None,
                 serve_after_done: bool = False, settings: ProducerSettings | None = None,
                 verify: float = 0.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.scene = scene
        self.book = TaskBook(scene)
        self.output, self.raw, self.checkpoint_path = output, raw, checkpoint
        self.output_name = str(output) if output is not None else (str(raw) if raw is not None else None)
        self.token = token
        self.verifier = Verifier(verify) if verify > 0 else None
        self.refused_names: set[str] = set()  # consumers caught returning wrong results
        self.serve_after_done = serve_after_done
        self.settings = settings or ProducerSettings()
        self.clock = clock
        self.started = clock()
        self.finished = False
        self.finished_at: float | None = None
        self.final_image: np.ndarray | None = None
        self.meter = RateMeter()
        self.consumers: dict[str, ConsumerInfo] = {}
        self.conns: dict[str, Link] = {}  # consumers that said HELLO, by owner
        self._links: set[Link] = set()  # every open connection
        self._owners = (f"c{i}" for i in itertools.count(1))
        self._waiting: deque[Link] = deque()
        self._fingerprint = scene.fingerprint()
        self._job = proto.Job(bytes.fromhex(self._fingerprint), scene.width, scene.height, scene.spp,
                              scene.tile, scene.chunk, scene.text)
        self._job_frame = proto.encode(self._job)
        self._dirty = asyncio.Event()
        self._ckpt_lock = asyncio.Lock()
        self.exit_code = 0
        self.failure: str | None = None  # why the result could not be written where asked
        self._stop = asyncio.Event()
        self._closing = False
        self._finishing = False
        self._finish_task: asyncio.Task | None = None
        self.listen_address: tuple[str, int] | None = None
        self.max_connections = 1
        self.max_status = 1
        self._task_times: deque[float] = deque(maxlen=256)  # seconds from lease to result, latest tasks
        self.lease_now = self.settings.lease_seconds  # the lease length handed out now
        self._refused = 0  # connections turned away at the cap (logged in bursts, not one line each)
        self._refused_said: float | None = None
        self.status_address: tuple[str, int] | None = None
        self._status: StatusServer | None = None

    # -- lifecycle ------------------------------------------------------------------------
    async def run(self, listen: tuple[str, int], status: tuple[str, int] | None = None) -> int:
        """Serve until the image is written (or forever with serve_after_done, or a signal)."""
        if self.checkpoint_path is not None:
            snap = ckpt.load(self.checkpoint_path, self.book, self._fingerprint)
            if snap is not None:
                self.book.restore(snap.acc, snap.done)
                log.info("resumed from %s: %d/%d tasks already done", self.checkpoint_path,
                         self.book.done, self.book.total)
        prepare_to_write()  # while fds are plentiful: the final write must need only its files
        fds = fd_budget.current_budget()
        self.max_connections = self.settings.max_connections or fds.tasks
        self.max_status = fds.status
        log.info("fd limit %d (%d open): up to %d consumer connections, %d status requests at once",
                 fds.limit, fds.open_now, self.max_connections, self.max_status)
        servers = []
        if status is not None:
            self._status = StatusServer(self)
            srv = await self._status.start(*status)
            self.status_address = srv.sockets[0].getsockname()[:2]
            servers.append(srv)
            log.info("status on http://%s:%d/status", *self.status_address)
        loop = asyncio.get_running_loop()
        old_handler = loop.get_exception_handler()
        accept_errors = fd_budget.AcceptErrors(self.clock)
        loop.set_exception_handler(accept_errors)
        st = self.settings
        srv = await loop.create_server(
            lambda: Link(self, next(self._owners), hello_timeout=st.hello_timeout, frame_timeout=st.frame_timeout),
            *listen)
        self.listen_address = srv.sockets[0].getsockname()[:2]
        servers.append(srv)
        log.info("job %s %dx%d spp %d: %d tasks (%d tiles x %d chunks); listening on %s:%d",
                 self.scene.name, self.scene.width, self.scene.height, self.scene.spp, self.book.total,
                 self.book.n_tiles, self.book.n_chunks, *self.listen_address)
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self._stop.set)
        helpers = [asyncio.create_task(self._expirer())]
        if self.checkpoint_path is not None:
            helpers.append(asyncio.create_task(self._checkpointer()))
        if self.book.finished:
            self._start_finish()
        try:
            await self._stop.wait()
            if self.finished:
                await self._linger()
            elif self.exit_code == 0:
                log.info("stopping before the job is finished: %d/%d tasks done", self.book.done,
                         self.book.total)
                await self._save_checkpoint()
        finally:
            self._stop.set()
            self._closing = True  # connections opened from now on are closed at once
            for h in helpers:
                h.cancel()
            for s in servers:
                s.close()
            for link in list(self._links):
                link.close()
            await self._settle()
            if accept_errors.count:  # asyncio's accept retries outlive the servers: let them meet our handler
                await asyncio.sleep(fd_budget.ACCEPT_RETRY_DELAY + 0.1)
            for sig in (signal.SIGTERM, signal.SIGINT):
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.remove_signal_handler(sig)
            loop.set_exception_handler(old_handler)
        return self.exit_code

    def stop(self) -> None:
        self._stop.set()

    async def _settle(self, timeout: float = 2.0) -> None:
        """Let the other tasks of this loop (status requests, helpers) end rather than be
        cancelled by ``asyncio.run`` mid-way."""
        me = asyncio.current_task()
        deadline = self.clock() + timeout
        while self.clock() < deadline:
            await asyncio.sleep(0)
            for link in list(self._links):
                link.close()
            pending = {t for t in asyncio.all_tasks() if t is not me and not t.done()}
            if not pending:
                return
            await asyncio.wait(pending, timeout=0.1)

    async def _linger(self) -> None:
        deadline = self.clock() + self.settings.linger_seconds
        while self.conns and self.clock() < deadline:
            await asyncio.sleep(0.05)

    def _start_finish(self) -> None:
        if not self._finishing:
            self._finishing = True
            self._finish_task = asyncio.get_running_loop().create_task(self._finish())

    async def _finish(self) -> None:
        image = self.book.final_image()
        t0 = self.clock()
        try:
            await self._write_result(image)
        except OutputError as e:  # the image is safe elsewhere: say where, and do not render it again
            self.failure = str(e)
            self.exit_code = EXIT_OUTPUT
            self._stop.set()
            return
        except Exception as e:
            log.error("cannot write the result: %s", e)
            self.exit_code = 1
            self._stop.set()
            return
        self.final_image = image
        self.finished = True
        self.finished_at = self.clock()
        log.info("done: wrote %s in %.2fs; %d tasks, %d requeued, %.1f s since start",
                 ", ".join(str(p) for p in (self.output, self.raw) if p is not None) or "nothing",
                 self.finished_at - t0, self.book.total, self.book.requeued, self.finished_at - self.started)
        self._dispatch()
        for link in self.conns.values():  # and tell the others, so nobody waits for a reply
            if link.wanted == 0:
                link.send(proto.Done())
        if not self.serve_after_done:
            self._stop.set()

    async def _write_result(self, image: np.ndarray) -> None:
        """The checkpoint and the outputs. Out of fds is retried for ``FD_RETRY_SECONDS``: a burst
        of connections holds every fd until the loop refuses those over the cap (fd_budget.py), and
        a computed image must not be lost to that moment (issue 23: exit 1 at ``nofile`` 64)."""
        deadline = self.clock() + FD_RETRY_SECONDS
        pause, tries = 0.02, 0
        while True:
            try:
                await self._save_checkpoint()
                await asyncio.get_running_loop().run_in_executor(None, write_or_keep, image, self.output, self.raw,
                                                                 f"{self.scene.name}-{self._fingerprint[:12]}")
            except OSError as e:
                if e.errno not in fd_budget.SHORT_OF_FDS or self.clock() >= deadline:
                    raise
                tries += 1
                if tries == 1:
                    log.warning("writing the result: %s; trying again for up to %.0f s", e.strerror, FD_RETRY_SECONDS)
                await asyncio.sleep(pause)
                pause = min(0.5, 2 * pause)
                continue
            if tries:
                log.info("wrote the result after %d tries (out of fds)", tries + 1)
            return

    # -- checkpoint and leases ----------------------------------------------------------
    async def _save_checkpoint(self) -> None:
        if self.checkpoint_path is None:
            return
        async with self._ckpt_lock:  # one writer at a time; the last snapshot taken lands last
            snap = ckpt.snapshot(self.book, self._fingerprint)
            await asyncio.get_running_loop().run_in_executor(None, ckpt.save, self.checkpoint_path, snap)

    async def _checkpointer(self) -> None:
        """Persist finished chunks as they arrive; bursts coalesce (<= ~20% of the time writing)."""
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            t0 = self.clock()
            try:
                await self._save_checkpoint()
            except Exception as e:  # keep serving; the next result tries again
                log.error("cannot write checkpoint %s: %s", self.checkpoint_path, e)
            await asyncio.sleep(min(5.0, 4.0 * (self.clock() - t0)))

    async def _expirer(self) -> None:
        while True:
            await asyncio.sleep(min(1.0, self.lease_now / 4))
            self._drop_idle(self.settings.idle_timeout)
            late = self.book.expire(self.clock())
            for tid, owner in late:
                conn = self.conns.get(owner)
                if conn is not None:
                    conn.leases.discard(tid)
                    self._set_state(conn)
                log.warning("lease of task %d by %s expired; requeued", tid, owner)
            if late:
                self._dispatch()

    # -- dispatch -----------------------------------------------------------------------
    def _serve_one(self, conn: Link) -> bool:
        """Answer one parked REQUEST of ``conn``; False if nothing can be handed out now."""
        if self.finished:
            conn.send(proto.Done())
        else:
            spec = self.book.lease(conn.owner, self.clock(), self.lease_now)
            if spec is None:
                return False
            conn.leases.add(spec.task_id)
            conn.send(spec)  # a TaskSpec is a proto.Task: it encodes as one
            self.meter.start(self.clock())
            self._set_state(conn)
        conn.wanted -= 1
        return True

    def _dispatch(self) -> None:
        """Serve parked requests, one per consumer in turn, while tasks last.  A consumer that gets
        nothing goes on waiting while the others are tried (with verification on, a task may be
        queued only for consumers other than the one asking)."""
        tries = len(self._waiting)
        while self._waiting and tries > 0:
            if not self.finished and not self.book.queued:
                return
            conn = self._waiting.popleft()
            if conn.closed or conn.wanted <= 0:
                continue
            tries = len(self._waiting) + 1 if self._serve_one(conn) else tries - 1
            if conn.wanted > 0:
                self._waiting.append(conn)

    @staticmethod
    def _set_state(conn: Link) -> None:
        conn.info.state = "working" if conn.leases else "idle"

    # -- connections (called by Link) -------------------------------------------------------
    def link_opened(self, link: Link) -> None:
        if self._closing:
            link.close()
        elif len(self._links) >= self.max_connections and not self._drop_idle(self.settings.idle_evict, 1):
            self._refuse(link)
        else:
            self._links.add(link)

    def _drop_idle(self, after: float, limit: int | None = None) -> int:
        """Hang up on consumers with no lease and no parked request that were silent for ``after``
        seconds, longest-idle first (at most ``limit``); they hold a slot and do no work."""
        now = self.clock()
        idle = sorted((c for c in self.conns.values() if not c.leases and c.wanted == 0 and not c.closed
                       and now - c.info.last_seen >= after), key=lambda c: c.info.last_seen)[:limit]
        for conn in idle:
            log.warning("consumer %s idle for %.0f s; dropped", conn.info.id, now - conn.info.last_seen)
            conn.send(proto.Error("idle too long"))
            conn.close()
        return len(idle)

    def _refuse(self, link: Link) -> None:
        """At the cap: say so in an ERROR frame (not a bare reset) and hang up; log once per burst."""
        self._refused += 1
        now = self.clock()
        if self._refused_said is None or now - self._refused_said >= 10.0:
            self._refused_said = now
            log.warning("%s: at the cap of %d connections; refused (%d so far)", link.address,
                        self.max_connections, self._refused)
        link.send(proto.Error("producer is at its connection limit; try again later"))
        link.close()

    def link_closed(self, link: Link) -> None:
        self._links.discard(link)
        if link.info is not None:
            self._drop(link)

    def link_message(self, link: Link, msg: proto.Message) -> None:
        if link.info is None:
            assert isinstance(msg, proto.Hello)  # the link lets nothing else through first
            self._hello(link, msg)
        else:
            link.info.last_seen = self.clock()
            self._on_message(link, msg)

    def _hello(self, link: Link, hello: proto.Hello) -> None:
        if not proto.token_ok(self.token, hello.token):
            log.warning("%s: bad token; disconnecting", link.address)
            link.send(proto.Error("bad token"))
            link.close()
            return
        name = hello.name or link.owner
        if name in self.refused_names:
            log.warning("%s: consumer %s was refused for wrong results; disconnecting", link.address, name)
            link.send(proto.Error("refused: this consumer returned wrong results"))
            link.close()
            return
        cid, n = name, 1
        while cid in self.consumers and self.consumers[cid].state != "gone":
            n += 1
            cid = f"{name}#{n}"
        now = self.clock()
        info = self.consumers.pop(cid, None) or ConsumerInfo(cid, link.address, now)
        info.address, info.last_seen, info.state = link.address, now, "idle"
        self.consumers[cid] = info
        gone = [k for k, c in self.consumers.items() if c.state == "gone"]
        for k in gone[: max(0, len(gone) - self.settings.max_gone)]:
            del self.consumers[k]
        link.info = info
        self.conns[link.owner] = link
        log.info("consumer %s connected from %s", cid, link.address)
        link.send_frame(self._job_frame)
        if self.finished:
            link.send(proto.Done())

    def _drop(self, conn: Link) -> None:
        self.conns.pop(conn.owner, None)
        conn.info.state = "gone"
        n = self.book.release(conn.owner)
        conn.leases.clear()
        log.info("consumer %s disconnected%s", conn.info.id, f"; {n} task(s) requeued" if n else "")
        self._dispatch()

    def _on_message(self, conn: Link, msg: proto.Message) -> None:
        if isinstance(msg, proto.Request):
            if conn.wanted + len(conn.leases) >= self.settings.max_outstanding:
                conn.send(proto.Wait(500))
                return
            conn.wanted += 1
            if conn not in self._waiting:
                self._waiting.append(conn)
            self._dispatch()
        elif isinstance(msg, proto.Result):
            self._on_result(conn, msg)
        elif isinstance(msg, proto.Return) and self.book.give_back(conn.owner, msg.task_id):
            conn.leases.discard(msg.task_id)
            self._set_state(conn)
            log.info("consumer %s returned task %d", conn.info.id, msg.task_id)
            self._dispatch()

    def _condemn(self, owner: str, task_id: int) -> None:
        """``owner`` returned a result for ``task_id`` that two others disagree with: refuse it,
        and throw away everything it contributed."""
        assert self.verifier is not None
        self.verifier.forget(owner)
        n = self.book.discard(owner)
        conn = self.conns.get(owner)
        name = conn.info.id if conn is not None else owner
        log.warning("consumer %s returned a wrong result for task %d (two other consumers agree); refused, "
                    "its work discarded: %d task(s) queued again", name, task_id, n)
        if conn is not None:
            self.refused_names.add(name)
            conn.send(proto.Error("refused: your result differs from other consumers'"))
            conn.close()
            conn.info.state = "refused"
        self._dirty.set()
        self._dispatch()

    def _time_task(self, seconds: float) -> None:
        self._task_times.append(seconds)
        if len(self._task_times) % 8 == 0:  # sorting 256 floats per result would be most of a result's cost
            st = self.settings
            self.lease_now = lease_seconds(list(self._task_times), st.lease_floor, st.lease_seconds, st.lease_multiple)

    def _on_result(self, conn: Link, msg: proto.Result) -> None:
        tid = msg.task_id
        if tid >= self.book.total or tid not in self.book.history.get(conn.owner, ()):
            raise proto.ProtocolError(f"result for task {tid}, which was never leased to it")
        spec = self.book.spec(tid)
        if msg.data.shape != (spec.h, spec.w, 3):
            raise proto.ProtocolError(f"result for task {tid} has shape {msg.data.shape}")
        if int(msg.data.max()) > (spec.s1 - spec.s0) * MAX_SAMPLE:  # so no sum can overflow int64
            raise proto.ProtocolError(f"result for task {tid} exceeds what {spec.s1 - spec.s0} samples can add up to")
        conn.leases.discard(tid)
        self._set_state(conn)
        lease = self.book.leases.get(tid)
        if lease is not None and lease.owner == conn.owner:
            self._time_task(self.clock() - lease.since)
        if self.verifier is not None and self.verifier.sampled(tid) and not self.book.is_done(tid):
            verdict = self.verifier.result(tid, conn.owner, msg.data)
            if not verdict.accepted:  # held until a different consumer agrees
                self.book.again_elsewhere(conn.owner, tid, verdict.exclude)
                self._dispatch()
                return
            for owner in verdict.guilty:
                self._condemn(owner, tid)
        if not self.book.complete(conn.owner, tid, msg.data):
            log.info("duplicate or late result for task %d from %s ignored", tid, conn.info.id)
            return
        now = self.clock()
        conn.info.tasks_done += 1
        conn.info.meter.add(now, spec.samples)
        self.meter.add(now, spec.samples)
        self._dirty.set()
        if self.book.finished:
            self._start_finish()
