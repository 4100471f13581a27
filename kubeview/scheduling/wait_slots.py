"""How long a caller of the extender can make it wait for its watch: few waits at once, few names each.

A call whose pod version the watch has not reached, or that names nodes the watch has not shown,
waits up to `catch_up` for the watch (extender.py), in one of the server's few worker threads
(`ServerLimits.workers`, 4), which bind shares. Anyone can send such calls: made-up node names cost
0.5 s each and reached p50 4.0 s at concurrency 64 (issue #37), with bind queued behind them. So
only `*_in_flight` waits of each kind run at once (kube-scheduler sends filter and prioritize one at
a time, so it needs one), and one call waits for at most `node_names` unknown names (nodes are
added a few at a time); any other call is answered at once on the view it has, the missing names
scored as unknown, as when the wait runs out. Thread-safe, no clock: the waits time themselves.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WaitLimits:
    version_in_flight: int = 2
    """Calls waiting at once for the watch to reach their pod's resourceVersion."""
    nodes_in_flight: int = 1
    """Calls waiting at once for node names the watch has not shown."""
    node_names: int = 8
    """Unknown node names one call waits for (the rest are scored unknown at once)."""

    def __post_init__(self) -> None:
        for name in ("version_in_flight", "nodes_in_flight", "node_names"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name.replace('_', '-')} must be at least 1, not {getattr(self, name)}")


class WaitSlots:
    """At most `size` holders at once; never blocks (a call without a slot does not wait)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._held = 0
        self._lock = threading.Lock()

    def free(self) -> bool:
        """Whether `acquire` would succeed now (it may not, a moment later, with other callers)."""
        return self._held < self.size

    def acquire(self) -> bool:
        with self._lock:
            if self._held >= self.size:
                return False
            self._held += 1
            return True

    def release(self) -> None:
        with self._lock:
            self._held -= 1

    @property
    def held(self) -> int:
        return self._held
