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
from kubeview.scheduling.evaluate import ExtraLoad


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
    """Cheap per request: sums are kept per node as pods are assumed and dropped, the load (rows with
    assumptions only) is rebuilt only when those sums or the allocation change, and bindings are looked up only when the
    model changed since the last look."""

    def __init__(self, ttl: float = 30.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.clock = clock
        self._by_uid: dict[str, Assumption] = {}  # insertion order = assumption time
        self._bound_at: dict[str, int] = {}  # uid -> live model version when first seen bound
        self._per_node: dict[str, dict[str, int]] = {}  # node -> summed requests of its assumptions
        self._checked = -1  # live model version of the last binding lookup
        self._sparse: tuple[Allocation, int, ExtraLoad] | None = None  # (alloc, version, load)
        self._lock = threading.Lock()
        self.version = 0  # bumped on every change (the load is rebuilt)
        self.decisions = 0  # bumped when what is assumed changes, not when a binding moves into the model
        self.expired = 0  # dropped by timeout
        self.confirmed = 0  # dropped because the model showed the pod bound

    def _add(self, a: Assumption, sign: int) -> None:
        sums = self._per_node.setdefault(a.node, {})
        for name, value in a.requests.items():
            sums[name] = sums.get(name, 0) + sign * value
        if sign < 0 and not any(sums.values()):
            del self._per_node[a.node]
        self.version += 1

    def _drop(self, uid: str) -> None:
        a = self._by_uid.pop(uid)
        self._bound_at.pop(uid, None)
        self._add(a, -1)

    def assume(self, uid: str, namespace: str, name: str, node: str, requests: dict[str, int]) -> None:
        with self._lock:
            old = self._by_uid.get(uid)
            if old is not None:
                if old.node == node:
                    return
                self._drop(uid)
            a = Assumption(uid, namespace, name, node, dict(requests), self.clock())
            self._by_uid[uid] = a
            self._add(a, +1)
            self.decisions += 1
            self._checked = -1  # look this pod up at the next prune

    def forget(self, uid: str) -> None:
        with self._lock:
            if uid in self._by_uid:
                self._drop(uid)
                self.decisions += 1

    def prune(self, bound: Callable[[list[tuple[str, str]]], tuple[list[str | None], int]],
              view_version: int, live_version: int) -> None:
        """Drop assumptions that timed out, or whose binding the allocation at `view_version` includes.

        `bound(keys)` -> (node each pod is bound to in the live model or None, the live version); it is
        only called when `live_version` moved since the last call.
        """
        now = self.clock()
        with self._lock:
            if live_version != self._checked and len(self._bound_at) < len(self._by_uid):
                waiting = [a for uid, a in self._by_uid.items() if uid not in self._bound_at]
                nodes, live = bound([(a.namespace, a.name) for a in waiting])
                for a, node in zip(waiting, nodes, strict=True):
                    if node is not None:
                        self._bound_at[a.uid] = live
                self._checked = live_version
            for uid, at in list(self._bound_at.items()):
                if view_version >= at:
                    self._drop(uid)
                    self.confirmed += 1
            while self._by_uid:
                uid, a = next(iter(self._by_uid.items()))
                if now - a.at <= self.ttl:
                    break
                self._drop(uid)
                self.expired += 1
                self.decisions += 1

    def load(self, alloc: Allocation, row: dict[str, int], exclude_uid: str = "") -> ExtraLoad | None:
        """Assumed requests on the rows of `alloc` they are on, without `exclude_uid`'s own (a pod never
        competes with itself when re-scored); None when there is nothing to add."""
        with self._lock:
            if not self._per_node or (len(self._by_uid) == 1 and exclude_uid in self._by_uid):
                return None
            cached = self._sparse
            if cached is None or cached[0] is not alloc or cached[1] != self.version:
                col = {r: j for j, r in enumerate(alloc.resources)}
                rows: list[int] = []
                amounts = np.zeros((len(self._per_node), len(alloc.resources)), dtype=np.int64)
                for node, sums in self._per_node.items():
                    r = row.get(node)
                    if r is None:
                        continue
                    for name, value in sums.items():
                        c = col.get(name)
                        if c is not None:
                            amounts[len(rows), c] = value
                    rows.append(r)
                load = ExtraLoad(np.array(rows, dtype=np.intp), amounts[:len(rows)])
                self._sparse = cached = (alloc, self.version, load)
            own = self._by_uid.get(exclude_uid)
        load = cached[2]
        if own is not None and own.node in row:
            at = np.flatnonzero(load.rows == row[own.node])
            if at.size:
                amounts = load.amounts.copy()
                amounts[at[0]] -= alloc.vector(own.requests)
                load = ExtraLoad(load.rows, amounts)
        return load

    def __len__(self) -> int:
        return len(self._by_uid)

    def snapshot(self) -> list[dict]:
        now = self.clock()
        with self._lock:
            return [a.to_dict(now) for a in self._by_uid.values()]
