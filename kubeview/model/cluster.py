"""The cluster as kubeview sees it: source events in, allocation arrays and views out.

`ClusterModel.apply` takes what a source emits (`Listed`, `WatchEvent`, `ConnectionState`,
`UsageUpdate`, `Scope`). List and watch events go through one table kind -> stores (`kinds`, see
model/kinds.py): a watch event is each store's `put` or `delete`, a relist its `replace`. Nodes and
the pods counted against them are `NodePods` (model/node_pods.py: incremental per event, a relist in
one vectorised pass); Jobs, gangs, Events, workloads and the DRA kinds have their own stores. A kind
the source cannot read is `unavailable` (kind -> reason), fed from its `Scope`.

Not thread-safe: one thread applies events; readers take `allocation()` (a dense copy, cached per
`version`) and the views.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping

import numpy as np

from kubeview.model.allocation import GPU, Allocation
from kubeview.model.autoscaling.groups import PodWait
from kubeview.model.autoscaling.store import AUTOSCALING_KINDS, AutoscalingStore
from kubeview.model.autoscaling.waits import NO_WAIT, pod_wait
from kubeview.model.events import ConnectionState, Listed, Listing, Scope, SourceEvent, WatchEvent
from kubeview.model.fragmentation import Fragmentation, fragmentation
from kubeview.model.freshness import Lists
from kubeview.model.gangs.messages import GANG_KINDS, KIND_KUEUE
from kubeview.model.gangs.store import GangStore
from kubeview.model.gcpause import BULK, gc_paused
from kubeview.model.gpus import vendors as gpu_vendors
from kubeview.model.gpus.domains import KIND_COMPUTE_DOMAIN, ComputeDomainStore
from kubeview.model.gpus.dra import DRA_KINDS, DRA_OPTIONAL_KINDS
from kubeview.model.gpus.ledger import GpuLedger
from kubeview.model.gpus.reads import GpuShapes, gpu_shapes
from kubeview.model.gpus.states import add_dra_gpus
from kubeview.model.gpus.vendors import GpuNames
from kubeview.model.jobs.store import JobStore
from kubeview.model.kinds import Calls, KindStore, rows_of
from kubeview.model.kube_events import EventLog, EventView
from kubeview.model.node_pods import NodePods, PodKey
from kubeview.model.queues.objects import QUEUE_KINDS
from kubeview.model.queues.positions import QueuePositions
from kubeview.model.queues.store import QueueStore
from kubeview.model.queues.workload import KueueWorkloads
from kubeview.model.quota.counting import QuotaUse
from kubeview.model.quota.held import Held
from kubeview.model.quota.objects import QuotaKey
from kubeview.model.quota.reads import KeptQuotaUses, all_held
from kubeview.model.quota.store import QUOTA_KIND, QuotaStore
from kubeview.model.quota.tally import QuotaTally
from kubeview.model.server_version import ServerVersion, parse_version, scheduler_skew
from kubeview.model.staged import build_page, nothing_to_build
from kubeview.model.usage import Usage, UsageUpdate
from kubeview.model.views import NodeView, PodView
from kubeview.model.workloads import WORKLOAD_KINDS, WorkloadStore, WorkloadView

WorkloadKey = tuple[str, str, str]


class ClusterModel:
    """Nodes, pods and workloads of one cluster, with the allocation matrix kept up to date."""

    def __init__(self, title: str = "", *, slim_pages: bool = False) -> None:
        self.title = title
        self.slim_pages = slim_pages  # the only reader of its events: built pages may be cut (staged.py)
        self.partial: str | None = None  # why node figures do not count every pod (the source's scope)
        # the namespace whose pods are listed for display (-n); node figures still count every pod held
        self.display_namespace: str | None = None
        self.listing: dict[str, int] = {}  # kind -> objects read so far of a list in progress (Listing)
        self.listing_as_of: dict[str, float] = {}  # kind -> until when it was current (a relist: `Listing.as_of`)
        self.unavailable: dict[str, str] = {}  # kind -> why the source cannot read it (a 403, not served)
        self.kubernetes: str | None = None  # the API server's gitVersion (a real cluster's)
        self.not_served: dict[str, str] = {}  # built-in API it does not serve -> why (model/server_version.py)
        self.events = EventLog()  # recent Events per involved object (bounded), see kube_events.py
        self.jobs = JobStore()  # batch/v1 Jobs and their pods (model/jobs/store.py)
        self.gangs = GangStore()  # gangs of every scheduler, members from pods (model/gangs/store.py)
        self.autoscaling = AutoscalingStore()  # node groups and NodePools (model/autoscaling/store.py)
        self.queues = QueueStore()  # Kueue's queues and Workloads (model/queues/)
        self.quotas = QuotaStore()  # ResourceQuotas (model/quota/); `quota_uses()`, `held()` read them
        self._quota_uses: tuple[int, dict[QuotaKey, tuple[QuotaUse, ...]]] | None = None
        self._kept_quota_uses = KeptQuotaUses()
        self._held: tuple[int, dict[WorkloadKey, Held]] | None = None
        self.connection = ConnectionState("connecting", time.time())
        self.usage = Usage()
        self.gpus = GpuLedger()  # DRA devices and claims; counted in the GPU column by allocation()
        self.gpu_names: GpuNames = gpu_vendors.CONFIGURED  # which resources are GPUs (KUBEVIEW_GPU_RESOURCES)
        self.compute_domains = ComputeDomainStore()  # NVIDIA's ComputeDomains (NVLink domains, #35)
        self._shapes: tuple[int, GpuShapes] | None = None
        self.node_pods = NodePods(self.gpus)  # nodes, pods, and the allocation table's sums
        # pods' requests per namespace for the quotas (first in the Pod row: it reads a pod's old view)
        self.quota_tally = QuotaTally(lambda: self.node_pods.pods)
        self._workloads = WorkloadStore()
        self.workloads: dict[WorkloadKey, WorkloadView] = self._workloads.views
        self.version = 0
        self.synced: set[str] = set()  # kinds listed at least once
        self._alloc: Allocation | None = None
        self._alloc_version = -1
        # The kinds: list/watch events of each go to these stores, in this order. A new kind is a row.
        jobs, gangs, scaling, tally = self.jobs, self.gangs, self.autoscaling, self.quota_tally
        self._waits: tuple[tuple[int, int], dict[PodKey, PodWait]] | None = None
        self.kinds: dict[str, tuple[KindStore, ...]] = {
            "Node": (self.node_pods.node_kind, Calls(scaling.put_node, scaling.delete_node, scaling.relist_nodes)),
            "Pod": (Calls(tally.put_pod, tally.delete_pod, tally.relist_pods, nothing_to_build),
                    self.node_pods.pod_kind, Calls(jobs.put_pod, jobs.delete_pod, jobs.relist_pods, jobs.prepare_pods),
                    Calls(gangs.put_pod, gangs.delete_pod, gangs.relist_pods, gangs.prepare_pods)),
            "Job": (Calls(jobs.put_job, jobs.delete_job, jobs.relist_jobs),),
            "Event": (self.events,),
            QUOTA_KIND: (self.quotas,),
            KIND_COMPUTE_DOMAIN: (self.compute_domains,),
            **rows_of(self._workloads, WORKLOAD_KINDS),
            **rows_of(self.gpus, DRA_KINDS + DRA_OPTIONAL_KINDS),
            **rows_of(gangs, GANG_KINDS),
            **rows_of(self.queues, QUEUE_KINDS),
            **rows_of(scaling, AUTOSCALING_KINDS),
        }
        # a Kueue Workload is a gang (its pods) and a place in a queue (its state and why): read once for both
        self.kinds[KIND_KUEUE] = (KueueWorkloads(gangs, self.queues),)

    @property
    def nodes(self) -> dict[str, NodeView]:
        return self.node_pods.nodes

    @property
    def pods(self) -> dict[PodKey, PodView]:
        return self.node_pods.pods

    # -- events ----------------------------------------------------------------------------------
    def apply(self, event: SourceEvent) -> bool:
        """Fold one source event in; True if anything changed (and `version` was bumped)."""
        if isinstance(event, WatchEvent):
            changed = self._apply_watch(event)
        elif isinstance(event, Listed):
            self.listing.pop(event.kind, None)
            self.listing_as_of.pop(event.kind, None)
            changed = self._apply_listed(event)
        elif isinstance(event, Listing):
            self.listing[event.kind] = event.items
            self.listing_as_of.setdefault(event.kind, event.as_of)  # a 410 mid-list: as of the first start
            prepares = [s.prepare if isinstance(s, Calls) else None for s in self.kinds.get(event.kind, ())]
            build_page(prepares, event.page, self.slim_pages)  # while the next page is in transit (staged.py)
            changed = True  # the header says how far a big list got
        elif isinstance(event, ConnectionState):
            changed = (event.state, event.detail) != (self.connection.state, self.connection.detail)
            self.connection = event
        elif isinstance(event, UsageUpdate):
            self.usage.merge(event)
            changed = True
        elif isinstance(event, QueuePositions):
            changed = self.queues.set_positions(event.positions)
        elif isinstance(event, Scope):
            changed = (event.title, event.namespace, event.partial, dict(event.unavailable), event.kubernetes,
                       dict(event.not_served)) != (self.title, self.display_namespace, self.partial, self.unavailable,
                                                   self.kubernetes, self.not_served)
            self.title, self.display_namespace, self.partial = event.title, event.namespace, event.partial
            self.unavailable = dict(event.unavailable)
            self.kubernetes, self.not_served = event.kubernetes, dict(event.not_served)
        else:
            raise TypeError(f"not a source event: {type(event).__name__}")
        if changed:
            self.version += 1
        return changed

    def apply_all(self, events: Iterable[SourceEvent]) -> bool:
        changed = False
        for event in events:
            changed = self.apply(event) or changed
        return changed

    def _apply_watch(self, event: WatchEvent) -> bool:
        if event.type not in ("ADDED", "MODIFIED", "DELETED"):
            return False  # BOOKMARK/ERROR are the source's business
        changed = False
        for store in self.kinds.get(event.kind, ()):
            changed = (store.delete(event.obj) if event.type == "DELETED" else store.put(event.obj)) or changed
        return changed

    def _apply_listed(self, event: Listed) -> bool:
        self.synced.add(event.kind)
        stores = self.kinds.get(event.kind)
        if stores is None:
            return False
        # thousands of new objects at once, none of them cyclic, most of them long-lived
        with gc_paused(keep=len(event.objects) >= BULK):
            for store in stores:
                store.replace(event.objects)
        return True

    def pod_uids_on(self, node: str) -> set[str]:
        """The uids of the pods counted against `node` (bound, not finished)."""
        return {p.uid for p in (self.node_pods.bound.get(node) or {}).values()}

    # -- reads ---------------------------------------------------------------------------------
    def node_names(self) -> list[str]:
        """Node names in row order of `allocation()` (sorted)."""
        return self.node_pods.node_names()

    def allocation(self) -> Allocation:
        """Dense nodes x resources arrays (read-only; cached until the next change)."""
        if self._alloc is not None and self._alloc_version == self.version:
            return self._alloc
        table = self.node_pods.table
        if not self.gpus.empty:
            table.column(GPU)  # DRA-only clusters have no nvidia.com/gpu in any node's status
        # Between node changes only pods move: reuse the row order, the names and the views, so a new
        # allocation is a copy of four small matrices (~0.1 ms at 5,000 nodes instead of 1.5 ms; the
        # extender republishes one every 0.2 s).
        rows, names, views = self.node_pods.layout()
        resources = table.ordered_columns()
        m = table.compact(rows, resources)
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
        return sorted((self.node_pods.bound.get(node) or {}).values(), key=lambda p: p.key)

    def gpu_shapes(self) -> GpuShapes:
        """Every GPU node's offers and physical GPUs, and the NVLink domains (model/gpus/reads.py)."""
        if self._shapes is None or self._shapes[0] != self.version:
            dra = {} if self.gpus.empty else self.gpus.nodes()
            self._shapes = (self.version, gpu_shapes(self.allocation(), dra, self.pods_on, self.largest_fit(GPU),
                                                     self.gpu_names, self.compute_domains.views.values()))
        return self._shapes[1]

    def pod_events(self, key: PodKey) -> list[EventView]:
        """The pod's recent Events, newest last; only those about this pod (its uid), not an earlier
        pod of the same name."""
        pod = self.pods.get(key)
        return self.events.for_object("Pod", *key, uid=pod.uid if pod is not None else "")

    def pod_wait(self, key: PodKey, now: float | None = None) -> PodWait | None:
        """What a pending pod waits for, from the autoscalers' Events on it and its node group's state
        (model/autoscaling/waits.py); None for a pod that is not pending (or not known)."""
        pod = self.pods.get(key)
        if pod is None or not pod.pending:
            return None
        scaling = self.autoscaling
        now = time.time() if now is None else now
        return pod_wait(pod, self.pod_events(key), scaling.groups(), now, scaling.claims())

    def pod_waits(self, now: float | None = None) -> dict[PodKey, PodWait]:
        """The pending pods shown that an autoscaler said something about, and what each waits for (a
        pod left out waits for room: `NO_WAIT`); cached per model version (and per 10 s, for the ages)."""
        now = time.time() if now is None else now
        stamp = (self.version, int(now // 10))
        if self._waits is None or self._waits[0] != stamp:
            scaling = self.autoscaling
            groups, claims = scaling.groups(), scaling.claims()
            waits = {}
            # only pods with Events can have an autoscaler's word: a walk bounded by the EventLog, not the pods
            for key in sorted(self.events.involved("Pod")):
                p = self.pods.get(key)
                if p is None or not p.pending or not self.shown(key):
                    continue
                if (w := pod_wait(p, self.pod_events(key), groups, now, claims)) != NO_WAIT:
                    waits[key] = w
            self._waits = (stamp, waits)
        return self._waits[1]

    def quota_uses(self) -> dict[QuotaKey, tuple[QuotaUse, ...]]:
        """Per ResourceQuota (namespace, name): each key's hard, the controller's used and kubeview's count
        from the pods (model/quota/tally.py: kept pod by pod) and claims (counting.claim_usage); cached per
        version."""
        if self._quota_uses is None or self._quota_uses[0] != self.version:
            claims = self.gpus.claims if "ResourceClaim" in self.synced else None
            self._quota_uses = (self.version, self._kept_quota_uses.read(self.quotas, self.quota_tally, claims))
        return self._quota_uses[1]

    def held(self) -> dict[WorkloadKey, Held]:
        """The Jobs, ReplicaSets and StatefulSets held by quota now, by (kind, namespace, name)
        (model/quota/held.py: a walk over the workloads the EventLog has Events about); cached per version."""
        if self._held is None or self._held[0] != self.version:
            self._held = (self.version, all_held(self.events, self.jobs, self.workloads, self.quotas))
        return self._held[1]

    def shown(self, key: PodKey) -> bool:
        """Is this pod listed for display (in `display_namespace`, when one is set)?"""
        return self.display_namespace is None or key[0] == self.display_namespace

    def server_version(self) -> ServerVersion | None:
        """The API server's version, parsed (None: the embedded cluster, or the server did not say)."""
        return parse_version(self.kubernetes) if self.kubernetes else None

    def scheduler_skew(self) -> list[str]:
        """kube-scheduler workloads whose version does not match the API server's (model/server_version.py)."""
        images = [(f"{v.kind} {v.namespace}/{v.name}", image) for v in self._workloads.schedulers.values()
                  for image in v.scheduler_images]
        return scheduler_skew(self.server_version(), images)

    def shown_pods(self) -> Mapping[PodKey, PodView]:
        """The pods listed for display: all of them, or `display_namespace`'s (node figures count all)."""
        if self.display_namespace is None:
            return self.pods
        return NamespacePods(self.pods, self.display_namespace)

    def pending(self) -> list[PodView]:
        """Unbound, unfinished pods shown (see `shown`), by (namespace, name); `.pending_reason` has the
        scheduler's message."""
        return sorted((p for k, p in self.node_pods.pending.items() if self.shown(k)), key=lambda p: p.key)

    def pending_count(self) -> int:
        """How many pods `pending()` lists."""
        if self.display_namespace is None:
            return len(self.node_pods.pending)
        return sum(1 for k in self.node_pods.pending if self.shown(k))

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

    def fragmentation(self, resource: str = GPU, fits: np.ndarray | None = None,
                      only: np.ndarray | None = None) -> Fragmentation:
        """k-GPU pods that still fit vs what the free total allows, over schedulable nodes; `fits`:
        `largest_fit(resource)` when the caller has it already (the TUI computes it once a refresh);
        `only`: a row mask (the nodes whose units are whole GPUs, or replicas: `GpuShapes.rows`)."""
        fits = self.largest_fit(resource) if fits is None else fits
        alloc = self.allocation()
        col = alloc.column(resource)
        if col is None:
            return fragmentation(fits[:0], resource)
        has = alloc.allocatable[:, col] > 0
        if only is not None:
            has &= only
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

    def lists(self) -> Lists:
        """The lists' state, for `Lists.freshness` (is a figure counting some kinds a fact?)."""
        return Lists(frozenset(self.synced), {k: (n, self.listing_as_of.get(k, 0.0)) for k, n in self.listing.items()},
                     self.connection)


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

