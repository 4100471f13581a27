"""A loopback server that accepts TCP connections and never answers (#42, the TLS hang).

As a load balancer with no backend, a stuck proxy or a wedged API server does: the connection is
accepted, then nothing. `SilentServer()` never completes the TLS handshake; `SilentServer(tls=(cert,
key))` completes it and then never sends response headers. `.accepted` counts the connections, so a
test can tell how many requests were tried without timing anything.
"""

from __future__ import annotations

import socket
import ssl
import subprocess
import threading
from pathlib import Path


class SilentServer:
    def __init__(self, tls: tuple[Path, Path] | None = None) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._tls: ssl.SSLContext | None = None
        if tls is not None:
            self._tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self._tls.load_cert_chain(*map(str, tls))
        self.url = f"https://127.0.0.1:{self._sock.getsockname()[1]}"
        self.accepted = 0
        self._held: list[socket.socket] = []  # kept open, never read from or written to
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, name="silent-server", daemon=True)

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._sock.close()
        with self._lock:
            for conn in self._held:
                conn.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:  # closed by __exit__
                return
            with self._lock:
                self.accepted += 1
                self._held.append(conn)
            if self._tls is not None:
                threading.Thread(target=self._handshake, args=(conn,), daemon=True).start()

    def _handshake(self, conn: socket.socket) -> None:
        try:
            wrapped = self._tls.wrap_socket(conn, server_side=True)  # type: ignore[union-attr]
        except OSError:  # the client gave up first
            return
        with self._lock:
            self._held.append(wrapped)


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A throwaway CA-less certificate for 127.0.0.1 and its key (openssl), in `folder`."""
    cert, key = folder / "tls.crt", folder / "tls.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return cert, key
