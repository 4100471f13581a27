"""The bench's pods as its pods watch shows them (which are bound, which unschedulable), and which
pods a `deletePods` op removes. Fed from the informer's thread, read from the bench's.
"""

from __future__ import annotations

import threading

from kubeview.model.events import Listed, WatchEvent


class PodTally:
    """The run's pods as the watch shows them: which are bound (and when), which were found
    unschedulable. Fed by the pods informer from its thread; read from the bench's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.pods: dict[str, dict] = {}
        self.unschedulable: set[str] = set()
        self.synced = threading.Event()

    def emit(self, event: object) -> None:
        with self._lock:
            if isinstance(event, Listed) and event.kind == "Pod":
                self.pods = {}
                self.unschedulable = set()
                for obj in event.objects:
                    self._seen(obj)
                self.synced.set()
            elif isinstance(event, WatchEvent) and event.kind == "Pod":
                name = event.obj["metadata"]["name"]
                if event.type == "DELETED":
                    self.pods.pop(name, None)
                    self.unschedulable.discard(name)
                else:
                    self._seen(event.obj)

    def _seen(self, obj: dict) -> None:
        name = obj["metadata"]["name"]
        self.pods[name] = obj
        if bound_node(obj):
            self.unschedulable.discard(name)
        elif any(c.get("type") == "PodScheduled" and c.get("status") == "False"
                 for c in (obj.get("status") or {}).get("conditions") or []):
            self.unschedulable.add(name)

    def count(self, names: set[str]) -> tuple[int, int]:
        """(bound, unschedulable) among `names`."""
        with self._lock:
            bound = sum(1 for n in names if bound_node(self.pods.get(n, {})))
            return bound, len(self.unschedulable & names)

    def bound(self) -> list[dict]:
        with self._lock:
            return [p for p in self.pods.values() if bound_node(p)]

    def pending(self) -> list[dict]:
        with self._lock:
            return [p for p in self.pods.values() if not bound_node(p)]

    def present(self, names: list[str]) -> int:
        with self._lock:
            return sum(1 for n in names if n in self.pods)

    def remaining(self) -> int:
        with self._lock:
            return len(self.pods)

    def attempted(self, names: set[str]) -> bool:
        """Whether any scheduler has looked at these pods (bound, or a PodScheduled condition)."""
        with self._lock:
            pods = [self.pods.get(n, {}) for n in names]
            return any(bound_node(p) or (p.get("status") or {}).get("conditions") for p in pods)


def leaving(created: list[str], prefix: str, count: int) -> list[str]:
    """deletePods' choice: every other pod named `prefix`*, in creation order, at most `count` (so pods
    of every template of a cycling op leave, and the ones left are spread over the nodes they got)."""
    return [n for n in created if n.startswith(prefix)][::2][:count]


def bound_node(pod: dict) -> str | None:
    return (pod.get("spec") or {}).get("nodeName")
