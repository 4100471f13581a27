"""The model's queue store (`model.queues`): Kueue's ClusterQueues, LocalQueues, ResourceFlavors and the
Workloads in them, by name.

A `ManyKinds` store (model/kinds.py) for `QUEUE_KINDS` and `kueue.Workload` (which the gang store reads
too). Reads: `cluster_queues()` (by name), `cluster_queue(name)`, `local_queues()` (by namespace, name),
`local_queue(ns, name)`, `local_queues_in(ns)`, `flavors()`, `flavor(name)`, `workloads()`,
`workload(ns, name)`, `cluster_queue_of(workload)` (its admission's ClusterQueue, else its LocalQueue's),
`placed()` (every Workload with that), `pending_count()`,
`workloads_of(cq)` and `waiting(cq)` (pending, in queue order: Kueue's reported head, then priority,
then creation), `position(workload)` and `positions_of(cq)` (Kueue's `Position`, only where Kueue reports
one: its visibility API's last round, model/queues/positions.py, else v1beta1's reported head),
`positions` (that round, with why there is none: `positions.unavailable`), `held()` (every pending
Workload), `held_pods()` (their pods per namespace, for the header), `held_owners()` (their owners, for
the Workloads rows), `listed` (kinds listed at least once), `version` (rises on every change).
The model's row for Workloads (model/queues/workload.py: `KueueWorkloads`) hands them over unread
(`put_later`, `replace_later`): each is read when first asked for. `held_pods()` and `held_owners()`
read none: a Workload not read yet is judged from its object (`holds.hold_of`: its conditions, pod sets and
controller owner), read only where its shape is not the one Kueue writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeAlias

from kubeview.model.gangs.messages import KIND_KUEUE
from kubeview.model.queues.holds import UNREAD as _UNREAD
from kubeview.model.queues.holds import UNSURE as _UNSURE
from kubeview.model.queues.holds import Hold
from kubeview.model.queues.holds import hold_of as _hold_of
from kubeview.model.queues.objects import (
    KIND_CLUSTER_QUEUE,
    KIND_FLAVOR,
    KIND_LOCAL_QUEUE,
    ClusterQueueView,
    FlavorView,
    LocalQueueView,
    QueuedWorkload,
)
from kubeview.model.queues.placed import WorkloadLists as _Lists
from kubeview.model.queues.placed import groups_of as _groups_of
from kubeview.model.queues.placed import regroup as _regroup
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
        # workloads(), placed() and places() of a version, the sorted keys and LocalQueues they were made
        # with, the pending count and the groups of workloads_of(), and the Workloads read since (`_moved`):
        # patched into copies where only those moved, else made again
        self._lists: _Lists | None = None
        self._lq_groups: tuple[int, dict[str, list[LocalQueueView]]] | None = None
        self._moved: set[tuple[str, str]] = set()
        self._index: dict[tuple[str, str], int] = {}  # each Workload's place in those lists
        self._local_version = 0  # rises when a LocalQueue changes (placed() reads them)
        self._held: tuple[int, list[QueuedWorkload]] | None = None
        self._waiting: dict[str, tuple[list[QueuedWorkload], object, list[QueuedWorkload]]] = {}  # waiting(cq) last given:
        # the workloads_of(cq) list and positions it was sorted from, and its answer
        self._later: dict[tuple[str, str], dict] = {}  # Kueue Workloads not read yet
        self._holds_of: dict[tuple[str, str], Hold | None] = {}  # of those, the holds read from their objects
        self._keys: list[tuple[str, str]] | None = None  # every Workload's key, sorted (None: to sort again)
        self._holds: tuple[int, dict[tuple[str, str], Hold]] | None = None
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
        if kind == KIND_KUEUE:
            self._moved.add(key)
            if old is None:
                self._keys = None
        objects[key] = _READ[kind](obj)
        self._changed(kind)
        return True

    def delete(self, kind: str, obj: dict) -> bool:
        key = _key(kind, obj)
        gone = kind == KIND_KUEUE and self._later.pop(key, None) is not None
        if self._objects[kind].pop(key, None) is None and not gone:
            return False
        if kind == KIND_KUEUE:
            self._keys = None
            self._holds_of.pop(key, None)
        self._changed(kind)
        return True

    def replace(self, kind: str, objects: Iterable[dict]) -> None:
        self.listed.add(kind)
        if kind == KIND_KUEUE:
            self._later, self._holds_of, self._keys = {}, {}, None
        self._objects[kind] = {_key(kind, obj): _READ[kind](obj) for obj in objects}
        self._changed(kind)

    def _changed(self, kind: str) -> None:
        self.version += 1
        if kind == KIND_LOCAL_QUEUE:
            self._local_version += 1

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
        self._holds_of.pop(key, None)
        self._objects[KIND_KUEUE].pop(key, None)
        self._later[key] = obj
        self.version += 1
        return True

    def replace_later(self, objects: dict[tuple[str, str], dict]) -> None:
        """`replace` of the Kueue Workloads with objects (by (namespace, name)) read when first asked for."""
        self.listed.add(KIND_KUEUE)
        self._objects[KIND_KUEUE] = {}
        self._later = dict(objects)
        self._holds_of, self._keys = {}, None
        self.version += 1

    def _workload_now(self, key: tuple[str, str]) -> QueuedWorkload | None:
        if key in self._later and self._read is not None:
            self._objects[KIND_KUEUE][key] = self._read(key, self._later.pop(key))
            self._holds_of.pop(key, None)
            self._moved.add(key)
        view = self._objects[KIND_KUEUE].get(key)
        return view if isinstance(view, QueuedWorkload) else None

    def _read_all(self) -> None:
        if self._later and self._read is not None:
            later, read, self._later, self._holds_of = self._later, self._read, {}, {}
            objects = self._objects[KIND_KUEUE]
            for key, obj in later.items():
                objects[key] = read(key, obj)
            self._moved.update(later)

    # -- reads ---------------------------------------------------------------------------------
    def _sorted_keys(self) -> list[tuple[str, str]]:
        """Every Workload's key (read or not), sorted; sorted again only when one comes or goes."""
        if self._keys is None:
            self._keys = sorted(self._objects[KIND_KUEUE].keys() | self._later.keys())
        return self._keys

    def _all(self, kind: str) -> list:
        if kind == KIND_KUEUE:
            return self._workload_lists().views
        cached = self._sorted.get(kind)
        if cached is None or cached[0] != self.version:
            objects = self._objects[kind]
            cached = (self.version, [objects[k] for k in sorted(objects)])
            self._sorted[kind] = cached
        return cached[1]

    def _workload_lists(self) -> _Lists:
        """`workloads()`, `placed()`, `places()` and `workloads_of()`'s groups of this version. Between versions
        where no Workload came or went and no LocalQueue changed (a watch event on one Workload), the last
        lists are copied and the Workloads read since put in their place, and only the groups they were or
        are in are copied and patched: a version costs what moved, not a pass over every Workload."""
        last = self._lists
        if last is not None and last.version == self.version:
            return last
        self._read_all()
        objects: dict = self._objects[KIND_KUEUE]  # QueuedWorkloads only
        keys = self._sorted_keys()
        if last is not None and last.keys is keys and last.local_version == self._local_version:
            views, cqs, placed, index = list(last.views), list(last.cqs), list(last.placed), self._index
            pending, groups, copied = last.pending, dict(last.groups), set[str]()
            for key in self._moved:
                i = index[key]
                old, old_cq = views[i], cqs[i]
                w = views[i] = objects[key]
                cq = cqs[i] = self.cluster_queue_of(w)
                placed[i] = (w, cq)
                pending += w.waiting - old.waiting
                _regroup(groups, copied, old, old_cq, w, cq)
        else:
            views = [objects[k] for k in keys]
            cqs = [self.cluster_queue_of(w) for w in views]
            placed = list(zip(views, cqs, strict=True))
            pending = sum(1 for w in views if w.waiting)
            self._index = {k: i for i, k in enumerate(keys)}
            groups = _groups_of(placed)
        self._moved = set()
        self._lists = _Lists(self.version, views, cqs, placed, keys, self._local_version, pending, groups)
        return self._lists

    def pending_count(self) -> int:
        """How many Workloads are pending (`held()`'s length; every Workload is read for it)."""
        return self._workload_lists().pending

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
        """The LocalQueues feeding a ClusterQueue, by (namespace, name); grouped once per LocalQueue change."""
        if self._lq_groups is None or self._lq_groups[0] != self._local_version:
            groups: dict[str, list[LocalQueueView]] = {}
            for q in self.local_queues():
                groups.setdefault(q.cluster_queue, []).append(q)
            self._lq_groups = (self._local_version, groups)
        return self._lq_groups[1].get(cluster_queue, [])

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

    def placed(self) -> list[tuple[QueuedWorkload, str | None]]:
        """Every Workload (as `workloads()`) with its `cluster_queue_of` (see `_workload_lists`)."""
        return self._workload_lists().placed

    def places(self) -> list[str | None]:
        """Beside each of `workloads()`, its `cluster_queue_of` (a list kept per version: do not change it)."""
        return self._workload_lists().cqs

    def workloads_of(self, cluster_queue: str) -> list[QueuedWorkload]:
        """The Workloads of a ClusterQueue that are not finished, by (namespace, name): a list kept while none
        of them moves (see `_workload_lists`)."""
        return self._workload_lists().groups.get(cluster_queue, [])

    def waiting(self, cluster_queue: str) -> list[QueuedWorkload]:
        """The pending Workloads of a ClusterQueue in queue order: where Kueue reports positions (its
        visibility API, else v1beta1's deprecated pendingWorkloadsStatus head) by them, then higher
        priority, then older (Kueue's default ordering)."""
        places = self.positions_of(cluster_queue)
        group = self.workloads_of(cluster_queue)
        last = self._waiting.get(cluster_queue)
        if last is not None and last[0] is group and last[1] == places:
            return last[2]  # the same Workloads (and positions) as last asked: the same order
        pending = [w for w in group if w.waiting]
        out = sorted(pending, key=lambda w: (p.in_cluster_queue if (p := places.get(w.key)) is not None else len(places),
                                             -w.priority, w.created, w.key))
        self._waiting[cluster_queue] = (group, places, out)
        return out

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

    def held_owners(self) -> dict[tuple[str, str, str], tuple[str, str]]:
        """(kind, namespace, name) of each held Workload's controller owner (`Job/train`) -> the Workload's
        (namespace, name) (of two with one owner, the later by key); none is read for it (see the module doc)."""
        out: dict[tuple[str, str, str], tuple[str, str]] = {}
        for key, (_, owner) in self._held_holds().items():
            if owner:
                kind, _, name = owner.partition("/")
                mine = (kind, key[0], name)
                if out.get(mine, key) <= key:
                    out[mine] = key
        return out

    def held_pods(self) -> dict[str, int]:
        """Per namespace, the pods of the Workloads Kueue holds (what admission would create): the header's
        "+N held by queue"; none is read for it (see the module doc)."""
        out: dict[str, int] = {}
        for (namespace, _), (pods, _) in self._held_holds().items():
            out[namespace] = out.get(namespace, 0) + pods
        return out

    def held(self) -> list[QueuedWorkload]:
        """Every Workload Kueue holds back now (pending: no quota reserved, not finished), by (namespace, name)."""
        if self._held is None or self._held[0] != self.version:
            keys = sorted(self._held_holds())
            self._held = (self.version, [w for key in keys if (w := self._workload_now(key)) is not None])
        return self._held[1]

    def _held_holds(self) -> dict[tuple[str, str], Hold]:
        """Each held Workload's key -> its hold, per `version`: a read Workload's from its view, one not read
        yet from its object (`_hold_of`, kept while the object is), read only where that cannot say."""
        if self._holds is None or self._holds[0] != self.version:
            holds_of, unsure = self._holds_of, []
            out: dict[tuple[str, str], Hold] = {}
            for key, obj in self._later.items():
                hold = holds_of.get(key, _UNREAD)
                if hold is _UNREAD:
                    hold = holds_of[key] = _hold_of(obj)
                if hold is _UNSURE:
                    unsure.append(key)
                elif hold is not None:
                    out[key] = hold
            for key in unsure:
                self._workload_now(key)
            for key, w in self._objects[KIND_KUEUE].items():
                if isinstance(w, QueuedWorkload) and w.waiting:
                    out[key] = (w.pods, w.owner)
            self._holds = (self.version, out)
        return self._holds[1]

