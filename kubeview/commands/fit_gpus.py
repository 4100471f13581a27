"""`kubeview fit`'s GPU parts (#35): the fit inside one topology domain (`--within LABEL`, a gang's
TopologyConstraint, or Kueue's podset-required-topology annotation: scheduling/domain_fit.py) and what a pod's GPU request is in
the unit it asks for (model/gpus/fit_words.py: MIG slices, time-sliced replicas).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kubeview.model.cluster import ClusterModel
    from kubeview.scheduling.config import PackingConfig
    from kubeview.scheduling.domain_fit import DomainFit
    from kubeview.scheduling.workload_fit import Unit, UnitFit


def within(args: argparse.Namespace, model: ClusterModel, units: list[Unit], config: PackingConfig,
           objects: list[dict], claim_nodes: Callable[[Unit], tuple[str, ...] | None],
           ) -> tuple[DomainFit | None, str | None, str]:
    """The fit inside one domain of `--within`'s label, else of a gang's TopologyConstraint (a PodGroup
    or a Job of the manifest, or the cluster's PodGroup its pods name), else of Kueue's annotation; with
    who asked and in which words. `--within` and a gang's key must agree (ManifestError): kube-scheduler
    keeps the gang inside its own key's domain whatever kubeview is asked."""
    from kubeview.scheduling.domain_fit import fit_within, gang_constraint, required_level
    from kubeview.scheduling.workload_fit import ManifestError

    key = getattr(args, "within", None)
    asked = gang_constraint(objects) or _known_constraint(model, units)
    if asked is not None and key and key != asked[0]:
        raise ManifestError(f"--within {key} disagrees with {asked[1]}'s topology key {asked[0]}: kube-scheduler "
                            f"keeps that gang inside one {asked[0]} domain; drop --within or name the same label")
    if asked is not None:
        key, by, words = asked[0], asked[1], f"the topology constraint of {asked[1]}"
    elif key:
        by, words = None, ""
    elif (req := required_level(objects)) is not None:
        key, by, words = req[0], req[1], f"Kueue's podset-required-topology on {req[1]}"
    else:
        return None, None, ""
    domain = fit_within(model.allocation(), units, config, key, claim_nodes)
    if asked is not None and not domain.ok and domain.rooms:  # kube-scheduler's placement words on the gang
        from kubeview.scheduling.gang_domain import in_placement_words

        for f in domain.fits:
            if f.unit.gang and f.fit.message:
                in_placement_words(f.fit, len(domain.rooms))
    return domain, by, words


def _known_constraint(model: ClusterModel, units: list[Unit]) -> tuple[str, str] | None:
    """A topology key of a PodGroup the manifest's pods name that the cluster has (not the manifest)."""
    for unit in units:
        gang = model.gangs.get(*unit.group) if unit.group is not None else None
        if gang is not None and gang.topology_key:
            return gang.topology_key, f"PodGroup {gang.namespace}/{gang.name}"
    return None


def within_doc(d: DomainFit | None, asked_by: str | None) -> dict | None:
    if d is None:
        return None
    return {"key": d.key, "domain": d.domain, "fits": d.ok, "closest": d.closest, "askedBy": asked_by,
            "words": d.words(), "outside": d.outside,
            "domains": [{"name": k, "placed": p, "pods": n, "freeGpus": f} for k, (p, n, f) in d.rooms.items()]}


def gpu_notes_of(model: ClusterModel, fits: list[UnitFit]) -> list[list[str]]:
    """Per unit, what its GPU requests are in the unit asked for (model/gpus/fit_words.py)."""
    from kubeview.model.gpus.fit_words import request_notes

    shapes = model.gpu_shapes()
    out = []
    for f in fits:
        pod = f.unit.template or (f.unit.pods[0] if f.unit.pods else None)
        placed = [m.node for m in f.fit.members if m.node]
        out.append(request_notes(shapes, model.gpu_names, pod.requests, placed) if pod is not None else [])
    return out
