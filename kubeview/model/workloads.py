"""Workloads (ReplicaSet, Deployment, StatefulSet) as the TUI shows and scales them.

Only what an operator needs to act: how many replicas were asked for and how many are ready. The
field names of the API differ a little between kinds; this is the one place that knows.
"""

from __future__ import annotations

from dataclasses import dataclass

WORKLOAD_KINDS = ("ReplicaSet", "Deployment", "StatefulSet")


@dataclass(slots=True)
class WorkloadView:
    kind: str  # "ReplicaSet" | "Deployment" | "StatefulSet"
    namespace: str
    name: str
    desired: int  # spec.replicas (the API defaults it to 1)
    ready: int  # status.readyReplicas (absent = 0)
    current: int  # status.replicas: pods that exist, ready or not
    available: int  # status.availableReplicas
    selector: dict[str, str]  # spec.selector.matchLabels
    owner: tuple[str, str] | None  # controller (kind, name): a Deployment for its ReplicaSets
    resource_version: str = ""

    @classmethod
    def from_api(cls, kind: str, obj: dict) -> WorkloadView:
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        owner = next(
            ((o.get("kind", ""), o.get("name", "")) for o in meta.get("ownerReferences") or [] if o.get("controller")),
            None,
        )
        replicas = spec.get("replicas")
        return cls(
            kind=kind,
            namespace=meta.get("namespace", ""),
            name=meta["name"],
            desired=1 if replicas is None else int(replicas),
            ready=int(status.get("readyReplicas") or 0),
            current=int(status.get("replicas") or 0),
            available=int(status.get("availableReplicas") or 0),
            selector=dict((spec.get("selector") or {}).get("matchLabels") or {}),
            owner=owner,
            resource_version=meta.get("resourceVersion", ""),
        )

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)
