"""The synthetic cluster of `kubeview bench model` (and its DRA case in model_dra): nodes, pods and
ReplicaSets as raw API dicts shaped like kube-apiserver's, every pod its own dicts (as `json.loads`
of a list gives them; no managedFields). Below both model.py and model_dra.py.
"""

from __future__ import annotations

import random

from kubeview.model.events import WatchEvent

NODES, GPU_NODES, PODS, EVENTS = 5000, 500, 150_000, 200_000
DRA_NODES, CLAIMS = 1000, 8000  # --dra: GPU nodes publishing ResourceSlices, and ResourceClaims
_CPU = ("100m", "250m", "500m", "1", "2")
_MEM = ("128Mi", "256Mi", "512Mi", "1Gi", "2Gi")
_TS = "2026-11-22T10:00:00Z"
_NOT_READY_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


# -- synthetic API objects ------------------------------------------------------------------------
def node(i: int, gpus: int) -> dict:
    name = f"gpu-node-{i:04d}" if gpus else f"cpu-node-{i:04d}"
    cap = {"cpu": "64" if gpus else "32", "memory": "512Gi" if gpus else "128Gi", "pods": "110",
           "ephemeral-storage": "500Gi", "hugepages-1Gi": "0", "hugepages-2Mi": "0"}
    if gpus:
        cap["nvidia.com/gpu"] = str(gpus)
    alloc = dict(cap, cpu=str(int(cap["cpu"]) - 1), memory=cap["memory"].replace("Gi", "") + "Gi")
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "topology.kubernetes.io/zone": f"zone-{i % 3}"}
    if gpus:
        labels["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-80GB"
    return {
        "metadata": {"name": name, "uid": f"{i:08x}-0000-4000-8000-000000000000", "resourceVersion": str(1000 + i),
                     "creationTimestamp": _TS, "labels": labels},
        "spec": {"podCIDR": f"10.{i // 250}.{i % 250}.0/24", "providerID": f"kind://docker/{name}"},
        "status": {
            "capacity": cap, "allocatable": alloc,
            "conditions": [{"type": t, "status": s, "lastHeartbeatTime": _TS, "lastTransitionTime": _TS,
                            "reason": f"Kubelet{t}", "message": "kubelet is posting ready status"}
                           for t, s in (("MemoryPressure", "False"), ("DiskPressure", "False"),
                                        ("PIDPressure", "False"), ("Ready", "True"))],
            "addresses": [{"type": "InternalIP", "address": f"10.250.{i // 250}.{i % 250}"},
                          {"type": "Hostname", "address": name}],
            "nodeInfo": {"kubeletVersion": "v1.36.2", "containerRuntimeVersion": "containerd://2.1.0",
                         "osImage": "Ubuntu 24.04 LTS", "architecture": "amd64"},
        },
    }


def pod(i: int, workload: int, node_name: str | None, gpus: int, rv: int, phase: str = "Running",
        restarts: int = 0, namespaces: int = 40) -> dict:
    """One pod as the API returns it; `node_name=None` is a pod the scheduler could not place."""
    rs = f"wl-{workload:04d}-7d9c8b6f5"
    resources: dict = {"requests": {"cpu": _CPU[workload % 5], "memory": _MEM[(workload // 5) % 5]},
                       "limits": {"memory": _MEM[(workload // 5) % 5]}}
    if gpus:
        resources["requests"]["nvidia.com/gpu"] = str(gpus)
        resources["limits"]["nvidia.com/gpu"] = str(gpus)
    containers: list[dict] = [{"name": "main", "image": f"registry.example.com/team-{workload % 40}/app:1.{workload % 9}",
                   "resources": resources, "imagePullPolicy": "IfNotPresent",
                   "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                   "ports": [{"containerPort": 8080, "protocol": "TCP"}]}]
    if workload % 4 == 0:  # a logging sidecar on a quarter of the workloads
        containers.append({"name": "log-shipper", "image": "registry.example.com/log-shipper:3.2",
                           "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
                           "imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log",
                           "terminationMessagePolicy": "File"})
    spec = {"containers": containers, "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst", "serviceAccountName": "default", "serviceAccount": "default",
            "securityContext": {}, "schedulerName": "default-scheduler", "priority": 0,
            "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
            "tolerations": [{"key": k, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
                            for k in _NOT_READY_TOLERATIONS]}
    if node_name:
        spec["nodeName"] = node_name
        conditions = [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": _TS}
                      for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]
        status = {"phase": phase, "conditions": conditions, "hostIP": "10.250.0.1", "podIP": f"10.{i % 250}.{i // 250 % 250}.{i % 200}",
                  "startTime": _TS, "qosClass": "Burstable",
                  "containerStatuses": [{"name": c["name"], "ready": True, "restartCount": restarts,
                                         "image": c["image"], "imageID": c["image"] + "@sha256:0f3e",
                                         "containerID": f"containerd://{i:064x}", "started": True,
                                         "state": {"running": {"startedAt": _TS}}} for c in containers]}
    else:
        status = {"phase": "Pending", "qosClass": "Burstable", "conditions": [{
            "type": "PodScheduled", "status": "False", "lastProbeTime": None, "lastTransitionTime": _TS,
            "reason": "Unschedulable",
            "message": f"0/{NODES} nodes are available: {NODES - GPU_NODES} Insufficient nvidia.com/gpu, "
                       f"{GPU_NODES} Insufficient cpu. preemption: 0/{NODES} nodes are available."}]}
    return {
        "metadata": {"name": f"wl-{workload:04d}-7d9c8b6f5-{i:06d}", "generateName": rs + "-",
                     "namespace": f"team-{workload % namespaces}", "uid": f"{i:08x}-1111-4000-8000-{workload:012x}",
                     "resourceVersion": str(rv), "creationTimestamp": _TS,
                     "labels": {"app": f"wl-{workload:04d}", "pod-template-hash": "7d9c8b6f5"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                          "uid": f"{workload:08x}-2222-4000-8000-000000000000", "controller": True,
                                          "blockOwnerDeletion": True}]},
        "spec": spec,
        "status": status,
    }


def replicaset(workload: int, replicas: int, namespaces: int = 40) -> dict:
    return {"metadata": {"name": f"wl-{workload:04d}-7d9c8b6f5", "namespace": f"team-{workload % namespaces}",
                         "resourceVersion": str(workload + 10), "uid": f"{workload:08x}-2222-4000-8000-000000000000"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": f"wl-{workload:04d}"}}},
            "status": {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas}}


class Cluster:
    """The synthetic cluster's layout: which pod is where, so events stay consistent."""

    def __init__(self, nodes: int, gpu_nodes: int, pods: int, seed: int = 4, namespaces: int = 40) -> None:
        self.rng = random.Random(seed)
        self.namespaces = namespaces  # workload w is in team-<w % namespaces>
        self.node_names = [f"gpu-node-{i:04d}" if i < gpu_nodes else f"cpu-node-{i:04d}" for i in range(nodes)]
        self.gpu_nodes = gpu_nodes
        self.workloads = max(pods // 100, 1)
        self.rv = 10_000
        self.placement: dict[int, tuple[int, str | None, int]] = {}  # pod index -> (workload, node, gpus)
        gpu_free = {n: 8 for n in self.node_names[:gpu_nodes]}
        for i in range(pods):
            w = i % self.workloads
            if w % 25 == 0:  # GPU workloads: 1, 2 or 4 GPUs, packed first-fit onto GPU nodes
                gpus = (1, 1, 2, 4)[w // 25 % 4]
                where = next((n for n in self._gpu_candidates(i) if gpu_free[n] >= gpus), None)
                if where is not None:
                    gpu_free[where] -= gpus
                self.placement[i] = (w, where, gpus)
            elif i % 150 == 0:
                self.placement[i] = (w, None, 0)  # pending
            else:
                self.placement[i] = (w, self.node_names[gpu_nodes + i % (nodes - gpu_nodes)] if nodes > gpu_nodes
                                     else self.node_names[i % nodes], 0)
        self.next_index = pods
        self._keys = list(self.placement)

    def _gpu_candidates(self, i: int) -> list[str]:
        start = i % self.gpu_nodes
        return self.node_names[start:min(start + 3, self.gpu_nodes)]  # GPU nodes only (a small cluster ran past them)

    def nodes(self) -> list[dict]:
        return [node(i, 8 if i < self.gpu_nodes else 0) for i in range(len(self.node_names))]

    def pods(self) -> list[dict]:
        return [pod(i, w, n, g, 5000 + i, namespaces=self.namespaces) for i, (w, n, g) in self.placement.items()]

    def replicasets(self) -> list[dict]:
        counts: dict[int, int] = {}
        for w, _, _ in self.placement.values():
            counts[w] = counts.get(w, 0) + 1
        return [replicaset(w, c, self.namespaces) for w, c in sorted(counts.items())]

    def events(self, count: int) -> list[WatchEvent]:
        """A batch of watch events, consistent with the current layout."""
        out: list[WatchEvent] = []
        rng = self.rng
        keys = self._keys
        ns = self.namespaces
        while len(out) < count:
            self.rv += 1
            r = rng.random()
            idx = rng.randrange(len(keys))
            i = keys[idx]
            w, where, gpus = self.placement[i]
            if r < 0.55:  # status update: a restart, a readiness flip
                out.append(WatchEvent("Pod", "MODIFIED", pod(i, w, where, gpus, self.rv, restarts=rng.randrange(3),
                                                           namespaces=ns)))
            elif r < 0.85 and where is not None:  # replaced by its ReplicaSet: delete, create unbound, bind
                out.append(WatchEvent("Pod", "DELETED", pod(i, w, where, gpus, self.rv, namespaces=ns)))
                del self.placement[i]
                j = self.next_index
                self.next_index += 1
                self.placement[j] = (w, where, gpus)
                keys[idx] = j
                self.rv += 1
                out.append(WatchEvent("Pod", "ADDED", pod(j, w, None, gpus, self.rv, namespaces=ns)))
                self.rv += 1
                out.append(WatchEvent("Pod", "MODIFIED", pod(j, w, where, gpus, self.rv, namespaces=ns)))
            elif r < 0.97:  # finished
                out.append(WatchEvent("Pod", "MODIFIED", pod(i, w, where, gpus, self.rv, phase="Succeeded",
                                                                      namespaces=ns)))
            else:  # node heartbeat: a new resourceVersion, same figures
                n = rng.randrange(len(self.node_names))
                obj = node(n, 8 if n < self.gpu_nodes else 0)
                obj["metadata"]["resourceVersion"] = str(self.rv)
                out.append(WatchEvent("Node", "MODIFIED", obj))
        return out
