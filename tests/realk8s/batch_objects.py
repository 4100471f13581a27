"""KAI-Scheduler, Kueue and Volcano objects as their controllers would write them, for
scripts/record-batch-schedulers.py (plain dicts in each project's published API types).

None of these schedulers runs on the plane: the specs are what a user (or KAI's podgrouper, Kueue's
job reconciler) creates, and the statuses are what each scheduler's own code writes (the messages and
reasons are taken from their sources: KAI's job fit errors, Kueue v0.17's scheduler and TAS snapshot,
Volcano's gang plugin), written by us through the API server, which validates them against the
installed CRDs' schemas.
"""

from __future__ import annotations

NOW = "2026-11-27T02:40:00Z"
HOLD = "kubeview.test/fate"  # kwok-stages.yaml: a Job's pod with fate=hold stays Running
QTY = {"cpu": "100m"}


def pod(name: str, gpus: int, pool: str, scheduler: str, labels: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None) -> dict:
    res = {"requests": {**QTY, "nvidia.com/gpu": str(gpus)}, "limits": {"nvidia.com/gpu": str(gpus)}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": dict(labels or {}), "annotations": dict(annotations or {})},
            "spec": {"schedulerName": scheduler, "nodeSelector": {"pool": pool}, "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "train", "image": "registry.k8s.io/pause:3.10", "resources": res}]}}


# --- KAI-Scheduler (scheduling.run.ai) -----------------------------------------------------------
KAI = ("scheduling.run.ai", "v2alpha2")


def kai_queue(name: str, parent: str | None, gpu_quota: float, gpu_limit: float) -> dict:
    spec: dict = {"displayName": name, "resources": {
        "gpu": {"quota": gpu_quota, "limit": gpu_limit, "overQuotaWeight": 1},
        "cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
        "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1}}}
    if parent:
        spec["parentQueue"] = parent
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": name}, "spec": spec}


def kai_pod_group(name: str, queue: str, min_member: int, sub_groups: list[dict] | None = None) -> dict:
    spec: dict = {"minMember": min_member, "queue": queue, "priorityClassName": "train",
                  "preemptibility": "preemptible", "markUnschedulable": True, "schedulingBackoff": 1}
    if sub_groups:
        spec["subGroups"] = sub_groups
    return {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup", "metadata": {"name": name}, "spec": spec}


def kai_member(name: str, group: str, queue: str, gpus: int, pool: str, sub_group: str | None = None) -> dict:
    """What KAI's podgrouper leaves on a pod: annotation pod-group-name, label kai.scheduler/queue."""
    labels = {"kai.scheduler/queue": queue, "app": group}
    if sub_group:
        labels["kai.scheduler/subgroup-name"] = sub_group
    return pod(name, gpus, pool, "kai-scheduler", labels, {"pod-group-name": group})


def kai_unschedulable(pending: int, placed: int, need: int) -> dict:
    """The status KAI's scheduler writes for a gang it cannot place (job fit error, node pool default)."""
    msg = (f"Resources were found for {placed} pods while {need} are required for gang scheduling. "
           "Additional pods cannot be scheduled due to: node(s) didn't have enough resources: GPUs")
    return {"pending": pending, "schedulingConditions": [{
        "type": "UnschedulableOnNodePool", "nodePool": "default", "status": "True", "transitionID": "0",
        "lastTransitionTime": NOW, "reason": "Unschedulable", "message": msg,
        "reasons": [{"reason": "Unschedulable", "message": msg}]}],
        "resourcesStatus": {"requested": {"nvidia.com/gpu": str(2 * need), "cpu": f"{100 * need}m"}}}


def kai_over_limit(queue: str) -> dict:
    msg = f"Non-preemptible workload is over quota in queue {queue}"
    return {"pending": 2, "schedulingConditions": [{
        "type": "UnschedulableOnNodePool", "nodePool": "default", "status": "True", "transitionID": "0",
        "lastTransitionTime": NOW, "reason": "NonPreemptibleOverQuota", "message": msg,
        "reasons": [{"reason": "NonPreemptibleOverQuota", "message": msg, "details": {"queueDetails": {
            "name": queue, "queueDeservedResources": {"nvidia.com/gpu": "2"},
            "queueAllocatedNonPreemptibleResources": {"nvidia.com/gpu": "2"},
            "podGroupRequestedNonPreemptibleResources": {"nvidia.com/gpu": "2"}}}}]}]}


# --- Kueue (kueue.x-k8s.io/v1beta2) --------------------------------------------------------------
KUEUE = ("kueue.x-k8s.io", "v1beta2")


def kueue_setup(pool: str) -> list[tuple[str, dict]]:
    """(plural, object) for the Topology, ResourceFlavor, ClusterQueue; the LocalQueue is namespaced."""
    v = "kueue.x-k8s.io/v1beta2"
    return [
        ("topologies", {"apiVersion": v, "kind": "Topology", "metadata": {"name": "default"},
                        "spec": {"levels": [{"nodeLabel": "kubernetes.io/hostname"}]}}),
        ("resourceflavors", {"apiVersion": v, "kind": "ResourceFlavor", "metadata": {"name": "gpu-a"},
                             "spec": {"nodeLabels": {"pool": pool}, "topologyName": "default"}}),
        ("clusterqueues", {"apiVersion": v, "kind": "ClusterQueue", "metadata": {"name": "gpu-cq"},
                           "spec": {"namespaceSelector": {}, "resourceGroups": [{
                               "coveredResources": ["cpu", "nvidia.com/gpu"],
                               "flavors": [{"name": "gpu-a", "resources": [
                                   {"name": "cpu", "nominalQuota": "16"},
                                   {"name": "nvidia.com/gpu", "nominalQuota": "8"}]}]}]}}),
    ]


def local_queue(name: str) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": name},
            "spec": {"clusterQueue": "gpu-cq"}}


def kueue_job(name: str, parallelism: int, gpus: int, pool: str, queue: str) -> dict:
    """A Job as Kueue's webhook leaves it: suspended, queue-name label."""
    template = pod("unused", gpus, pool, "default-scheduler")
    spec = dict(template["spec"], restartPolicy="Never")
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": queue}},
            "spec": {"parallelism": parallelism, "completions": parallelism, "suspend": True,
                     "template": {"metadata": {"labels": {"job": name, HOLD: "hold"}}, "spec": spec}}}


def kueue_workload(job: dict, job_uid: str, queue: str, required_topology: str | None = None) -> dict:
    """The Workload Kueue's job reconciler makes for `job` (name job-NAME-<hash>, owned by it)."""
    name = job["metadata"]["name"]
    pod_set: dict = {"name": "main", "count": job["spec"]["parallelism"], "template": job["spec"]["template"]}
    if required_topology:
        pod_set["topologyRequest"] = {"required": required_topology}
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": f"job-{name}-{job_uid[:5]}", "labels": {"kueue.x-k8s.io/job-uid": job_uid},
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": job_uid,
                                              "controller": True, "blockOwnerDeletion": True}]},
            "spec": {"queueName": queue, "podSets": [pod_set], "active": True}}


def _condition(kind: str, status: str, reason: str, message: str) -> dict:
    return {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": NOW,
            "observedGeneration": 1}


def kueue_pending(count: int, gpus: int, fit: int) -> dict:
    """QuotaReserved=False as Kueue v0.17's scheduler writes it (reason "Pending", pkg/scheduler/
    scheduler.go) with the TAS snapshot's message (pkg/cache/scheduler/tas_flavor_snapshot.go)."""
    msg = (f'couldn\'t assign flavors to pod set main: topology "default" allows to fit only {fit} out of '
           f"{count} pod(s)")
    return {"conditions": [_condition("QuotaReserved", "False", "Pending", msg)],
            "resourceRequests": [{"name": "main", "resources": {"cpu": f"{100 * count}m",
                                                                "nvidia.com/gpu": str(gpus * count)}}]}


def kueue_admitted(count: int, gpus: int, node: str) -> dict:
    """Admitted on flavor gpu-a, all pods in one hostname domain (TAS assigns every podset of a
    topology flavor)."""
    return {"admission": {"clusterQueue": "gpu-cq", "podSetAssignments": [{
                "name": "main", "count": count, "flavors": {"cpu": "gpu-a", "nvidia.com/gpu": "gpu-a"},
                "resourceUsage": {"cpu": f"{100 * count}m", "nvidia.com/gpu": str(gpus * count)},
                "topologyAssignment": {"levels": ["kubernetes.io/hostname"], "slices": [{
                    "domainCount": 1, "valuesPerLevel": [{"universal": node}], "podCounts": {"universal": count}}]}}]},
            "conditions": [_condition("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue gpu-cq"),
                           _condition("Admitted", "True", "Admitted", "The workload is admitted")],
            "resourceRequests": [{"name": "main", "resources": {"cpu": f"{100 * count}m",
                                                                "nvidia.com/gpu": str(gpus * count)}}]}


# --- Volcano (scheduling.volcano.sh/v1beta1) -----------------------------------------------------
VOLCANO = ("scheduling.volcano.sh", "v1beta1")


def volcano_queue(name: str, gpus: int) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
            "spec": {"weight": 1, "reclaimable": True, "capability": {"nvidia.com/gpu": str(gpus)}}}


def volcano_pod_group(name: str, queue: str, min_member: int, gpus: int) -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"minMember": min_member, "queue": queue,
                     "minResources": {"nvidia.com/gpu": str(gpus * min_member), "cpu": f"{100 * min_member}m"}}}


def volcano_member(name: str, group: str, gpus: int, pool: str) -> dict:
    """Volcano's group annotation (scheduling.k8s.io/group-name, as vcjob's controller sets it)."""
    return pod(name, gpus, pool, "volcano", {"app": group}, {"scheduling.k8s.io/group-name": group})


def volcano_status(phase: str, min_member: int, running: int = 0) -> dict:
    """Volcano's gang plugin's condition texts (pkg/scheduler/plugins/gang)."""
    status: dict = {"phase": phase}
    if running:
        status["running"] = running
    if phase == "Pending":
        status["conditions"] = [{
            "type": "Unschedulable", "status": "True", "transitionID": "1", "lastTransitionTime": NOW,
            "reason": "NotEnoughResources",
            "message": f"{min_member}/{min_member} tasks in gang unschedulable: pod group is not ready, "
                       f"{min_member} Pending, {min_member} minAvailable; Pending: {min_member} Unschedulable"}]
    elif phase == "Running":
        status["conditions"] = [{"type": "Scheduled", "status": "True", "transitionID": "2", "lastTransitionTime": NOW,
                                 "reason": "tasks in gang are ready to be scheduled", "message": ""}]
    return status
