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
from pathlib import Path

import numpy as np

from renderer import fd_budget
from renderer import protocol as proto
from renderer.admission import Roster, idle_links
from renderer.consumer_stats import RateMeter
from renderer.fixed import MAX_SAMPLE
from renderer.image import OutputError, prepare_to_write
from renderer.link import Link
from renderer.producer_settings import ProducerSettings
from renderer.result_files import ResultFiles
from renderer.scene import Scene
from renderer.status import StatusServer
from renderer.tasks import TaskBook, lease_seconds
from renderer.verify import Verifier

log = logging.getLogger("renderer.producer")
EXIT_OUTPUT = 3  # the image could not be written where asked and was kept elsewhere: rendering again won't help


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
        self.serve_after_done = serve_after_done
        self.settings = settings or ProducerSettings()
        self.clock = clock
        self.started = clock()
        self.finished = False
        self.finished_at: float | None = None
        self.final_image: np.ndarray | None = None
        self.meter = RateMeter()
        self.roster = Roster(self.settings.max_gone)
        self.consumers = self.roster.consumers  # the same dict: what the status endpoint lists
        self.conns: dict[str, Link] = {}  # consumers that said HELLO, by owner
        self._links: set[Link] = set()  # every open connection
        self._owners = (f"c{i}" for i in itertools.count(1))
        self._waiting: deque[Link] = deque()
        self._fingerprint = scene.fingerprint()
        self._job = proto.Job(bytes.fromhex(self._fingerprint), scene.width, scene.height, scene.spp,
                              scene.tile, scene.chunk, scene.text)
        self._job_frame = proto.encode(self._job)
        self.files = ResultFiles(self.book, self._fingerprint, scene.name, output=output, raw=raw,
                                 checkpoint=checkpoint, clock=clock)
        self._dirty = asyncio.Event()
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
        self.status_address: tuple[str, int] | None = None
        self._status: StatusServer | None = None

    # -- lifecycle ------------------------------------------------------------------------
    async def run(self, listen: tuple[str, int], status: tuple[str, int] | None = None) -> int:
        """Serve until the image is written (or forever with serve_after_done, or a signal)."""
        self.files.resume()
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
            helpers.append(asyncio.create_task(self.files.keep_saving(self._dirty)))
        if self.book.finished:
            self._start_finish()
        try:
            await self._stop.wait()
            if self.finished:
                await self._linger()
            elif self.exit_code == 0:
                log.info("stopping before the job is finished: %d/%d tasks done", self.book.done,
                         self.book.total)
                await self.files.save_checkpoint()
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
            await self.files.write(image)
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

    # -- leases ---------------------------------------------------------------------------
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
        conn.consumer.state = "working" if conn.leases else "idle"

    # -- connections (called by Link) -------------------------------------------------------
    def link_opened(self, link: Link) -> None:
        if self._closing:
            link.close()
        elif len(self._links) >= self.max_connections and not self._drop_idle(self.settings.idle_evict, 1):
            self.roster.refuse(link, self.max_connections, self.clock())
        else:
            self._links.add(link)

    def _drop_idle(self, after: float, limit: int | None = None) -> int:
        """Hang up on consumers with no lease and no parked request that were silent for ``after``
        seconds, longest-idle first (at most ``limit``); they hold a slot and do no work."""
        now = self.clock()
        idle = idle_links(self.conns.values(), now, after, limit)
        for conn in idle:
            log.warning("consumer %s idle for %.0f s; dropped", conn.consumer.id, now - conn.consumer.last_seen)
            conn.send(proto.Error("idle too long"))
            conn.close()
        return len(idle)

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
        if name in self.roster.refused_names:
            log.warning("%s: consumer %s was refused for wrong results; disconnecting", link.address, name)
            link.send(proto.Error("refused: this consumer returned wrong results"))
            link.close()
            return
        link.info = self.roster.admit(name, link.address, self.clock())
        self.conns[link.owner] = link
        log.info("consumer %s connected from %s", link.info.id, link.address)
        link.send_frame(self._job_frame)
        if self.finished:
            link.send(proto.Done())

    def _drop(self, conn: Link) -> None:
        self.conns.pop(conn.owner, None)
        conn.consumer.state = "gone"
        n = self.book.release(conn.owner)
        conn.leases.clear()
        log.info("consumer %s disconnected%s", conn.consumer.id, f"; {n} task(s) requeued" if n else "")
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
            log.info("consumer %s returned task %d", conn.consumer.id, msg.task_id)
            self._dispatch()

    def _condemn(self, owner: str, task_id: int) -> None:
        """``owner`` returned a result for ``task_id`` that two others disagree with: refuse it,
        and throw away everything it contributed."""
        assert self.verifier is not None
        self.verifier.forget(owner)
        n = self.book.discard(owner)
        conn = self.conns.get(owner)
        name = conn.consumer.id if conn is not None else owner
        log.warning("consumer %s returned a wrong result for task %d (two other consumers agree); refused, "
                    "its work discarded: %d task(s) queued again", name, task_id, n)
        if conn is not None:
            self.roster.refused_names.add(name)
            conn.send(proto.Error("refused: your result differs from other consumers'"))
            conn.close()
            conn.consumer.state = "refused"
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
            log.info("duplicate or late result for task %d from %s ignored", tid, conn.consumer.id)
            return
        now = self.clock()
        conn.consumer.tasks_done += 1
        conn.consumer.meter.add(now, spec.samples)
        self.meter.add(now, spec.samples)
        self._dirty.set()
        if self.book.finished:
            self._start_finish()
