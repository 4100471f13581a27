"""Who may talk to the producer, and under which name.

The connection cap (a newcomer over it is told so in an ERROR frame; refusals are logged once per
burst), idle consumers dropped to make room, and the names consumers get at HELLO: unique among
those connected (``name#2``), a returning name taking its old entry back, names caught returning
wrong results kept out.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from renderer import protocol as proto
from renderer.consumer_stats import ConsumerInfo
from renderer.link import Link

log = logging.getLogger("renderer.producer")


class Roster:
    """Every consumer the producer has known, by name (the status endpoint lists them, at most
    ``max_gone`` disconnected ones), the names refused for wrong results, connections refused."""

    def __init__(self, max_gone: int) -> None:
        self.max_gone = max_gone
        self.consumers: dict[str, ConsumerInfo] = {}
        self.refused_names: set[str] = set()
        self.refused = 0  # connections turned away at the cap (logged in bursts, not one line each)
        self._refused_said: float | None = None

    def admit(self, name: str, address: str, now: float) -> ConsumerInfo:
        """The entry of a consumer that said HELLO as ``name``: its own while connected."""
        cid, n = name, 1
        while cid in self.consumers and self.consumers[cid].state != "gone":
            n += 1
            cid = f"{name}#{n}"
        info = self.consumers.pop(cid, None) or ConsumerInfo(cid, address, now)
        info.address, info.last_seen, info.state = address, now, "idle"
        self.consumers[cid] = info
        gone = [k for k, c in self.consumers.items() if c.state == "gone"]
        for k in gone[: max(0, len(gone) - self.max_gone)]:
            del self.consumers[k]
        return info

    def refuse(self, link: Link, cap: int, now: float) -> None:
        """At the cap: say so in an ERROR frame (not a bare reset) and hang up; log once per burst."""
        self.refused += 1
        if self._refused_said is None or now - self._refused_said >= 10.0:
            self._refused_said = now
            log.warning("%s: at the cap of %d connections; refused (%d so far)", link.address, cap, self.refused)
        link.send(proto.Error("producer is at its connection limit; try again later"))
        link.close()


def idle_links(conns: Iterable[Link], now: float, after: float, limit: int | None) -> list[Link]:
    """Consumers with no lease and no parked request, silent for ``after`` seconds, longest-idle
    first (at most ``limit``): they hold a slot and do no work."""
    idle = [c for c in conns if not c.leases and c.wanted == 0 and not c.closed
            and now - c.consumer.last_seen >= after]
    return sorted(idle, key=lambda c: c.consumer.last_seen)[:limit]
