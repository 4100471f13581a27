"""The extender over HTTP: kube-scheduler's `filter`/`prioritize` verbs plus config, status and metrics.

    POST /filter, /prioritize   ExtenderArgs in, ExtenderFilterResult / HostPriorityList out
    POST /bind                  ExtenderBindingArgs in, ExtenderBindingResult out (posts the Binding)
    GET  /config                the packing config as JSON
    PUT  /config                change it (partial documents merge); Bearer token when one is set
    GET  /status                config, counters, latency percentiles per verb, assumed pods, changes
    GET  /metrics               Prometheus text format
    GET  /healthz, /readyz      liveness; readiness (503 until the cluster model has listed nodes and pods)

HTTP/1.1 keep-alive (kube-scheduler reuses its connection), bodies bounded (413 beyond), malformed
JSON is a 400 with the reason, an internal error a 500 with `Error` set; the server stays up.
`ExtenderServer` runs in a background thread (`start()`/`stop()`, `.port`), in the `kubeview extender`
command, in tests and beside the local cluster.
"""

from __future__ import annotations

import hmac
import json
import logging
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from kubeview.scheduling.extender import Extender
from kubeview.scheduling.protocol import ProtocolError, error_reply
from kubeview.scheduling.request_head import HeadError, keeps_alive, parse_request_line, read_headers

log = logging.getLogger("kubeview.extender")

MAX_BODY = 16 * 1024 * 1024
VERBS = ("filter", "prioritize", "bind")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes: no 40 ms delayed-ACK stalls
    server: _Server
    server_version = "kubeview-extender"
    sys_version = ""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (BaseHTTPRequestHandler's name)
        log.debug("%s " + format, self.address_string(), *args)

    # -- plumbing --------------------------------------------------------------------------------
    def parse_request(self) -> bool:
        """http.server's, with the line and headers read by `request_head` (without the `email` package)."""
        self.command = None
        self.request_version = self.default_request_version
        self.close_connection = True
        self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        if not self.requestline.strip():
            return False
        try:
            line = parse_request_line(self.requestline)
            self.command, self.path, self.request_version = line.command, line.path, line.version
            self.headers = read_headers(self.rfile.readline)
        except HeadError as exc:
            if self.command is None:
                self.request_version = "HTTP/1.0"  # so the answer has a status line (0.9 has none)
            self._error(exc.status, exc.message, close=True)
            return False
        self.close_connection = not keeps_alive(line.version, self.headers)
        if (self.headers.get("Expect") or "").lower() == "100-continue" and line.version == "HTTP/1.1":
            return self.handle_expect_100()
        return True

    def _send(self, code: int, body: bytes, content_type: str = "application/json", close: bool = False) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, code: int, doc: object) -> None:
        self._send(code, json.dumps(doc, indent=1 if code == 200 else None).encode())

    def _error(self, code: int, message: str, close: bool = False) -> None:
        self._send(code, error_reply(message), close=close)

    def _body(self) -> bytes | None:
        """The request body, or None after answering 411/413/400 for one that cannot be read."""
        if (self.headers.get("Transfer-Encoding") or "").lower() == "chunked":
            self._error(411, "chunked request bodies are not supported; send Content-Length", close=True)
            return None
        raw = self.headers.get("Content-Length")
        try:
            length = int(raw) if raw is not None else 0
        except ValueError:
            self._error(400, f"Content-Length is not a number: {raw!r}", close=True)
            return None
        if length < 0:
            self._error(400, "Content-Length is negative", close=True)
            return None
        if length > self.server.max_body:
            self._error(413, f"request body of {length} bytes is over the limit of {self.server.max_body} bytes",
                        close=True)
            return None
        return self.rfile.read(length) if length else b""

    # -- verbs -----------------------------------------------------------------------------------
    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        started, cpu = time.perf_counter(), time.thread_time()
        verb = self.path.strip("/").split("?", 1)[0]
        body = self._body()  # read (or refused) first, so a keep-alive connection stays in step
        if verb not in VERBS:
            if body is not None:
                self._error(404, f"no such verb {self.path!r}; POST /filter, /prioritize or /bind")
            return
        code = 200
        if body is None:
            self.server.extender.metrics.observe(verb, 413, time.perf_counter() - started)
            return
        extender = self.server.extender
        try:
            reply = getattr(extender, verb)(body)
        except ProtocolError as exc:
            code, reply = 400, error_reply(str(exc))
            extender.count("bad_requests")
            log.warning("%s: bad request: %s", verb, exc)
        except Exception as exc:  # the server must stay up; kube-scheduler sees a 500 and the reason
            code, reply = 500, error_reply(f"internal error in {verb}: {type(exc).__name__}: {exc}")
            extender.count("errors")
            log.exception("%s failed", verb)
        self._send(code, reply)
        extender.metrics.observe(verb, code, time.perf_counter() - started, time.thread_time() - cpu)
        extender.after_reply(verb)

    def do_GET(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        extender = self.server.extender
        if path == "/config":
            self._json(200, extender.config.to_dict())
        elif path == "/status":
            self._json(200, extender.status())
        elif path == "/metrics":
            self._send(200, extender.metrics.exposition(), "text/plain; version=0.0.4; charset=utf-8")
        elif path == "/healthz":
            self._send(200, b"ok", "text/plain")
        elif path == "/readyz":
            synced = extender.feed.view().synced
            self._send(200 if synced else 503, b"ok" if synced else b"cluster not listed yet", "text/plain")
        else:
            self._error(404, f"no such path {self.path!r}")

    def do_PUT(self) -> None:  # noqa: N802
        body = self._body()  # read (or refused) first, so a keep-alive connection stays in step
        if body is None:
            return
        if self.path.split("?", 1)[0].rstrip("/") != "/config":
            self._error(404, f"no such path {self.path!r}; PUT /config")
            return
        token = self.server.token
        if token is not None:
            given = self.headers.get("Authorization") or ""
            if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
                self._error(401, "PUT /config needs the header Authorization: Bearer <token>")
                return
        try:
            patch = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self._error(400, f"config is not valid JSON: {exc}")
            return
        except (RecursionError, ValueError):  # nested past the stack, or digits past int's limit
            self._error(400, "config is not valid JSON: nested too deeply or a number too long")
            return
        try:
            new = self.server.extender.set_config(patch, source=self.client_address[0])
        except ValueError as exc:
            self._error(400, str(exc))
            return
        self._json(200, new.to_dict())


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    extender: Extender
    token: str | None
    max_body: int


class _Server6(_Server):
    address_family = socket.AF_INET6


class ExtenderServer:
    """The extender HTTP server in a background thread."""

    def __init__(self, extender: Extender, host: str = "127.0.0.1", port: int = 8888,
                 token: str | None = None, max_body: int = MAX_BODY) -> None:
        self.extender = extender
        server_class = _Server6 if ":" in host else _Server
        self._httpd = server_class((host.strip("[]"), port), _Handler, bind_and_activate=True)
        self._httpd.extender = extender
        self._httpd.token = token or None
        self._httpd.max_body = max_body
        self._thread: threading.Thread | None = None

    @property
    def host(self) -> str:
        return str(self._httpd.server_address[0])

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        host = self.host
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    def start(self) -> ExtenderServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                        name="extender-http", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until `stop()` from another thread."""
        self._httpd.serve_forever(poll_interval=0.2)

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ExtenderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
