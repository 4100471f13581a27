"""The node screen's "GPUs" block (#35): what a node's GPU resources are made of, in words, one row
per offer (resource, kind/profile, source, held/advertised, physical, replicas), what is carved out of
each physical GPU, DCGM's use per physical GPU beside its replicas or slices, the warnings (a pod
holding two replicas that may be one GPU), the NVLink domain. And the pod screen's warning. Pure:
data for widgets/gpu_shape.py; call `node_block` under the state's lock.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeview.model.cluster import ClusterModel
from kubeview.model.gpus.domains import Domain
from kubeview.model.gpus.labels import CLIQUE
from kubeview.model.gpus.physical import Carve, GpuNode, Offer
from kubeview.model.gpus.reads import GpuShapes
from kubeview.model.gpus.vendors import MIG, SHARED
from kubeview.model.views import PodView

OFFER_HEADER = ("RESOURCE", "KIND", "SOURCE", "HELD/ADV", "PHYSICAL", "REPLICAS")


@dataclass(frozen=True, slots=True)
class GpuBlock:
    """The block's lines: `title` (the node's words), one row of cells per offer, then notes."""

    title: str
    product: str
    offers: tuple[tuple[str, ...], ...]
    carves: tuple[str, ...] = ()
    use: tuple[str, ...] = ()  # DCGM per physical GPU
    warnings: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()


def offer_cells(o: Offer) -> tuple[str, ...]:
    kind = f"mig {o.profile}" if o.kind == MIG else o.kind
    physical = "?" if o.physical is None else str(o.physical)
    replicas = str(o.replicas) if o.kind == SHARED or o.replicas > 1 else "-"
    return o.resource, kind, o.source, f"{o.allocated}/{o.advertised}", physical, replicas


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def carve_line(c: Carve) -> str:
    """"each of 2 GPUs: 4 time-slicing replicas", "GPU-1f…: 2 × 3g.40gb (1 held)"."""
    parts = []
    for what, units, held in c.parts:
        text = f"{units} {what}" if what.endswith("replicas") else f"{units} × {what}"
        parts.append(text + (f" ({held} held)" if held >= 0 else ""))
    return f"{c.gpu}: {', '.join(parts)}"


def use_lines(shape: GpuNode, util: tuple[float, ...] | None) -> tuple[str, ...]:
    """DCGM's use of each physical GPU beside what it is carved into: "GPU 0 87% · 4 replicas" (and
    ", 3 held" where the node has one GPU: which GPU a replica is on is not published)."""
    if not util:
        return ()
    shared = [o for o in shape.offers if o.kind == SHARED]
    migs = [o for o in shape.offers if o.kind == MIG]
    one = len(util) == 1
    out = []
    for k, pct in enumerate(util):
        what = ""
        if shared:
            o = shared[0]
            what = f" · {_plural(o.replicas, 'replica')}" + (f", {o.allocated} held" if one else "")
        elif migs and shape.physical:
            per = [(o.profile, o.advertised // shape.physical, o.allocated) for o in migs
                   if o.advertised % shape.physical == 0]
            what = "".join(f" · {n} × {p}" + (f", {a} held" if one else "") for p, n, a in per)
        out.append(f"GPU {k} {pct:.0f}%{what}")
    return tuple(out)


def domain_line(d: Domain) -> str:
    kind = "NVLink clique" if d.source == "clique" else "ComputeDomain"
    return (f"{kind} {d.name}: {_plural(len(d.nodes), 'node')}, {d.free}/{d.gpus} GPUs free, "
            f"largest job that fits {d.largest_job}")


def block(shape: GpuNode, util: tuple[float, ...] | None = None, domains: tuple[Domain, ...] = ()) -> GpuBlock:
    product = shape.product or ""
    extra = []
    if shape.mig_strategy:
        extra.append(f"MIG {shape.mig_strategy}")
    if shape.clique:
        extra.append(f"clique {shape.clique}")
    head = " · ".join(p for p in (product, *extra) if p)
    return GpuBlock(shape.words(), head, tuple(offer_cells(o) for o in shape.offers),
                    tuple(carve_line(c) for c in shape.carves), use_lines(shape, util), shape.warnings,
                    tuple(domain_line(d) for d in domains if shape.node in d.nodes))


def node_block(model: ClusterModel, node: str, shapes: GpuShapes) -> GpuBlock | None:
    """The block for `node` when its GPUs are more than whole NVIDIA GPUs (`shapes`: `gpu_units.shaped`)
    or it is in an NVLink domain; None otherwise (the block is hidden)."""
    shape = shapes.nodes.get(node)
    view = model.nodes.get(node)
    in_domain = (view is not None and CLIQUE in view.labels) or any(
        node == n for cd in model.compute_domains.views.values() for n, _ in cd.nodes)
    domains: tuple[Domain, ...] = ()
    if in_domain:
        full = model.gpu_shapes()
        domains = tuple(d for d in full.domains if node in d.nodes)
        shape = shape or (full.nodes.get(node) if domains else None)
    if shape is None:
        return None
    usage = model.usage.nodes.get(node)
    return block(shape, usage.gpu_util if usage is not None else None, domains)


def pod_warnings(shapes: GpuShapes, pod: PodView) -> list[str]:
    """The warnings about `pod` (it holds ≥2 replicas of a shared GPU: they may be one GPU)."""
    shape = shapes.nodes.get(pod.node or "")
    if shape is None:
        return []
    who = f"{pod.namespace}/{pod.name} holds "
    return [w for w in shape.warnings if w.startswith(who)]
