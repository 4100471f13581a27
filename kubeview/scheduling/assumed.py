"""Pods the extender has placed that its model does not count yet: known bindings and predictions.

Between kube-scheduler choosing a node for a pod and kubeview's watch showing that pod bound, the
model still shows the node free, so a pod scored in that window would not see its predecessor.
This ledger covers the window, and only the window. Each entry is keyed by the pod's uid and is one
of two kinds:

- **bound**: the extender posted the Binding itself (kube-scheduler's `bind` verb). Certain: counted
  by filter and prioritize alike.
- **predicted**: the node prioritize made the unique best (or the only node filter left). Counted
  by prioritize's scores only, never to refuse a node: kube-scheduler's own NodeResourcesFit filter
  already counts every pod it has assumed, so a wrong prediction can only cost a score, never a pod.
  The extender predicts only for pods its watch has (same uid, pending): a prioritize call for a pod
  the cluster does not have changes nothing another pod sees (`Extender._predict`).

Entries follow the pod's watch events, which the feed hands over (`observe`) with the model version
that carried them: a binding moves the entry to the node the pod really went to and marks the
version from which the model counts it (from then on the ledger does not: no double count); a
deletion, a finished pod, or a newer "not scheduled" status drops it at once. `ttl` is only the
safety net for events that never come. Thread-safe; the clock is injectable.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from kubeview.model.allocation import Allocation
from kubeview.model.views import TERMINAL_PHASES
from kubeview.scheduling.evaluate import ExtraLoad
from kubeview.scheduling.feed import rv_number


@dataclass(slots=True)
class Assumption:
    uid: str
    namespace: str
    name: str
    node: str
    requests: dict[str, int]
    at: float  # clock() when made
    bound: bool  # True: we posted the Binding; False: our prediction
    pod_rv: int | None  # the pod's resourceVersion in the request we answered
    in_model_at: int | None = None  # the model version that carried the binding

    def to_dict(self, now: float) -> dict:
        return {"uid": self.uid, "pod": f"{self.namespace}/{self.name}", "node": self.node,
                "requests": dict(self.requests), "age_s": round(now - self.at, 3),
                "kind": "bound" if self.bound else "predicted",
                "in_model_at": self.in_model_at}


class AssumedPods:
    def __init__(self, ttl: float = 30.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.clock = clock
        self._by_uid: dict[str, Assumption] = {}  # insertion order = time made
        self._lock = threading.Lock()
        self._cache: dict[tuple, tuple[Allocation, ExtraLoad | None]] = {}
        self.version = 0  # bumped on every change
        self.expired = 0  # dropped by the ttl
        self.confirmed = 0  # the model counts the pod now
        self.gone = 0  # deleted, finished or sent back to the queue before the model counted it

    # -- decisions -------------------------------------------------------------------------------
    def _put(self, a: Assumption) -> None:
        old = self._by_uid.pop(a.uid, None)
        if old is not None and old.in_model_at is not None:
            return  # the model already counts it where it really is
        self._by_uid[a.uid] = a
        self._changed()

    def predict(self, uid: str, namespace: str, name: str, node: str, requests: dict[str, int],
                pod_rv: object = None) -> None:
        """Our best guess of where kube-scheduler puts this pod (scores only; see the module doc)."""
        with self._lock:
            old = self._by_uid.get(uid)
            if old is not None and old.bound:
                return  # certain knowledge is not overwritten by a guess
            if old is not None and old.node == node:
                return
            self._put(Assumption(uid, namespace, name, node, dict(requests), self.clock(), False, rv_number(pod_rv)))

    def bind(self, uid: str, namespace: str, name: str, node: str, requests: dict[str, int]) -> None:
        """The Binding we posted was accepted: the pod is on `node`."""
        with self._lock:
            self._put(Assumption(uid, namespace, name, node, dict(requests), self.clock(), True, None))

    def forget(self, uid: str) -> None:
        with self._lock:
            if self._by_uid.pop(uid, None) is not None:
                self._changed()

    # -- what the watch shows --------------------------------------------------------------------
    def observe(self, obj: dict, deleted: bool, version: int) -> None:
        """One Pod watch event, applied to the model as `version` (the feed calls this)."""
        if not self._by_uid:
            return
        meta = obj.get("metadata") or {}
        uid = meta.get("uid")
        with self._lock:
            a = self._by_uid.get(uid) if uid else None
            if a is None:
                return
            self._follow(a, obj, deleted, version)

    def relisted(self, objects: Iterable[dict], version: int) -> None:
        """A full list of pods (after a 410 or a reconnect): every entry follows its pod, or goes."""
        if not self._by_uid:
            return
        with self._lock:
            found: dict[str, dict] = {}
            for obj in objects:
                uid = (obj.get("metadata") or {}).get("uid")
                if uid in self._by_uid:
                    found[uid] = obj
            for uid, a in list(self._by_uid.items()):
                current = found.get(uid)
                if current is None:
                    self._drop(a, "gone")
                else:
                    self._follow(a, current, False, version)

    def _follow(self, a: Assumption, obj: dict, deleted: bool, version: int) -> None:
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        node = spec.get("nodeName")
        if deleted or status.get("phase") in TERMINAL_PHASES:
            self._drop(a, "gone")
            return
        if node:
            if a.in_model_at is None or a.node != node:
                a.node, a.in_model_at = node, version
                self._changed()
            return
        # Unbound and newer than the request we answered: kube-scheduler gave up on that attempt
        # (the pod went back to its queue with PodScheduled=False); the prediction is void.
        rv = rv_number((obj.get("metadata") or {}).get("resourceVersion"))
        if not a.bound and rv is not None and a.pod_rv is not None and rv > a.pod_rv:
            self._drop(a, "gone")

    # -- reading ---------------------------------------------------------------------------------
    def _drop(self, a: Assumption, why: str) -> None:
        if self._by_uid.pop(a.uid, None) is not None:
            setattr(self, why, getattr(self, why) + 1)
            self._changed()

    def _changed(self) -> None:
        self.version += 1
        self._cache.clear()

    def prune(self, view_version: int) -> None:
        """Drop entries the allocation at `view_version` counts already, and those past the ttl."""
        now = self.clock()
        with self._lock:
            for a in [a for a in self._by_uid.values() if a.in_model_at is not None and view_version >= a.in_model_at]:
                self._drop(a, "confirmed")
            for a in [a for a in self._by_uid.values() if now - a.at > self.ttl]:
                self._drop(a, "expired")

    def load(self, alloc: Allocation, row: dict[str, int], view_version: int, exclude_uid: str = "",
             bound_only: bool = False) -> ExtraLoad | None:
        """What the allocation at `view_version` does not count yet, on its rows: bound entries, and
        with `bound_only=False` the predictions for pods the model has. Never `exclude_uid`'s own (a
        pod never competes with itself when re-scored). None when there is nothing to add; the same
        object for the same inputs, so callers can tell two loads apart by identity."""
        if not self._by_uid:
            return None
        key = (id(alloc), view_version, exclude_uid, bound_only)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and cached[0] is alloc:
                return cached[1]
            per_node: dict[int, dict[str, int]] = {}
            for a in self._by_uid.values():
                if a.uid == exclude_uid or (a.in_model_at is not None and view_version >= a.in_model_at):
                    continue
                if bound_only and not a.bound:
                    continue
                r = row.get(a.node)
                if r is None:
                    continue
                sums = per_node.setdefault(r, {})
                for name, value in a.requests.items():
                    sums[name] = sums.get(name, 0) + value
            load = None
            if per_node:
                rows = np.fromiter(per_node, dtype=np.intp, count=len(per_node))
                amounts = np.stack([alloc.vector(sums) for sums in per_node.values()]).astype(np.int64)
                load = ExtraLoad(rows, amounts)
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[key] = (alloc, load)
            return load

    @property
    def predicting(self) -> bool:
        """Some prediction counts (so prioritize's load differs from filter's)."""
        return any(not a.bound for a in self._by_uid.values())

    def requests_of(self, uid: str) -> dict[str, int] | None:
        with self._lock:
            a = self._by_uid.get(uid)
            return None if a is None else dict(a.requests)

    def node_of(self, uid: str) -> str | None:
        with self._lock:
            a = self._by_uid.get(uid)
            return None if a is None else a.node

    def __len__(self) -> int:
        return len(self._by_uid)

    def snapshot(self) -> list[dict]:
        now = self.clock()
        with self._lock:
            return [a.to_dict(now) for a in self._by_uid.values()]
