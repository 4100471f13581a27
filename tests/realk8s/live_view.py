"""kubeview's own view of the plane, kept live in a thread: `KubeSource` (kube.py, kube_watch.py)
feeding a `ClusterModel`, as the TUI's worker does, plus a record of what happened on the way
(connection states, relists) and a fresh list to compare it with.

The comparison is by resourceVersion per object: equal versions are equal objects, so "the view
equals a fresh list" means every node and pod kubeview holds is the version the API server holds
now, and nothing more.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from kubernetes import client

from kubeview.cluster.kube.source import KubeSource, WatchSettings
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import ConnectionState, Listed, SourceEvent

from .procs import wait_until

# Short backoffs so a restarted API server is found again within a second; the loop is the same.
T = TypeVar("T")
FAST = WatchSettings(error_backoffs=(0.2, 0.5, 1.0), connect_timeout=3.0)


class LiveView:
    def __init__(self, kubeconfig: Path, kinds: tuple[str, ...] = ("Node", "Pod"), dra: bool = False,
                 events: bool = False) -> None:
        self.source = KubeSource(kubeconfig=str(kubeconfig), kinds=kinds, settings=FAST, dra=dra, events=events)
        self.kinds = kinds
        self.model = ClusterModel()
        self.states: list[str] = []
        self.lists: Counter[str] = Counter()  # Listed events per kind: more than one = a relist (a 410)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._errors: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, name="realk8s-live-view", daemon=True)

    def _emit(self, event: SourceEvent) -> None:
        with self._lock:
            self.model.apply(event)
            if isinstance(event, ConnectionState):
                self.states.append(event.state)
            elif isinstance(event, Listed):
                self.lists[event.kind] += 1

    def _run(self) -> None:
        try:
            self.source.run(self._emit, self._stop)
        except BaseException as exc:  # surfaced by check()
            self._errors.append(exc)

    def start(self) -> LiveView:
        self._thread.start()
        wait_until(lambda: self.check() or self.state() == "live", 30, "kubeview's source live")
        return self

    def stop(self) -> None:
        self._stop.set()
        self.source.close()
        self._thread.join(10)

    def check(self) -> bool:
        if self._errors:
            raise AssertionError(f"kubeview's source failed: {self._errors[0]}")
        return False

    def state(self) -> str:
        with self._lock:
            return self.states[-1] if self.states else ""

    def read(self, fn: Callable[[ClusterModel], T]) -> T:
        """`fn(model)` under the lock the source thread applies events with (a consistent read)."""
        self.check()
        with self._lock:
            return fn(self.model)

    def seen(self) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
        """node -> resourceVersion, (namespace, pod) -> resourceVersion, as kubeview holds them."""
        with self._lock:
            nodes = {n: v.resource_version for n, v in self.model.nodes.items()}
            pods = {k: v.resource_version for k, v in self.model.pods.items()}
        return nodes, pods


def fresh(api_client: client.ApiClient) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """The same from a list made now (raw JSON, as kubeview lists)."""
    core = client.CoreV1Api(api_client)
    nodes = json.loads(core.list_node(_preload_content=False).data)["items"]
    pods = json.loads(core.list_pod_for_all_namespaces(_preload_content=False).data)["items"]
    return ({n["metadata"]["name"]: n["metadata"]["resourceVersion"] for n in nodes},
            {(p["metadata"]["namespace"], p["metadata"]["name"]): p["metadata"]["resourceVersion"] for p in pods})


def wait_equal(view: LiveView, api_client: client.ApiClient, timeout: float = 30) -> None:
    """Until kubeview's view is the fresh list (objects keep changing: kwok heartbeats, so compare
    again until one comparison matches); the difference in the failure message otherwise."""
    last: list[str] = []

    def equal() -> bool:
        view.check()
        mine, now = view.seen(), fresh(api_client)
        if mine == now:
            return True
        last[:] = [f"nodes only in view {set(mine[0]) - set(now[0])}, only in list {set(now[0]) - set(mine[0])}",
                   f"pods only in view {set(mine[1]) - set(now[1])}, only in list {set(now[1]) - set(mine[1])}",
                   f"pods at other versions {[k for k in mine[1] if k in now[1] and mine[1][k] != now[1][k]]}"]
        return False

    try:
        wait_until(equal, timeout, "kubeview's view to equal a fresh list", interval=0.1)
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {'; '.join(last)}") from None
