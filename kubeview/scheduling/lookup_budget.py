"""How many API-server requests a caller of the extender can cause: a token bucket and a negative cache.

Anyone who reaches the extender's port can send a prioritize for a made-up pod, and the extender,
whose watch has not shown that pod, asks the API server for it by name (`KubePodOf`); a filter that
would refuse nodes lists their pods (`KubePodsOnNode`). Unbounded, 3,000 such calls made 3,001 GETs
(issue #37): the caller spent the extender's priority-and-fairness share. Every such request now
takes a token from one bucket (`rate` per second, `burst` at once), and a pod the API server said it
does not have pending under that uid is not asked for again for `absent_ttl` seconds. Without a
token the call is answered as if the API server could not say: no prediction, the watch trusted.
Pure (the clock is an argument), thread-safe.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LookupLimits:
    rate: float = 20.0
    """API-server requests per second the extender makes for callers (refills the bucket). kube-scheduler
    needs one only for a pod the watch has not shown after `catch_up`, a few per second at most."""
    burst: float = 40.0
    """Requests at once when the bucket is full (a burst of pods created together, the watch lagging)."""
    absent_ttl: float = 5.0
    """Seconds a (namespace, name, uid) the API server has not pending is answered from memory."""
    absent_max: int = 4096
    """Entries of that memory at most (the oldest go first)."""

    def __post_init__(self) -> None:
        for name in ("rate", "burst", "absent_ttl", "absent_max"):
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"{name.replace('_', '-')} must be above 0, not {value}")


class TokenBucket:
    """`rate` tokens a second up to `burst`; starts full."""

    def __init__(self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self._clock = rate, burst, clock
        self._tokens, self._at = burst, clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now

    def available(self) -> bool:
        """Whether `take` would succeed now (it may not, a moment later, with other takers)."""
        with self._lock:
            self._refill()
            return self._tokens >= 1.0

    def take(self) -> bool:
        with self._lock:
            self._refill()
            if self._tokens < 1.0:
                return False
            self._tokens -= 1.0
            return True


class NegativeCache:
    """Keys remembered for `ttl` seconds, at most `max_entries` (the oldest dropped first)."""

    def __init__(self, ttl: float, max_entries: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl, self.max_entries, self._clock = ttl, max_entries, clock
        self._until: OrderedDict[Hashable, float] = OrderedDict()
        self._lock = threading.Lock()

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            until = self._until.get(key)
            if until is None:
                return False
            if until <= self._clock():
                del self._until[key]
                return False
            return True

    def add(self, key: Hashable) -> None:
        with self._lock:
            self._until.pop(key, None)
            self._until[key] = self._clock() + self.ttl
            while len(self._until) > self.max_entries:
                self._until.popitem(last=False)

    def __len__(self) -> int:
        return len(self._until)


class LookupBudget:
    """The bucket and the cache of one extender (see the module docstring)."""

    def __init__(self, limits: LookupLimits | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits = limits or LookupLimits()
        self.bucket = TokenBucket(limits.rate, limits.burst, clock)
        self.absent = NegativeCache(limits.absent_ttl, limits.absent_max, clock)
