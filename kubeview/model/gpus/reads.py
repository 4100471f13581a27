"""The model-wide GPU shape ClusterModel caches per change: every GPU node's offers and physical GPUs
(physical.py) and the NVLink domains (domains.py), read from the allocation matrix, the DRA ledger,
node labels and the pods on shared nodes. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from kubeview.model.allocation import GPU, Allocation
from kubeview.model.gpus import labels as L
from kubeview.model.gpus.domains import ComputeDomainView, Domain, nvlink_domains
from kubeview.model.gpus.physical import GpuNode, Holders, gpu_node
from kubeview.model.gpus.states import NodeGpus
from kubeview.model.gpus.vendors import GpuNames
from kubeview.model.views import PodView


@dataclass(frozen=True, slots=True)
class GpuShapes:
    nodes: dict[str, GpuNode] = field(default_factory=dict)  # GPU nodes only, in allocation order
    domains: tuple[Domain, ...] = ()

    @property
    def physical(self) -> int:
        """Physical GPUs over the nodes whose count is known."""
        return sum(n.physical or 0 for n in self.nodes.values())

    @property
    def unknown(self) -> int:
        """GPU nodes whose physical GPUs the labels do not give."""
        return sum(n.physical is None for n in self.nodes.values())

    def shared(self) -> list[GpuNode]:
        return [n for n in self.nodes.values() if n.sharing]

    def vendors(self) -> dict[str, tuple[int, int]]:
        """Vendor -> (allocated, advertised) whole-GPU and replica units (MIG slices and AMD partitions
        are their own units)."""
        out: dict[str, tuple[int, int]] = {}
        for n in self.nodes.values():
            for o in n.offers:
                if o.kind in ("mig", "partition"):
                    continue
                a, t = out.get(o.vendor, (0, 0))
                out[o.vendor] = (a + o.allocated, t + o.advertised)
        return out

    def rows(self, nodes: list[str], kind: str, resource: str = GPU) -> np.ndarray:
        """Per row of `nodes` (allocation order): whether the node's `resource` units are of `kind`
        ("gpu": whole GPUs, "shared": replicas, "mig": single-strategy slices)."""
        out = np.zeros(len(nodes), dtype=bool)
        for i, name in enumerate(nodes):
            g = self.nodes.get(name)
            if g is not None and any(o.resource == resource and o.kind == kind for o in g.offers):
                out[i] = True
        return out

    def warnings(self) -> list[str]:
        return [w for n in self.nodes.values() for w in n.warnings]


SHAPE_LABELS = (L.GPU_REPLICAS, L.SHARING, L.MIG_STRATEGY)  # labels that make nvidia.com/gpu more than whole GPUs


def unusual_rows(alloc: Allocation, dra: dict[str, NodeGpus], names: GpuNames) -> list[int]:
    """Rows of the nodes whose GPUs are more than whole `nvidia.com/gpu` units: another GPU resource
    (MIG slices, `.shared` replicas, AMD, Intel) held or advertised, labels that say `nvidia.com/gpu` is
    shared or MIG-sliced, or DRA MIG devices. The views read `gpu_shapes(..., only=)` of these alone: a
    cluster of plain GPU nodes costs one pass over its columns and labels, not a shape per node."""
    others = [c for c, r in names.gpu_columns(alloc.resources) if r.name != GPU]
    out: set[int] = set()
    if others:
        idx = np.array(others, dtype=np.int64)
        out.update(np.flatnonzero((alloc.allocatable[:, idx] > 0).any(axis=1)
                                  | (alloc.requested[:, idx] > 0).any(axis=1)).tolist())
    gpu_col = alloc.column(GPU)
    if gpu_col is not None:
        for i in np.flatnonzero(alloc.allocatable[:, gpu_col] > 0).tolist():
            labels = alloc.views[i].labels
            if any(k in labels for k in SHAPE_LABELS):
                out.add(i)
    sliced = {n for n, ng in dra.items() if any(d.gpu and d.device.type == "mig" for d in ng.devices)}
    if sliced:
        out.update(i for i, n in enumerate(alloc.nodes) if n in sliced)
    return sorted(out)


def gpu_shapes(alloc: Allocation, dra: dict[str, NodeGpus], pods_on: Callable[[str], Iterable[PodView]],
               fits: np.ndarray, names: GpuNames, compute_domains: Iterable[ComputeDomainView] = (),
               only: Iterable[int] | None = None) -> GpuShapes:
    """`only`: these rows alone (`unusual_rows`), without the NVLink domains."""
    cols = names.gpu_columns(alloc.resources)
    if not cols and not dra:
        return GpuShapes()
    gpu_col = alloc.column(GPU)
    if only is not None:
        wanted = set(only)
    else:
        idx = np.array([c for c, _ in cols], dtype=np.int64)
        rows = np.flatnonzero((alloc.allocatable[:, idx] > 0).any(axis=1) | (alloc.requested[:, idx] > 0).any(axis=1)) \
            if cols else np.zeros(0, dtype=np.int64)
        wanted = set(rows.tolist()) | {i for i, n in enumerate(alloc.nodes) if n in dra}
    nodes: dict[str, GpuNode] = {}
    whole: dict[str, tuple[int, int]] = {}
    labels: dict[str, dict[str, str]] = {}
    fit_of: dict[str, int] = {}
    for i in sorted(wanted):
        name, view = alloc.nodes[i], alloc.views[i]
        ng = dra.get(name)
        amounts = {}
        for c, r in cols:
            a, q = int(alloc.allocatable[i, c]), int(alloc.requested[i, c])
            if c == gpu_col and ng is not None:
                a, q = a - ng.gpu_total, q - ng.gpu_allocated
            amounts[r.name] = (a, q)
        held = [r.name for _, r in cols if amounts[r.name][1] >= 2]
        shape = gpu_node(name, view.labels, amounts, names, ng,
                         partial(_holders, pods_on, name, held))
        if shape is None:
            continue
        nodes[name] = shape
        if gpu_col is not None:
            whole[name] = (int(alloc.allocatable[i, gpu_col]), int(alloc.requested[i, gpu_col]))
            fit_of[name] = int(fits[i]) if i < len(fits) else 0
        labels[name] = view.labels
    if only is not None:
        return GpuShapes(nodes)
    return GpuShapes(nodes, tuple(nvlink_domains(labels, whole, fit_of, compute_domains)))


def _holders(pods_on: Callable[[str], Iterable[PodView]], node: str, resources: list[str]) -> Holders:
    """Who holds which of `resources` on `node` (read only where a shared unit is held twice or more)."""
    out: Holders = {}
    for p in pods_on(node):
        for r in resources:
            units = p.requests.get(r, 0)
            if units:
                out.setdefault(r, []).append((f"{p.namespace}/{p.name}", units))
    return out
