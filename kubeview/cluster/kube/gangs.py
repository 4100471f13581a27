"""Which gang APIs the API server serves, asked once through discovery, and how to list them.

Four groups, each optional (most clusters serve none of them, a GPU cluster usually one):
upstream `scheduling.k8s.io` Workload and PodGroup (v1beta1 in 1.37 with the `GenericWorkload`
gate, else v1alpha2 on a 1.36 cluster), KAI-Scheduler `scheduling.run.ai/v2alpha2` PodGroup, Kueue
`kueue.x-k8s.io` Workload (v1beta2, else v1beta1) and Volcano `scheduling.volcano.sh/v1beta1`
PodGroup; and Kueue's ClusterQueue, LocalQueue and ResourceFlavor (the same group and versions, read by
model/queues/). A group version is used when discovery lists the resource with `list` and `watch`; the
first served version of a group wins. They are listed cluster-wide through the generic custom
objects client (the same paths serve built-in groups), under the kinds of `model/gangs/messages.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubernetes import client

from kubeview.cluster.kube.raw import read_optional
from kubeview.model.gangs.messages import KIND_KAI, KIND_KUEUE, KIND_POD_GROUP, KIND_VOLCANO, KIND_WORKLOAD
from kubeview.model.gpus.domains import KIND_COMPUTE_DOMAIN
from kubeview.model.queues.objects import KIND_CLUSTER_QUEUE, KIND_FLAVOR, KIND_LOCAL_QUEUE


@dataclass(frozen=True, slots=True)
class GangApi:
    kind: str  # the model's kind string
    group: str
    version: str
    plural: str

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}"


# (kind, group, versions by preference, plural)
CANDIDATES = (
    (KIND_WORKLOAD, "scheduling.k8s.io", ("v1beta1", "v1alpha2"), "workloads"),
    (KIND_POD_GROUP, "scheduling.k8s.io", ("v1beta1", "v1alpha2"), "podgroups"),
    (KIND_KAI, "scheduling.run.ai", ("v2alpha2",), "podgroups"),
    (KIND_KUEUE, "kueue.x-k8s.io", ("v1beta2", "v1beta1"), "workloads"),
    (KIND_VOLCANO, "scheduling.volcano.sh", ("v1beta1",), "podgroups"),
    # Kueue's queues (model/queues/), read the same way: cluster-scoped or listed cluster-wide alike
    (KIND_CLUSTER_QUEUE, "kueue.x-k8s.io", ("v1beta2", "v1beta1"), "clusterqueues"),
    (KIND_LOCAL_QUEUE, "kueue.x-k8s.io", ("v1beta2", "v1beta1"), "localqueues"),
    (KIND_FLAVOR, "kueue.x-k8s.io", ("v1beta2", "v1beta1"), "resourceflavors"),
    # NVIDIA's DRA driver's ComputeDomains (NVLink domains, model/gpus/domains.py; docs/gpu-sources.md)
    (KIND_COMPUTE_DOMAIN, "resource.nvidia.com", ("v1beta1",), "computedomains"),
)


def served_gang_apis(api_client: client.ApiClient, timeout: float = 10.0) -> dict[str, GangApi]:
    """Kind -> the group version serving it with list and watch; kinds not served are left out. A
    network failure raises (see dra.served_dra_kinds)."""
    api = client.CustomObjectsApi(api_client)
    found: dict[tuple[str, str], dict[str, set[str]] | None] = {}
    out: dict[str, GangApi] = {}
    for kind, group, versions, plural in CANDIDATES:
        for version in versions:
            if (group, version) not in found:
                found[(group, version)] = _resources(api, group, version, timeout)
            verbs = (found[(group, version)] or {}).get(plural, set())
            if {"list", "watch"} <= verbs:
                out[kind] = GangApi(kind, group, version, plural)
                break
    return out


def _resources(api: client.CustomObjectsApi, group: str, version: str, timeout: float) -> dict[str, set[str]] | None:
    """Plural -> verbs of one group version, None when it is not served (404) or discovery failed."""
    body = read_optional(lambda: api.get_api_resources(group, version, _preload_content=False,
                                                       _request_timeout=(timeout, timeout)),
                         f"discovery of {group}/{version}", "its gangs are not shown")
    if body is None:
        return None
    return {r.get("name"): set(r.get("verbs") or ()) for r in body.get("resources") or ()
            if "/" not in (r.get("name") or "")}


def lister(api_client: client.ApiClient, gang: GangApi) -> Callable[..., object]:
    """The cluster-wide list (and, with `watch=True`, watch) call of one served gang kind."""
    api = client.CustomObjectsApi(api_client)

    def call(**kwargs: Any) -> object:  # the generated method's keyword arguments
        return api.list_cluster_custom_object(gang.group, gang.version, gang.plural, **kwargs)

    return call
