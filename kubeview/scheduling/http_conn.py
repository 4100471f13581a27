"""HTTP/1.1 connections on asyncio, parsed by httptools (llhttp, Node.js's parser), with hard limits.

The parser does the framing (request line, headers, Content-Length and chunked bodies, keep-alive);
this module adds what a server in a cluster's scheduling path needs against hostile clients, and
that uvicorn and aiohttp lack (docs/architecture.md): a connection cap that makes room by closing
the longest-idle connection, deadlines for a request's head, its body and an idle keep-alive
connection, a cap on request bodies held in memory over all connections, and strict framing (a
Transfer-Encoding other than exactly `chunked`, a Content-Length that is not plain digits, or both
headers at once: 400; `Expect: 100-continue` with a body over the limit: 413, never 100). A client
that goes away costs nothing but a counter: no traceback, no log line.

`Hub` holds what connections share; `Connection` is one client. Requests on one connection are
answered in order, one at a time; the handler returns a `Response` or a future of one (work that
may block runs in the hub's threads, not on the event loop).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import cast

import httptools

from kubeview.scheduling.server_limits import ServerLimits

log = logging.getLogger("kubeview.extender")
MAX_HEADERS = 100
MAX_PIPELINED = 8  # complete requests queued on one connection before it stops being read


@dataclass(slots=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names; a repeated header keeps its last value
    body: bytes | bytearray  # a bytearray when Content-Length gave its size (never reused or changed)
    peer: str


@dataclass(slots=True)
class Response:
    status: int
    body: bytes
    content_type: str = "application/json"
    close: bool = False
    after: Callable[[], None] | None = None  # run on the loop once the reply is written (housekeeping)


Handler = Callable[[Request], "Response | Future[Response] | asyncio.Future[Response]"]


class _Refused(Exception):
    """Stop parsing this connection: a reply has been queued and the connection closes after it."""


@dataclass
class Hub:
    """State shared by every connection of one server."""

    limits: ServerLimits
    handler: Handler
    error: Callable[[int, str, str], Response]  # (status, reason, path) -> the refusal to send
    count: Callable[[str], None] = lambda name: None  # connection events, by name
    conns: dict[Connection, None] = field(default_factory=dict)  # insertion order = oldest first
    in_flight: int = 0  # bytes of request bodies held

    def admit(self, conn: Connection) -> bool:
        """Make room for `conn` at the cap (close the longest-idle connection, else one still sending
        its first head); False when every connection is busy with a request."""
        if len(self.conns) >= self.limits.max_connections:
            victim = next((c for c in self.conns if c.idle), None) or next((c for c in self.conns if c.waiting), None)
            if victim is None:
                self.count("refused_at_cap")
                return False
            self.count("evicted_at_cap")
            victim.abort()
        self.conns[conn] = None
        return True

    def reserve(self, n: int) -> bool:
        if self.in_flight + n > self.limits.max_bodies_in_flight:
            return False
        self.in_flight += n
        return True


class Connection(asyncio.BufferedProtocol):
    """Reads into buffers of its own: a request head (and a chunked body) into one reused buffer, a
    Content-Length body straight into the bytearray it will be handed over in (the kernel copies it
    there; no chunk objects, no join). Either way the parser sees every byte."""

    READ_BUFFER = 64 * 1024

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.limits = hub.limits
        self.inbuf = memoryview(bytearray(self.READ_BUFFER))
        self.direct = False  # the last read went straight into `body`
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport  # set by connection_made, before any other callback
        self.peer = ""
        self.closed = False
        self.reading = "head"  # head | body | idle (between requests) | refused (answer, then close)
        self.busy = False  # a request is being answered
        self.queue: deque[tuple[Request, bool, int]] = deque()  # (request, keep-alive, body bytes held)
        self.timer: asyncio.TimerHandle | None = None
        self.write_paused = False
        self.refusal: Response | None = None
        self._reset()

    def _reset(self) -> None:
        self.url = b""
        self.head_bytes = 0
        self.headers: dict[str, str] = {}
        self.header_count = 0
        self.chunks: list[bytes] = []  # a chunked body as it arrives
        self.body: bytearray | None = None  # a Content-Length body, filled as it arrives
        self.body_bytes = 0
        self.held = 0  # body bytes reserved in the hub for the request being read

    # -- states ----------------------------------------------------------------------------------
    @property
    def idle(self) -> bool:
        return self.reading == "idle" and not self.busy and not self.queue

    @property
    def waiting(self) -> bool:
        """Still sending a request head, nothing being answered."""
        return self.reading == "head" and not self.busy and not self.queue

    def _arm(self, seconds: float, why: str) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.timer = asyncio.get_running_loop().call_later(seconds, self._expire, why)

    def _disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _expire(self, why: str) -> None:
        self.timer = None
        self.hub.count(why)
        self.abort()

    # -- asyncio ---------------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # a stream server's transports are Transports
        peer = transport.get_extra_info("peername")
        self.peer = str(peer[0]) if isinstance(peer, tuple) else ""
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):  # not TCP (a unix socket)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if not self.hub.admit(self):
            self.closed = True
            self.transport.abort()
            return
        self._arm(self.limits.header_timeout, "header_timeout")

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed:
            self.closed = True
            if self.busy or self.reading == "body":
                self.hub.count("client_gone")
        self._disarm()
        self.hub.conns.pop(self, None)
        self.hub.in_flight -= self.held + sum(held for _, _, held in self.queue)
        self.held = 0
        self.queue.clear()
        self.chunks = []
        self.body = None

    def abort(self) -> None:
        if not self.closed:
            self.closed = True
            self.hub.conns.pop(self, None)  # off the cap now: connection_lost comes a loop turn later
            self.transport.abort()  # connection_lost follows and releases what was held

    def pause_writing(self) -> None:
        self.write_paused = True
        self.transport.pause_reading()
        self._arm(self.limits.body_timeout, "write_timeout")  # a client that does not read its replies

    def resume_writing(self) -> None:
        self.write_paused = False
        if not self.closed:
            self._disarm()
            if self.reading != "refused":
                self.transport.resume_reading()
            self._after_write()

    def get_buffer(self, sizehint: int) -> memoryview:
        body = self.body
        self.direct = body is not None and self.reading == "body" and self.body_bytes < len(body)
        return memoryview(body)[self.body_bytes:] if body is not None and self.direct else self.inbuf

    def buffer_updated(self, nbytes: int) -> None:
        body = self.body
        if self.direct and body is not None:  # direct: get_buffer handed out `body`
            self.data_received(memoryview(body)[self.body_bytes:self.body_bytes + nbytes])
        else:
            self.data_received(self.inbuf[:nbytes])

    def data_received(self, data: bytes | memoryview) -> None:
        if self.closed:
            return
        if self.reading == "idle":
            self.reading = "head"
            self._arm(self.limits.header_timeout, "header_timeout")
        elif self.reading == "refused":
            return
        try:
            self.parser.feed_data(data)
        except _Refused:
            return
        except httptools.HttpParserUpgrade:
            with contextlib.suppress(_Refused):
                self._refuse(400, "protocol upgrades are not supported")
            return
        except httptools.HttpParserError as exc:
            with contextlib.suppress(_Refused):
                self._refuse(400, f"malformed HTTP request: {exc}")
            return
        if len(self.queue) >= MAX_PIPELINED and not self.closed:
            self.transport.pause_reading()

    # -- httptools callbacks ---------------------------------------------------------------------
    def on_message_begin(self) -> None:
        self.reading = "head"
        self._reset()

    def on_url(self, url: bytes) -> None:
        self.url += url
        self._count_head(len(url))

    def on_header(self, name: bytes, value: bytes) -> None:
        self.header_count += 1
        self._count_head(len(name) + len(value))
        if self.header_count > MAX_HEADERS:
            self._refuse(431, f"more than {MAX_HEADERS} header fields")
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        if key in ("content-length", "transfer-encoding") and key in self.headers and (
                key == "transfer-encoding" or self.headers[key] != text):
            self._refuse(400, f"repeated {key} header")
        self.headers[key] = text

    def _count_head(self, n: int) -> None:
        self.head_bytes += n
        if self.head_bytes > self.limits.max_head:
            self._refuse(431, f"request head over {self.limits.max_head} bytes")

    def on_headers_complete(self) -> None:
        headers = self.headers
        te, cl = headers.get("transfer-encoding"), headers.get("content-length")
        if te is not None and (te.strip().lower() != "chunked" or cl is not None):
            self._refuse(400, "Transfer-Encoding must be exactly chunked, without Content-Length")
        length = 0
        if cl is not None:
            if not (cl.isascii() and cl.isdigit()) or len(cl) > 15:
                self._refuse(400, f"Content-Length must be plain digits, not {cl[:20]!r}")
            length = int(cl)
        if length > self.limits.max_body:
            self._refuse(413, f"request body of {length} bytes is over the limit of {self.limits.max_body} bytes")
        if length and not self.hub.reserve(length):
            self._refuse(429, "too many request bodies in flight; retry")
        self.held = length
        if length:  # filled as the chunks arrive, while the client is still sending (no join at the end)
            self.body = bytearray(length)
        if length or te is not None:
            self.reading = "body"
            self._arm(self.limits.body_timeout, "body_timeout")
            if headers.get("expect", "").lower() == "100-continue" and self.parser.get_http_version() == "1.1":
                self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def on_body(self, body: bytes) -> None:
        self.body_bytes += len(body)
        over = self.body_bytes - self.held
        if over > 0:  # chunked: reserve as it arrives
            if self.body_bytes > self.limits.max_body:
                self._refuse(413, f"request body is over the limit of {self.limits.max_body} bytes")
            if not self.hub.reserve(over):
                self._refuse(429, "too many request bodies in flight; retry")
            self.held += over
        if self.body is not None:
            if not self.direct:  # (read into `body` already otherwise)
                self.body[self.body_bytes - len(body):self.body_bytes] = body
        else:
            self.chunks.append(body)

    def on_message_complete(self) -> None:
        self._disarm()
        method = self.parser.get_method().decode("latin-1")
        body = self.body if self.body is not None else b"".join(self.chunks)
        request = Request(method, self.url.decode("latin-1"), self.headers, body, self.peer)
        self.queue.append((request, self.parser.should_keep_alive(), self.held))
        self.held = 0
        self.chunks = []
        self.body = None
        self.reading = "idle"
        self._next()

    # -- answering -------------------------------------------------------------------------------
    def _next(self) -> None:
        if self.busy or self.closed or not self.queue or self.write_paused:
            return
        self.busy = True
        request, keep_alive, held = self.queue[0]
        try:
            got = self.hub.handler(request)
        except Exception as exc:  # a bug behind the handler: one line, the connection goes on
            log.error("%s %s failed: %s: %s", request.method, request.path, type(exc).__name__, exc)
            got = self.hub.error(500, f"internal error: {type(exc).__name__}", request.path)
        if isinstance(got, Response):
            self._answer(got)
        else:
            wrapped = got if isinstance(got, asyncio.Future) else asyncio.wrap_future(got)
            wrapped.add_done_callback(self._answered)

    def _answered(self, fut: asyncio.Future) -> None:
        if fut.cancelled():
            return
        exc = fut.exception()
        if exc is not None:
            log.error("request failed: %s: %s", type(exc).__name__, exc)
            self._answer(self.hub.error(500, f"internal error: {type(exc).__name__}", ""))
        else:
            self._answer(fut.result())

    def _answer(self, response: Response) -> None:
        if self.closed:  # the client went away meanwhile: nothing to write
            self.busy = False
            return
        request, keep_alive, held = self.queue.popleft()
        self.hub.in_flight -= held
        close = response.close or not keep_alive
        self._write(response, close, request.method == "HEAD")
        if response.after is not None:  # off this reply's path; before the next request is read
            asyncio.get_running_loop().call_soon(response.after)
        self.busy = False
        if close:
            self.closed = True
            self.transport.close()
            return
        if not self.write_paused:
            self._after_write()

    def _after_write(self) -> None:
        if self.queue:
            if len(self.queue) < MAX_PIPELINED and self.reading != "refused":
                self.transport.resume_reading()
            self._next()
        elif self.reading == "refused":
            self._close_with_refusal()
        elif self.reading == "idle":
            self._arm(self.limits.idle_timeout, "idle_timeout")

    def _write(self, response: Response, close: bool, head_only: bool = False) -> None:
        status = HTTPStatus(response.status)
        head = (f"HTTP/1.1 {status.value} {status.phrase}\r\nContent-Type: {response.content_type}\r\n"
                f"Content-Length: {len(response.body)}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n")
        if head_only or len(response.body) <= 64 * 1024:
            self.transport.write(head.encode() + (b"" if head_only else response.body))
        else:  # a large body is not copied to put the head before it
            self.transport.write(head.encode())
            self.transport.write(response.body)

    def _refuse(self, status: int, message: str) -> None:
        """Answer a request that cannot be read (after the replies to those before it) and close."""
        if self.closed:
            raise _Refused
        self.hub.count("bad_framing")
        log.info("%s: HTTP %d: %s", self.peer or "client", status, message)
        self.hub.in_flight -= self.held
        self.held = 0
        self.chunks = []
        self.body = None
        self._disarm()
        self.transport.pause_reading()
        self.reading = "refused"
        self.refusal = self.hub.error(status, message, self.url.decode("latin-1"))
        if not self.busy and not self.queue:
            self._close_with_refusal()
        raise _Refused

    def _close_with_refusal(self) -> None:
        assert self.refusal is not None  # set by _refuse before the connection is marked refused
        self._write(self.refusal, close=True)
        self.closed = True
        self.transport.close()
