"""A reverse proxy in front of the plane's kube-apiserver that holds one request until the test says.

kubeview talks plain HTTP to the proxy on loopback; the proxy forwards every request, byte for byte and
streamed (watches included), to the real API server over TLS as the plane's admin. A request that
`hold` matches (the first one only) waits at the proxy until `release()`: a list page that takes as
long as the test wants, so "while the list is in progress" is a state the test makes, not a race it
hopes to win (#41). `held` is set once that request has arrived.
"""

from __future__ import annotations

import http.client
import ssl
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import yaml

from .plane import Plane

HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection", "host"}


def second_pod_page(method: str, path: str) -> bool:
    """A page after the first of the pod list in all namespaces (a `continue` token, not a watch)."""
    url = urlsplit(path)
    query = parse_qs(url.query)
    return method == "GET" and url.path == "/api/v1/pods" and "continue" in query and "watch" not in query


class HeldPages:
    def __init__(self, plane: Plane, hold: Callable[[str, str], bool] = second_pod_page, armed: bool = True) -> None:
        self._upstream = urlsplit(plane.server)
        admin = plane.pki.clients["admin"]
        self._ssl = ssl.create_default_context(cafile=str(plane.pki.ca.cert))
        self._ssl.load_cert_chain(str(admin.cert), str(admin.key))
        self._hold = hold
        self.held = threading.Event()  # the request to hold has arrived (and waits)
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._taken = not armed  # True: nothing is held until `arm()`
        self.requests: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="held-pages", daemon=True)

    def __enter__(self) -> HeldPages:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()

    def release(self) -> None:
        self._released.set()

    def arm(self) -> None:
        """Hold the next request `hold` matches (again)."""
        with self._lock:
            self._taken = False
            self.held.clear()
            self._released.clear()

    def kubeconfig(self, path: Path) -> Path:
        """A kubeconfig naming the proxy (no credentials: the proxy is the admin upstream)."""
        doc = {"apiVersion": "v1", "kind": "Config", "current-context": "held",
               "clusters": [{"name": "held", "cluster": {"server": self.url}}],
               "users": [{"name": "held", "user": {}}], "contexts": [{"name": "held", "context": {
                   "cluster": "held", "user": "held"}}]}
        path.write_text(yaml.safe_dump(doc))
        return path

    def _should_hold(self, method: str, path: str) -> bool:
        with self._lock:
            self.requests.append(f"{method} {path}")
            if self._taken or not self._hold(method, path):
                return False
            self._taken = True
            return True

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

            def _forward(self) -> None:
                if proxy._should_hold(self.command, self.path):
                    proxy.held.set()
                    proxy._released.wait()
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
                up = http.client.HTTPSConnection(proxy._upstream.hostname, proxy._upstream.port, context=proxy._ssl,
                                                 timeout=700)
                try:
                    up.request(self.command, self.path, body=body, headers=headers)
                    resp = up.getresponse()
                    chunked = resp.getheader("Transfer-Encoding", "").lower() == "chunked"
                    self.send_response(resp.status, resp.reason)
                    for k, v in resp.getheaders():
                        if k.lower() not in HOP and not (chunked and k.lower() == "content-length"):
                            self.send_header(k, v)
                    self.send_header("Connection", "close")
                    if chunked:
                        self.send_header("Transfer-Encoding", "chunked")
                        self.end_headers()
                        while chunk := resp.read1(65536):  # as it comes: a watch streams for minutes
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                            self.wfile.flush()
                        self.wfile.write(b"0\r\n\r\n")
                    else:
                        data = resp.read()
                        self.send_header("Content-Length", str(len(data)))
                        self.end_headers()
                        self.wfile.write(data)
                    self.wfile.flush()
                except (OSError, http.client.HTTPException):  # either end went away (stop; the API server killed)
                    pass
                finally:
                    up.close()
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

        return Handler
