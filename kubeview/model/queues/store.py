"""The model's queue store (`model.queues`): Kueue's ClusterQueues, LocalQueues, ResourceFlavors and the
Workloads in them, by name.

A `ManyKinds` store (model/kinds.py) for `QUEUE_KINDS` and `kueue.Workload` (which the gang store reads
too). Reads: `cluster_queues()` (by name), `cluster_queue(name)`, `local_queues()` (by namespace, name),
`local_queue(ns, name)`, `local_queues_in(ns)`, `flavors()`, `flavor(name)`, `workloads()`,
`workload(ns, name)`, `cluster_queue_of(workload)` (its admission's ClusterQueue, else its LocalQueue's),
`workloads_of(cq)` and `waiting(cq)` (pending, in queue order: Kueue's reported head, then priority,
then creation), `position(workload)` and `positions_of(cq)` (Kueue's `Position`, only where Kueue reports
one: its visibility API's last round, model/queues/positions.py, else v1beta1's reported head),
`positions` (that round, with why there is none: `positions.unavailable`), `held()` (every pending
Workload, for the header), `listed` (kinds listed at least once), `version` (rises on every change).
The model's row for Workloads (model/queues/workload.py: `KueueWorkloads`) hands them over unread
(`put_later`, `replace_later`): each is read when first asked for, and `held()` reads only those whose
conditions may say pending.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeAlias

from kubeview.model.gangs.messages import KIND_KUEUE
from kubeview.model.queues.objects import (
    KIND_CLUSTER_QUEUE,
    KIND_FLAVOR,
    KIND_LOCAL_QUEUE,
    ClusterQueueView,
    FlavorView,
    LocalQueueView,
    QueuedWorkload,
)
from kubeview.model.queues.positions import Key, Position, Positions

View: TypeAlias = ClusterQueueView | LocalQueueView | FlavorView | QueuedWorkload
STORE_KINDS = (KIND_CLUSTER_QUEUE, KIND_LOCAL_QUEUE, KIND_FLAVOR, KIND_KUEUE)
_READ: dict[str, Callable[[dict], View]] = {KIND_CLUSTER_QUEUE: ClusterQueueView.from_api, KIND_LOCAL_QUEUE: LocalQueueView.from_api,
         KIND_FLAVOR: FlavorView.from_api, KIND_KUEUE: QueuedWorkload.from_api}


def _key(kind: str, obj: dict) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    namespaced = kind in (KIND_LOCAL_QUEUE, KIND_KUEUE)
    return (meta.get("namespace", "") if namespaced else "", meta.get("name", ""))


class QueueStore:
    """Kueue's queue objects by kind and (namespace, name); see the module docstring."""

    def __init__(self) -> None:
        self.version = 0
        self.listed: set[str] = set()
        self._objects: dict[str, dict[tuple[str, str], View]] = {kind: {} for kind in STORE_KINDS}
        self._sorted: dict[str, tuple[int, list]] = {}
        self._by_cq: tuple[int, dict[str, list[QueuedWorkload]]] | None = None
        self._held: tuple[int, list[QueuedWorkload]] | None = None
        self._later: dict[tuple[str, str], dict] = {}  # Kueue Workloads not read yet
        self._settled: set[tuple[str, str]] = set()  # of those, the ones whose conditions say not pending
        self._keys: list[tuple[str, str]] | None = None  # every Workload's key, sorted (None: to sort again)
        self._read: Callable[[tuple[str, str], dict], QueuedWorkload] | None = None
        self.positions = Positions()  # Kueue's visibility API, its last round (the source's poller)
        self._positions: dict[str, tuple[int, dict[Key, Position]]] = {}

    def set_positions(self, positions: Positions) -> bool:
        """A new round of Kueue's positions (False: the same as the last)."""
        if positions == self.positions:
            return False
        self.positions = positions
        self.version += 1
        return True

    def put(self, kind: str, obj: dict) -> bool:
        key, objects = _key(kind, obj), self._objects[kind]
        old = self._workload_now(key) if kind == KIND_KUEUE and key in self._later else objects.get(key)
        rv = (obj.get("metadata") or {}).get("resourceVersion", "")
        if old is not None and rv and old.resource_version == rv:
            return False
        if kind == KIND_KUEUE and old is None:
            self._keys = None
        objects[key] = _READ[kind](obj)
        self.version += 1
        return True

    def delete(self, kind: str, obj: dict) -> bool:
        key = _key(kind, obj)
        gone = kind == KIND_KUEUE and self._later.pop(key, None) is not None
        if self._objects[kind].pop(key, None) is None and not gone:
            return False
        if kind == KIND_KUEUE:
            self._keys = None
            self._settled.discard(key)
        self.version += 1
        return True

    def replace(self, kind: str, objects: Iterable[dict]) -> None:
        self.listed.add(kind)
        if kind == KIND_KUEUE:
            self._later, self._settled, self._keys = {}, set(), None
        self._objects[kind] = {_key(kind, obj): _READ[kind](obj) for obj in objects}
        self.version += 1

    # -- Kueue Workloads read when first asked for (model/queues/workload.py: their row) -----------
    def read_later(self, reader: Callable[[tuple[str, str], dict], QueuedWorkload]) -> None:
        """Workloads given to `put_later`/`replace_later` are read by `reader` when first asked for."""
        self._read = reader

    def put_later(self, obj: dict) -> bool:
        """`put` of a Kueue Workload read when first asked for (its resourceVersion compared now)."""
        key = _key(KIND_KUEUE, obj)
        rv = (obj.get("metadata") or {}).get("resourceVersion", "")
        old, view = self._later.get(key), self._objects[KIND_KUEUE].get(key)
        old_rv = (old.get("metadata") or {}).get("resourceVersion", "") if old is not None else (
            view.resource_version if view is not None else None)
        if old_rv is not None and rv and old_rv == rv:
            return False
        if old_rv is None:
            self._keys = None
        self._settled.discard(key)
        self._objects[KIND_KUEUE].pop(key, None)
        self._later[key] = obj
        self.version += 1
        return True

    def replace_later(self, objects: Iterable[dict]) -> None:
        """`replace` of the Kueue Workloads with objects read when first asked for."""
        self.listed.add(KIND_KUEUE)
        self._objects[KIND_KUEUE] = {}
        self._later = {_key(KIND_KUEUE, obj): obj for obj in objects}
        self._settled, self._keys = set(), None
        self.version += 1

    def _workload_now(self, key: tuple[str, str]) -> QueuedWorkload | None:
        if key in self._later and self._read is not None:
            self._objects[KIND_KUEUE][key] = self._read(key, self._later.pop(key))
        view = self._objects[KIND_KUEUE].get(key)
        return view if isinstance(view, QueuedWorkload) else None

    def _read_all(self) -> None:
        if self._later and self._read is not None:
            later, read, self._later = self._later, self._read, {}
            objects = self._objects[KIND_KUEUE]
            for key, obj in later.items():
                objects[key] = read(key, obj)

    # -- reads ---------------------------------------------------------------------------------
    def _all(self, kind: str) -> list:
        cached = self._sorted.get(kind)
        if cached is None or cached[0] != self.version:
            if kind == KIND_KUEUE:
                self._read_all()
            objects = self._objects[kind]
            cached = (self.version, [objects[k] for k in sorted(objects)])
            self._sorted[kind] = cached
        return cached[1]

    def __len__(self) -> int:
        return sum(len(objects) for objects in self._objects.values()) + len(self._later)

    def cluster_queues(self) -> list[ClusterQueueView]:
        return self._all(KIND_CLUSTER_QUEUE)

    def cluster_queue(self, name: str) -> ClusterQueueView | None:
        view = self._objects[KIND_CLUSTER_QUEUE].get(("", name))
        return view if isinstance(view, ClusterQueueView) else None

    def local_queues(self) -> list[LocalQueueView]:
        return self._all(KIND_LOCAL_QUEUE)

    def local_queue(self, namespace: str, name: str) -> LocalQueueView | None:
        view = self._objects[KIND_LOCAL_QUEUE].get((namespace, name))
        return view if isinstance(view, LocalQueueView) else None

    def local_queues_in(self, namespace: str) -> list[LocalQueueView]:
        return [q for q in self.local_queues() if q.namespace == namespace]

    def local_queues_of(self, cluster_queue: str) -> list[LocalQueueView]:
        return [q for q in self.local_queues() if q.cluster_queue == cluster_queue]

    def flavors(self) -> list[FlavorView]:
        return self._all(KIND_FLAVOR)

    def flavor(self, name: str) -> FlavorView | None:
        view = self._objects[KIND_FLAVOR].get(("", name))
        return view if isinstance(view, FlavorView) else None

    def workloads(self) -> list[QueuedWorkload]:
        return self._all(KIND_KUEUE)

    def workload(self, namespace: str, name: str) -> QueuedWorkload | None:
        return self._workload_now((namespace, name))

    def cluster_queue_of(self, workload: QueuedWorkload) -> str | None:
        """The ClusterQueue a Workload is (or would be) admitted to: its admission's, else its LocalQueue's."""
        if workload.cluster_queue:
            return workload.cluster_queue
        local = self.local_queue(workload.namespace, workload.queue)
        return local.cluster_queue if local is not None and local.cluster_queue else None

    def workloads_of(self, cluster_queue: str) -> list[QueuedWorkload]:
        """The Workloads of a ClusterQueue that are not finished, by (namespace, name); grouped in one pass
        per `version`."""
        if self._by_cq is None or self._by_cq[0] != self.version:
            groups: dict[str, list[QueuedWorkload]] = {}
            for w in self.workloads():
                cq = self.cluster_queue_of(w) if w.state != "finished" else None
                if cq is not None:
                    groups.setdefault(cq, []).append(w)
            self._by_cq = (self.version, groups)
        return self._by_cq[1].get(cluster_queue, [])

    def waiting(self, cluster_queue: str) -> list[QueuedWorkload]:
        """The pending Workloads of a ClusterQueue in queue order: where Kueue reports positions (its
        visibility API, else v1beta1's deprecated pendingWorkloadsStatus head) by them, then higher
        priority, then older (Kueue's default ordering)."""
        places = self.positions_of(cluster_queue)
        pending = [w for w in self.workloads_of(cluster_queue) if w.waiting]
        return sorted(pending, key=lambda w: (p.in_cluster_queue if (p := places.get(w.key)) is not None else len(places),
                                              -w.priority, w.created, w.key))

    def position(self, workload: QueuedWorkload) -> Position | None:
        """Where Kueue says a pending Workload stands in its ClusterQueue (None: Kueue did not say)."""
        cq = self.cluster_queue_of(workload)
        return self.positions_of(cq).get(workload.key) if cq and workload.waiting else None

    def positions_of(self, cluster_queue: str) -> dict[Key, Position]:
        """Kueue's positions in a ClusterQueue: its visibility API's last round where it answered for
        it, else the head v1beta1 reported; made once per `version`."""
        cached = self._positions.get(cluster_queue)
        if cached is not None and cached[0] == self.version:
            return cached[1]
        found = self.positions.by_queue.get(cluster_queue)
        if found is not None:
            places = dict(found)
        else:
            view = self.cluster_queue(cluster_queue)
            places = {key: Position(cluster_queue, i) for i, key in enumerate(view.pending_head)} if view else {}
        self._positions[cluster_queue] = (self.version, places)
        return places

    def held_owners(self) -> dict[tuple[str, str, str], QueuedWorkload]:
        """(kind, namespace, name) of each held Workload's owner (`Job/train`) -> the Workload."""
        out: dict[tuple[str, str, str], QueuedWorkload] = {}
        for w in self.held():
            if w.owner:
                kind, _, name = w.owner.partition("/")
                out[(kind, w.namespace, name)] = w
        return out

    def held(self) -> list[QueuedWorkload]:
        """Every Workload Kueue holds back now (pending: no quota reserved, not finished), by (namespace, name);
        of the Workloads not read yet only those whose conditions may say pending are read (`_may_wait`)."""
        if self._held is None or self._held[0] != self.version:
            objects, later, settled = self._objects[KIND_KUEUE], self._later, self._settled
            if self._keys is None:
                self._keys = sorted(objects.keys() | later.keys())
            out = []
            for key in self._keys:
                if key in later:
                    if key in settled:
                        continue
                    if not _may_wait(later[key]):
                        settled.add(key)
                        continue
                w = self._workload_now(key)
                if w is not None and w.waiting:
                    out.append(w)
            self._held = (self.version, out)
        return self._held[1]


_HOLDS = ("Finished", "Admitted", "QuotaReserved")


def _may_wait(obj: dict) -> bool:
    """False only where a Workload's conditions say it is not pending as `QueuedWorkload.from_api` reads
    them (Finished, Admitted or QuotaReserved True, each type's last); True where it may be (read it)."""
    status = obj.get("status")
    conditions = status.get("conditions") if type(status) is dict else None
    if type(conditions) is not list:
        return True
    last: dict[str, object] = {}
    for c in conditions:
        if type(c) is dict:
            kind = c.get("type", "")
            if type(kind) is not str:
                return True
            if kind in _HOLDS:
                last[kind] = c.get("status", "")
    return not any(str(s) == "True" for s in last.values())
