"""What the extender's HTTP server allows a client: connections, time, bytes; and its TLS files.

A value object the `kubeview extender` options fill in (docs/scheduler.md lists them); the defaults
suit one kube-scheduler (a handful of keep-alive connections, calls of a few MB at most) with room.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, fields

MiB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ServerLimits:
    max_connections: int = 256
    """Open connections at most; at the cap a new one replaces the longest-idle (nginx's way), else it is closed."""
    header_timeout: float = 10.0
    """Seconds for a request's line and headers (and a TLS handshake) to arrive, from its first byte."""
    body_timeout: float = 30.0
    """Seconds for a request's body to arrive once its head has (also for a reply the client does not read)."""
    idle_timeout: float = 60.0
    """Seconds a keep-alive connection may wait for its next request (kube-scheduler's Go client
    retries a request on a connection the server closed while idle)."""
    max_body: int = 16 * MiB
    """Bytes in one request body (413 beyond, answered from Content-Length before the body is read)."""
    max_bodies_in_flight: int = 64 * MiB
    """Bytes of request bodies held at once, over all connections (429 for a body that would pass it)."""
    max_head: int = 64 * 1024
    """Bytes of a request line and headers (431 beyond)."""
    workers: int = 4
    """Threads answering what may block: bind (posts a Binding), a call that waits for the watch,
    and filter/prioritize bodies over `inline_body`."""
    inline_body: int = 4 * MiB
    """Bytes up to which a filter/prioritize body is answered on the event loop itself: the call is
    CPU work under the GIL, so handing it to a thread only adds the hop (measured: docs/architecture.md);
    a larger body goes to a worker so the loop keeps serving other connections between its GIL slices."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not value > 0:
                raise ValueError(f"{f.name.replace('_', '-')} must be above 0, not {value}")
        if self.max_bodies_in_flight < self.max_body:
            raise ValueError("max-bodies-in-flight must be at least max-body")


@dataclass(frozen=True, slots=True)
class TLSFiles:
    """PEM files: the server's certificate and key, and optionally the CA that signs client
    certificates (then a client must present one: kube-scheduler's `tlsConfig.certData/keyData`)."""

    cert: str
    key: str
    client_ca: str | None = None

    def context(self) -> ssl.SSLContext:
        """The server's SSLContext; ValueError with one sentence when a file cannot be used."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            ctx.load_cert_chain(self.cert, self.key)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(f"cannot use the TLS certificate {self.cert} with key {self.key}: "
                             f"{getattr(exc, 'strerror', None) or exc}") from None
        if self.client_ca:
            try:
                ctx.load_verify_locations(cafile=self.client_ca)
            except (OSError, ssl.SSLError) as exc:
                raise ValueError(f"cannot use the client CA {self.client_ca}: "
                                 f"{getattr(exc, 'strerror', None) or exc}") from None
            ctx.verify_mode = ssl.CERT_REQUIRED
        return ctx
