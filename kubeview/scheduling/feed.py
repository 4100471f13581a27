"""A ClusterModel shared between one writer (the watch thread) and the extender's request threads.

`ClusterModel` is not thread-safe: one thread applies events, readers take `allocation()`. The feed
puts a lock around both and hands readers a `ClusterView`: the allocation (a dense copy the model
caches per version, never mutated afterwards) plus where each pod is bound, taken under the same lock
so the two agree.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from kubeview.model.allocation import Allocation
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import SourceEvent


@dataclass(frozen=True, slots=True)
class ClusterView:
    alloc: Allocation
    version: int
    synced: bool  # nodes and pods listed at least once
    _model: ClusterModel
    _lock: threading.RLock

    def node_of(self, namespace: str, name: str) -> str | None:
        """Where the model shows the pod bound now (None: not bound, or not seen yet)."""
        with self._lock:
            pod = self._model.pods.get((namespace, name))
            return pod.node if pod is not None else None


class ModelFeed:
    def __init__(self, model: ClusterModel | None = None) -> None:
        self.model = model if model is not None else ClusterModel()
        self._lock = threading.RLock()
        self._view: ClusterView | None = None

    def apply(self, event: SourceEvent) -> bool:
        """The source's `emit`: fold one event into the model."""
        with self._lock:
            return self.model.apply(event)

    def view(self) -> ClusterView:
        with self._lock:
            version = self.model.version
            if self._view is None or self._view.version != version:
                self._view = ClusterView(
                    alloc=self.model.allocation(), version=version,
                    synced=self.model.is_synced(("Node", "Pod")), _model=self.model, _lock=self._lock,
                )
            return self._view

    @property
    def connection(self):
        return self.model.connection
