"""The autoscalers' objects on a real cluster: which are served, and how each is listed.

Karpenter's `karpenter.sh/v1` NodePool and NodeClaim are custom resources: read only where discovery
lists them with `list` and `watch` (asked once, like the DRA kinds), cluster-wide through raw.RawApi
paths. Cluster Autoscaler's status is one ConfigMap, kube-system/cluster-autoscaler-status (CA's
clusterstate/utils/status.go), read as a list in kube-system with the field selector
`metadata.name=cluster-autoscaler-status`, so the read role can be narrowed to that one name
(`resourceNames`) and no other ConfigMap is read. All three are optional kinds: a 403 or a failure is
one line in `Scope.unavailable` ("node groups are not shown: ...", model/kinds.py), never fatal; a
cluster with no autoscaler has none of them and shows no node groups.
"""

from __future__ import annotations

from kubernetes import client

from kubeview.cluster.kube.dra import served_kinds
from kubeview.model.autoscaling.ca_status import STATUS_NAME, STATUS_NAMESPACE
from kubeview.model.autoscaling.store import CA_STATUS, KARPENTER_NODECLAIM, KARPENTER_NODEPOOL

KARPENTER_API = "KarpenterV1Api"  # raw.PREFIX: /apis/karpenter.sh/v1
# kind -> (plural for messages, the API's kind name in discovery, the RawApi list method)
KARPENTER_KINDS = {
    KARPENTER_NODEPOOL: ("nodepools.karpenter.sh", "NodePool", "list_node_pool"),
    KARPENTER_NODECLAIM: ("nodeclaims.karpenter.sh", "NodeClaim", "list_node_claim"),
}
CA_SELECTOR = f"metadata.name={STATUS_NAME}"


def served_autoscaling_kinds(api_client: client.ApiClient, timeout: float = 10.0) -> tuple[str, ...]:
    """The autoscaling kinds to read: CA's status always (ConfigMaps are core), Karpenter's where
    discovery serves them. A network failure raises (see dra.served_dra_kinds)."""
    served = served_kinds(KARPENTER_API, api_client, timeout)
    karpenter = tuple(kind for kind, (_, api_kind, _) in KARPENTER_KINDS.items()
                      if {"list", "watch"} <= served.get(api_kind, set()))
    return (*karpenter, CA_STATUS)


__all__ = ["CA_SELECTOR", "KARPENTER_API", "KARPENTER_KINDS", "STATUS_NAMESPACE", "served_autoscaling_kinds"]
