"""Gang objects for the gated plane (scheduling.k8s.io/v1beta1, Kubernetes 1.37), as plain dicts.

The `kubernetes` Python client (v37) has no model for Workload, PodGroup, `Pod.spec.schedulingGroup`
or `Job.spec.scheduling`, and its V1Pod would drop the field on create, so these go through the
client as dicts (the client sends a dict as it is) and are read back as raw JSON. Field names are
1.37's (k8s.io/api@v0.37.2 scheduling/v1beta1, core/v1 PodSchedulingGroup, batch/v1
JobSchedulingConfiguration).
"""

from __future__ import annotations

import json

from kubernetes import client

GROUP, VERSION = "scheduling.k8s.io", "v1beta1"
POOL_LABEL = "pool"


def workload(name: str, min_count: int, template: str = "workers") -> dict:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Workload", "metadata": {"name": name},
            "spec": {"podGroupTemplates": [{"name": template, "schedulingPolicy": {"gang": {"minCount": min_count}}}]}}


def pod_group(name: str, workload_name: str, min_count: int, template: str = "workers") -> dict:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"workloadRef": {"workloadName": workload_name, "templateName": template},
                     "schedulingPolicy": {"gang": {"minCount": min_count}}}}


def member(name: str, group: str | None, gpus: int, pool: str, labels: dict[str, str] | None = None,
           scheduler: str | None = None, annotations: dict[str, str] | None = None) -> dict:
    """A pod asking `gpus` nvidia.com/gpu on nodes labelled pool=`pool`, in PodGroup `group`."""
    res = {"requests": {"cpu": "100m", "nvidia.com/gpu": str(gpus)}, "limits": {"nvidia.com/gpu": str(gpus)}}
    spec: dict = {"containers": [{"name": "train", "image": "registry.k8s.io/pause:3.10", "resources": res}],
                  "nodeSelector": {POOL_LABEL: pool}, "terminationGracePeriodSeconds": 0}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if scheduler:
        spec["schedulerName"] = scheduler
    meta: dict = {"name": name, "labels": dict(labels or {})}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def gang_job(name: str, parallelism: int, min_count: int, gpus: int, pool: str) -> dict:
    """A Job that asks for a gang itself (`spec.scheduling`, gate WorkloadWithJob): the Job controller
    makes the Workload and PodGroup and puts its pods in the group. kwok completes a Job's pods
    (Succeeded) about a second after they run."""
    template = member("unused", None, gpus, pool)
    template["spec"]["restartPolicy"] = "Never"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"parallelism": parallelism, "completions": parallelism, "backoffLimit": 0,
                     "scheduling": {"schedulingPolicy": {"gang": {"minCount": min_count}}},
                     "template": {"metadata": {"labels": {"job": name}}, "spec": template["spec"]}}}


def create_gang(api_client: client.ApiClient, namespace: str, name: str, size: int, min_count: int, gpus: int,
                pool: str) -> list[str]:
    """Workload `name`, PodGroup `name-workers`, pods `name-0..size-1` labelled gang=`name`."""
    custom = client.CustomObjectsApi(api_client)
    core = client.CoreV1Api(api_client)
    custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "workloads", workload(name, min_count))
    custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "podgroups",
                                           pod_group(f"{name}-workers", name, min_count))
    names = [f"{name}-{i}" for i in range(size)]
    for pod in names:
        core.create_namespaced_pod(namespace, member(pod, f"{name}-workers", gpus, pool, {"gang": name}))
    return names


def raw_pods(core: client.CoreV1Api, namespace: str, selector: str = "") -> list[dict]:
    """The pods as the server sends them (the client's models would drop schedulingGroup)."""
    return json.loads(core.list_namespaced_pod(namespace, label_selector=selector, _preload_content=False).data)["items"]


def scheduled_condition(pod: dict) -> dict | None:
    return next((c for c in pod.get("status", {}).get("conditions", []) if c["type"] == "PodScheduled"), None)


def group_condition(group: dict) -> dict | None:
    return next((c for c in group.get("status", {}).get("conditions", [])
                 if c["type"] == "PodGroupInitiallyScheduled"), None)
