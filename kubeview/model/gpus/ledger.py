"""One GPU ledger for DRA devices: ResourceSlices give each node its devices, ResourceClaims say which
are taken and by whom. Pure; the model folds it into the allocation matrix's `nvidia.com/gpu` column
beside device-plugin GPUs (`status.allocatable`), so every view counts both.

Rules (from the recorded v1.36.2 control plane, tests/fixtures/k8s/dra/README.md):
- A pool is (driver, pool name); only its newest `generation` counts; a pool missing slices
  (`resourceSliceCount`) is listed but hands out nothing, as kube-scheduler skips incomplete pools.
- A device is taken when an allocated claim's `status.allocation.devices.results[]` names it, however
  many pods share the claim (`reservedFor`): a shared claim is one device. The claim's node is in
  `allocation.nodeSelector`; the device's node is its slice's.
- A device counts in the GPU column when a DeviceClass mapping `nvidia.com/gpu`
  (`spec.extendedResourceName`) selects it (with no such class: devices whose `type` attribute is
  `gpu` or `mig`, NVIDIA's convention). A pod's `nvidia.com/gpu` the scheduler satisfied through a
  claim is counted as that claim's device, not as a request (views.PodView drops mapped requests).
- A node that is gone takes its devices with it: a ResourceSlice outlives its Node until the garbage
  collector removes it (and the embedded cluster's preemption never does), so once the model has
  listed Nodes, the devices of a slice whose node is not among them are "gone": no column units, not
  free, held by no pod.
- Partitionable devices (MIG, KEP-4815) consume shared counters: a free device whose counters are
  used up by allocated siblings is "unavailable". Column units on such a pool are the allocated
  devices plus the most free devices that still fit together (smallest first), which is how many a
  driver-only class could still hand out to `nvidia.com/gpu: N`; the device list says which are MIG.
- 1.37 (tests/fixtures/k8s/dra137/README.md): a device with a NoSchedule/NoExecute taint (its slice's
  or a DeviceTaintRule's) that no claim holds is "tainted": not free, no column unit. A device that
  allows multiple allocations is held by every claim with a share of it (`shareID`,
  `consumedCapacity`): allocated once, its shares listed. An adminAccess result watches a device and
  uses nothing up, as upstream's pool status counts it.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubeview.model.gcpause import gc_paused
from kubeview.model.gpus.counters import consume, fits, size
from kubeview.model.gpus.dra import (
    ClaimKey,
    ClaimView,
    Device,
    DeviceClassView,
    DeviceKey,
    SliceView,
    Taint,
    TaintRuleView,
)
from kubeview.model.gpus.pools import PoolCount, PoolKey, UpstreamPools
from kubeview.model.gpus.states import GPU, DeviceState, NodeGpus, ShareHold, is_gpu

__all__ = ["GPU", "DeviceState", "GpuLedger", "NodeGpus", "ShareHold"]


class GpuLedger:
    """DeviceClasses, ResourceSlices and ResourceClaims, with per-node device states kept lazily:
    an event marks the nodes it touches; `node(name)` / `nodes()` recompute only those."""

    def __init__(self) -> None:
        self.classes: dict[str, DeviceClassView] = {}
        self.slices: dict[str, SliceView] = {}
        self.claims: dict[ClaimKey, ClaimView] = {}
        self.rules: dict[str, TaintRuleView] = {}  # DeviceTaintRules
        self.upstream = UpstreamPools()  # ResourcePoolStatusRequests' answers, where served
        self.version = 0
        self._node_slices: dict[str, set[str]] = {}
        self._pool_node: dict[tuple[str, str], str] = {}
        self._holders: dict[DeviceKey, set[ClaimKey]] = {}  # claims using it (several: a shared device)
        self._admins: dict[DeviceKey, set[ClaimKey]] = {}  # adminAccess claims on it
        self._by_pod: dict[tuple[str, str], set[ClaimKey]] = {}
        self._cache: dict[str, NodeGpus] = {}
        self._dirty: set[str] = set()
        self._all_dirty = False
        self._nodes: set[str] | None = None  # the cluster's nodes once listed (None: every node assumed)

    # -- events -----------------------------------------------------------------------------------
    def apply(self, kind: str, event_type: str, obj: dict) -> bool:
        """One watch event of a DRA kind; True if anything changed."""
        meta = obj.get("metadata") or {}
        deleted = event_type == "DELETED"
        if kind == "DeviceClass":
            name = meta.get("name", "")
            changed = self._put(self.classes, name, None if deleted else DeviceClassView.from_api(obj))
        elif kind == "ResourceSlice":
            name = meta.get("name", "")
            old = self.slices.get(name)
            if not deleted and old is not None and old.resource_version and \
                    old.resource_version == meta.get("resourceVersion"):
                return False
            changed = self._put_slice(name, None if deleted else SliceView.from_api(obj))
        elif kind == "ResourceClaim":
            key = (meta.get("namespace", ""), meta.get("name", ""))
            old_claim = self.claims.get(key)
            if not deleted and old_claim is not None and old_claim.resource_version and \
                    old_claim.resource_version == meta.get("resourceVersion"):
                return False
            changed = self._put_claim(key, None if deleted else ClaimView.from_api(obj))
        elif kind == "DeviceTaintRule":
            changed = self._put(self.rules, meta.get("name", ""), None if deleted else TaintRuleView.from_api(obj))
        elif kind == "ResourcePoolStatusRequest":
            changed = self.upstream.apply(obj, deleted)
        else:
            return False
        if changed:
            self.version += 1
        return changed

    def put(self, kind: str, obj: dict) -> bool:
        """An object of `kind` added or modified (the model's table, model/kinds.py)."""
        return self.apply(kind, "MODIFIED", obj)

    def delete(self, kind: str, obj: dict) -> bool:
        return self.apply(kind, "DELETED", obj)

    def replace(self, kind: str, objects: Iterable[dict]) -> None:
        """A (re)list of one kind: everything of that kind is replaced."""
        if kind == "DeviceClass":
            self.classes = {v.name: v for v in map(DeviceClassView.from_api, objects)}
            self._all_dirty = True
        elif kind == "ResourceSlice":
            for name in list(self.slices):
                self._put_slice(name, None)
            for slice_view in map(SliceView.from_api, objects):
                self._put_slice(slice_view.name, slice_view)
        elif kind == "ResourceClaim":
            for key in list(self.claims):
                self._put_claim(key, None)
            for claim_view in map(ClaimView.from_api, objects):
                self._put_claim(claim_view.key, claim_view)
        elif kind == "DeviceTaintRule":
            self.rules = {v.name: v for v in map(TaintRuleView.from_api, objects)}
            self._all_dirty = True
        elif kind == "ResourcePoolStatusRequest":
            self.upstream.replace(objects)
        self.version += 1

    def set_nodes(self, names: Iterable[str]) -> None:
        """The cluster's nodes (a Node list): devices of other nodes are gone from now on."""
        fresh = set(names)
        old = self._nodes if self._nodes is not None else set(self._node_slices)
        self._dirty |= (old ^ fresh) | (set(self._node_slices) - fresh)
        self._nodes = fresh
        self.version += 1

    def node_added(self, name: str) -> None:
        if self._nodes is not None and name not in self._nodes:
            self._nodes.add(name)
            self._dirty.add(name)
            self.version += 1

    def node_deleted(self, name: str) -> None:
        """The Node is gone: its devices are too, whatever its slices still say."""
        if self._nodes is not None and name in self._nodes:
            self._nodes.discard(name)
            self._dirty.add(name)
            self.version += 1

    def node_gone(self, name: str) -> bool:
        return self._nodes is not None and name not in self._nodes

    def _put(self, table: dict, name: str, view: object | None) -> bool:
        """A cluster-wide object (a DeviceClass, a DeviceTaintRule) put or deleted: every node's
        devices may read it, so all are recomputed."""
        if view is None:
            if table.pop(name, None) is None:
                return False
        else:
            table[name] = view
        self._all_dirty = True
        return True

    def _put_slice(self, name: str, view: SliceView | None) -> bool:
        old = self.slices.pop(name, None)
        if old is None and view is None:
            return False
        for s in (old, view):
            if s is not None and s.node:
                self._dirty.add(s.node)
        if old is not None and old.node:
            names = self._node_slices.get(old.node)
            if names is not None:
                names.discard(name)
                if not names:
                    del self._node_slices[old.node]
        if view is not None:
            self.slices[name] = view
            if view.node:
                self._node_slices.setdefault(view.node, set()).add(name)
                self._pool_node[(view.driver, view.pool)] = view.node
        return True

    def _put_claim(self, key: ClaimKey, view: ClaimView | None) -> bool:
        old = self.claims.pop(key, None)
        if old is None and view is None:
            return False
        if old is not None:
            self._mark(old)
            for _, dev in old.results:
                for index in (self._holders, self._admins):
                    held = index.get(dev)
                    if held is not None:
                        held.discard(key)
                        if not held:
                            del index[dev]
            for pod, _ in old.reserved_for:
                held = self._by_pod.get((key[0], pod))
                if held is not None:
                    held.discard(key)
                    if not held:
                        del self._by_pod[(key[0], pod)]
        if view is not None:
            self.claims[key] = view
            self._mark(view)
            admin = view.admin_devices()
            for _, dev in view.results:
                (self._admins if dev in admin else self._holders).setdefault(dev, set()).add(key)
            for pod, _ in view.reserved_for:
                self._by_pod.setdefault((key[0], pod), set()).add(key)
        return True

    def _mark(self, claim: ClaimView) -> None:
        if claim.node:
            self._dirty.add(claim.node)
        for _, (driver, pool, _) in claim.results:
            node = self._pool_node.get((driver, pool))
            if node:
                self._dirty.add(node)

    # -- reads --------------------------------------------------------------------------------------
    @property
    def empty(self) -> bool:
        return not self.slices and not self.claims

    def node_names(self) -> list[str]:
        """Nodes that publish devices, sorted."""
        return sorted(self._node_slices)

    def node(self, name: str) -> NodeGpus | None:
        """The node's devices and GPU column units; None when it publishes no ResourceSlice."""
        self._refresh()
        return self._cache.get(name)

    def nodes(self) -> dict[str, NodeGpus]:
        self._refresh()
        return self._cache

    def claims_of_pod(self, namespace: str, pod: str, names: Iterable[str] = ()) -> list[ClaimView]:
        """The claims reserved for the pod, and those it names (pending pods have no reservation yet)."""
        keys = set(self._by_pod.get((namespace, pod)) or ())
        keys.update((namespace, n) for n in names if n)
        return sorted((self.claims[k] for k in keys if k in self.claims), key=lambda c: c.key)

    def device(self, key: DeviceKey) -> Device | None:
        node = self._pool_node.get(key[:2])
        ng = self.node(node) if node else None
        if ng is None:
            return None
        return next((d.device for d in ng.devices if d.device.key == key), None)

    def pod_gpus(self) -> dict[tuple[str, str], tuple[Device, ...]]:
        """Per pod (namespace, name) the DRA GPUs (full or MIG) its claims hold: the Pods table's GPU
        column and the idle-GPU join. A shared claim's device is listed for each of its pods."""
        out: dict[tuple[str, str], tuple[Device, ...]] = {}
        for ng in self.nodes().values():
            for s in ng.devices:
                if s.gpu and s.claim is not None and s.state != "gone":
                    for pod in s.pods:
                        key = (s.claim[0], pod)
                        out[key] = out.get(key, ()) + (s.device,)
        return out

    def pod_devices(self) -> dict[tuple[str, str], tuple[str | None, ...]]:
        """Per pod holding DRA GPUs: each GPU's UUID (None when it publishes none, as a MIG slice
        that does not exist yet). For the idle-GPU join."""
        return {pod: tuple(d.uuid for d in devices) for pod, devices in self.pod_gpus().items()}

    def unevaluated_classes(self) -> list[str]:
        """DeviceClasses with CEL kubeview cannot evaluate (their matches are assumed, and said so)."""
        return sorted(n for n, c in self.classes.items() if not c.evaluated)

    def mapped_resources(self) -> frozenset[str]:
        """Extended resources some DeviceClass maps to DRA devices (spec.extendedResourceName)."""
        return frozenset(c.extended_resource for c in self.classes.values() if c.extended_resource)

    def gpu_classes(self) -> list[DeviceClassView]:
        return [c for c in self.classes.values() if c.extended_resource == GPU]

    def _refresh(self) -> None:
        if self._all_dirty:
            self._dirty = set(self._node_slices) | set(self._cache)
            self._all_dirty = False
        if not self._dirty:
            return
        gpu_classes = self.gpu_classes()
        # After a relist this is the first bulk allocation with the collector on (tens of thousands of
        # DeviceStates, all acyclic): left running, it would trigger the collector's pass over every
        # object the relists just made (1.1 s at 150,000 pods), billed to the first allocation().
        with gc_paused():
            for node in self._dirty:
                names = self._node_slices.get(node)
                if not names:
                    self._cache.pop(node, None)
                    continue
                self._cache[node] = self._compute(node, [self.slices[n] for n in names], gpu_classes)
        self._dirty = set()

    def _compute(self, node: str, slices: list[SliceView], gpu_classes: list[DeviceClassView]) -> NodeGpus:
        if self.node_gone(node):
            gone = sorted((d for s in slices for d in s.devices), key=lambda d: d.name)
            return NodeGpus(node, tuple(DeviceState(d, is_gpu(d, gpu_classes), "gone", None, ()) for d in gone),
                            0, 0)
        pools: dict[tuple[str, str], list[SliceView]] = {}
        for s in slices:
            pools.setdefault((s.driver, s.pool), []).append(s)
        states: list[DeviceState] = []
        total = allocated = 0
        for _, members in sorted(pools.items()):
            newest = max(s.generation for s in members)
            members = [s for s in members if s.generation == newest]
            complete = len(members) >= max(s.slice_count for s in members)
            counters: dict[str, dict[str, int]] = {}
            for s in members:
                counters.update({k: dict(v) for k, v in s.counters.items()})
            devices = sorted((d for s in members for d in s.devices), key=lambda d: d.name)
            gpu_of = {d.key: is_gpu(d, gpu_classes) for d in devices}
            held = {d.key: min(self._holders[d.key]) if self._holders.get(d.key) else None for d in devices}
            totals = {k: dict(v) for k, v in counters.items()}
            for d in devices:  # allocated devices use their counters first
                if held[d.key] is not None:
                    consume(counters, d)
            free_fit: list[Device] = []
            pool_states: dict[DeviceKey, str] = {}
            for d in devices:
                if held[d.key] is not None:
                    pool_states[d.key] = "allocated"
                elif any(t.blocks for t in self._taints(d)):
                    pool_states[d.key] = "tainted"
                elif complete and fits(counters, d):
                    pool_states[d.key] = "free"
                    free_fit.append(d)
                else:
                    pool_states[d.key] = "unavailable"
            # column units: allocated GPUs + the most free GPUs that fit together, smallest first
            room = {k: dict(v) for k, v in counters.items()}
            extra = 0
            for d in sorted((d for d in free_fit if gpu_of[d.key]), key=lambda d: (size(d, totals), d.name)):
                if fits(room, d):
                    consume(room, d)
                    extra += 1
            taken = sum(1 for d in devices if gpu_of[d.key] and held[d.key] is not None)
            total += taken + extra
            allocated += taken
            states.extend(self._state(d, gpu_of[d.key], pool_states[d.key]) for d in devices)
        return NodeGpus(node, tuple(states), total, allocated)

    def _taints(self, d: Device) -> tuple[Taint, ...]:
        if not self.rules:
            return d.taints
        return d.taints + tuple(r.taint for _, r in sorted(self.rules.items()) if r.matches(d))

    def _state(self, d: Device, gpu: bool, state: str) -> DeviceState:
        holders = sorted(self._holders.get(d.key) or ())
        claims = [c for c in map(self.claims.get, holders) if c is not None]
        pods = tuple(p for c in claims for p, _ in c.reserved_for)
        shares: tuple[ShareHold, ...] = ()
        if d.shared:
            shares = tuple(ShareHold(c.key, s.share_id, s.consumed, tuple(p for p, _ in c.reserved_for))
                           for c in claims for s in c.shares if s.device == d.key and not s.admin)
        return DeviceState(d, gpu, state, holders[0] if holders else None, pods, self._taints(d), shares,
                           tuple(sorted(self._admins.get(d.key) or ())))

    def pool_counts(self) -> dict[PoolKey, PoolCount]:
        """Per pool, kubeview's figures in the terms of upstream's pool status (pools.py): devices,
        allocated, tainted NoSchedule/NoExecute, free; None counts for an incomplete pool."""
        out: dict[PoolKey, PoolCount] = {}
        for ng in self.nodes().values():
            for s in ng.devices:
                key = (s.device.driver, s.device.pool)
                c = out.setdefault(key, PoolCount(ng.node))
                c.add(s.state, any(t.blocks for t in s.taints))
        return out

