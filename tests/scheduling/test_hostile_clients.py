"""Hostile clients against the real extender server on loopback (issue #16): only 200 or 4xx, state
unchanged by bad calls, deadlines and caps that hold, bounded memory, TLS with client certificates.

Short in CI; `KUBEVIEW_HOSTILE=N` runs N fuzz mutations (and longer stalls) instead of the default.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from builders import FIXTURES, node_obj, pod_obj
from hostile import closed_within, mutations, raw_exchange

from kubeview.model.events import Listed
from kubeview.scheduling.extender import Extender
from kubeview.scheduling.feed import ModelFeed
from kubeview.scheduling.server import ExtenderServer
from kubeview.scheduling.server_limits import ServerLimits, TLSFiles

FUZZ = int(os.environ.get("KUBEVIEW_HOSTILE", "400"))
MiB = 1024 * 1024


def _records() -> list[dict]:
    out = []
    for mode in ("true", "false"):
        path = FIXTURES / f"extender-requests-nodecachecapable-{mode}.jsonl"
        out += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return out


def _server(limits: ServerLimits | None = None, pods: list[dict] | None = None, tls: TLSFiles | None = None,
            nodes: list[dict] | None = None) -> ExtenderServer:
    feed = ModelFeed()
    feed.apply(Listed("Node", nodes or json.loads((FIXTURES / "nodes.json").read_text())["items"], "1"))
    feed.apply(Listed("Pod", pods or [], "100000"))  # past the recorded pods' versions: no catch-up wait
    return ExtenderServer(Extender(feed), "127.0.0.1", 0, limits=limits, tls=tls).start()


def _until(check: Callable[[], object], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(0.01)


@pytest.fixture
def server() -> Iterator[ExtenderServer]:
    srv = _server(ServerLimits(header_timeout=0.5, body_timeout=0.5, idle_timeout=0.5, max_connections=32))
    try:
        yield srv
    finally:
        srv.stop()


def _call(conn: http.client.HTTPConnection, path: str, body: bytes) -> tuple[int, bytes]:
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    return resp.status, resp.read()


def _replay(port: int, records: list[dict]) -> list[tuple[int, bytes]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        return [_call(conn, r["path"], r["raw_body"].encode()) for r in records]
    finally:
        conn.close()


def test_fuzzed_recorded_requests_get_only_200_or_4xx_and_change_nothing(caplog) -> None:
    srv = _server()
    records = _records()
    try:
        before = _replay(srv.port, records)
        assert [code for code, _ in before] == [200] * len(records)
        bodies = [r["raw_body"].encode() for r in records]
        codes: dict[int, int] = {}
        started = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
        with caplog.at_level(logging.INFO, logger="kubeview.extender"):
            for i, body in enumerate(mutations(bodies, FUZZ, seed=16)):
                path = ("/filter", "/prioritize")[i % 2]
                try:
                    code, reply = _call(conn, path, body)
                except (http.client.HTTPException, ConnectionError):
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
                    code, reply = _call(conn, path, body)
                codes[code] = codes.get(code, 0) + 1
                assert code == 200 or 400 <= code < 500, (code, reply[:300], body[:300])
                if code != 200:
                    error = json.loads(reply)["Error"]
                    assert "Traceback" not in error and "\n" not in error
        conn.close()
        assert codes.get(400, 0) > FUZZ // 4  # the mutations do reach the checks
        assert time.monotonic() - started < 30
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
        after = _replay(srv.port, records)
        assert after == before  # bad calls changed nothing later calls see
        assert srv.extender.assumed.snapshot() == []
    finally:
        srv.stop()


def test_a_prioritize_for_a_pod_the_cluster_does_not_have_changes_nothing() -> None:
    """Issue #16 item 6: made-up pods asking 2 GPUs on every GPU node used to fill the ledger for 30 s."""
    nodes = [node_obj("gpu-node-1", gpu=2), node_obj("gpu-node-2", gpu=2)]
    real = pod_obj("real", gpu=2)
    srv = _server(pods=[real], nodes=nodes)
    names = ["gpu-node-1", "gpu-node-2"]
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    try:
        def args(pod: dict) -> bytes:
            return json.dumps({"Pod": pod, "Nodes": None, "NodeNames": names}).encode()

        baseline = _call(conn, "/filter", args(real))
        for i in range(4):  # new uids each time, as an attacker renews them
            fake = pod_obj(f"fake-{i}", gpu=2)
            fake["metadata"]["uid"] = f"made-up-{i}"
            assert _call(conn, "/prioritize", args(fake))[0] == 200
            assert _call(conn, "/filter", args(fake))[0] == 200
        assert srv.extender.assumed.snapshot() == []
        assert _call(conn, "/filter", args(real)) == baseline
        assert json.loads(baseline[1])["NodeNames"] == names
        assert srv.extender.counters["unknown_pod"] == 4
    finally:
        conn.close()
        srv.stop()


def test_huge_quantities_are_a_fast_400_while_healthz_on_another_connection_is_unaffected(server) -> None:
    body = json.loads(_records()[0]["raw_body"])
    stop = threading.Event()
    worst = [0.0]

    def probe() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        while not stop.is_set():
            t = time.perf_counter()
            conn.request("GET", "/healthz")
            assert conn.getresponse().read() == b"ok"
            worst[0] = max(worst[0], time.perf_counter() - t)
        conn.close()

    prober = threading.Thread(target=probe)
    prober.start()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        for quantity in ("1e999990", "-1e999990", "1e19", "9" * 70):
            body["Pod"]["spec"]["containers"][0]["resources"]["requests"]["memory"] = quantity
            t = time.perf_counter()
            code, reply = _call(conn, "/prioritize", json.dumps(body).encode())
            assert (code, time.perf_counter() - t < 0.5) == (400, True), reply
        body["Pod"]["spec"]["containers"][0]["resources"]["requests"]["memory"] = "placeholder"
        raw = json.dumps(body).replace('"placeholder"', "1e999990").encode()  # a JSON number, not a string
        assert _call(conn, "/filter", raw)[0] == 400
    finally:
        stop.set()
        prober.join()
        conn.close()
    assert worst[0] < 0.5


def test_framing_is_strict() -> None:
    srv = _server()
    try:
        ok = b'{"Pod":{"metadata":{"name":"p"}},"NodeNames":[]}'
        # a Transfer-Encoding other than exactly chunked, with Content-Length 0: one 400, not two replies
        reply = raw_exchange(srv.port, b"POST /filter HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n"
                             b"Content-Length: 0\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n")
        assert reply.startswith(b"HTTP/1.1 400 ") and reply.count(b"HTTP/1.1 ") == 1
        for length in (b"+%d" % len(ok), b"1_%d" % len(ok), b"0x10", b"%d, %d" % (len(ok), len(ok) + 1)):
            reply = raw_exchange(srv.port, b"POST /filter HTTP/1.1\r\nContent-Length: " + length + b"\r\n\r\n" + ok)
            assert reply.startswith(b"HTTP/1.1 400 "), (length, reply[:100])
        # Expect: 100-continue with a body over the limit: 413, and never 100 Continue
        reply = raw_exchange(srv.port, b"POST /filter HTTP/1.1\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n"
                             % (17 * MiB))
        assert reply.startswith(b"HTTP/1.1 413 ") and b"100 Continue" not in reply
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:  # read up to the 100, not 0.5 s
            s.sendall(b"POST /filter HTTP/1.1\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n" % len(ok))
            reply = b""
            while b"\r\n\r\n" not in reply and (chunk := s.recv(65536)):
                reply += chunk
        assert reply.startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        # exactly chunked is read; a bad chunk is a 400
        chunked = b"POST /filter HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n%x\r\n%s\r\n0\r\n\r\n"
        assert raw_exchange(srv.port, chunked % (len(ok), ok)).startswith(b"HTTP/1.1 200 ")
        bad_size = b"POST /filter HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n%s\r\n0\r\n\r\n" % ok
        assert raw_exchange(srv.port, bad_size).startswith(b"HTTP/1.1 400 ")
        assert raw_exchange(srv.port, b"GET / HTTP/1.1\r\nX: " + b"a" * 70000 + b"\r\n\r\n").startswith(b"HTTP/1.1 431 ")
        assert raw_exchange(srv.port, b"\x16\x03\x01garbage\r\n\r\n").startswith(b"HTTP/1.1 400 ")
        assert raw_exchange(srv.port, b"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n").endswith(b"\r\n\r\nok")
    finally:
        srv.stop()


def test_idle_and_slow_connections_are_closed_after_the_timeouts(server) -> None:
    def opened(data: bytes) -> socket.socket:
        s = socket.create_connection(("127.0.0.1", server.port))
        s.sendall(data)
        return s

    cases = {
        "silent": opened(b""),
        "partial head": opened(b"POST /filter HTTP/1.1\r\nContent-Le"),
        "slow body": opened(b"POST /filter HTTP/1.1\r\nContent-Length: 100\r\n\r\n{\"Pod\":"),
        "idle keep-alive": opened(b"GET /healthz HTTP/1.1\r\n\r\n"),
    }
    try:
        for what, sock in cases.items():
            took = closed_within(sock, 3.0)
            assert took is not None and took < 1.5, what
        counters = server.extender.counters
        assert counters["header_timeout"] >= 2 and counters["body_timeout"] == 1 and counters["idle_timeout"] == 1
    finally:
        for sock in cases.values():
            sock.close()


def test_the_connection_cap_holds_and_a_new_client_is_still_answered() -> None:
    srv = _server(ServerLimits(max_connections=16, header_timeout=30, idle_timeout=30))
    held: list[socket.socket] = []
    try:
        for i in range(60):  # idle keep-alive connections, and connections stuck in their first head
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.sendall(b"GET /healthz HTTP/1.1\r\n\r\n" if i % 2 else b"GET /heal")
            held.append(s)
            time.sleep(0.002)
        _until(lambda: srv.extender.counters["evicted_at_cap"] >= 60 - 16, "the server to take all 60")
        assert srv.connections <= 16
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        body = _records()[0]["raw_body"].encode()
        assert _call(conn, "/filter", body)[0] == 200
        conn.close()
        assert srv.connections <= 16
        assert srv.extender.counters["evicted_at_cap"] >= 60 - 16
    finally:
        for s in held:
            s.close()
        srv.stop()


def test_large_stalled_bodies_stay_within_the_bodies_in_flight_cap(caplog) -> None:
    limits = ServerLimits(max_body=16 * MiB, max_bodies_in_flight=48 * MiB, body_timeout=20)
    srv = _server(limits)
    proc = psutil.Process()
    clients = int(os.environ.get("KUBEVIEW_HOSTILE_STALLED", "10"))
    socks = []
    try:
        rss_before = proc.memory_info().rss
        chunk = b"x" * MiB
        refused = 0
        for _ in range(clients):
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.settimeout(5)
            s.sendall(b"POST /filter HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % (16 * MiB))
            try:
                for _ in range(15):  # 15 of the 16 MiB, then stall
                    s.sendall(chunk)
            except (ConnectionResetError, BrokenPipeError, TimeoutError):
                refused += 1
            socks.append(s)
        time.sleep(0.3)
        assert srv.bodies_in_flight <= 48 * MiB
        grown = (proc.memory_info().rss - rss_before) / MiB
        assert grown < 48 + 40, grown  # the cap, plus socket buffers and allocator slack
        assert refused >= clients - 3  # 429 for the bodies past the cap
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
        conn.request("GET", "/healthz")
        assert conn.getresponse().status == 200
        conn.close()
    finally:
        for s in socks:
            s.close()
        _until(lambda: srv.bodies_in_flight == 0, "the stalled bodies to be let go")
        srv.stop()


def test_clients_going_away_mid_request_cost_no_traceback(server, caplog) -> None:
    body = _records()[0]["raw_body"].encode()
    with caplog.at_level(logging.DEBUG, logger="kubeview"):
        for i in range(300):
            s = socket.create_connection(("127.0.0.1", server.port))
            head = b"POST /filter HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % len(body)
            s.sendall(head + (body[: len(body) // 2] if i % 2 else body))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST
            s.close()
        # answered after all 300 were accepted; then every one of them handled and closed, not 0.3 s hoped for
        assert raw_exchange(server.port, b"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n").endswith(b"ok")
        _until(lambda: server.connections == 0, "the 300 connections to be closed")
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.WARNING]
    assert server.bodies_in_flight == 0


# -- TLS ---------------------------------------------------------------------------------------------
def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Path:
    """A CA, the extender's serving certificate (for 127.0.0.1) and kube-scheduler's client certificate."""
    d = tmp_path_factory.mktemp("pki")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
             "-subj", "/CN=test-ca", cwd=d)
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1"), ("client", "extendedKeyUsage=clientAuth")):
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                 "-subj", f"/CN=kube-scheduler-{name}", cwd=d)
        (d / f"{name}.ext").write_text(ext + "\n")
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext", cwd=d)
    return d


def test_tls_with_a_client_certificate_as_kube_scheduler_sends_it(pki: Path) -> None:
    srv = _server(tls=TLSFiles(str(pki / "server.crt"), str(pki / "server.key"), str(pki / "ca.crt")))
    body = _records()[0]["raw_body"].encode()
    try:
        assert srv.url.startswith("https://")
        # tlsConfig {caData, certData, keyData}: verify the server by the CA, present the client cert
        ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        ctx.load_cert_chain(str(pki / "client.crt"), str(pki / "client.key"))
        conn = http.client.HTTPSConnection("127.0.0.1", srv.port, context=ctx, timeout=5)
        assert _call(conn, "/filter", body)[0] == 200
        assert _call(conn, "/prioritize", body)[0] == 200  # the same connection, kept alive
        conn.close()
        # a client without a certificate is refused during the handshake
        bare = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        conn = http.client.HTTPSConnection("127.0.0.1", srv.port, context=bare, timeout=5)
        with pytest.raises((ssl.SSLError, ConnectionError)):
            _call(conn, "/filter", body)
        conn.close()
        # nor does plain HTTP get an answer
        assert not raw_exchange(srv.port, b"GET /healthz HTTP/1.1\r\n\r\n", timeout=2).startswith(b"HTTP/1.1 200")
    finally:
        srv.stop()
