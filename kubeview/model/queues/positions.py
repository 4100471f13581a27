"""Kueue's queue positions, as its visibility API reports them (pure: parsing and words; no I/O).

Kueue v0.17 tells where a pending Workload stands only through its on-demand visibility API, an aggregated
API server inside the manager (`visibility.kueue.x-k8s.io/v1beta2`): `GET .../clusterqueues/<cq>/
pendingworkloads` answers a `PendingWorkloadsSummary` whose items each carry `positionInClusterQueue` and
`positionInLocalQueue`, counted from 0 (apis/visibility/v1beta2/types.go). kubeview shows those numbers and
nothing it works out itself; where the API is not served or refuses, there are none and `Positions.
unavailable` says why once. The source's poller (cluster/kube/queue_positions.py) asks, `read_summary` reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

API = "visibility.kueue.x-k8s.io/v1beta2"
NOT_SERVED = "positions: Kueue's visibility API is not served"

Key = tuple[str, str]  # (namespace, name) of a Workload


@dataclass(frozen=True, slots=True)
class Position:
    """Where Kueue says a pending Workload stands: 0-based, as its visibility API counts (`in_local_queue`
    None: Kueue said only the ClusterQueue's place, as v1beta1's deprecated `pendingWorkloadsStatus` did)."""

    cluster_queue: str
    in_cluster_queue: int
    local_queue: str = ""
    in_local_queue: int | None = None

    def words(self) -> str:
        """`3rd in vision (2nd in training)`."""
        local = "" if self.in_local_queue is None else f" ({ordinal(self.in_local_queue + 1)} in {self.local_queue})"
        return f"{ordinal(self.in_cluster_queue + 1)} in {self.cluster_queue}{local}"


@dataclass(frozen=True, slots=True)
class Positions:
    """One round of the poller: per ClusterQueue asked, its pending Workloads' positions; `unavailable`
    why there are none (the API not served, a 403, an error), None when every queue asked answered."""

    by_queue: Mapping[str, Mapping[Key, Position]] = field(default_factory=dict)
    unavailable: str | None = None


@dataclass(frozen=True, slots=True)
class QueuePositions:
    """The source event of one round (a `SourceEvent`, model/events.py): replaces the last round's."""

    positions: Positions


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 102nd."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def read_summary(cluster_queue: str, doc: object) -> dict[Key, Position]:
    """The positions in a `PendingWorkloadsSummary` (ValueError: not that shape, so nothing is guessed)."""
    items = doc.get("items") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        raise ValueError(f"ClusterQueue {cluster_queue}: not a PendingWorkloadsSummary (no items)")
    out: dict[Key, Position] = {}
    for item in items:
        meta = item.get("metadata") if isinstance(item, dict) else None
        if not isinstance(meta, dict):
            raise ValueError(f"ClusterQueue {cluster_queue}: a pending workload without metadata")
        ns, name = meta.get("namespace"), meta.get("name")
        in_cq, in_lq = item.get("positionInClusterQueue", 0), item.get("positionInLocalQueue", 0)
        local = item.get("localQueueName", "")
        if not (isinstance(ns, str) and isinstance(name, str) and isinstance(local, str)
                and type(in_cq) is int and type(in_lq) is int):
            raise ValueError(f"ClusterQueue {cluster_queue}: a pending workload of another shape: {item!r:.200}")
        out[(ns, name)] = Position(cluster_queue, in_cq, local, in_lq)
    return out


def pending_queues(objects: Mapping[str, Mapping]) -> list[str]:
    """The ClusterQueues whose status counts pending Workloads (name -> object as the API server sent it),
    by name: the ones worth asking Kueue about."""
    out = []
    for name, obj in objects.items():
        status = obj.get("status") if isinstance(obj, dict) else None
        pending = status.get("pendingWorkloads") if isinstance(status, dict) else None
        if type(pending) is int and pending > 0:
            out.append(name)
    return sorted(out)



