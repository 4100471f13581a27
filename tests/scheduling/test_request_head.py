"""Request lines and headers read without `email`: what kube-scheduler sends, and the refusals, both
directly and from the running server over a raw socket."""

from __future__ import annotations

import io
import json
import socket

import pytest
from builders import fixture

from kubeview.model.events import Listed
from kubeview.scheduling.extender import Extender
from kubeview.scheduling.feed import ModelFeed
from kubeview.scheduling.request_head import (
    MAX_HEADERS,
    HeadError,
    keeps_alive,
    parse_request_line,
    read_headers,
)
from kubeview.scheduling.server import ExtenderServer

GO_HEAD = (b"Host: 127.0.0.1:18888\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: 9633\r\n"
           b"Content-Type: application/json\r\nAccept-Encoding: gzip\r\n\r\nBODY")


def test_kube_schedulers_head_is_read() -> None:
    line = parse_request_line("POST /filter HTTP/1.1")
    assert (line.command, line.path, line.version) == ("POST", "/filter", "HTTP/1.1")
    stream = io.BytesIO(GO_HEAD)
    headers = read_headers(stream.readline)
    assert headers.get("content-length") == "9633" and headers.get("Content-Type") == "application/json"
    assert headers.get("Connection") is None and headers.get("X", "d") == "d" and "HOST" in headers
    assert stream.read() == b"BODY"  # the body is left for the handler
    assert keeps_alive("HTTP/1.1", headers)
    assert parse_request_line("GET //evil.example/x HTTP/1.0").path == "/evil.example/x"


@pytest.mark.parametrize(("version", "connection", "alive"), [
    ("HTTP/1.1", None, True), ("HTTP/1.1", "close", False), ("HTTP/1.1", "Keep-Alive", True),
    ("HTTP/1.0", None, False), ("HTTP/1.0", "keep-alive", True), ("HTTP/1.0", "close", False),
])
def test_connection_persistence(version: str, connection: str | None, alive: bool) -> None:
    head = b"" if connection is None else f"Connection: {connection}\r\n".encode()
    assert keeps_alive(version, read_headers(io.BytesIO(head + b"\r\n").readline)) is alive


def test_a_repeated_field_keeps_the_first_unless_it_is_a_conflicting_length() -> None:
    headers = read_headers(io.BytesIO(b"Accept: a\r\naccept: b\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n").readline)
    assert headers.get("Accept") == "a" and headers.get("Content-Length") == "3"


@pytest.mark.parametrize(("line", "status"), [
    (b"POST /filter\r\n", 400), (b"GET /\r\n", 400), (b"POST /filter HTTP/1.1 extra\r\n", 400),
    (b"POST /filter HTTP/2.0\r\n", 505), (b"POST /filter HTTP/1.2\r\n", 400), (b"POST /filter FTP/1.1\r\n", 400),
])
def test_bad_request_lines(line: bytes, status: int) -> None:
    with pytest.raises(HeadError) as err:
        parse_request_line(str(line, "iso-8859-1").rstrip("\r\n"))
    assert err.value.status == status


@pytest.mark.parametrize(("head", "status", "message"), [
    (b"Content-Length: 3\r\nContent-Length: 4\r\n\r\n", 400, "conflicting Content-Length"),
    (b"X-A: 1\r\n  folded\r\n\r\n", 400, "obsolete line folding"),
    (b"no colon here\r\n\r\n", 400, "malformed header line"),
    (b"Content-Length : 3\r\n\r\n", 400, "malformed header line"),
    (b"X: " + b"a" * 70000 + b"\r\n\r\n", 431, "Line too long"),
    (b"".join(b"X-%d: 1\r\n" % i for i in range(MAX_HEADERS + 1)) + b"\r\n", 431, "Too many headers"),
])
def test_bad_headers(head: bytes, status: int, message: str) -> None:
    with pytest.raises(HeadError, match=message) as err:
        read_headers(io.BytesIO(head).readline)
    assert err.value.status == status


@pytest.fixture(scope="module")
def port():
    feed = ModelFeed()
    feed.apply(Listed("Node", fixture("nodes.json")["items"], "1"))
    feed.apply(Listed("Pod", [], "1"))
    server = ExtenderServer(Extender(feed), "127.0.0.1", 0).start()
    yield server.port
    server.stop()


def exchange(port: int, data: bytes) -> bytes:
    """Send raw bytes, read until the server closes or goes quiet for a moment."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        sock.settimeout(0.5)
        got = b""
        try:
            while chunk := sock.recv(65536):
                got += chunk
        except TimeoutError:
            got += b"<open>"
        return got


def test_the_server_answers_bad_heads_with_a_status_and_closes(port: int) -> None:
    for data, status in [(b"POST /filter\r\n\r\n", b"400"), (b"POST /filter HTTP/2.0\r\n\r\n", b"505"),
                         (b"POST /filter HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 9\r\n\r\n{}", b"400"),
                         (b"GET /healthz HTTP/1.1\r\nX: " + b"a" * 70000 + b"\r\n\r\n", b"431")]:
        reply = exchange(port, data)
        assert reply.startswith(b"HTTP/1.1 " + status), reply[:80]
        assert not reply.endswith(b"<open>")  # closed: what follows cannot be trusted to be in step
        assert json.loads(reply.split(b"\r\n\r\n", 1)[1])["Error"]


def test_keep_alive_http_1_0_and_expect_continue(port: int) -> None:
    two = exchange(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert two.count(b"HTTP/1.1 200") == 2 and two.endswith(b"<open>")  # kept alive
    old = exchange(port, b"GET /healthz HTTP/1.0\r\n\r\nGET /healthz HTTP/1.0\r\n\r\n")
    assert old.count(b"HTTP/1.1 200") == 1 and not old.endswith(b"<open>")  # answered once, closed
    body = b'{"Pod": {"metadata": {"name": "p"}}, "Nodes": null, "NodeNames": ["gpu-node-1"]}'
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"POST /filter HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body))
        assert sock.recv(1024).startswith(b"HTTP/1.1 100")
        sock.sendall(body)
        reply = sock.recv(65536)
        head, _, got = reply.partition(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        while len(got) < length:  # headers and body may come in separate segments
            got += sock.recv(65536)
    assert head.startswith(b"HTTP/1.1 200") and json.loads(got)["NodeNames"] == ["gpu-node-1"]
