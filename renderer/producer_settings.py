"""The producer's knobs: leases, idle and handshake timeouts, connection caps, lingering after DONE."""

from __future__ import annotations

from dataclasses import dataclass


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
