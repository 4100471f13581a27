"""Typed views of Node and Pod API objects (dicts as the API returns them, camelCase keys).

The rest of kubeview reads these, never the raw dicts: one place knows the API's shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubeview.model.gpus.dra import mapped_resources, pod_claim_names
from kubeview.model.pod_status import restarts as pod_restarts
from kubeview.model.quantity import resource_dict
from kubeview.model.requests import pod_amounts

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
    requests: dict[str, int]  # effective, scheduler's arithmetic, includes pods: 1 (shared: read-only)
    limits: dict[str, int]  # (shared between pods with the same container resources: read-only)
    containers: list[tuple[str, dict[str, int]]]  # per app container requests (read-only)
    restarts: int
    owner: tuple[str, str] | None  # (kind, name) of the controller
    deleting: bool
    pending_reason: str | None  # the scheduler's message when PodScheduled=False
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[dict] = field(default_factory=list)
    affinity: dict = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    resource_version: str = ""
    container_limits: list[tuple[str, dict[str, int]]] = field(default_factory=list)  # per app container
    uid: str = ""  # metadata.uid: tells a re-created pod of the same name from the old one
    # DRA (model/gpus/dra.py): the pod's ResourceClaims by name (the scheduler's extended-resource claim
    # first), and the extended resources that claim satisfies: left out of `requests`/`limits`,
    # because the GPU ledger counts them as the claim's devices
    claim_names: tuple[str, ...] = ()
    mapped: frozenset[str] = frozenset()
    pod_claims: tuple[str, ...] = ()  # spec.resourceClaims[].name: claims whose selectors kubeview does not evaluate
    priority: int = 0  # spec.priority (admission resolves priorityClassName into it): who may disrupt whom

    @classmethod
    def from_api(cls, obj: dict) -> PodView:
        """Hot path (150,000 pods per list, every watch event): no copies, requests cached by content."""
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        owner = None
        refs = meta.get("ownerReferences")
        if refs:
            for ref in refs:
                if ref.get("controller"):
                    owner = (ref.get("kind", ""), ref.get("name", ""))
                    break
        node = spec.get("nodeName") or None
        reason = None
        if node is None:  # only an unbound pod can carry the scheduler's PodScheduled=False
            for cond in status.get("conditions") or ():
                if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
                    reason = cond.get("message") or cond.get("reason") or "Unschedulable"
        restarts = pod_restarts(obj)
        requests, limits, containers, container_limits = pod_amounts(spec)
        claim_names: tuple[str, ...] = ()
        mapped: frozenset[str] = frozenset()
        pod_claims: tuple[str, ...] = ()
        if "resourceClaims" in spec or "extendedResourceClaimStatus" in status:
            pod_claims = tuple(c.get("name", "") for c in spec.get("resourceClaims") or ())
            ext, others = pod_claim_names(obj)
            claim_names = ((ext,) if ext else ()) + others
            mapped = mapped_resources(obj)
            if mapped:
                requests = {k: v for k, v in requests.items() if k not in mapped}
                limits = {k: v for k, v in limits.items() if k not in mapped}
        return cls(
            meta.get("namespace", ""),
            meta["name"],
            node,
            status.get("phase") or "Pending",
            requests,
            limits,
            containers,
            restarts,
            owner,
            "deletionTimestamp" in meta and bool(meta["deletionTimestamp"]),
            reason,
            spec.get("nodeSelector") or {},
            spec.get("tolerations") or [],
            spec.get("affinity") or {},
            meta.get("labels") or {},
            meta.get("resourceVersion", ""),
            container_limits,
            meta.get("uid", ""),
            claim_names,
            mapped,
            pod_claims,
            int(spec.get("priority") or 0),
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
