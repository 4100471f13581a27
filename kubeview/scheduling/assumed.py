"""The extender's own recent decisions, like kube-scheduler's "assumed" pods.

Between the extender answering for a pod and the watch showing that pod bound, the cluster model
still shows its node as free. Two pods scored back to back in that window would both be packed onto
the last free GPU. So each answer is remembered (pod uid -> node and requests) and added to the
requested amounts of later evaluations until the model shows the pod bound, or `ttl` seconds pass
(the scheduler picked another node, or the pod is gone). "Shows bound" means in the allocation being
evaluated, which may be a little older than the live model (see feed.py): an assumption is dropped
only once that allocation's version has reached the version at which the binding was first seen.
Thread-safe; the clock is injectable.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kubeview.model.allocation import Allocation


@dataclass(frozen=True, slots=True)
class Assumption:
    uid: str
    namespace: str
    name: str
    node: str
    requests: dict[str, int]
    at: float  # clock() when assumed

    def to_dict(self, now: float) -> dict:
        return {"uid": self.uid, "pod": f"{self.namespace}/{self.name}", "node": self.node,
                "requests": dict(self.requests), "age_s": round(now - self.at, 3)}


class AssumedPods:
    def __init__(self, ttl: float = 30.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.clock = clock
        self._by_uid: dict[str, Assumption] = {}
        self._bound_at: dict[str, int] = {}  # uid -> live model version when first seen bound
        self._lock = threading.Lock()
        self.version = 0  # bumped on every change (cache key for evaluations)
        self.expired = 0  # dropped by timeout
        self.confirmed = 0  # dropped because the model showed the pod bound

    def assume(self, uid: str, namespace: str, name: str, node: str, requests: dict[str, int]) -> None:
        with self._lock:
            old = self._by_uid.get(uid)
            if old is not None and old.node == node:
                return
            self._by_uid[uid] = Assumption(uid, namespace, name, node, dict(requests), self.clock())
            self._bound_at.pop(uid, None)
            self.version += 1

    def forget(self, uid: str) -> None:
        with self._lock:
            self._bound_at.pop(uid, None)
            if self._by_uid.pop(uid, None) is not None:
                self.version += 1

    def prune(self, node_of: Callable[[str, str], tuple[str | None, int]], view_version: int) -> None:
        """Drop assumptions that timed out, or whose binding the allocation at `view_version` includes.

        `node_of(ns, name)` -> (node the live model shows the pod bound to or None, live version).
        """
        now = self.clock()
        with self._lock:
            for uid, a in list(self._by_uid.items()):
                if uid not in self._bound_at:
                    node, live = node_of(a.namespace, a.name)
                    if node is not None:
                        self._bound_at[uid] = live
                if uid in self._bound_at and view_version >= self._bound_at[uid]:
                    self.confirmed += 1
                elif now - a.at > self.ttl:
                    self.expired += 1
                else:
                    continue
                del self._by_uid[uid]
                self._bound_at.pop(uid, None)
                self.version += 1

    def matrix(self, alloc: Allocation, row: dict[str, int], exclude_uid: str = "") -> np.ndarray | None:
        """Assumed requests as an (N, R) array over `alloc` (None when there are none to add)."""
        with self._lock:
            entries = [a for uid, a in self._by_uid.items() if uid != exclude_uid and a.node in row]
        if not entries:
            return None
        col = {r: j for j, r in enumerate(alloc.resources)}
        rows, cols, vals = [], [], []
        for a in entries:
            r = row[a.node]
            for name, value in a.requests.items():
                c = col.get(name)
                if c is not None:
                    rows.append(r)
                    cols.append(c)
                    vals.append(value)
        out = np.zeros_like(alloc.requested)
        np.add.at(out, (rows, cols), vals)
        return out

    def __len__(self) -> int:
        return len(self._by_uid)

    def snapshot(self) -> list[dict]:
        now = self.clock()
        with self._lock:
            return [a.to_dict(now) for a in sorted(self._by_uid.values(), key=lambda a: a.at)]
