"""Karpenter's objects as kubeview reads them: karpenter.sh/v1 NodePool and NodeClaim.

Shapes from sigs.k8s.io/karpenter v1.15.0 (pkg/apis/v1/nodepool.go, nodepool_status.go,
nodeclaim_status.go): a NodePool has `spec.limits` (a ResourceList, "nodes" included),
`spec.template` (labels, requirements, taints of the nodes it makes) and `status.resources` (what
its nodes hold now, written by the nodepool.counter controller with cpu, memory, pods,
ephemeral-storage and nodes always present) and `status.nodes`; a NodeClaim has the label
`karpenter.sh/nodepool`, conditions Launched / Registered / Initialized (their reasons and messages:
`LaunchFailed`, `NodeNotFound` "Node not registered with cluster", ...) and `status.capacity` /
`status.allocatable` once launched. The nodes a NodePool made carry `karpenter.sh/nodepool=<name>`.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeview.model.kube_events import parse_time
from kubeview.model.quantity import QuantityError, resource_dict

NODEPOOL_LABEL = "karpenter.sh/nodepool"  # on NodeClaims and on the nodes they became
LAUNCHED, REGISTERED, INITIALIZED = "Launched", "Registered", "Initialized"


@dataclass(frozen=True, slots=True)
class Condition:
    type: str
    status: str  # True / False / Unknown
    reason: str
    message: str
    since: float | None  # lastTransitionTime


def conditions_of(status: dict) -> dict[str, Condition]:
    out: dict[str, Condition] = {}
    for c in status.get("conditions") or ():
        kind = str(c.get("type") or "")
        out[kind] = Condition(kind, str(c.get("status") or ""), str(c.get("reason") or ""),
                              str(c.get("message") or ""), parse_time(c.get("lastTransitionTime")))
    return out


def amounts(raw: object) -> dict[str, int]:
    """A ResourceList in model units; one bad quantity drops only itself."""
    if not isinstance(raw, dict):
        return {}
    try:
        return resource_dict(raw)
    except (QuantityError, ValueError, TypeError):
        out: dict[str, int] = {}
        for name, q in raw.items():
            try:
                out.update(resource_dict({name: q}))
            except (QuantityError, ValueError, TypeError):
                continue
        return out


@dataclass(frozen=True, slots=True)
class NodePoolView:
    name: str
    limits: dict[str, int]  # spec.limits, model units ("nodes" a node count)
    resources: dict[str, int]  # status.resources
    nodes: int | None  # status.nodes
    conditions: dict[str, Condition]
    labels: dict[str, str]  # what its nodes will carry: template labels, single-valued In requirements
    taints: tuple[dict, ...]  # spec.template.spec.taints
    created: float | None
    deleting: bool = False

    @classmethod
    def from_api(cls, obj: dict) -> NodePoolView:
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        name = str(meta.get("name") or "")
        template = spec.get("template") or {}
        tspec = template.get("spec") or {}
        labels = {str(k): str(v) for k, v in ((template.get("metadata") or {}).get("labels") or {}).items()}
        for req in tspec.get("requirements") or ():
            values = req.get("values") or []
            if req.get("operator") == "In" and len(values) == 1 and req.get("key"):
                labels.setdefault(str(req["key"]), str(values[0]))
        labels[NODEPOOL_LABEL] = name
        nodes = status.get("nodes")
        return cls(name=name, limits=amounts(spec.get("limits")), resources=amounts(status.get("resources")),
                   nodes=int(nodes) if isinstance(nodes, int) else None, conditions=conditions_of(status),
                   labels=labels, taints=tuple(t for t in tspec.get("taints") or () if isinstance(t, dict)),
                   created=parse_time(meta.get("creationTimestamp")),
                   deleting=bool(meta.get("deletionTimestamp")))


@dataclass(frozen=True, slots=True)
class NodeClaimView:
    name: str
    pool: str  # label karpenter.sh/nodepool ("" when it has none)
    node: str  # status.nodeName once registered
    capacity: dict[str, int]
    allocatable: dict[str, int]
    conditions: dict[str, Condition]
    created: float | None
    deleting: bool = False

    @classmethod
    def from_api(cls, obj: dict) -> NodeClaimView:
        meta, status = obj.get("metadata") or {}, obj.get("status") or {}
        return cls(name=str(meta.get("name") or ""),
                   pool=str((meta.get("labels") or {}).get(NODEPOOL_LABEL) or ""),
                   node=str(status.get("nodeName") or ""), capacity=amounts(status.get("capacity")),
                   allocatable=amounts(status.get("allocatable")), conditions=conditions_of(status),
                   created=parse_time(meta.get("creationTimestamp")),
                   deleting=bool(meta.get("deletionTimestamp")))

    def is_true(self, kind: str) -> bool:
        c = self.conditions.get(kind)
        return c is not None and c.status == "True"

    @property
    def stage(self) -> str:
        """Where it is on its way to a node: launching, registering, initializing, ready or deleting."""
        if self.deleting:
            return "deleting"
        if not self.is_true(LAUNCHED):
            return "launching"
        if not self.is_true(REGISTERED):
            return "registering"
        if not self.is_true(INITIALIZED):
            return "initializing"
        return "ready"

    @property
    def failure(self) -> Condition | None:
        """The condition that says why it is stuck: one False, or Launched Unknown for a reason other than
        operatorpkg's initial AwaitingReconciliation (LaunchFailed with the error's words, or a cloud
        provider's CreateError reason); Registered / Initialized Unknown is "not yet" (NodeNotFound
        "Node not registered with cluster", NodeNotReady, StartupTaintsExist, ...)."""
        for kind in (LAUNCHED, REGISTERED, INITIALIZED):
            c = self.conditions.get(kind)
            if c is None or c.status == "True":
                continue
            if c.status == "False" or (kind == LAUNCHED and c.reason not in ("", AWAITING)):
                return c
            return None
        return None


# operatorpkg status.ConditionSet.SetUnknown's reason: a condition nobody has reconciled yet
# (github.com/awslabs/operatorpkg status/condition_set.go); karpenter v1.15.0
# pkg/controllers/nodeclaim/lifecycle/launch.go sets Launched Unknown "LaunchFailed" with the error
AWAITING = "AwaitingReconciliation"
