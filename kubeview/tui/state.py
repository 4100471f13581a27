"""The app's one state: the ClusterModel, the lock around it, and what changed since each reader looked.

The source's worker thread calls `emit` for every event; the UI thread reads under `lock`. `emit`
applies the event, records which keys changed (per kind, for every `ChangeTracker`), keeps pods and
workloads sorted by name (`KeyIndex`, incremental; the pods' built again after a pod list at its first
read, `pods_by_name`) and calls `notify` at most once until the UI has
caught up (`caught_up`), so a burst of 1,000 events becomes one `ClusterChanged` and one repaint.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, Listing, SourceEvent, WatchEvent
from kubeview.model.gcpause import gc_paused
from kubeview.model.jobs.views import JobView
from kubeview.model.workloads import WORKLOAD_KINDS, WorkloadView
from kubeview.tui.key_index import KeyIndex, natural, natural_sorted
from kubeview.tui.rows.jobs import WorkloadItems
from kubeview.tui.rows.jobs import search_text as job_search_text
from kubeview.tui.rows.pods import search_text as pod_search_text
from kubeview.tui.rows.workloads import search_text as workload_search_text

FULL_GC_EVERY = 100  # middle-generation collections per full collection (Python's default: 10)
FULL = object()  # a tracker marker: everything of this kind changed (a relist)
T = TypeVar("T")
V = TypeVar("V")


@dataclass(slots=True)
class ChangeTracker:
    """Keys of `kinds` changed since the last `take()`; `full` after a relist."""

    kinds: frozenset[str]
    keys: set[Hashable] = field(default_factory=set)
    full: bool = True  # a new reader starts from scratch

    def note(self, event: SourceEvent) -> None:
        if isinstance(event, WatchEvent) and event.kind in self.kinds:
            self.keys.add(event_key(event))
        elif isinstance(event, Listed) and event.kind in self.kinds:
            self.full = True
            self.keys.clear()


def event_key(event: WatchEvent) -> Hashable:
    """The model's key of the object an event is about: (ns, name) for pods, (kind, ns, name) for workloads."""
    meta = event.obj.get("metadata") or {}
    if event.kind == "Pod":
        return (meta.get("namespace", ""), meta.get("name", ""))
    if event.kind == "Node":
        return meta.get("name", "")
    return (event.kind, meta.get("namespace", ""), meta.get("name", ""))


class ClusterState:
    """One model, one lock; readers on the UI thread, `emit` on the source's thread."""

    def __init__(self, title: str = "") -> None:
        self.model = ClusterModel(title, slim_pages=True)  # the only reader of its source's events
        self.lock = threading.RLock()
        self._pods_by_name = KeyIndex()
        self.workloads_by_name = KeyIndex()
        # what `/` matches each pod and workload against, kept here (by the source's thread, but a pod
        # list's by its first reader) so that filtering 150,000 pods is one pass over ready strings
        self._pod_search: dict[tuple[str, str], str] = {}
        self._pods_indexed = True  # False from a pod list until the first read (`pods_by_name`)
        self.workload_search: dict[tuple[str, str, str], str] = {}
        self.notify: Callable[[], object] = lambda: None
        self.events = 0
        self.last_event_at = 0.0
        self._trackers: list[ChangeTracker] = []
        self._memo: dict[str, tuple[int, object]] = {}
        self._notified = False
        self._pods_synced = self._workloads_synced = False

    @property
    def pods_by_name(self) -> KeyIndex:
        """The shown pods in name order (the Pods screen's rows)."""
        with self.lock:
            self._index_pods()
            return self._pods_by_name

    @property
    def pod_search(self) -> dict[tuple[str, str], str]:
        """What `/` matches each shown pod against."""
        with self.lock:
            self._index_pods()
            return self._pod_search

    def _index_pods(self) -> None:
        """After a pod list, both pod indexes are built at their first read, not in `Listed`: the first
        screen (Nodes) does not show them, and 150,000 pods' sort and texts were ~0.3 s of CPU before
        it (#41). Watch events meanwhile need no following: this reads the model as it is then."""
        if self._pods_indexed:
            return
        shown = self.model.shown_pods()  # -n: the namespace's pods only (node figures count all)
        with gc_paused(keep=True):  # long-lived and acyclic, as the list's views (model/gcpause.py)
            self._pods_by_name.rebuild(natural_sorted(shown))
            self._pod_search = {k: pod_search_text(p) for k, p in shown.items()}
        self._pods_indexed = True

    def memo(self, name: str, compute: Callable[[], T]) -> T:
        """`compute()` once per model version (the header and the nodes table both want GPU fits)."""
        version = self.model.version
        hit = self._memo.get(name)
        if hit is not None and hit[0] == version:
            return cast(T, hit[1])  # stored by the `compute` of this `name`: one type per name
        value = compute()
        self._memo[name] = (version, value)
        return value

    def tracker(self, *kinds: str) -> ChangeTracker:
        """A new reader of changes to `kinds` (starts `full`)."""
        t = ChangeTracker(frozenset(kinds))
        with self.lock:
            self._trackers.append(t)
        return t

    def take(self, tracker: ChangeTracker) -> tuple[bool, set[Hashable]]:
        """(full, changed keys) since the last take; resets the tracker."""
        with self.lock:
            full, keys = tracker.full, tracker.keys
            tracker.full, tracker.keys = False, set()
            return full, keys

    def emit(self, event: SourceEvent) -> None:
        """Apply one event (called from the source's worker thread)."""
        with self.lock:
            if not self.model.apply(event):
                return
            self.events += 1
            self.last_event_at = time.monotonic()
            for t in self._trackers:
                t.note(event)
            self._index(event)
            if self._notified:
                return
            self._notified = True
        self.notify()

    def caught_up(self) -> None:
        """The UI has taken the latest change: the next event notifies again."""
        with self.lock:
            self._notified = False

    def _index(self, event: SourceEvent) -> None:
        model = self.model
        if isinstance(event, Listed):
            if event.kind == "Pod":
                self._pods_indexed = False  # built at the first read (`_index_pods`)
                # Millions of long-lived objects now: keep the cyclic GC from walking them all
                # (a full collection would stall the UI for most of a second). Refcounting still
                # frees them; they are acyclic.
                gc.freeze()
                # What is not frozen still grows (1,000 events/s, a sorted 150,000-row index): a full
                # collection then costs 100-130 ms of the UI thread. Textual makes cyclic garbage
                # all the time, so collections must go on; full ones a tenth as often (every ~100
                # young-generation passes instead of 10) keep them off most key presses.
                young, middle, _ = gc.get_threshold()
                gc.set_threshold(young, middle, FULL_GC_EVERY)
            elif event.kind in WORKLOAD_KINDS or event.kind == "Job":
                items = self.workload_items()
                self.workloads_by_name.rebuild(natural_sorted(items))
                self.workload_search = {k: _workload_text(w) for k, w in items.items()}
        elif isinstance(event, Listing) and event.kind == "Pod":
            # a page of a pod list: its keys' sort keys now, while the next page is in transit, so the
            # sort after `Listed` (`_index_pods`) finds them in `natural`'s cache (#41)
            for obj in event.page:
                meta = obj.get("metadata") or {}
                pod = (meta.get("namespace", ""), meta.get("name", ""))
                if model.shown(pod):
                    natural(pod)
        elif isinstance(event, WatchEvent):
            key = event_key(event)
            if event.kind == "Pod" and self._pods_indexed:  # else built from the model at the first read
                _follow(key, model.shown_pods(), self._pods_by_name, self._pod_search, pod_search_text)
            elif event.kind in WORKLOAD_KINDS:
                _follow(key, model.workloads, self.workloads_by_name, self.workload_search, workload_search_text)
            elif event.kind == "Job":
                _follow(key, self.workload_items(), self.workloads_by_name, self.workload_search, _workload_text)

    def workload_items(self) -> WorkloadItems:
        """Workloads and Jobs as the Workloads table's one mapping, (kind, namespace, name) -> view."""
        return WorkloadItems(self.model.workloads, self.model.jobs.jobs)


def _workload_text(w: WorkloadView | JobView) -> str:
    return job_search_text(w) if isinstance(w, JobView) else workload_search_text(w)


def _follow(key: Hashable, items: Mapping[Any, V], index: KeyIndex, search: dict[Any, str],
            text_of: Callable[[V], str]) -> None:
    """One watched object changed: its place in the name index and its search text follow the model."""
    index.update((key,), items.__contains__)
    item = items.get(key)
    if item is None:
        search.pop(key, None)
    else:
        search[key] = text_of(item)
