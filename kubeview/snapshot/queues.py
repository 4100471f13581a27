"""The `queues` part of the snapshot document and its JSON Schema (pure; document.py puts it in place).

Kueue's queues as the model reads them (model/queues/): each ClusterQueue's quota per flavor and resource
(nominalQuota, borrowingLimit, lendingLimit) beside its status (flavorsUsage, flavorsReservation, the
workload counts) and the Workloads waiting in it in queue order; each LocalQueue and the ClusterQueue it
feeds; each ResourceFlavor; and each Workload's state with the reason and message Kueue wrote, and where
Kueue reports it (its visibility API: model/queues/positions.py) a pending one's positions. Amounts
are model units of the resource: millicores for cpu, bytes for memory, counts otherwise. ClusterQueues
and flavors are cluster-scoped and always all shown; with `-n`, LocalQueues and Workloads of that
namespace only.
"""

from __future__ import annotations

from kubeview.model.cluster import ClusterModel
from kubeview.model.kinds import queues_unavailable
from kubeview.model.queues.objects import ClusterQueueView, Condition, LocalQueueView, QueuedWorkload
from kubeview.model.queues.positions import Position
from kubeview.snapshot.schema_parts import COUNT as _COUNT
from kubeview.snapshot.schema_parts import OPT_INT as _OPT_INT
from kubeview.snapshot.schema_parts import OPT_STR as _OPT_STR
from kubeview.snapshot.schema_parts import STR as _STR
from kubeview.snapshot.schema_parts import obj as _obj


def _cond(c: Condition | None) -> dict | None:
    return None if c is None else {"status": c.status, "reason": c.reason, "message": c.message}


# What a ClusterQueue's document reads beside its view: its LocalQueues and its waiting Workloads in order
# (lists the store keeps while they stay the same: the kept texts compare them, snapshot/kept.py)
Around = tuple[list[LocalQueueView], list[QueuedWorkload]]


def cluster_queue_items(model: ClusterModel) -> tuple[list[ClusterQueueView], list[Around]]:
    store = model.queues
    cqs = store.cluster_queues()
    return cqs, [(store.local_queues_of(cq.name), store.waiting(cq.name)) for cq in cqs]


def cluster_queue_entry(cq: ClusterQueueView, around: Around) -> dict:
    local, waiting = around
    return {
        "name": cq.name, "apiVersion": cq.api_version, "cohort": cq.cohort, "active": _cond(cq.active),
        "pendingWorkloads": cq.pending, "reservingWorkloads": cq.reserving, "admittedWorkloads": cq.admitted,
        "resources": [{"flavor": r.flavor, "resource": r.resource, "nominal": r.nominal,
                       "nominalText": r.nominal_text, "borrowingLimit": r.borrowing_limit,
                       "lendingLimit": r.lending_limit, "used": r.used, "borrowed": r.borrowed,
                       "reserved": r.reserved, "reservedBorrowed": r.reserved_borrowed} for r in cq.resources],
        "localQueues": [f"{q.namespace}/{q.name}" for q in local],
        "waiting": [f"{w.namespace}/{w.name}" for w in waiting],
    }


# A Workload's ClusterQueue, or (ClusterQueue, Kueue's Position) where Kueue reports one: the plain string
# makes no new object per Workload and snapshot (kept beside the kept texts, snapshot/kept.py)
Place = str | tuple[str, Position] | None


def workload_items(model: ClusterModel) -> tuple[list[QueuedWorkload], list[Place]]:
    """Every Workload shown (with `-n`, of that namespace) and, beside each, its place: what `workload_doc`
    reads (the store's lists of this version: no pass over every Workload in Python where none is filtered
    and Kueue reported no positions)."""
    store, shown = model.queues, model.display_namespace
    views: list[QueuedWorkload] = store.workloads()
    places: list[Place] = list(store.places())
    if shown is not None:
        kept = [i for i, w in enumerate(views) if w.namespace == shown]
        views, places = [views[i] for i in kept], [places[i] for i in kept]
    known = {cq.name: found for cq in store.cluster_queues() if (found := store.positions_of(cq.name))}
    for i, (w, cq) in enumerate(zip(views, places, strict=True) if known else ()):
        where = known.get(cq) if isinstance(cq, str) and w.waiting else None
        position = where.get(w.key) if where is not None else None
        if position is not None and isinstance(cq, str):
            places[i] = (cq, position)
    return views, places


def workload_doc(w: QueuedWorkload, place: Place) -> dict:
    cq, position = place if isinstance(place, tuple) else (place, None)
    return {"namespace": w.namespace, "name": w.name, "queue": w.queue, "clusterQueue": cq,
            "state": w.state, "reason": w.reason, "message": w.message,
            "evicted": None if w.evicted is None else {"reason": w.evicted.reason, "message": w.evicted.message},
            "position": None if position is None else position.in_cluster_queue + 1,
            "positionInClusterQueue": None if position is None else position.in_cluster_queue,
            "positionInLocalQueue": None if position is None else position.in_local_queue,
            "requests": dict(sorted(w.requests.items())),
            "flavors": dict(sorted(w.flavors.items())), "priority": w.priority, "active": w.active, "owner": w.owner}


def queues_doc(model: ClusterModel, entries: bool = True) -> dict:
    """The `queues` part; `entries=False` leaves `clusterQueues` and `workloads` (its last key) empty:
    `snapshot_json` writes them as kept text (snapshot/kept.py)."""
    store, shown = model.queues, model.display_namespace
    return {
        "unavailable": queues_unavailable(model.unavailable),
        "positionsUnavailable": store.positions.unavailable,
        "held": store.pending_count() if shown is None else sum(1 for w in store.workloads()
                                                                 if w.waiting and w.namespace == shown),
        "clusterQueues": [cluster_queue_entry(cq, a) for cq, a in zip(*cluster_queue_items(model), strict=True)]
        if entries else [],
        "localQueues": [{"namespace": q.namespace, "name": q.name, "clusterQueue": q.cluster_queue,
                         "pendingWorkloads": q.pending, "reservingWorkloads": q.reserving,
                         "admittedWorkloads": q.admitted, "active": _cond(q.active)}
                        for q in store.local_queues() if shown is None or q.namespace == shown],
        "resourceFlavors": [{"name": f.name, "nodeLabels": dict(f.node_labels), "nodeTaints": list(f.node_taints)}
                            for f in store.flavors()],
        "workloads": [workload_doc(w, place) for w, place in zip(*workload_items(model), strict=True)] if entries else [],
    }


_AMOUNTS = {"type": "object", "additionalProperties": {"type": "integer"}}


_COND = {"type": ["object", "null"], "properties": {"status": _STR, "reason": _STR, "message": _STR},
         "required": ["status", "reason", "message"], "description": "the Active condition as Kueue wrote it"}

QUEUES_SCHEMA = _obj({
    "unavailable": {**_OPT_STR, "description": "why some of Kueue's queues are not shown (a list refused)"},
    "positionsUnavailable": {**_OPT_STR, "description": "why no Workload has Kueue's positions (its visibility "
                             "API not served, refused or failing); null when it answered or was not asked"},
    "held": {**_COUNT, "description": "Workloads Kueue holds back now (no quota reserved, not finished)"},
    "clusterQueues": {"type": "array", "items": _obj({
        "name": _STR, "apiVersion": _STR, "cohort": _OPT_STR, "active": _COND,
        "pendingWorkloads": _COUNT, "reservingWorkloads": _COUNT, "admittedWorkloads": _COUNT,
        "resources": {"type": "array", "items": _obj({
            "flavor": _STR, "resource": _STR, "nominal": {"type": "integer"}, "nominalText": _STR,
            "borrowingLimit": {**_OPT_INT, "description": "null: no limit"}, "lendingLimit": _OPT_INT,
            "used": {**_COUNT, "description": "status.flavorsUsage total (admitted)"}, "borrowed": _COUNT,
            "reserved": {**_COUNT, "description": "status.flavorsReservation total (quota reserved)"},
            "reservedBorrowed": _COUNT,
        }, "one flavor and resource: amounts in model units")},
        "localQueues": {"type": "array", "items": _STR, "description": "namespace/name"},
        "waiting": {"type": "array", "items": _STR, "description": "pending Workloads in queue order"},
    })},
    "localQueues": {"type": "array", "items": _obj({
        "namespace": _STR, "name": _STR, "clusterQueue": _STR, "pendingWorkloads": _COUNT,
        "reservingWorkloads": _COUNT, "admittedWorkloads": _COUNT, "active": _COND})},
    "resourceFlavors": {"type": "array", "items": _obj({
        "name": _STR, "nodeLabels": {"type": "object", "additionalProperties": _STR},
        "nodeTaints": {"type": "array", "items": _STR}})},
    "workloads": {"type": "array", "items": _obj({
        "namespace": _STR, "name": _STR, "queue": _STR, "clusterQueue": _OPT_STR,
        "state": {"enum": ["finished", "admitted", "quota reserved", "pending"]},
        "reason": {**_STR, "description": "the deciding condition's reason as Kueue wrote it (Pending, Admitted...)"},
        "message": _STR,
        "evicted": {"type": ["object", "null"], "properties": {"reason": _STR, "message": _STR},
                    "required": ["reason", "message"]},
        "position": {**_OPT_INT, "description": "1-based place in its ClusterQueue, only where Kueue reports it"},
        "positionInClusterQueue": {**_OPT_INT, "description": "Kueue's visibility API's, from 0; null where "
                                   "Kueue did not report it"},
        "positionInLocalQueue": {**_OPT_INT, "description": "Kueue's visibility API's, from 0, in its LocalQueue; "
                                 "null where Kueue did not report it"},
        "requests": _AMOUNTS, "flavors": {"type": "object", "additionalProperties": _STR},
        "priority": {"type": "integer"}, "active": {"type": "boolean"}, "owner": _OPT_STR})},
}, "Kueue's ClusterQueues, LocalQueues, ResourceFlavors and Workloads (#40)")
