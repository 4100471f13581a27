"""The model's autoscaling store (`model.autoscaling`): the objects the autoscalers write, folded in.

Kinds (rows in `ClusterModel.kinds`, optional in every source: absent CRDs, a 403 or no ConfigMap are
one line in `model.unavailable`, never fatal):
- `KARPENTER_NODEPOOL` ("karpenter.NodePool", karpenter.sh/v1 NodePool): limits, status.resources,
  conditions;
- `KARPENTER_NODECLAIM` ("karpenter.NodeClaim", karpenter.sh/v1 NodeClaim): launched / registered /
  initialized conditions, capacity, the nodepool it belongs to;
- `CA_STATUS` ("ca.Status", the ConfigMap kube-system/cluster-autoscaler-status that Cluster
  Autoscaler writes: per node group health, min/max/target size, scale-up state, backoff, errors).
The autoscalers' Events (TriggeredScaleUp, NotTriggerScaleUp, Karpenter's Nominated and
FailedScheduling) come through the model's EventLog (kind "Event"); `pod_wait` reads them there.
"""

from __future__ import annotations

KARPENTER_NODEPOOL = "karpenter.NodePool"
KARPENTER_NODECLAIM = "karpenter.NodeClaim"
CA_STATUS = "ca.Status"
AUTOSCALING_KINDS = (KARPENTER_NODEPOOL, KARPENTER_NODECLAIM, CA_STATUS)

# The interface every consumer codes against (the TUI, snapshot, fit, the header):
#
# class AutoscalingStore:                       # a ManyKinds store (model/kinds.py), model.autoscaling
#     version: int                              # bumped on every change
#     def put(self, kind: str, obj: dict) -> bool
#     def delete(self, kind: str, obj: dict) -> bool
#     def replace(self, kind: str, objects: Iterable[dict]) -> object
#     def groups(self) -> list[NodeGroup]       # sorted by (autoscaler, name); cached per version
#     def group(self, key: tuple[str, str]) -> NodeGroup | None
#     def nodes_of(self, key, nodes: Mapping[str, NodeView]) -> list[str]   # node names in the group
#     def nodeclaims(self, pool: str) -> list[NodeClaimView]
#
# def pod_wait(pod: PodView, events: list[EventView], groups: list[NodeGroup], now: float) -> PodWait
#     (model/autoscaling/waits.py; ClusterModel.pod_wait(key) wraps it with the model's own events)
