"""The `gpus` part of the snapshot document and its JSON Schema (pure; document.py puts it in place).

Per GPU node, what its GPU resources are made of (model/gpus/physical.py): one offer per resource and
source (device plugin or DRA: one row shape), in that resource's own unit (whole GPUs, MIG slices of a
profile, time-sliced or MPS replicas), the node's physical GPUs, and per physical GPU what is carved
out of it; the NVLink domains (cliques, ComputeDomains) with their free GPUs and the largest job that
fits inside each. The nodes' `resources` keep the scheduler's and kube-state-metrics' figures.
"""

from __future__ import annotations

from kubeview.model.allocation import GPU
from kubeview.model.cluster import ClusterModel
from kubeview.model.fragmentation import Fragmentation
from kubeview.model.gpus.physical import Carve, GpuNode, Offer
from kubeview.model.gpus.reads import GpuShapes
from kubeview.model.kinds import domains_unavailable
from kubeview.snapshot.schema_parts import COUNT, OPT_INT, OPT_STR, STR, obj

_STRS = {"type": "array", "items": STR}


def _offer(o: Offer) -> dict:
    return {"resource": o.resource, "vendor": o.vendor, "kind": o.kind, "profile": o.profile, "source": o.source,
            "advertised": o.advertised, "allocated": o.allocated, "free": o.free, "physical": o.physical,
            "replicas": o.replicas}


def _carve(c: Carve) -> dict:
    return {"gpu": c.gpu, "source": c.source,
            "parts": [{"what": w, "units": n, "allocated": None if a < 0 else a} for w, n, a in c.parts]}


def _node(g: GpuNode) -> dict:
    return {"node": g.node, "vendor": g.vendor, "product": g.product, "physical": g.physical, "sharing": g.sharing,
            "replicas": g.replicas, "migStrategy": g.mig_strategy, "clique": g.clique, "words": g.words(),
            "offers": [_offer(o) for o in g.offers], "carves": [_carve(c) for c in g.carves],
            "warnings": list(g.warnings)}


def fragmentation_doc(f: Fragmentation) -> dict:
    return {
        "resource": f.resource,
        "freeTotal": f.free_total,
        "largestFit": f.largest_fit,
        "nodes": f.nodes,
        "sizes": [{"size": s.size, "placeable": s.placeable, "ideal": s.ideal, "stranded": s.stranded,
                   "fitsANode": s.fits_a_node} for s in f.sizes],
    }


def gpus_doc(model: ClusterModel) -> dict:
    shapes = model.gpu_shapes()
    nodes = list(shapes.nodes.values())
    exact = all(n.sharing is None and n.physical is not None for n in nodes)
    free = sum(o.free for n in nodes for o in n.offers if o.kind == "gpu") if exact else None
    return {
        "nodes": [_node(g) for g in nodes],
        "domains": [{"name": d.name, "source": d.source, "nodes": list(d.nodes), "gpus": d.gpus, "free": d.free,
                     "largestJob": d.largest_job} for d in shapes.domains],
        "physical": {"total": shapes.physical, "unknownNodes": shapes.unknown, "free": free},
        "vendors": {v: {"allocated": a, "advertised": t} for v, (a, t) in sorted(shapes.vendors().items())},
        "fragmentation": _by_unit(model, shapes),
        "unavailable": domains_unavailable(model.unavailable),
    }


def _by_unit(model: ClusterModel, shapes: GpuShapes) -> dict:
    """The cluster's `fragmentation` counts nvidia.com/gpu units wherever they are; here over the nodes
    whose units are whole GPUs, and apart, over those whose units are shared replicas."""
    names = model.allocation().nodes
    fits = model.largest_fit(GPU)
    return {kind: fragmentation_doc(model.fragmentation(GPU, fits, shapes.rows(names, kind)))
            for kind in ("gpu", "shared")}


_OFFER = obj({
    "resource": STR, "vendor": STR, "kind": {"enum": ["gpu", "mig", "shared", "partition"]}, "profile": OPT_STR,
    "source": {"enum": ["device-plugin", "dra"]}, "advertised": COUNT, "allocated": COUNT, "free": COUNT,
    "physical": {**OPT_INT, "description": "physical GPUs behind the units; null where the labels do not say"},
    "replicas": {**COUNT, "description": "units per physical unit (time-slicing / MPS replicas; 1: not shared)"},
}, "one GPU resource of the node from one source, in that resource's own unit")
_CARVE = obj({"gpu": STR, "source": STR,
              "parts": {"type": "array", "items": obj({"what": STR, "units": COUNT, "allocated": OPT_INT})}},
             "a physical GPU (a DRA GPU's UUID) or, from labels alone, each GPU alike, and what is carved out of it")
GPUS_SCHEMA = obj({
    "nodes": {"type": "array", "items": obj({
        "node": STR, "vendor": STR, "product": OPT_STR, "physical": OPT_INT,
        "sharing": {"enum": ["time-slicing", "mps", "shared", None]}, "replicas": COUNT,
        "migStrategy": {"enum": ["single", "mixed", None]}, "clique": OPT_STR, "words": STR,
        "offers": {"type": "array", "items": _OFFER}, "carves": {"type": "array", "items": _CARVE},
        "warnings": _STRS})},
    "domains": {"type": "array", "items": obj({
        "name": STR, "source": {"enum": ["clique", "ComputeDomain"]}, "nodes": _STRS, "gpus": COUNT, "free": COUNT,
        "largestJob": {**COUNT, "description": "GPUs of 1-GPU pods that fit inside the domain now"}})},
    "physical": obj({"total": COUNT, "unknownNodes": COUNT,
                     "free": {**OPT_INT, "description": "null where a GPU is shared or its count unknown"}}),
    "vendors": {"type": "object", "additionalProperties": obj({"allocated": COUNT, "advertised": COUNT})},
    "fragmentation": obj({"gpu": {"$ref": "#/$defs/fragmentation"}, "shared": {"$ref": "#/$defs/fragmentation"}},
                         "nvidia.com/gpu fragmentation over the nodes whose units are whole GPUs, and apart over those "
                         "whose units are shared replicas (the top-level fragmentation counts both)"),
    "unavailable": {**OPT_STR, "description": "why ComputeDomains are not shown (their list was refused), one line"},
}, "what the GPU resources are made of: physical GPUs, MIG slices, shared replicas, vendors, NVLink domains (#35)")
