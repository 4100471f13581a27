"""Would a ClusterQueue take more now? The one reading of "no room in the queue" for `kubeview fit`.

Kueue's flavor assignment (pkg/scheduler/flavorassigner/flavorassigner.go) tries a resource's flavors
in the ClusterQueue's order and takes the first whose quota has room; a ClusterQueue in a cohort may
borrow beyond its nominal quota (up to its borrowingLimit, if the cohort has it unused). Kubeview answers
with the ClusterQueue's own status (flavorsReservation against nominalQuota): no room when every flavor
covering a resource is short by nominal quota and the queue has no cohort to borrow from; in a cohort it
says the workload would have to borrow (the cohort's unused quota is not read), not that it is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubeview.model.queues.objects import KIND_CLUSTER_QUEUE, KIND_LOCAL_QUEUE, FlavorResource
from kubeview.model.queues.store import QueueStore
from kubeview.model.quota.objects import amount_text


@dataclass(frozen=True, slots=True)
class QueueRefusal:
    """Why the ClusterQueue behind a LocalQueue would not take the requests now (or must borrow)."""

    local_queue: str
    cluster_queue: str | None
    resource: str | None
    reserved: int
    nominal: int
    borrow: bool  # in a cohort: it would borrow (not a refusal)
    text: str  # "ClusterQueue team-a-cq's nominal nvidia.com/gpu 4 is used 4/4"


def _short(rows: list[FlavorResource], amount: int) -> bool:
    return bool(rows) and all(r.reserved + amount > r.nominal for r in rows)


def queue_refusal(store: QueueStore, namespace: str, queue: str,
                  requests: Mapping[str, int]) -> QueueRefusal | None:
    """None when the queue has room (or kubeview cannot tell: no such queue read); otherwise why not."""
    local = store.local_queue(namespace, queue)
    if local is None:
        if KIND_LOCAL_QUEUE in store.listed:
            return QueueRefusal(queue, None, None, 0, 0, False,
                                f"LocalQueue {queue} doesn't exist in namespace {namespace}")
        return None
    cq = store.cluster_queue(local.cluster_queue)
    if cq is None:
        if KIND_CLUSTER_QUEUE not in store.listed:
            return None
        return QueueRefusal(queue, local.cluster_queue, None, 0, 0, False,
                            f"ClusterQueue {local.cluster_queue} doesn't exist")
    for resource, amount in sorted(requests.items()):
        rows = cq.of(resource)
        if resource == "pods" and not rows:
            continue
        if amount and not rows:  # Kueue's words (flavorassigner.go)
            return QueueRefusal(queue, cq.name, resource, 0, 0, False,
                                f"ClusterQueue {cq.name}: resource {resource} unavailable in ClusterQueue")
        if not amount or not _short(rows, amount):
            continue
        reserved, nominal = cq.total(resource)
        figure = f"{amount_text(resource, reserved)}/{amount_text(resource, nominal)}"
        text = f"ClusterQueue {cq.name}'s nominal {resource} {amount_text(resource, nominal)} " \
               f"is used {figure}"
        if cq.cohort:
            text += f" (it may borrow from cohort {cq.cohort})"
        return QueueRefusal(queue, cq.name, resource, reserved, nominal, bool(cq.cohort), text)
    return None
