"""What a Kueue Workload not read yet says of a hold, read from its object without making its view (the
queue store's `held_pods()` and `held_owners()`, model/queues/store.py: 20,000 Workloads in the bench)."""

from __future__ import annotations

from typing import TypeAlias

from kubeview.model.queues.objects import controller_owner, pod_count

Hold: TypeAlias = tuple[int, str | None]  # a held Workload's pods and controller owner ("Job/train")
UNSURE: Hold = (-1, "unsure")  # `hold_of`: not the shape Kueue writes, read the Workload
UNREAD: Hold = (-2, "unread")


def hold_of(obj: dict) -> Hold | None:
    """What `QueuedWorkload.from_api(obj)` would say of a hold without making the view: None where it is not
    pending (Finished, Admitted or QuotaReserved True, each type's last), else its pods and controller owner;
    `UNSURE` where a field is not of the type Kueue writes (the view is read, so the answer never differs).
    Every Workload not read yet goes through it once (20,000 in the bench): plain loops, no generators."""
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    if type(status) is not dict or type(spec) is not dict or type(meta) is not dict:
        return UNSURE
    conditions = status.get("conditions") or []
    if type(conditions) is not list:
        return UNSURE
    finished = admitted = reserved = None
    for c in conditions:
        if type(c) is not dict:
            return UNSURE
        kind = c.get("type", "")
        if kind == "QuotaReserved":
            reserved = c.get("status", "")
        elif kind == "Admitted":
            admitted = c.get("status", "")
        elif kind == "Finished":
            finished = c.get("status", "")
        elif type(kind) is not str:
            return UNSURE
    if "True" in (str(reserved), str(admitted), str(finished)):  # from_api's str(status) == "True"
        return None
    pod_sets, refs = spec.get("podSets") or [], meta.get("ownerReferences") or []
    if type(pod_sets) is not list or type(refs) is not list:
        return UNSURE
    for item in (*pod_sets, *refs):
        if type(item) is not dict:
            return UNSURE
    return (pod_count(pod_sets), controller_owner(refs))
