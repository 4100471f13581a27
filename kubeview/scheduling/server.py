"""The extender over HTTP(S): kube-scheduler's `filter`/`prioritize`/`bind` verbs plus config, status, metrics.

    POST /filter, /prioritize   ExtenderArgs in, ExtenderFilterResult / HostPriorityList out
    POST /bind                  ExtenderBindingArgs in, ExtenderBindingResult out (posts the Binding)
    GET  /config                the packing config as JSON
    PUT  /config                change it (partial documents merge); Bearer token when one is set
    GET  /status                config, counters, latency percentiles per verb, assumed pods, changes
    GET  /metrics               Prometheus text format
    GET  /healthz, /readyz      liveness; readiness (503 until the cluster model has listed nodes and pods)

Connections are `http_conn.Connection`s on an asyncio loop in a background thread (limits:
`ServerLimits`; TLS, optionally requiring a client certificate: `TLSFiles`). filter and prioritize
run on the loop (CPU work: under the GIL a thread hop only adds latency); bind, a call that must
wait for the watch, and bodies over `ServerLimits.inline_body` run in a few worker threads. Whatever a client sends is answered 200 or 4xx with `Error` saying what is wrong
(and one log line); only a bug behind a verb is a 500. `ExtenderServer.start()`/`stop()`, `.port`.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import socket
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import msgspec

from kubeview.scheduling import wire_types as w
from kubeview.scheduling.errors import MustWait, ProtocolError
from kubeview.scheduling.extender import Extender
from kubeview.scheduling.heap import keep_large_buffers
from kubeview.scheduling.http_conn import Connection, Hub, Request, Response
from kubeview.scheduling.protocol import error_reply
from kubeview.scheduling.server_limits import MiB, ServerLimits, TLSFiles

log = logging.getLogger("kubeview.extender")

VERBS = ("filter", "prioritize", "bind")


class ExtenderServer:
    """The extender HTTP server in a background thread (its own asyncio loop)."""

    def __init__(self, extender: Extender, host: str = "127.0.0.1", port: int = 8888,
                 token: str | None = None, limits: ServerLimits | None = None, tls: TLSFiles | None = None) -> None:
        self.extender = extender
        self.token = token or None
        self.limits = limits or ServerLimits()
        self._ssl = tls.context() if tls is not None else None  # ValueError for unusable files
        host = host.strip("[]")
        self._sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        try:
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._sock.bind((host, port))
            self._sock.listen(1024)
        except OSError:
            self._sock.close()
            raise
        self._sock.setblocking(False)
        self._pool = ThreadPoolExecutor(self.limits.workers, thread_name_prefix="extender-verb")
        self._hub = Hub(self.limits, self._handle, self._refusal, extender.count)
        self._loop = asyncio.new_event_loop()
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None

    @property
    def host(self) -> str:
        return str(self._sock.getsockname()[0])

    @property
    def port(self) -> int:
        return int(self._sock.getsockname()[1])

    @property
    def url(self) -> str:
        host, scheme = self.host, "https" if self._ssl is not None else "http"
        return f"{scheme}://[{host}]:{self.port}" if ":" in host else f"{scheme}://{host}:{self.port}"

    @property
    def connections(self) -> int:
        return len(self._hub.conns)

    @property
    def bodies_in_flight(self) -> int:
        return self._hub.in_flight

    def start(self) -> ExtenderServer:
        # request bodies and replies of a few MB in pages already mapped (heap.py: ~1 ms per full-Nodes call)
        keep_large_buffers(self.limits.max_body + MiB, self.limits.max_bodies_in_flight)
        started = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            self._server = self._loop.run_until_complete(self._loop.create_server(
                lambda: Connection(self._hub), sock=self._sock, ssl=self._ssl,
                ssl_handshake_timeout=self.limits.header_timeout if self._ssl else None))
            started.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="extender-http", daemon=True)
        self._thread.start()
        started.wait(10)
        return self

    def stop(self) -> None:
        if self._thread is not None and self._loop.is_running():
            async def close() -> None:
                if self._server is not None:
                    self._server.close()
                for conn in list(self._hub.conns):
                    conn.abort()
                self._loop.stop()

            asyncio.run_coroutine_threadsafe(close(), self._loop)
            self._thread.join(timeout=5)
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._sock.close()
        if not self._loop.is_running():
            self._loop.close()

    def __enter__(self) -> ExtenderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- routing ---------------------------------------------------------------------------------
    def _refusal(self, status: int, message: str, path: str) -> Response:
        verb = path.strip("/").split("?", 1)[0]
        if verb in VERBS:
            self.extender.metrics.observe(verb, status, 0.0)
        return Response(status, error_reply(message), close=True)

    def _handle(self, request: Request) -> Response | Future[Response]:
        path = request.path.split("?", 1)[0].rstrip("/") or "/"
        method = request.method
        if method == "POST":
            verb = path.strip("/")
            if verb not in VERBS:
                return _error(404, f"no such verb {request.path!r}; POST /filter, /prioritize or /bind")
            if verb != "bind" and len(request.body) <= self.limits.inline_body:
                # CPU work under the GIL: a hop to a worker thread and back would only add to it
                try:
                    return self._verb(verb, request.body, may_wait=False)
                except MustWait:  # the watch lags: wait for it in a worker, not on the loop
                    pass
            return self._pool.submit(self._verb, verb, request.body)
        if method in ("GET", "HEAD"):
            return self._get(path, request.path)
        if method == "PUT":
            if path != "/config":
                return _error(404, f"no such path {request.path!r}; PUT /config")
            return self._put_config(request)
        return _error(405, f"method {method} is not served; GET, POST or PUT")

    def _verb(self, verb: str, body: w.Body, may_wait: bool = True) -> Response:
        """One verb's reply; MustWait (from filter/prioritize with `may_wait` false) passes through."""
        started, cpu = time.perf_counter(), time.thread_time()
        extender = self.extender
        try:
            code, reply = 200, (extender.bind(body) if verb == "bind" else getattr(extender, verb)(body, may_wait))
        except MustWait:
            raise
        except ProtocolError as exc:
            code, reply = 400, error_reply(str(exc))
            extender.count("bad_requests")
            log.warning("%s: bad request: %s", verb, str(exc)[:300])
        except Exception as exc:  # a bug behind the verb: kube-scheduler sees a 500 and the reason
            code, reply = 500, error_reply(f"internal error in {verb}: {type(exc).__name__}: {exc}")
            extender.count("errors")
            log.error("%s failed: %s: %s", verb, type(exc).__name__, exc)
        extender.metrics.observe(verb, code, time.perf_counter() - started, time.thread_time() - cpu)
        # housekeeping on the loop once the reply is written, before the connection reads on
        after = (lambda: _quietly(extender.after_reply, verb)) if code == 200 else None
        return Response(code, reply, after=after)

    def _get(self, path: str, raw_path: str) -> Response:
        extender = self.extender
        if path == "/config":
            return _json(extender.config.to_dict())
        if path == "/status":
            return _json(extender.status())
        if path == "/metrics":
            return Response(200, extender.metrics.exposition(), "text/plain; version=0.0.4; charset=utf-8")
        if path == "/healthz":
            return Response(200, b"ok", "text/plain")
        if path == "/readyz":
            synced = extender.feed.view().synced
            return Response(200 if synced else 503, b"ok" if synced else b"cluster not listed yet", "text/plain")
        return _error(404, f"no such path {raw_path!r}")

    def _put_config(self, request: Request) -> Response:
        if self.token is not None:
            given = request.headers.get("authorization") or ""
            if not hmac.compare_digest(given.encode(), f"Bearer {self.token}".encode()):
                return _error(401, "PUT /config needs the header Authorization: Bearer <token>")
        try:
            patch = w.decode(w.CONFIG, request.body, "config")
        except ValueError as exc:
            log.warning("packing config change from %s refused: %s", request.peer, exc)
            return _error(400, str(exc))
        try:
            new = self.extender.set_config(msgspec.to_builtins(patch), source=request.peer)
        except ValueError as exc:  # logged by set_config
            return _error(400, str(exc))
        return _json(new.to_dict())


def _quietly(fn, *args) -> None:
    try:
        fn(*args)
    except Exception as exc:  # housekeeping must not take a worker down
        log.error("after reply: %s: %s", type(exc).__name__, exc)


def _json(doc: object) -> Response:
    return Response(200, json.dumps(doc, indent=1).encode())


def _error(code: int, message: str) -> Response:
    return Response(code, error_reply(message))
