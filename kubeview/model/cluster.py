"""The cluster as kubeview sees it: source events in, allocation arrays and views out.

`ClusterModel.apply` takes what a source emits (`Listed`, `WatchEvent`, `ConnectionState`,
`UsageUpdate`) and updates incrementally: a pod event subtracts the pod's old requests from its
node's row and adds the new ones, so one event costs O(resources of one pod), never a rebuild.
A relist (`Listed`) rebuilds that kind in one vectorised pass. Pods bound to a node the model has
not seen yet are remembered and counted when the node arrives.

"Requested" follows kube-scheduler: pods bound to the node (`spec.nodeName`) whose phase is not
Succeeded or Failed, Terminating ones included (their resources are held until they are gone).

Not thread-safe: one thread applies events; readers take `allocation()` (a dense copy, cached per
`version`) and the views.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping

import numpy as np

from kubeview.model.allocation import GPU, Allocation
from kubeview.model.dra import DRA_KINDS, DRA_OPTIONAL_KINDS
from kubeview.model.events import ConnectionState, Listed, Listing, Scope, SourceEvent, WatchEvent
from kubeview.model.fragmentation import Fragmentation, fragmentation
from kubeview.model.gang_messages import GANG_KINDS
from kubeview.model.gangs import GangStore
from kubeview.model.gcpause import BULK, gc_paused
from kubeview.model.gpu_ledger import GpuLedger
from kubeview.model.gpu_states import add_dra_gpus
from kubeview.model.job_store import JobStore
from kubeview.model.kube_events import EventLog, EventView
from kubeview.model.table import NodeTable
from kubeview.model.usage import Usage, UsageUpdate
from kubeview.model.views import TERMINAL_PHASES, NodeView, PodView
from kubeview.model.workloads import WORKLOAD_KINDS, WorkloadView

PodKey = tuple[str, str]
WorkloadKey = tuple[str, str, str]


class ClusterModel:
    """Nodes, pods and workloads of one cluster, with the allocation matrix kept up to date."""

    def __init__(self, title: str = "") -> None:
        self.title = title
        self.partial: str | None = None  # why node figures do not count every pod (the source's scope)
        # the namespace whose pods are listed for display (-n); node figures still count every pod held
        self.display_namespace: str | None = None
        self.nodes: dict[str, NodeView] = {}
        self.listing: dict[str, int] = {}  # kind -> objects read so far of a list in progress (Listing)
        self.pods: dict[PodKey, PodView] = {}
        self.workloads: dict[WorkloadKey, WorkloadView] = {}
        self.events = EventLog()  # recent Events per involved object (bounded), see kube_events.py
        self.no_events: str | None = None  # why there are none to show (e.g. listing them is forbidden)
        self.no_gangs: str | None = None  # why some gang kinds are not shown (their lists were forbidden)
        self.jobs = JobStore()  # batch/v1 Jobs and their pods (model/job_store.py)
        self.gangs = GangStore()  # gangs of every scheduler, members from pods (model/gangs.py)
        self.connection = ConnectionState("connecting", time.time())
        self.usage = Usage()
        self.gpus = GpuLedger()  # DRA devices and claims; counted in the GPU column by allocation()
        self.version = 0
        self.synced: set[str] = set()  # kinds listed at least once
        self._table = NodeTable()
        self._bound: dict[str, dict[PodKey, PodView]] = {}  # node name -> pods counted against it
        self._pending: dict[PodKey, PodView] = {}
        self._alloc: Allocation | None = None
        self._alloc_version = -1
        self._order: list[str] | None = None  # sorted node names, None when the node set changed
        self._layout: tuple[np.ndarray, list[str], list[NodeView]] | None = None  # see allocation()

    # -- events ----------------------------------------------------------------------------------
    def apply(self, event: SourceEvent) -> bool:
        """Fold one source event in; True if anything changed (and `version` was bumped)."""
        if isinstance(event, WatchEvent):
            changed = self._apply_watch(event)
        elif isinstance(event, Listed):
            self.listing.pop(event.kind, None)
            changed = self._apply_listed(event)
        elif isinstance(event, Listing):
            self.listing[event.kind] = event.items
            changed = True  # the header says how far a big list got
        elif isinstance(event, ConnectionState):
            changed = (event.state, event.detail) != (self.connection.state, self.connection.detail)
            self.connection = event
        elif isinstance(event, UsageUpdate):
            self.usage.merge(event)
            changed = True
        elif isinstance(event, Scope):
            changed = (event.title, event.namespace, event.partial, event.no_events, event.no_gangs) != (
                self.title, self.display_namespace, self.partial, self.no_events, self.no_gangs)
            self.title, self.display_namespace, self.partial = event.title, event.namespace, event.partial
            self.no_events, self.no_gangs = event.no_events, event.no_gangs
        else:
            raise TypeError(f"not a source event: {type(event).__name__}")
        if changed:
            self.version += 1
        return changed

    def apply_all(self, events) -> bool:
        changed = False
        for event in events:
            changed = self.apply(event) or changed
        return changed

    def _apply_watch(self, event: WatchEvent) -> bool:
        kind, obj = event.kind, event.obj
        if event.type not in ("ADDED", "MODIFIED", "DELETED"):
            return False  # BOOKMARK/ERROR are the source's business
        deleted = event.type == "DELETED"
        if kind == "Pod":
            in_job = self.jobs.delete_pod(obj) if deleted else self.jobs.put_pod(obj)
            in_gang = self.gangs.delete_pod(obj) if deleted else self.gangs.put_pod(obj)
            return (self._delete_pod(_pod_key(obj)) if deleted else self._put_pod(obj)) or in_job or in_gang
        if kind == "Job":
            return self.jobs.delete_job(obj) if deleted else self.jobs.put_job(obj)
        if kind == "Node":
            name = (obj.get("metadata") or {}).get("name", "")
            return self._delete_node(name) if deleted else self._put_node(NodeView.from_api(obj))
        if kind == "Event":
            return self.events.delete(obj) if deleted else self.events.put(obj)
        if kind in DRA_KINDS or kind in DRA_OPTIONAL_KINDS:
            return self.gpus.apply(kind, event.type, obj)
        if kind in GANG_KINDS:
            return self.gangs.apply(kind, event.type, obj)
        if kind in WORKLOAD_KINDS:
            meta = obj.get("metadata") or {}
            key = (kind, meta.get("namespace", ""), meta.get("name", ""))
            if deleted:
                return self.workloads.pop(key, None) is not None
            view = WorkloadView.from_api(kind, obj)
            old = self.workloads.get(key)
            if old is not None and old.resource_version and old.resource_version == view.resource_version:
                return False
            self.workloads[key] = view
            return True
        return False

    def _apply_listed(self, event: Listed) -> bool:
        # thousands of new objects at once, none of them cyclic, most of them long-lived
        with gc_paused(keep=len(event.objects) >= BULK):
            return self._apply_listed_now(event)

    def _apply_listed_now(self, event: Listed) -> bool:
        kind = event.kind
        self.synced.add(kind)
        if kind == "Pod":
            self._relist_pods(event.objects)
            self.jobs.relist_pods(event.objects)
            self.gangs.relist_pods(event.objects)
        elif kind == "Job":
            self.jobs.relist_jobs(event.objects)
        elif kind == "Node":
            fresh = {v.name: v for v in map(NodeView.from_api, event.objects)}
            for name in [n for n in self.nodes if n not in fresh]:
                self._delete_node(name)
            for view in fresh.values():
                self._put_node(view)
            self.gpus.set_nodes(fresh)  # from now on a slice's devices count only while its node exists
        elif kind in WORKLOAD_KINDS:
            for key in [k for k in self.workloads if k[0] == kind]:
                del self.workloads[key]
            for obj in event.objects:
                view = WorkloadView.from_api(kind, obj)
                self.workloads[view.key] = view
        elif kind == "Event":
            self.events.replace(event.objects)
        elif kind in DRA_KINDS or kind in DRA_OPTIONAL_KINDS:
            self.gpus.replace(kind, event.objects)
        elif kind in GANG_KINDS:
            self.gangs.replace(kind, event.objects)
        else:
            return False
        return True

    # -- nodes ---------------------------------------------------------------------------------
    def _put_node(self, view: NodeView) -> bool:
        old = self.nodes.get(view.name)
        if old is not None and old.resource_version and old.resource_version == view.resource_version:
            return False
        t = self._table
        if old is None:
            self.gpus.node_added(view.name)
            r = t.add(view.name)
            t.set_node(r, view.capacity, view.allocatable)
            for pod in (self._bound.get(view.name) or {}).values():
                t.add_pod(r, pod.requests, pod.limits, 1)
            self._order = None
        else:
            r = t.row[view.name]
            if old.capacity != view.capacity or old.allocatable != view.allocatable:
                t.set_node(r, view.capacity, view.allocatable)
        self.nodes[view.name] = view
        self._layout = None
        return True

    def _delete_node(self, name: str) -> bool:
        if self.nodes.pop(name, None) is None:
            return False
        self.gpus.node_deleted(name)  # its DRA devices go with it (the slices may stay a while)
        self._table.remove(name)  # its pods stay in _bound: they count again if it comes back
        self._order = None
        self._layout = None
        return True

    # -- pods ----------------------------------------------------------------------------------
    def _put_pod(self, obj: dict) -> bool:
        key = _pod_key(obj)
        old = self.pods.get(key)
        if old is not None:
            rv = (obj.get("metadata") or {}).get("resourceVersion")
            if rv and old.resource_version == rv:
                return False
        view = PodView.from_api(obj)
        if old is not None:
            self._uncount(old)
        self.pods[key] = view
        self._count(view)
        return True

    def _delete_pod(self, key: PodKey) -> bool:
        old = self.pods.pop(key, None)
        if old is None:
            return False
        self._uncount(old)
        return True

    def _count(self, pod: PodView) -> None:
        node = pod.node
        if pod.phase in TERMINAL_PHASES:
            return
        if node is None:
            self._pending[pod.key] = pod
            return
        bound = self._bound.get(node)
        if bound is None:
            bound = self._bound[node] = {}
        bound[pod.key] = pod
        r = self._table.row.get(node)
        if r is not None:
            self._table.add_pod(r, pod.requests, pod.limits, 1)

    def pod_uids_on(self, node: str) -> set[str]:
        """The uids of the pods counted against `node` (bound, not finished)."""
        return {p.uid for p in (self._bound.get(node) or {}).values()}

    def _uncount(self, pod: PodView) -> None:
        node = pod.node
        if pod.phase in TERMINAL_PHASES:
            return
        if node is None:
            self._pending.pop(pod.key, None)
            return
        bound = self._bound.get(node)
        if bound is not None and bound.pop(pod.key, None) is not None:
            if not bound:
                del self._bound[node]
            r = self._table.row.get(node)
            if r is not None:
                self._table.add_pod(r, pod.requests, pod.limits, -1)

    def _relist_pods(self, objects: list[dict]) -> None:
        """Replace every pod: views reused where the resourceVersion is unchanged, sums rebuilt at once.

        Pods with the same container resources share one requests dict (requests.pod_amounts), so the
        per-pod work is a row index and a small-integer id; numpy adds the distinct vectors per row.
        """
        old_pods = self.pods
        pods: dict[PodKey, PodView] = {}
        bound: dict[str, dict[PodKey, PodView]] = {}
        pending: dict[PodKey, PodView] = {}
        rows: list[int] = []
        req_ids: list[int] = []
        lim_ids: list[int] = []
        ids: dict[int, int] = {}
        distinct: list[dict[str, int]] = []
        row_of = self._table.row
        from_api = PodView.from_api
        with gc_paused():
            for obj in objects:
                meta = obj.get("metadata") or {}
                key = (meta.get("namespace", ""), meta.get("name", ""))
                view = old_pods.get(key) if old_pods else None
                if view is None or not view.resource_version or view.resource_version != meta.get("resourceVersion"):
                    view = from_api(obj)
                pods[key] = view
                if view.phase in TERMINAL_PHASES:
                    continue
                node = view.node
                if node is None:
                    pending[key] = view
                    continue
                on_node = bound.get(node)
                if on_node is None:
                    on_node = bound[node] = {}
                on_node[key] = view
                r = row_of.get(node)
                if r is None:
                    continue
                rows.append(r)
                amounts = view.requests
                i = ids.get(id(amounts))
                if i is None:
                    i = ids[id(amounts)] = len(distinct)
                    distinct.append(amounts)
                req_ids.append(i)
                amounts = view.limits
                i = ids.get(id(amounts))
                if i is None:
                    i = ids[id(amounts)] = len(distinct)
                    distinct.append(amounts)
                lim_ids.append(i)
            self._table.set_pod_sums(rows, req_ids, lim_ids, distinct)
        self.pods, self._bound, self._pending = pods, bound, pending

    # -- reads ---------------------------------------------------------------------------------
    def node_names(self) -> list[str]:
        """Node names in row order of `allocation()` (sorted)."""
        if self._order is None:
            self._order = sorted(self.nodes)
        return self._order

    def allocation(self) -> Allocation:
        """Dense nodes x resources arrays (read-only; cached until the next change)."""
        if self._alloc is not None and self._alloc_version == self.version:
            return self._alloc
        if not self.gpus.empty:
            self._table.column(GPU)  # DRA-only clusters have no nvidia.com/gpu in any node's status
        # Between node changes only pods move: reuse the row order, the names and the views (lists the
        # Allocations share and never mutate), so a new allocation is a copy of four small matrices
        # (~0.1 ms at 5,000 nodes instead of 1.5 ms; the extender republishes one every 0.2 s).
        if self._layout is None:
            names = self.node_names()
            self._layout = (self._table.rows_of(names), list(names), [self.nodes[n] for n in names])
        rows, names, views = self._layout
        resources = self._table.ordered_columns()
        m = self._table.compact(rows, resources)
        dra = None if self.gpus.empty else add_dra_gpus(m, names, resources, self.gpus.nodes())
        self._alloc = Allocation(
            nodes=names,
            resources=resources,
            capacity=m["capacity"],
            allocatable=m["allocatable"],
            requested=m["requested"],
            limits=m["limits"],
            views=views,
            dra_gpus=dra,
            dra_mapped=self.gpus.mapped_resources(),
        )
        self._pod_counts = m["pod_count"]
        self._alloc_version = self.version
        return self._alloc

    def pod_counts(self) -> np.ndarray:
        """Pods counted against each node, aligned with `allocation().nodes`."""
        self.allocation()
        return self._pod_counts

    def pods_on(self, node: str) -> list[PodView]:
        """The pods counted against `node` (bound, not finished), by name."""
        return sorted((self._bound.get(node) or {}).values(), key=lambda p: p.key)

    def pod_events(self, key: PodKey) -> list[EventView]:
        """The pod's recent Events, newest last; only those about this pod (its uid), not an earlier
        pod of the same name."""
        pod = self.pods.get(key)
        return self.events.for_object("Pod", *key, uid=pod.uid if pod is not None else "")

    def shown(self, key: PodKey) -> bool:
        """Is this pod listed for display (in `display_namespace`, when one is set)?"""
        return self.display_namespace is None or key[0] == self.display_namespace

    def shown_pods(self) -> Mapping[PodKey, PodView]:
        """The pods listed for display: all of them, or `display_namespace`'s (node figures count all)."""
        if self.display_namespace is None:
            return self.pods
        return NamespacePods(self.pods, self.display_namespace)

    def pending(self) -> list[PodView]:
        """Unbound, unfinished pods shown (see `shown`), by (namespace, name); `.pending_reason` has the
        scheduler's message."""
        return sorted((p for k, p in self._pending.items() if self.shown(k)), key=lambda p: p.key)

    def pending_count(self) -> int:
        """How many pods `pending()` lists."""
        if self.display_namespace is None:
            return len(self._pending)
        return sum(1 for k in self._pending if self.shown(k))

    def schedulable(self) -> np.ndarray:
        """Per node (allocation order): Ready and not cordoned."""
        return np.fromiter((v.ready and not v.unschedulable for v in self.allocation().views), dtype=bool,
                           count=len(self.nodes))

    def largest_fit(self, resource: str = GPU) -> np.ndarray:
        """Per node: the largest request of `resource` that still fits (0 on unschedulable or full nodes)."""
        alloc = self.allocation()
        col = alloc.column(resource)
        if col is None:
            return np.zeros(len(alloc.nodes), dtype=np.int64)
        free = alloc.free
        pods_col = alloc.column("pods")
        ok = self.schedulable()
        if pods_col is not None:
            ok &= free[:, pods_col] > 0
        return np.where(ok, np.maximum(free[:, col], 0), 0)

    def fragmentation(self, resource: str = GPU, fits: np.ndarray | None = None) -> Fragmentation:
        """k-GPU pods that still fit vs what the free total allows, over schedulable nodes; `fits`:
        `largest_fit(resource)` when the caller has it already (the TUI computes it once a refresh)."""
        fits = self.largest_fit(resource) if fits is None else fits
        alloc = self.allocation()
        col = alloc.column(resource)
        if col is None:
            return fragmentation(fits[:0], resource)
        has = alloc.allocatable[:, col] > 0
        return fragmentation(fits[has], resource, allocatable=alloc.allocatable[has, col])

    def totals(self) -> dict[str, dict[str, int]]:
        """Per resource over all nodes: capacity, allocatable, requested, limits, free."""
        alloc = self.allocation()
        sums = {m: getattr(alloc, m).sum(axis=0) for m in ("capacity", "allocatable", "requested", "limits")}
        return {
            r: {**{m: int(v[i]) for m, v in sums.items()}, "free": int(sums["allocatable"][i] - sums["requested"][i])}
            for i, r in enumerate(alloc.resources)
        }

    def is_synced(self, kinds: tuple[str, ...] | list[str]) -> bool:
        return all(k in self.synced for k in kinds)


class NamespacePods(Mapping[PodKey, PodView]):
    """A live read-only view of the model's pods in one namespace (lookups cost what the dict's do)."""

    __slots__ = ("_pods", "_namespace")

    def __init__(self, pods: dict[PodKey, PodView], namespace: str) -> None:
        self._pods, self._namespace = pods, namespace

    def __getitem__(self, key: PodKey) -> PodView:
        if key[0] != self._namespace:
            raise KeyError(key)
        return self._pods[key]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and key[:1] == (self._namespace,) and key in self._pods

    def __iter__(self) -> Iterator[PodKey]:
        ns = self._namespace
        return (k for k in self._pods if k[0] == ns)

    def __len__(self) -> int:
        ns = self._namespace
        return sum(1 for k in self._pods if k[0] == ns)


def _pod_key(obj: dict) -> PodKey:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace", ""), meta.get("name", ""))
