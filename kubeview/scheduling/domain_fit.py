"""Fit a manifest inside one topology domain: every pod on nodes that share one value of a node label
(an NVLink clique: `nvidia.com/gpu.clique`), as Kueue's topology-aware scheduling does for a podset's
required level (`kueue.x-k8s.io/podset-required-topology`) and Kubernetes 1.38's gang TopologyConstraint.

Each domain is tried with the same fit as everywhere else (workload_fit.fit_units on the domain's rows
of the allocation); of the domains where everything fits, the one with the fewest free GPUs left is
chosen (Kueue's BestFit: keep the big domains for the big jobs). When none fits, the answer says which
domain came closest and how close. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from kubeview.model.allocation import GPU, Allocation
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.topology_domains import Tried, choose_domain, free_gpus
from kubeview.scheduling.workload_fit import Unit, UnitFit, fit_units

KUEUE_REQUIRED = "kueue.x-k8s.io/podset-required-topology"


@dataclass(slots=True)
class DomainFit:
    key: str  # the node label: "nvidia.com/gpu.clique"
    domain: str | None  # the domain chosen (everything fits there); None: no domain holds it
    fits: list[UnitFit]  # in the chosen domain, else in the closest one (empty: no domain at all)
    closest: str | None = None  # where it did not fit: the domain that placed the most pods
    rooms: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # domain -> (placed, pods, free GPUs)
    outside: int = 0  # nodes without the label: never tried
    nodes: int = 0  # nodes in the cluster

    @property
    def ok(self) -> bool:
        return self.domain is not None

    def words(self) -> str:
        """"inside nvidia.com/gpu.clique=uuid.1 (2 domains, 1 holds it)" or why not."""
        n = len(self.rooms)
        if not n and self.outside < self.nodes:
            return f"no {self.key} domain holds the pods already bound: they are in different domains or outside any"
        if not n:
            return f"no node has the label {self.key}: there is no domain to fit inside"
        holding = sum(placed == pods for placed, pods, _ in self.rooms.values())
        if self.domain is not None:
            return (f"inside {self.key}={self.domain} ({n} domain{'s' * (n != 1)}, {holding} hold{'s' * (holding == 1)} "
                    f"it; the one with the fewest free GPUs left is chosen)")
        placed, pods, free = self.rooms[self.closest or ""]
        return (f"no one {self.key} domain holds all {pods} pods: the closest is {self.closest} with room for "
                f"{placed} ({free} GPU{'s' * (free != 1)} free there, {n} domain{'s' * (n != 1)} tried)")


def _placed(fits: list[UnitFit]) -> int:
    return sum(f.fit.room if f.room is None else f.room for f in fits)


def fit_within(alloc: Allocation, units: list[Unit], config: PackingConfig, key: str,
               claim_nodes: Callable[[Unit], tuple[str, ...] | None] | None = None) -> DomainFit:
    """Try every domain of `key` (nodes grouped by that label's value) with all of `units`."""
    gpu = alloc.column(GPU)
    pods = sum(u.size for u in units)
    bound = {p.node for u in units for p in u.pods if p.node}  # members already bound stay where they are

    def attempt(sub: Allocation, _rows: np.ndarray) -> Tried[list[UnitFit]]:
        fits = fit_units(sub, units, config, claim_nodes)
        holds = all(f.fits for f in fits)
        asked = sum(int(alloc.vector(m.pod.requests)[gpu]) for f in fits for m in f.fit.members
                    if m.node and not m.bound) if gpu is not None and holds else 0
        return Tried(fits, holds, min(_placed(fits), pods), free_gpus(sub), asked)

    c = choose_domain(alloc, key, bound, attempt)
    rooms = {value: (t.room, pods, t.free) for value, t in c.tried.items()}
    where = c.chosen or c.closest
    return DomainFit(key, c.chosen, c.tried[where].result if where else [], c.closest, rooms, c.outside,
                     len(alloc.nodes))


def gang_constraint(objects: list[dict]) -> tuple[str, str] | None:
    """(label key, what asks) from a gang's TopologyConstraint in the manifest: a scheduling.k8s.io
    PodGroup's `spec.schedulingConstraints`, or a Job's `spec.scheduling.schedulingConstraints` (the Job
    controller copies it into the PodGroup it makes); None when none asks."""
    from kubeview.model.gangs.objects import topology_key

    for obj in objects:
        if not isinstance(obj, dict) or not isinstance(obj.get("spec"), dict):
            continue
        kind, group = obj.get("kind"), str(obj.get("apiVersion", "")).partition("/")[0]
        meta = obj.get("metadata") or {}
        spec = obj["spec"] if (kind, group) == ("PodGroup", "scheduling.k8s.io") else \
            obj["spec"].get("scheduling") if kind == "Job" else None
        key = topology_key(spec) if isinstance(spec, dict) else None
        if key:
            where = f"{meta['namespace']}/" if meta.get("namespace") else ""
            return key, f"{kind} {where}{meta.get('name', '?')}"
    return None


def required_level(objects: list[dict]) -> tuple[str, str] | None:
    """(label key, what asked for it) from Kueue's `podset-required-topology` annotation on a pod
    template (or a bare Pod) of the manifest; None when no object asks."""
    for obj in objects:
        if not isinstance(obj, dict):
            continue
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        template = (spec.get("template") or {}).get("metadata") or {} if isinstance(spec, dict) else {}
        for notes in (template.get("annotations") or {}, meta.get("annotations") or {}):
            value = notes.get(KUEUE_REQUIRED) if isinstance(notes, dict) else None
            if isinstance(value, str) and value:
                return value, f"{obj.get('kind', 'object')} {meta.get('name', '?')}"
    return None
