"""A ClusterModel shared between one writer (the watch thread) and the extender's request threads.

`ClusterModel` is not thread-safe: one thread applies events, readers take `allocation()`. The feed
puts a lock around both and hands readers a `ClusterView`: an allocation the model built for one
version and never mutates afterwards.

Building that allocation costs about a millisecond and a half at 5,000 nodes, and on a busy cluster
the version changes between nearly every two scheduling calls. With `max_staleness > 0` the view is
republished at most that often (the command uses 0.2 s), and never on a request's path: the server
calls `refresh_if_due()` after it has sent a reply (kube-scheduler is busy with its own work until
its next call), and a background thread catches up when no requests come. The extender's assumed
pods cover its own decisions in the gap, and kube-scheduler's own resource filter still checks fit.
What they do not cover is room freed in the gap (a pod deleted or finished): kube-scheduler's cache
already has it, and a view without it scores the freed node as full. Under spread, two pods created
right after a deletion went to one node that way (CI, 1 run in about 30). So `freed_version` marks
the model version of the last event that freed room on a node, and a reader whose view is older
republishes first (`Extender._evaluate`): a cost paid only after deletions, never by a burst of new pods.
With `max_staleness == 0` (tests) every read sees the latest version.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from kubeview.model.allocation import Allocation
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import ConnectionState, Listed, SourceEvent, WatchEvent
from kubeview.model.views import TERMINAL_PHASES, PodView

DEFAULT_MAX_STALENESS = 0.2  # seconds; what the extender command runs with


def _frees_room(event: WatchEvent) -> bool:
    """A pod on a node deleted or finished: its requests stop counting there."""
    obj = event.obj
    if not (obj.get("spec") or {}).get("nodeName"):
        return False
    return event.type == "DELETED" or (obj.get("status") or {}).get("phase") in TERMINAL_PHASES


def rv_number(value: object) -> int | None:
    """A resourceVersion as a number, None when it is not one. etcd's revisions are numbers and
    Kubernetes 1.35+ lets clients compare them; anything else is never compared."""
    try:
        return int(value)  # type: ignore[call-overload]  # any value: what int() refuses is None
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class ClusterView:
    alloc: Allocation
    version: int  # the model version `alloc` shows
    synced: bool  # nodes and pods listed at least once


class ModelFeed:
    def __init__(self, model: ClusterModel | None = None, max_staleness: float = 0.0) -> None:
        self.model = model if model is not None else ClusterModel()
        self.max_staleness = max_staleness
        self._lock = threading.RLock()
        self._view: ClusterView | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._refreshed = 0.0  # time.monotonic() of the last publish
        self._pod_followers: list = []  # objects with observe(obj, deleted, version) and relisted(objs, version)
        self.pod_rv = 0  # the newest pod resourceVersion applied (a watch event's or a list's)
        self.freed_version = 0  # the model version of the last pod event that freed room on a node
        self._rv_changed = threading.Condition(self._lock)

    def follow_pods(self, follower) -> None:
        """Hand every Pod event to `follower` with the model version that carried it (the extender's
        assumed pods: they must know the exact version from which the model counts a binding)."""
        self._pod_followers.append(follower)

    def apply(self, event: SourceEvent) -> bool:
        """The source's `emit`: fold one event into the model."""
        with self._lock:
            changed = self.model.apply(event)
            if isinstance(event, WatchEvent | Listed):
                if event.kind == "Pod":
                    self._follow_pod(event)
                elif event.kind == "Node":
                    self._rv_changed.notify_all()  # wait_for_nodes
            return changed

    def _follow_pod(self, event: WatchEvent | Listed) -> None:
        """Called with the lock held, after the model applied `event`."""
        if isinstance(event, WatchEvent):
            rv = rv_number(event.obj.get("metadata", {}).get("resourceVersion"))
        else:
            rv = rv_number(event.resource_version)
        if rv is not None and rv > self.pod_rv:
            self.pod_rv = rv
            self._rv_changed.notify_all()
        version = self.model.version
        if isinstance(event, Listed) or _frees_room(event):
            self.freed_version = version
        for follower in self._pod_followers:
            if isinstance(event, WatchEvent):
                follower.observe(event.obj, event.type == "DELETED", version)
            else:
                follower.relisted(event.objects, version)

    def wait_for_rv(self, rv: int, timeout: float) -> bool:
        """Block until a pod event at `rv` or later was applied (True), or `timeout` passed (False)."""
        deadline = time.monotonic() + timeout
        with self._rv_changed:
            while self.pod_rv < rv:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._rv_changed.wait(left)
            return True

    def wait_for_nodes(self, names: list[str], timeout: float) -> list[str]:
        """Block until the model has every node in `names`, or `timeout` passed: the names it still
        lacks then (empty: all shown)."""
        deadline = time.monotonic() + timeout
        with self._rv_changed:
            while missing := [name for name in names if name not in self.model.nodes]:
                left = deadline - time.monotonic()
                if left <= 0:
                    return missing
                self._rv_changed.wait(left)
            return []

    def pod_uids_on(self, node: str) -> set[str]:
        with self._lock:
            return self.model.pod_uids_on(node)

    def wait_gone(self, node: str, uids: set[str], timeout: float) -> bool:
        """Block until none of `uids` is counted on `node` any more (True), or `timeout` passed."""
        deadline = time.monotonic() + timeout
        with self._rv_changed:
            while self.model.pod_uids_on(node) & uids:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._rv_changed.wait(left)
            return True

    def pod(self, namespace: str, name: str) -> PodView | None:
        """The live model's view of one pod."""
        with self._lock:
            return self.model.pods.get((namespace, name))

    def refresh(self) -> ClusterView:
        """Publish a view of the model as it is now (the background thread calls this)."""
        with self._lock:
            view = self._view
            if view is None or view.version != self.model.version:
                view = ClusterView(alloc=self.model.allocation(), version=self.model.version,
                                   synced=self.model.is_synced(("Node", "Pod")))
                self._view = view
            self._refreshed = time.monotonic()
            return view

    def refresh_if_due(self, age: float | None = None) -> None:
        """Republish if the model changed and the view is older than `age` (default `max_staleness`)."""
        view = self._view
        if view is None or view.version == self.model.version:
            return
        if time.monotonic() - self._refreshed >= (self.max_staleness if age is None else age):
            self.refresh()

    def view(self) -> ClusterView:
        """The latest published view (at most `max_staleness` seconds behind the model)."""
        view = self._view
        if view is None or not self.max_staleness or self._thread is None:
            return self.refresh()
        return view

    @property
    def live_version(self) -> int:
        return self.model.version

    @property
    def connection(self) -> ConnectionState:
        return self.model.connection

    def start(self) -> ModelFeed:
        """Keep the view at most `max_staleness` seconds behind (see the module docstring)."""
        if self.max_staleness and self._thread is None:
            self.refresh()
            self._thread = threading.Thread(target=self._refresh, name="extender-model", daemon=True)
            self._thread.start()
        return self

    def _refresh(self) -> None:
        # requests refresh between themselves; this only catches up after a quiet spell
        while not self._stop.wait(self.max_staleness):
            self.refresh_if_due(2 * self.max_staleness)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
