"""Per node: what its GPU resources are made of, in physical GPUs (#35).

The scheduler and kube-state-metrics count advertised units: 8 `nvidia.com/gpu` on a node whose 2
GPUs are time-sliced 4 ways, 7 `nvidia.com/mig-1g.10gb` slices of one GPU. kubeview keeps those
figures (the allocation matrix, the KSM series) and adds, from gpu-feature-discovery's labels and the
DRA devices, what stands behind them: one `Offer` per GPU resource and source (device plugin or DRA,
one row shape), the node's physical GPUs, and per physical GPU what is carved out of it. Slices are
never added to whole GPUs: each offer keeps its own unit. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from kubeview.model.gpus import labels as L
from kubeview.model.gpus.states import NodeGpus
from kubeview.model.gpus.vendors import MIG, NVIDIA_GPU, PARTITION, SHARED, WHOLE, GpuNames, GpuResource

DEVICE_PLUGIN, DRA = "device-plugin", "dra"


@dataclass(frozen=True, slots=True)
class Offer:
    """One GPU resource of a node from one source, in that resource's own unit."""

    resource: str
    vendor: str
    kind: str  # "gpu" (whole), "mig" (slices), "shared" (time-sliced / MPS replicas)
    profile: str | None  # MIG profile ("1g.10gb")
    source: str  # "device-plugin" | "dra"
    advertised: int  # allocatable units (the scheduler's)
    allocated: int  # units bound pods (or allocated claims) hold
    physical: int | None  # physical GPUs behind the units, None where the labels do not say
    replicas: int = 1  # units per physical unit (time-slicing/MPS replicas)
    free_units: int | None = None  # DRA: devices free to allocate (siblings' counters may rule some out)

    @property
    def free(self) -> int:
        return max(self.advertised - self.allocated, 0) if self.free_units is None else self.free_units

    @property
    def unit(self) -> str:
        """What one unit is, for the views: "GPU", "1g.10gb slice", "replica"."""
        if self.kind == MIG:
            return f"{self.profile} slice"
        if self.kind == PARTITION:
            return f"{self.profile} partition"
        return "replica" if self.kind == SHARED else "GPU"


@dataclass(frozen=True, slots=True)
class Carve:
    """One physical GPU (or, from labels alone, every GPU alike) and what is carved out of it."""

    gpu: str  # a DRA GPU's UUID, "GPU 0".., or "each of 2 GPUs"
    parts: tuple[tuple[str, int, int], ...]  # (what, units, allocated): ("1g.10gb", 7, 3), ("replicas", 4, 2)
    source: str


@dataclass(frozen=True, slots=True)
class GpuNode:
    node: str
    vendor: str
    product: str | None
    physical: int | None  # physical GPUs on the node
    sharing: str | None  # "time-slicing" | "mps" | None
    replicas: int  # per physical GPU (1: not shared)
    mig_strategy: str | None  # "single" | "mixed" where MIG slices are advertised
    clique: str | None  # NVLink domain (gpu-feature-discovery's clique label)
    offers: tuple[Offer, ...]
    carves: tuple[Carve, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def advertised(self) -> int:
        return sum(o.advertised for o in self.offers)

    def words(self) -> str:
        """"8 advertised = 2 physical × 4 (time-slicing)", "14 1g.10gb slices of 2 GPUs", "4 GPUs"."""
        parts = []
        for o in self.offers:
            if o.kind == SHARED and o.physical:
                parts.append(f"{o.advertised} advertised = {o.physical} physical × {o.replicas} ({self.sharing or 'shared'})")
            elif o.kind in (MIG, PARTITION):
                of = f" of {o.physical} GPU{'s' if o.physical != 1 else ''}" if o.physical else ""
                what = "slice" if o.kind == MIG else "partition"
                parts.append(f"{o.advertised} {o.profile} {what}{'s' if o.advertised != 1 else ''}{of}")
            else:
                parts.append(f"{o.advertised} {o.vendor if o.vendor != 'nvidia' else ''} GPU{'s' if o.advertised != 1 else ''}".replace("  ", " "))
        return ", ".join(parts)


def _single_profile(labels: dict[str, str]) -> str | None:
    """The MIG profile behind `nvidia.com/gpu` on a `single`-strategy node ("A100-SXM4-40GB-MIG-1g.5gb")."""
    if (labels.get(L.MIG_STRATEGY) or "").lower() != "single":
        return None
    name = labels.get(L.GPU_PRODUCT) or ""
    head, sep, tail = name.rpartition("-MIG-")
    return tail if sep and tail else None


def _offer(node_labels: dict[str, str], r: GpuResource, advertised: int, allocated: int) -> Offer:
    labels = node_labels
    kind, profile, replicas, physical = r.kind, r.profile, 1, None
    product = L.product(labels, r.vendor)
    if r.kind == MIG and profile:
        replicas = L.int_label(labels, L.mig_label(profile, "replicas")) or 1
        per = L.mig_slices_per_gpu(profile, product)
        if per and advertised % (per * replicas) == 0:
            physical = advertised // (per * replicas)
    elif r.name.startswith(NVIDIA_GPU):
        replicas = L.int_label(labels, L.GPU_REPLICAS) or 1
        single = _single_profile(labels)
        if single:
            kind, profile = MIG, single
            per = L.mig_slices_per_gpu(single, product)
            physical = advertised // (per * replicas) if per and advertised % (per * replicas) == 0 else None
        elif replicas > 1 or r.shared or L.sharing(labels):
            kind = SHARED
            physical = -(-advertised // replicas)
        else:
            physical = advertised
    else:  # AMD, Intel and the rest: one unit a device, unless their labels count fewer devices
        counted = L.counted_devices(labels, r.vendor)
        physical = advertised if counted is None else counted
        partition = (labels.get(L.AMD_PARTITION) or "").lower()
        if r.kind == PARTITION:
            physical = None  # the labeller counts partitions too (amdgpu_xcp_* devices): GPUs unknown
        elif r.vendor == "amd" and partition and not partition.startswith("spx"):
            kind, profile, physical = PARTITION, partition, None  # single naming: amd.com/gpu counts partitions
        elif counted and advertised > counted and advertised % counted == 0:
            kind, replicas = SHARED, advertised // counted  # Intel's shared-dev-num
    return Offer(r.name, r.vendor, kind, profile, DEVICE_PLUGIN, advertised, allocated, physical, replicas)


def _dra_offers(ng: NodeGpus) -> tuple[list[Offer], list[Carve], int]:
    """DRA GPUs: whole ones and MIG devices by profile; per parent GPU its slices; physical GPUs."""
    whole = [d for d in ng.devices if d.gpu and d.state != "gone" and d.device.type != "mig"]
    slices = [d for d in ng.devices if d.gpu and d.state != "gone" and d.device.type == "mig"]
    offers: list[Offer] = []
    if whole:
        offers.append(Offer(NVIDIA_GPU, "nvidia", WHOLE, None, DRA, len(whole),
                            sum(d.state == "allocated" for d in whole), len(whole), 1,
                            sum(d.state == "free" for d in whole)))
    by_profile: dict[str, list] = {}
    by_parent: dict[str, list] = {}
    for d in slices:
        by_profile.setdefault(str(d.device.attr("profile") or "mig"), []).append(d)
        by_parent.setdefault(str(d.device.attr("parentUUID") or "?"), []).append(d)
    for profile, ds in sorted(by_profile.items()):
        parents = {str(d.device.attr("parentUUID") or "?") for d in ds}
        offers.append(Offer(NVIDIA_GPU, "nvidia", MIG, profile, DRA, len(ds), sum(d.state == "allocated" for d in ds),
                            len(parents), 1, sum(d.state == "free" for d in ds)))
    carves = []
    for parent, ds in sorted(by_parent.items()):
        counts: dict[str, list[int]] = {}
        for d in ds:
            c = counts.setdefault(str(d.device.attr("profile") or "mig"), [0, 0])
            c[0] += 1
            c[1] += d.state == "allocated"
        carves.append(Carve(parent, tuple((p, n, a) for p, (n, a) in sorted(counts.items())), DRA))
    uuids = {d.device.uuid or d.device.name for d in whole}
    physical = len(uuids | set(by_parent) - uuids)
    return offers, carves, physical


def _label_carves(offers: list[Offer], physical: int | None, sharing: str | None) -> list[Carve]:
    """From labels alone every GPU looks alike: where the counts divide evenly, each GPU's share."""
    if not physical:
        return []
    parts = []
    for o in offers:
        if o.source != DEVICE_PLUGIN:
            continue
        if o.kind == MIG:
            if o.advertised % physical:
                return [Carve(f"across {physical} GPUs", tuple((x.profile or "", x.advertised, x.allocated)
                                                                for x in offers if x.kind == MIG), DEVICE_PLUGIN)]
            parts.append((o.profile or "", o.advertised // physical, -1))
        elif o.kind == SHARED:
            parts.append((f"{sharing or 'shared'} replicas", o.replicas, -1))
    if not parts:
        return []
    return [Carve(f"each of {physical} GPU{'s' if physical != 1 else ''}", tuple(parts), DEVICE_PLUGIN)]


Holders = dict[str, list[tuple[str, int]]]  # resource -> [(namespace/pod, units)] of the node's bound pods


def gpu_node(name: str, labels: dict[str, str], amounts: dict[str, tuple[int, int]], names: GpuNames,
             dra: NodeGpus | None = None, holders: Holders | Callable[[], Holders] | None = None) -> GpuNode | None:
    """The node's GPU shape; `amounts`: resource -> (allocatable, requested) of the device plugins'
    units (DRA's taken out), `dra`: the ledger's devices, `holders` (or a function that reads them, called
    only where a shared unit is held twice or more): for the shared-replica warning. None for a node with
    no GPU of any kind."""
    offers: list[Offer] = []
    for resource, (alloc, req) in sorted(amounts.items()):
        r = names.classify(resource)
        if r is None or alloc <= 0 and req <= 0:
            continue
        offers.append(_offer(labels, r, alloc, req))
    plugin_profiles = {o.profile for o in offers if o.kind == MIG}
    if len(plugin_profiles) > 1:  # all-balanced and the like: the labels do not say which GPUs hold which
        offers = [replace(o, physical=None) if o.kind == MIG else o for o in offers]
    carves: list[Carve] = []
    dra_physical = 0
    if dra is not None and dra.devices:
        more, carves, dra_physical = _dra_offers(dra)
        offers.extend(more)
    if not offers:
        return None
    vendor = offers[0].vendor
    sharing = L.sharing(labels) if vendor == "nvidia" else None
    counted = L.int_label(labels, L.GPU_COUNT) if vendor == "nvidia" else None
    single = _single_profile(labels)
    if counted is not None and single is None:  # GFD counts every GPU of the node, whoever advertises it
        physical: int | None = counted
    else:
        known = [o.physical for o in offers if o.source == DEVICE_PLUGIN and o.kind != MIG]
        migs = [o.physical for o in offers if o.source == DEVICE_PLUGIN and o.kind == MIG]
        whole = [n for n in known if n is not None]
        carved = [n for n in migs if n is not None]
        # MIG profiles of one node may share GPUs (all-balanced): the largest profile's count is the least
        physical = None if len(whole) < len(known) or len(carved) < len(migs) else \
            sum(whole) + (max(carved) if carved else 0) + dra_physical
    kinds = {o.kind for o in offers}
    said = (labels.get(L.MIG_STRATEGY) or "").lower()
    plugin_mig = any(o.kind == MIG and o.source == DEVICE_PLUGIN for o in offers)
    mig = (said if said in ("single", "mixed") else "mixed") if plugin_mig else None
    replicas = max((o.replicas for o in offers if o.kind == SHARED), default=1)
    if sharing is None and SHARED in kinds:
        sharing = "shared"
    if not carves:
        carves = _label_carves(offers, physical, sharing)
    warnings = []
    held: Holders | None = None
    for o in offers:
        if o.kind != SHARED or o.allocated < 2:
            continue
        if held is None:
            held = (holders() if callable(holders) else holders) or {}
        for pod, units in held.get(o.resource, ()):
            if units >= 2 and sharing == "mps":  # failRequestsGreaterThanOne: MPS's default
                warnings.append(f"{pod} asks {units} MPS replicas of {o.resource}: the device plugin refuses more "
                                f"than 1 unless failRequestsGreaterThanOne is off, and they may be one physical GPU")
            elif units >= 2:
                warnings.append(f"{pod} holds {units} {sharing or 'shared'} replicas of {o.resource}: "
                                f"they may be one physical GPU")
    return GpuNode(name, vendor, L.product(labels, vendor), physical, sharing if SHARED in kinds else None,
                   replicas, mig,
                   labels.get(L.CLIQUE) or None, tuple(offers), tuple(carves), tuple(warnings))
