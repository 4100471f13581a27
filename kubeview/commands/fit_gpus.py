"""`kubeview fit`'s GPU parts (#35): the fit inside one topology domain (`--within LABEL`, or Kueue's
podset-required-topology annotation: scheduling/domain_fit.py) and what a pod's GPU request is in
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
           objects: list[dict], claim_nodes: Callable[[Unit], tuple[str, ...] | None]) -> tuple[DomainFit | None, str | None]:
    """The fit inside one domain of `--within`'s label (or the manifest's Kueue annotation's)."""
    from kubeview.scheduling.domain_fit import fit_within, required_level

    key, asked_by = getattr(args, "within", None), None
    if not key and (req := required_level(objects)) is not None:
        key, asked_by = req
    if not key:
        return None, None
    return fit_within(model.allocation(), units, config, key, claim_nodes), asked_by


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
