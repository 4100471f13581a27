"""`kubeview fit` and Kueue: would the ClusterQueue behind an object's LocalQueue take it now?

An object labelled `kueue.x-k8s.io/queue-name` (a Job, a Pod, a workload of Kueue's integrations) is
created suspended and waits in that LocalQueue until its ClusterQueue reserves quota for it, whatever
room the nodes have. So, beside the nodes: "queue: fits on gpu-node-3, but ClusterQueue team-a-cq's
nominal nvidia.com/gpu 4 is used 4/4" (the one reading: model/queues/admit.py, on the ClusterQueue's
status). The unit's requests are Kueue's: every pod's requests summed (a template's times its copies).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubeview.model.queues.objects import QUEUE_LABEL

if TYPE_CHECKING:
    from kubeview.model.cluster import ClusterModel
    from kubeview.model.queues.admit import QueueRefusal
    from kubeview.scheduling.workload_fit import Unit, UnitFit


def queues_of(objects: list[dict], namespace: str) -> dict[str, tuple[str, str]]:
    """"Kind ns/name" -> (namespace, LocalQueue) for each object of the manifest that names one."""
    out = {}
    for obj in objects:
        meta = obj.get("metadata")
        labels = meta.get("labels") if isinstance(meta, dict) else None
        queue = labels.get(QUEUE_LABEL) if isinstance(labels, dict) else None
        if queue and isinstance(meta, dict):
            ns = meta.get("namespace") or namespace
            out[f"{obj.get('kind')} {ns}/{meta.get('name', '?')}"] = (str(ns), str(queue))
    return out


def unit_requests(unit: Unit) -> dict[str, int]:
    """What Kueue would count for the unit's pods (without the `pods` unit the scheduler adds)."""
    total: dict[str, int] = {}
    pods = [(p, 1) for p in unit.pods] + ([(unit.template, unit.replicas)] if unit.template is not None else [])
    for pod, times in pods:
        for name, amount in pod.requests.items():
            if name != "pods":
                total[name] = total.get(name, 0) + amount * times
    return total


def queue_answer(model: ClusterModel, unit: Unit, queues: dict[str, tuple[str, str]]) -> QueueRefusal | None:
    """Why the unit's ClusterQueue would not take it now (None: no queue named, or room)."""
    from kubeview.model.queues.admit import queue_refusal

    named = next((queues[w] for w in (unit.what, *unit.made_by) if w in queues), None)
    if named is None:
        labelled = next((p for p in unit.pods if p.labels.get(QUEUE_LABEL)), None)
        named = (labelled.namespace, labelled.labels[QUEUE_LABEL]) if labelled is not None else None
    if named is None:
        return None
    return queue_refusal(model.queues, named[0], named[1], unit_requests(unit))


def queue_line(f: UnitFit, q: QueueRefusal) -> str:
    """"queue: fits on gpu-node-3, but ClusterQueue team-a-cq's nominal nvidia.com/gpu 4 is used 4/4"."""
    nodes = {m.node for m in f.fit.members if m.node}
    where = (f"fits on {next(iter(nodes))}" if len(nodes) == 1 else "fits on the nodes") if f.fits else ""
    return f"  queue: {where}, but {q.text}" if where else f"  queue: {q.text}"


def queue_doc(q: QueueRefusal | None) -> dict | None:
    if q is None:
        return None
    return {"localQueue": q.local_queue, "clusterQueue": q.cluster_queue, "resource": q.resource,
            "reserved": q.reserved, "nominal": q.nominal, "borrow": q.borrow, "words": q.text}
