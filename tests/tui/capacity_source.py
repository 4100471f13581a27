"""A deterministic cluster with autoscalers, for the Capacity screen's snapshots: a stand-in, not a recording.

`SyntheticSource`'s cluster (seed 1) plus a Cluster Autoscaler node group and a Karpenter NodePool,
written here in the API's shapes: CA's status ConfigMap is made by the embedded cluster's writer of
CA's format (cluster/local/ca_status.py) at a fixed time, without the label that marks the embedded
cluster's (so it reads as a real CA's); the NodePool `cpu` is tests/fixtures/autoscaling/karpenter.yaml's;
the node group's two nodes carry the label CA's kwok provider groups by (`kwok-nodegroup`). A Job
`ml/sweep` of 2-GPU pods has 12 pods that ran 300 s each and 16 Pending with CA's NotTriggerScaleUp
(its group at its max 2). No clock reaches what is shown: the same screen every run.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from kubeview.cluster.local import ca_status
from kubeview.cluster.synthetic import SyntheticSource
from kubeview.model.events import Listed

T0 = 1_795_000_000.0  # the objects' times (2026-11-18)
GROUP = "gpu-pool"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "autoscaling" / "karpenter.yaml"
GPU = "nvidia.com/gpu"


def stamp(t: float) -> str:
    return ca_status.rfc3339(t)


def group_node(i: int) -> dict:
    alloc = {"cpu": "64", "memory": "512Gi", "pods": "110", GPU: "8"}
    return {"metadata": {"name": f"{GROUP}-{i}", "labels": {"kwok-nodegroup": GROUP, "kubernetes.io/hostname":
                                                             f"{GROUP}-{i}"}, "resourceVersion": f"9{i}"},
            "spec": {}, "status": {"capacity": alloc, "allocatable": alloc,
                                   "conditions": [{"type": "Ready", "status": "True"}]}}


def sweep_pod(i: int, node: str | None, phase: str) -> dict:
    meta = {"name": f"sweep-{i}-x{i:03d}", "namespace": "ml", "uid": f"sweep-{i}", "resourceVersion": f"8{i:03d}",
            "labels": {"batch.kubernetes.io/job-name": "sweep", "job-name": "sweep"},
            "annotations": {"batch.kubernetes.io/job-completion-index": str(i)},
            "ownerReferences": [{"kind": "Job", "name": "sweep", "uid": "job-sweep", "controller": True}]}
    resources = {"requests": {"cpu": "8", GPU: "2"}, "limits": {GPU: "2"}}
    spec: dict = {"containers": [{"name": "trial", "image": "sweep", "resources": resources}],
                  "tolerations": [{"key": GPU, "operator": "Exists"}]}
    status: dict = {"phase": phase}
    if node:
        spec["nodeName"] = node
        start = T0 + 300 * (i // 8)
        status["containerStatuses"] = [{"name": "trial", "state": {"terminated": {
            "exitCode": 0, "startedAt": stamp(start), "finishedAt": stamp(start + 300)}}}]
    else:
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                 "message": "0/14 nodes are available: 14 Insufficient nvidia.com/gpu."}]
    return {"metadata": meta, "spec": spec, "status": status}


def event(pod: dict, n: int) -> dict:
    meta = pod["metadata"]
    return {"metadata": {"name": f"{meta['name']}.ca{n}", "namespace": "ml", "resourceVersion": f"7{n:03d}"},
            "involvedObject": {"kind": "Pod", "namespace": "ml", "name": meta["name"], "uid": meta["uid"]},
            "reason": "NotTriggerScaleUp", "type": "Normal", "count": 1,
            "message": "pod didn't trigger scale-up: 1 max node group size reached",
            "source": {"component": "cluster-autoscaler"}, "firstTimestamp": stamp(T0 + 1200),
            "lastTimestamp": stamp(T0 + 1200)}


class CapacitySource(SyntheticSource):
    def __init__(self) -> None:
        super().__init__(nodes=12, pods=80, seed=1)

    def lists(self) -> list[Listed]:
        base = {listed.kind: listed for listed in super().lists()}
        done = [sweep_pod(i, f"{GROUP}-{i % 2}", "Succeeded") for i in range(12)]
        waiting = [sweep_pod(i, None, "Pending") for i in range(12, 28)]
        job = {"metadata": {"name": "sweep", "namespace": "ml", "uid": "job-sweep", "resourceVersion": "800"},
               "spec": {"completions": 100, "parallelism": 28, "completionMode": "Indexed"},
               "status": {"succeeded": 12, "active": 16}}
        doc = ca_status.status_document([ca_status.GroupState(GROUP, 0, 2, 2, 2, 0, ca_status.NO_ACTIVITY)], T0 + 1200)
        status = ca_status.configmap(doc, T0 + 1200, {"name": ca_status.NAME, "namespace": ca_status.NAMESPACE,
                                                     "resourceVersion": "700"})
        status["metadata"].pop("labels")  # a real Cluster Autoscaler's, not the embedded cluster's
        pools = [d for d in yaml.safe_load_all(FIXTURE.read_text()) if d and d["kind"] == "NodePool"
                 and d["metadata"]["name"] == "cpu"]
        rv = base["Node"].resource_version
        return [Listed("Node", base["Node"].objects + [group_node(0), group_node(1)], rv),
                Listed("Pod", base["Pod"].objects + done + waiting, rv),
                *(listed for kind, listed in base.items() if kind not in ("Node", "Pod", "Job")),
                Listed("Job", [job], rv), Listed("Event", [event(p, i) for i, p in enumerate(waiting)], rv),
                Listed("ca.Status", [status], rv), Listed("karpenter.NodePool", pools, rv)]
