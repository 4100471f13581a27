"""What `kubeview fit` says about a pod's GPU request in the unit it asks for (#35): MIG slices are
slices of a profile, never whole GPUs; replicas of a time-sliced GPU may be one physical GPU. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubeview.model.gpus.physical import GpuNode
from kubeview.model.gpus.reads import GpuShapes
from kubeview.model.gpus.vendors import MIG, SHARED, GpuNames


def _slice_note(resource: str, profile: str, nodes: Iterable[GpuNode]) -> str:
    free = {n.node: sum(o.free for o in n.offers if o.resource == resource and o.kind == MIG) for n in nodes}
    free = {k: v for k, v in free.items() if v > 0}
    if not free:
        return f"{resource} counts MIG {profile} slices, not GPUs: none is free"
    top = max(sorted(free), key=lambda k: free[k])
    n = len(free)
    return (f"{resource} counts MIG {profile} slices, not GPUs: {sum(free.values())} free on {n} node{'s' * (n != 1)}, "
            f"at most {free[top]} on one ({top})")


def request_notes(shapes: GpuShapes, names: GpuNames, requests: dict[str, int], placed: Iterable[str]) -> list[str]:
    """Notes for one pod's `requests` (model units) placed on the nodes `placed`."""
    notes: list[str] = []
    where = list(dict.fromkeys(placed))
    for resource, amount in sorted(requests.items()):
        r = names.classify(resource)
        if r is None or amount <= 0:
            continue
        if r.kind == MIG and r.profile:
            notes.append(_slice_note(resource, r.profile, shapes.nodes.values()))
        for node in where:
            g = shapes.nodes.get(node)
            if g is None:
                continue
            offer = next((o for o in g.offers if o.resource == resource), None)
            if offer is None:
                continue
            if offer.kind == SHARED and amount >= 2:
                notes.append(f"{node} is shared ({g.words()}): {amount} replicas of {resource} may be one physical GPU")
            elif offer.kind == MIG and r.kind != MIG:
                notes.append(f"on {node} {resource} is a MIG {offer.profile} slice ({g.mig_strategy} strategy), "
                             f"not a whole GPU")
    return notes
