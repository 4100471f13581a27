"""The extender's own recent decisions, like kube-scheduler's "assumed" pods.

Between the extender answering for a pod and the watch showing that pod bound, the cluster model
still shows its node as free. Two pods scored back to back in that window would both be packed onto
the last free GPU. So each answer is remembered (pod uid -> node and requests) and added to the
requested amounts of later evaluations until the model shows the pod bound, or `ttl` seconds pass
(the scheduler picked another node, or the pod is gone). Thread-safe; the clock is injectable.
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
            self.version += 1

    def forget(self, uid: str) -> None:
        with self._lock:
            if self._by_uid.pop(uid, None) is not None:
                self.version += 1

    def prune(self, node_of: Callable[[str, str], str | None]) -> None:
        """Drop assumptions the model now shows bound (`node_of(ns, name)` is set) or that timed out."""
        now = self.clock()
        with self._lock:
            for uid, a in list(self._by_uid.items()):
                if node_of(a.namespace, a.name) is not None:
                    del self._by_uid[uid]
                    self.confirmed += 1
                    self.version += 1
                elif now - a.at > self.ttl:
                    del self._by_uid[uid]
                    self.expired += 1
                    self.version += 1

    def matrix(self, alloc: Allocation, row: dict[str, int], exclude_uid: str = "") -> np.ndarray | None:
        """Assumed requests as an (N, R) array over `alloc` (None when there are none to add)."""
        with self._lock:
            entries = [a for uid, a in self._by_uid.items() if uid != exclude_uid and a.node in row]
        if not entries:
            return None
        out = np.zeros_like(alloc.requested)
        for a in entries:
            out[row[a.node]] += alloc.vector(a.requests)
        return out

    def __len__(self) -> int:
        return len(self._by_uid)

    def snapshot(self) -> list[dict]:
        now = self.clock()
        with self._lock:
            return [a.to_dict(now) for a in sorted(self._by_uid.values(), key=lambda a: a.at)]
