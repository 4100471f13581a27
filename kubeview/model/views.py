"""Typed views of Node and Pod API objects (dicts as the API returns them, camelCase keys).

The rest of kubeview reads these, never the raw dicts: one place knows the API's shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubeview.model.quantity import resource_dict
from kubeview.model.requests import effective, per_container

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


@dataclass(slots=True)
class NodeView:
    name: str
    labels: dict[str, str]
    taints: list[dict]
    unschedulable: bool
    conditions: dict[str, str]  # type -> status ("Ready" -> "True")
    capacity: dict[str, int]  # model units: cpu millicores, memory bytes, others plain
    allocatable: dict[str, int]
    resource_version: str = ""

    @classmethod
    def from_api(cls, obj: dict) -> NodeView:
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        return cls(
            name=meta["name"],
            labels=dict(meta.get("labels") or {}),
            taints=list(spec.get("taints") or []),
            unschedulable=bool(spec.get("unschedulable", False)),
            conditions={c.get("type", ""): c.get("status", "") for c in status.get("conditions") or []},
            capacity=resource_dict(status.get("capacity")),
            allocatable=resource_dict(status.get("allocatable")),
            resource_version=meta.get("resourceVersion", ""),
        )

    @property
    def ready(self) -> bool:
        return self.conditions.get("Ready") == "True"


@dataclass(slots=True)
class PodView:
    namespace: str
    name: str
    node: str | None  # spec.nodeName: bound when set
    phase: str
    requests: dict[str, int]  # effective, scheduler's arithmetic, includes pods: 1
    limits: dict[str, int]
    containers: list[tuple[str, dict[str, int]]]  # per app container requests
    restarts: int
    owner: tuple[str, str] | None  # (kind, name) of the controller
    deleting: bool
    pending_reason: str | None  # the scheduler's message when PodScheduled=False
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[dict] = field(default_factory=list)
    affinity: dict = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    resource_version: str = ""

    @classmethod
    def from_api(cls, obj: dict) -> PodView:
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        owner = next(
            ((o.get("kind", ""), o.get("name", "")) for o in meta.get("ownerReferences") or [] if o.get("controller")),
            None,
        )
        reason = None
        for cond in status.get("conditions") or []:
            if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
                reason = cond.get("message") or cond.get("reason") or "Unschedulable"
        return cls(
            namespace=meta.get("namespace", ""),
            name=meta["name"],
            node=spec.get("nodeName") or None,
            phase=status.get("phase", "Pending"),
            requests=effective(spec, "requests"),
            limits=effective(spec, "limits"),
            containers=per_container(spec, "requests"),
            restarts=sum(int(c.get("restartCount", 0)) for c in status.get("containerStatuses") or []),
            owner=owner,
            deleting=bool(meta.get("deletionTimestamp")),
            pending_reason=reason,
            node_selector=dict(spec.get("nodeSelector") or {}),
            tolerations=list(spec.get("tolerations") or []),
            affinity=dict(spec.get("affinity") or {}),
            labels=dict(meta.get("labels") or {}),
            resource_version=meta.get("resourceVersion", ""),
        )

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)

    @property
    def counts_on_node(self) -> bool:
        """Bound and not finished: the scheduler counts its requests against the node."""
        return self.node is not None and self.phase not in TERMINAL_PHASES

    @property
    def pending(self) -> bool:
        return self.node is None and self.phase not in TERMINAL_PHASES


def resources_of(obj_resources: dict | None) -> dict[str, int]:
    """Convenience for callers holding a raw ResourceList."""
    return resource_dict(obj_resources)
