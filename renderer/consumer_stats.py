"""Per-consumer and whole-job rates the producer keeps and its status endpoint reports.

Below both `renderer.link` (a connection's state names its `ConsumerInfo`) and `renderer.status`,
so neither imports the producer.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

WINDOW = 10.0  # seconds over which samples/s are measured


class RateMeter:
    """Samples per second over the last ``window`` seconds."""

    def __init__(self, window: float = WINDOW) -> None:
        self.window = window
        self.events: deque[tuple[float, int]] = deque()
        self.since: float | None = None

    def start(self, now: float) -> None:
        if self.since is None:
            self.since = now

    def add(self, now: float, n: int) -> None:
        self.start(now)
        self.events.append((now, n))

    def rate(self, now: float) -> float:
        while self.events and self.events[0][0] < now - self.window:
            self.events.popleft()
        if self.since is None or not self.events:
            return 0.0
        span = min(self.window, now - self.since)
        return sum(n for _, n in self.events) / span if span > 0 else 0.0


@dataclass
class ConsumerInfo:
    id: str
    address: str
    last_seen: float
    tasks_done: int = 0
    state: str = "idle"  # working | idle | gone
    meter: RateMeter = field(default_factory=RateMeter)

    def as_dict(self, now: float) -> dict:
        return {
            "id": self.id, "address": self.address, "tasks_done": self.tasks_done,
            "samples_per_second": 0.0 if self.state == "gone" else round(self.meter.rate(now), 1),
            "state": self.state, "last_seen_seconds": round(max(0.0, now - self.last_seen), 3),
        }
