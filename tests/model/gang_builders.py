"""Gang objects written by hand from the published API types (k8s.io/api v0.37.2 scheduling/v1beta1,
KAI-Scheduler v2alpha2, Kueue v1beta2, Volcano v1beta1), for the model tests; the recorded ones live
in tests/fixtures/k8s/gang (1.36) and gang137/, batch-schedulers/ (1.37 and the CRDs on the real plane)."""

from __future__ import annotations


def pod(name: str, ns: str = "train", node: str | None = None, phase: str | None = None, gpu: int = 1,
        group: str | None = None, annotations: dict | None = None, labels: dict | None = None,
        scheduled: tuple[str, str] | None = None) -> dict:
    spec: dict = {"containers": [{"name": "main", "resources": {"requests": {"cpu": "100m", "nvidia.com/gpu": str(gpu)},
                                                                "limits": {"nvidia.com/gpu": str(gpu)}}}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if node:
        spec["nodeName"] = node
    status: dict = {"phase": phase or ("Running" if node else "Pending")}
    if scheduled:
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": scheduled[0],
                                 "message": scheduled[1]}]
    meta: dict = {"name": name, "namespace": ns, "uid": f"uid-{name}", "resourceVersion": "1"}
    if annotations:
        meta["annotations"] = annotations
    if labels:
        meta["labels"] = labels
    return {"metadata": meta, "spec": spec, "status": status}


def v1beta1_workload() -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload",
            "metadata": {"name": "train", "namespace": "train", "resourceVersion": "10"},
            "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "train"},
                     "podGroupTemplates": [{"name": "workers", "schedulingPolicy": {"gang": {"minCount": 4}}}]}}


def v1beta1_pod_group(status: str = "False") -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": "train-workers", "namespace": "train", "resourceVersion": "11"},
            "spec": {"workloadRef": {"workloadName": "train", "templateName": "workers"},
                     "schedulingPolicy": {"gang": {"minCount": 4}}, "disruptionMode": {"all": {}},
                     "resourceClaims": [{"name": "fabric", "resourceClaimName": "train-fabric"},
                                        {"name": "scratch", "resourceClaimTemplateName": "scratch"}]},
            "status": {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": status,
                                       "reason": "Unschedulable" if status == "False" else "Scheduled",
                                       "message": "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"
                                       if status == "False" else ""}],
                       "resourceClaimStatuses": [{"name": "scratch", "resourceClaimName": "train-workers-scratch-x7"}]}}


def kai_pod_group() -> dict:
    return {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
            "metadata": {"name": "pg-llm", "namespace": "research", "resourceVersion": "5",
                         "ownerReferences": [{"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "llm",
                                              "uid": "u1", "controller": True}]},
            "spec": {"minMember": 3, "queue": "team-a",
                     "subGroups": [{"name": "master", "minMember": 1}, {"name": "worker", "minMember": 2}]},
            "status": {"phase": "Pending", "pending": 3, "running": 0,
                       "schedulingConditions": [
                           {"type": "UnschedulableOnNodePool", "nodePool": "default", "status": "True",
                            "transitionID": "0", "lastTransitionTime": "2026-11-27T01:00:00Z",
                            "reason": "Unschedulable", "message": "old"},
                           {"type": "UnschedulableOnNodePool", "nodePool": "default", "status": "True",
                            "transitionID": "1", "lastTransitionTime": "2026-11-27T01:05:00Z",
                            "reasons": [{"reason": "OverLimit",
                                         "message": "queue team-a would exceed its GPU limit: 8 of 8 in use"}]}]}}


def kueue_workload(admitted: bool = False) -> dict:
    conditions = [{"type": "QuotaReserved", "status": "False", "reason": "TopologyPlacementFailed",
                   "message": "couldn't assign flavors to pod set workers: topology \"rack\" doesn't allow to fit "
                              "any of 4 pod(s)"}]
    if admitted:
        conditions = [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved", "message": "ok"},
                      {"type": "Admitted", "status": "True", "reason": "Admitted",
                       "message": "The workload is admitted"}]
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
            "metadata": {"name": "job-bert-3f2a1", "namespace": "ml", "resourceVersion": "7",
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "bert", "uid": "u2",
                                              "controller": True}]},
            "spec": {"queueName": "gpu-queue",
                     "podSets": [{"name": "launcher", "count": 1},
                                 {"name": "workers", "count": 4, "minCount": 2}]},
            "status": {"conditions": conditions}}


def volcano_pod_group() -> dict:
    return {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
            "metadata": {"name": "mpi-7c1", "namespace": "hpc", "resourceVersion": "9",
                         "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                                              "name": "mpi", "uid": "u3", "controller": True}]},
            "spec": {"minMember": 2, "queue": "default"},
            "status": {"phase": "Pending", "running": 1,
                       "conditions": [{"type": "Unschedulable", "status": "True", "transitionID": "a",
                                       "lastTransitionTime": "2026-11-27T01:02:00Z", "reason": "NotEnoughResources",
                                       "message": "1/2 tasks in gang unschedulable: pod group is not ready, "
                                                  "1 Pending, 2 minAvailable; Pending: 1 Unschedulable"}]}}
