"""Which node belongs to which node group, and what a node of a group offers.

A Karpenter node carries `karpenter.sh/nodepool=<pool>`. Cluster Autoscaler names its groups after the
cloud's (a MIG, an ASG, a kwok group) and labels nothing itself, so a node is a member of CA group G
when it says G in one of the places the clouds and CA's kwok provider put it: the kwok provider's
annotation `cluster-autoscaler.kwok.nodegroup/name` (kubernetes/autoscaler
cluster-autoscaler/cloudprovider/kwok/kwok_constants.go, NGNameAnnotation), or the value of a
node-group label in `GROUP_LABELS` equal to G. The embedded cluster labels its nodes
`kubeview.io/node-group`.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeview.model.allocation import GPU
from kubeview.model.autoscaling.karpenter import NODEPOOL_LABEL, amounts
from kubeview.model.quantity import QuantityError, to_units

KWOK_GROUP_ANNOTATION = "cluster-autoscaler.kwok.nodegroup/name"
EMBEDDED_GROUP_LABEL = "kubeview.io/node-group"
GROUP_LABELS = (
    EMBEDDED_GROUP_LABEL,
    "kwok-nodegroup",  # CA's kwok provider samples (fromNodeLabelKey)
    "eks.amazonaws.com/nodegroup",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
    "agentpool",
)
# labels that name one node, not what every node of its group carries
OWN_LABELS = frozenset({"kubernetes.io/hostname", "karpenter.sh/nodeclaim"})


@dataclass(frozen=True, slots=True)
class GroupNode:
    """What the autoscaling store keeps of a Node: enough to place it in a group and say what it offers."""

    name: str
    labels: dict[str, str]
    kwok_group: str  # the kwok provider's annotation ("" when absent)
    taints: tuple[dict, ...]
    allocatable_raw: dict  # status.allocatable as the API wrote it (parsed when a template is asked for)
    gpus: int

    @classmethod
    def from_api(cls, obj: dict) -> GroupNode:
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        raw = status.get("allocatable") or {}
        try:
            gpus = to_units(GPU, raw[GPU]) if GPU in raw else 0
        except (QuantityError, ValueError, TypeError):
            gpus = 0
        return cls(name=str(meta.get("name") or ""), labels=dict(meta.get("labels") or {}),
                   kwok_group=str((meta.get("annotations") or {}).get(KWOK_GROUP_ANNOTATION) or ""),
                   taints=tuple(t for t in spec.get("taints") or () if isinstance(t, dict)),
                   allocatable_raw=dict(raw), gpus=gpus)

    @property
    def pool(self) -> str:
        return self.labels.get(NODEPOOL_LABEL, "")

    def ca_names(self) -> set[str]:
        """The CA group names this node may belong to (a group of another name ignores it)."""
        names = {self.labels[k] for k in GROUP_LABELS if self.labels.get(k)}
        if self.kwok_group:
            names.add(self.kwok_group)
        return names

    def template(self) -> dict[str, int]:
        return amounts(self.allocatable_raw)

    def group_labels(self) -> dict[str, str]:
        return {k: v for k, v in self.labels.items() if k not in OWN_LABELS}
