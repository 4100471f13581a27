"""Shared, MIG-sliced and other vendors' GPUs in the Nodes table and the header (#35): in each node's
own unit, never added to whole GPUs.

The allocation matrix keeps the scheduler's figures (8 `nvidia.com/gpu` on 2 GPUs time-sliced 4 ways);
these say what they are made of: the node's GPU cell reads `3/8 ×4` (replicas of 4 per GPU), `3/7 1g`
(1g.10gb MIG slices), `3/8 amd` (AMD's resource), and the header adds "8 = 2 physical × 4 shared",
"+ 3/7 MIG slices", "+ amd 3/8". Only the nodes whose GPUs are more than whole `nvidia.com/gpu` units
get a shape (`model/gpus/reads.unusual_rows`). Pure; call `shaped` under the state's lock.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeview.model.cluster import ClusterModel
from kubeview.model.gpus.physical import GpuNode, Offer
from kubeview.model.gpus.reads import GpuShapes, gpu_shapes, unusual_rows
from kubeview.model.gpus.vendors import MIG, NVIDIA_GPU, SHARED, WHOLE

NONE = GpuShapes()


def shaped(model: ClusterModel) -> GpuShapes:
    """The shapes of the nodes whose GPUs are more than whole `nvidia.com/gpu` units (none: NONE)."""
    alloc = model.allocation()
    dra = {} if model.gpus.empty else model.gpus.nodes()
    rows = unusual_rows(alloc, dra, model.gpu_names)
    if not rows:
        return NONE
    return gpu_shapes(alloc, dra, model.pods_on, model.largest_fit(NVIDIA_GPU), model.gpu_names, only=rows)


@dataclass(frozen=True, slots=True)
class NodeUnit:
    """What a node's GPU cell shows: `requested/advertised suffix` of `resource`, FIT in its unit."""

    resource: str  # the column its FIT reads ("nvidia.com/mig-1g.10gb", "amd.com/gpu")
    requested: int
    advertised: int
    suffix: str  # "×4", "1g", "1g+", "amd", "+mig"
    whole: bool  # units are physical GPUs (DCGM's use can be set against them)
    words: str  # what `/` finds: "time-slicing shared", "mig 1g.10gb", "amd"
    unit: str = "GPU"  # one unit, in words: "replica", "1g.10gb slice", "amd GPU"


def _head(profile: str | None) -> str:
    return (profile or "mig").split(".", 1)[0]


def node_unit(shape: GpuNode) -> NodeUnit | None:
    """The node's GPU cell in its own unit; None for whole NVIDIA GPUs alone (the table's plain cell)."""
    offers = shape.offers
    shared = [o for o in offers if o.kind == SHARED]
    migs = [o for o in offers if o.kind == MIG]
    whole = [o for o in offers if o.kind == WHOLE]
    if shared:
        o = max(shared, key=lambda x: x.advertised)
        return NodeUnit(o.resource, o.allocated, o.advertised, f"×{o.replicas}", False,
                        f"{shape.sharing or 'shared'} shared replicas", o.unit)
    if migs and not any(o.vendor == "nvidia" and o.advertised for o in whole):
        o = max(migs, key=lambda x: (x.advertised, x.profile or ""))
        more = "+" if len({m.profile for m in migs}) > 1 else ""
        profiles = " ".join(sorted({m.profile or "" for m in migs}))
        return NodeUnit(o.resource if o.source != "dra" else NVIDIA_GPU, o.allocated, o.advertised,
                        _head(o.profile) + more, False, f"mig {profiles} {shape.mig_strategy or 'dra'}", o.unit)
    if migs:  # whole GPUs beside MIG-enabled ones (mixed): the whole ones, marked
        return NodeUnit(NVIDIA_GPU, sum(o.allocated for o in whole), sum(o.advertised for o in whole), "+mig",
                        True, "mig " + " ".join(sorted({m.profile or "" for m in migs})))
    others = [o for o in whole if o.vendor != "nvidia"]
    if others:
        vendor = others[0].vendor
        mine = [o for o in others if o.vendor == vendor]
        resource = max(mine, key=lambda x: x.advertised).resource
        return NodeUnit(resource, sum(o.allocated for o in mine), sum(o.advertised for o in mine),
                        vendor[:5], True, f"{vendor} {resource}", f"{vendor} GPU")
    return None


def units(shapes: GpuShapes) -> dict[str, NodeUnit]:
    """Node -> its GPU cell, for the nodes that are not plain."""
    out = {}
    for name, shape in shapes.nodes.items():
        u = node_unit(shape)
        if u is not None:
            out[name] = u
    return out


def _sum(offers: list[Offer]) -> tuple[int, int]:
    return sum(o.allocated for o in offers), sum(o.advertised for o in offers)


@dataclass(frozen=True, slots=True)
class HeaderWords:
    """What the header adds to `GPU 12/18`, each part (long, short): `inside` says what some of those
    units are ("8 = 2 physical × 4 shared", "2 MIG slices"), `outside` the GPU units of other resources
    ("+ 3/7 MIG slices", "+ amd 3/8"), never added to the total."""

    inside: tuple[tuple[str, str], ...] = ()
    outside: tuple[tuple[str, str], ...] = ()
    shared: str = ""  # the least said where little room is left: "8 shared" (replicas in the total)

    def __bool__(self) -> bool:
        return bool(self.inside or self.outside)


def _replicas(shared: list[Offer]) -> str:
    """"2 physical × 4" (replicas alike), "2 physical" (they differ), "" where a count is unknown."""
    if not all(o.physical for o in shared):
        return ""
    reps = sorted({o.replicas for o in shared})
    return f"{sum(o.physical or 0 for o in shared)} physical" + (f" × {reps[0]}" if len(reps) == 1 else "")


def header_words(shapes: GpuShapes) -> HeaderWords:
    """The header's additions (see `HeaderWords`); empty when all GPUs are whole NVIDIA ones."""
    offers = [o for n in shapes.nodes.values() for o in n.offers]
    inside: list[tuple[str, str]] = []
    outside: list[tuple[str, str]] = []
    shared_in = [o for o in offers if o.kind == SHARED and o.resource == NVIDIA_GPU]
    if shared_in:
        adv = sum(o.advertised for o in shared_in)
        of = _replicas(shared_in)
        inside.append((f"{adv} = {of} shared" if of else f"{adv} shared replicas", f"{adv} shared"))
    mig_in = [o for o in offers if o.kind == MIG and o.resource == NVIDIA_GPU]  # single strategy, DRA
    if mig_in:
        adv = sum(o.advertised for o in mig_in)
        inside.append((f"{adv} MIG slice{'s' if adv != 1 else ''}", f"{adv} MIG"))
    shared_out = [o for o in offers if o.kind == SHARED and o.resource != NVIDIA_GPU]
    if shared_out:
        held, adv = _sum(shared_out)
        of = _replicas(shared_out)
        outside.append((f"+ {held}/{adv} shared replicas" + (f" ({of})" if of else ""), f"+ {adv} shared"))
    mig_out = [o for o in offers if o.kind == MIG and o.resource != NVIDIA_GPU]
    if mig_out:
        held, adv = _sum(mig_out)
        outside.append((f"+ {held}/{adv} MIG slices", f"+ {adv} MIG"))
    vendors: dict[str, list[Offer]] = {}
    for o in offers:
        if o.kind == WHOLE and o.vendor != "nvidia":
            vendors.setdefault(o.vendor, []).append(o)
    for vendor, mine in sorted(vendors.items()):
        held, adv = _sum(mine)
        outside.append((f"+ {vendor} {held}/{adv}", f"+ {vendor} {adv}"))
    return HeaderWords(tuple(inside), tuple(outside), inside[0][1] if shared_in else "")


def free_replicas(shapes: GpuShapes) -> int:
    """Free `nvidia.com/gpu` units that are shared replicas (the fragmentation line counts them as free
    GPUs, as the scheduler does: the header says how many are replicas)."""
    return sum(o.free for n in shapes.nodes.values() for o in n.offers
               if o.kind == SHARED and o.resource == NVIDIA_GPU and o.source == "device-plugin")
