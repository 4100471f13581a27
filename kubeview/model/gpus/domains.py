"""NVLink domains: GPU nodes grouped by gpu-feature-discovery's clique label, and NVIDIA's
ComputeDomain objects (the DRA driver's CRD, `resource.nvidia.com`), with the free GPUs in each and the
largest job that fits inside one (#35). A job that needs one NVLink domain is a gang whose members
must share a value of a node label: the shape of Kueue's topology levels and of Kubernetes 1.38's
gang TopologyConstraint. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kubeview.model.gpus.labels import CLIQUE

KIND_COMPUTE_DOMAIN = "ComputeDomain"
CLIQUE_SOURCE, COMPUTE_DOMAIN_SOURCE = "clique", "ComputeDomain"


@dataclass(frozen=True, slots=True)
class ComputeDomainView:
    namespace: str
    name: str
    num_nodes: int  # spec.numNodes
    status: str  # status.status: "Ready" / "NotReady" ("" before the controller wrote one)
    nodes: tuple[tuple[str, str], ...]  # status.nodes[]: (name, cliqueID)
    resource_version: str = ""

    @classmethod
    def from_api(cls, obj: dict) -> ComputeDomainView:
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        nodes = tuple((str(n.get("name") or ""), str(n.get("cliqueID") or ""))
                      for n in status.get("nodes") or () if isinstance(n, dict) and n.get("name"))
        try:
            num = int(spec.get("numNodes") or 0)
        except (TypeError, ValueError):
            num = 0
        return cls(meta.get("namespace") or "", meta.get("name") or "", num, str(status.get("status") or ""),
                   nodes, meta.get("resourceVersion") or "")


class ComputeDomainStore:
    """The ComputeDomains (a KindStore: put, delete, replace)."""

    def __init__(self) -> None:
        self.views: dict[tuple[str, str], ComputeDomainView] = {}

    def put(self, obj: dict) -> bool:
        v = ComputeDomainView.from_api(obj)
        if not v.name:
            return False
        self.views[(v.namespace, v.name)] = v
        return True

    def delete(self, obj: dict) -> bool:
        meta = obj.get("metadata") or {}
        return self.views.pop((meta.get("namespace") or "", meta.get("name") or ""), None) is not None

    def replace(self, objects: Iterable[dict]) -> None:
        self.views.clear()
        for obj in objects:
            self.put(obj)


@dataclass(frozen=True, slots=True)
class Domain:
    name: str  # the clique label's value, or a ComputeDomain's namespace/name
    source: str  # "clique" | "ComputeDomain"
    nodes: tuple[str, ...]
    gpus: int  # whole GPU units the domain's nodes advertise
    free: int  # of them, free
    largest_job: int  # GPUs of 1-GPU pods that still fit inside it now (schedulable nodes only)

    def room(self, per_pod: int, fits: Mapping[str, int]) -> int:
        """How many pods of `per_pod` GPUs fit inside the domain now (`fits`: node -> largest fit)."""
        return sum(fits.get(n, 0) // per_pod for n in self.nodes) if per_pod > 0 else 0


def _domain(name: str, source: str, nodes: Iterable[str], gpus: Mapping[str, tuple[int, int]],
            fits: Mapping[str, int]) -> Domain:
    members = tuple(sorted(set(nodes)))
    total = sum(gpus.get(n, (0, 0))[0] for n in members)
    free = sum(max(gpus.get(n, (0, 0))[0] - gpus.get(n, (0, 0))[1], 0) for n in members)
    return Domain(name, source, members, total, free, sum(fits.get(n, 0) for n in members))


def nvlink_domains(labels: Mapping[str, Mapping[str, str]], gpus: Mapping[str, tuple[int, int]],
                   fits: Mapping[str, int], compute_domains: Iterable[ComputeDomainView] = ()) -> list[Domain]:
    """Cliques (nodes by `nvidia.com/gpu.clique`), then ComputeDomains (their status.nodes).
    `labels`: node -> labels; `gpus`: node -> (allocatable, requested) whole GPUs; `fits`: node ->
    the largest GPU request it can still take (0 where unschedulable)."""
    cliques: dict[str, list[str]] = {}
    for node, lab in labels.items():
        value = lab.get(CLIQUE)
        if value:
            cliques.setdefault(value, []).append(node)
    out = [_domain(v, CLIQUE_SOURCE, ns, gpus, fits) for v, ns in sorted(cliques.items())]
    for cd in sorted(compute_domains, key=lambda c: (c.namespace, c.name)):
        out.append(_domain(f"{cd.namespace}/{cd.name}", COMPUTE_DOMAIN_SOURCE, (n for n, _ in cd.nodes), gpus, fits))
    return out


def domains_by_label(labels: Mapping[str, Mapping[str, str]], key: str) -> dict[str, list[str]]:
    """Node names grouped by their value of `key` (nodes without it are in no domain)."""
    out: dict[str, list[str]] = {}
    for node, lab in labels.items():
        value = lab.get(key)
        if value:
            out.setdefault(value, []).append(node)
    return {v: sorted(ns) for v, ns in sorted(out.items())}
