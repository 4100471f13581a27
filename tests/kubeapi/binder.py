"""A test binder: a minimal scheduler over a LiveCluster, for testing clients that wait on bindings.

Not the kube-scheduler stand-in (tests/scheduling/kube_scheduler_standin.py, which speaks to the
extender); this one only places pods, so that `kubeview bench scheduler --kubeconfig` has bindings
to count. Pods whose `schedulerName` it serves are placed in arrival order on a node that matches
their `nodeSelector` and has room for every request (NodeResourcesFit's arithmetic over the node's
allocatable and the pods bound there), `pack` (most requested first) or `spread` (least); nodes
created later are seen at once. A pod that fits nowhere gets `PodScheduled=False`, as kube-scheduler
writes it, and is not retried.
"""

from __future__ import annotations

import threading
import time
from collections import deque

from kubeview.model.quantity import to_units

from .live import Conflict, Event, LiveCluster


def _requests(pod: dict) -> dict[str, int]:
    out: dict[str, int] = {"pods": 1}
    for c in pod["spec"].get("containers") or ():
        for name, value in ((c.get("resources") or {}).get("requests") or {}).items():
            out[name] = out.get(name, 0) + to_units(name, value)
    return out


class TestBinder:
    __test__ = False  # not a pytest class

    def __init__(self, cluster: LiveCluster, policies: dict[str, str], pause: float = 0.0) -> None:
        self.cluster = cluster
        self.policies = policies  # schedulerName -> "pack" | "spread"
        self.pause = pause  # seconds per pod, to make throughput measurable
        self.placed: dict[str, str] = {}  # "ns/name" -> node
        self.failed: list[str] = []
        self._queue: deque[tuple[str, str]] = deque()
        self._cv = threading.Condition()
        self._stop = False
        self._thread = threading.Thread(target=self._loop, name="test-binder", daemon=True)
        cluster.listeners.append(self._on_event)

    def start(self) -> TestBinder:
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify_all()
        self._thread.join(timeout=5)

    def _on_event(self, event: Event) -> None:
        obj = event.obj
        if event.kind == "Pod" and event.type == "ADDED" and obj["spec"].get("schedulerName") in self.policies:
            with self._cv:
                self._queue.append((obj["metadata"]["namespace"], obj["metadata"]["name"]))
                self._cv.notify_all()

    def _loop(self) -> None:
        while True:
            with self._cv:
                while not self._queue and not self._stop:
                    self._cv.wait(0.05)
                if self._stop:
                    return
                key = self._queue.popleft()
            pod = self.cluster.pod(*key)
            if pod is None or pod["spec"].get("nodeName"):
                continue
            if self.pause:
                time.sleep(self.pause)
            node = self._choose(pod)
            if node is None:
                self.failed.append(f"{key[0]}/{key[1]}")
                self.cluster.set_unschedulable(*key, "0/0 nodes are available: no node fits (test binder)")
                continue
            try:
                self.cluster.bind(*key, node, pod["metadata"]["uid"])
                self.placed[f"{key[0]}/{key[1]}"] = node
            except Conflict:  # deleted meanwhile
                pass

    def _choose(self, pod: dict) -> str | None:
        want = _requests(pod)
        selector = pod["spec"].get("nodeSelector") or {}
        with self.cluster._lock:
            nodes = list(self.cluster.nodes.values())
            pods = [p for p in self.cluster.pods.values() if p["spec"].get("nodeName")]
        used: dict[str, dict[str, int]] = {}
        for p in pods:
            row = used.setdefault(p["spec"]["nodeName"], {})
            for name, value in _requests(p).items():
                row[name] = row.get(name, 0) + value
        fits = []
        for node in nodes:
            labels = node["metadata"].get("labels") or {}
            if any(labels.get(k) != v for k, v in selector.items()):
                continue
            alloc = {k: to_units(k, v) for k, v in ((node.get("status") or {}).get("allocatable") or {}).items()}
            have = used.get(node["metadata"]["name"], {})
            if all(have.get(r, 0) + v <= alloc.get(r, 0) for r, v in want.items() if v):
                fits.append((have.get("nvidia.com/gpu", 0), have.get("pods", 0), node["metadata"]["name"]))
        if not fits:
            return None
        fits.sort()
        policy = self.policies[pod["spec"]["schedulerName"]]
        return (fits[-1] if policy == "pack" else fits[0])[2]
