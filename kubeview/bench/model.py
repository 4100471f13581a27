"""`kubeview bench model`: the model at scale, on a synthetic 5,000-node, 150,000-pod cluster.

The cluster is generated as raw API dicts shaped like kube-apiserver's (every pod its own dicts, as
`json.loads` of a list gives them; no managedFields), then measured against the targets of issue 4:
build from lists <= 2 s, watch events >= 20,000/s, snapshot JSON <= 1 s, peak RSS <= 1.5 GB.
Watch events are a mix of status updates, replacements (DELETED, ADDED unbound, MODIFIED bound),
scheduling failures and node heartbeats, generated in batches outside the timed section.
`--quick` divides the sizes by ten (targets unchanged). Timings are wall-clock on a shared machine:
run it twice and look at `uptime`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, WatchEvent
from kubeview.model.snapshot import snapshot_json

NODES, GPU_NODES, PODS, EVENTS = 5000, 500, 150_000, 200_000
DRA_NODES, CLAIMS = 1000, 8000  # --dra: GPU nodes publishing ResourceSlices, and ResourceClaims
_CPU = ("100m", "250m", "500m", "1", "2")
_MEM = ("128Mi", "256Mi", "512Mi", "1Gi", "2Gi")
_TS = "2026-11-22T10:00:00Z"
_NOT_READY_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def cpu_note(f: Figure) -> str:
    """The figure measured on process CPU time, labelled as what it is: a time for a duration
    ("cpu time: 1.20 s"), a rate for a rate ("rate on cpu time: 31,000 events/s"; it said "cpu time")."""
    if f.cpu is None:
        return ""
    n = f"{f.cpu:,.0f}" if f.cpu >= 1000 else f"{f.cpu:.2f}"
    return f"  (cpu time: {n} {f.unit})" if f.unit == "s" else f"  (rate on cpu time: {n} {f.unit})"


@dataclass
class Figure:
    name: str
    value: float
    unit: str
    target: float
    higher_is_better: bool
    cpu: float | None = None  # the same figure from process CPU time: what a shared machine cannot steal

    @property
    def ratio(self) -> float:
        """How far inside the target (> 1 is a pass)."""
        if self.higher_is_better:
            return self.value / self.target
        return self.target / self.value if self.value > 0 else float("inf")

    @property
    def passed(self) -> bool:
        return self.ratio >= 1.0


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
        restarts: int = 0) -> dict:
    """One pod as the API returns it; `node_name=None` is a pod the scheduler could not place."""
    rs = f"wl-{workload:04d}-7d9c8b6f5"
    resources: dict = {"requests": {"cpu": _CPU[workload % 5], "memory": _MEM[(workload // 5) % 5]},
                       "limits": {"memory": _MEM[(workload // 5) % 5]}}
    if gpus:
        resources["requests"]["nvidia.com/gpu"] = str(gpus)
        resources["limits"]["nvidia.com/gpu"] = str(gpus)
    containers = [{"name": "main", "image": f"registry.example.com/team-{workload % 40}/app:1.{workload % 9}",
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
                     "namespace": f"team-{workload % 40}", "uid": f"{i:08x}-1111-4000-8000-{workload:012x}",
                     "resourceVersion": str(rv), "creationTimestamp": _TS,
                     "labels": {"app": f"wl-{workload:04d}", "pod-template-hash": "7d9c8b6f5"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                          "uid": f"{workload:08x}-2222-4000-8000-000000000000", "controller": True,
                                          "blockOwnerDeletion": True}]},
        "spec": spec,
        "status": status,
    }


def replicaset(workload: int, replicas: int) -> dict:
    return {"metadata": {"name": f"wl-{workload:04d}-7d9c8b6f5", "namespace": f"team-{workload % 40}",
                         "resourceVersion": str(workload + 10), "uid": f"{workload:08x}-2222-4000-8000-000000000000"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": f"wl-{workload:04d}"}}},
            "status": {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas}}


class Cluster:
    """The synthetic cluster's layout: which pod is where, so events stay consistent."""

    def __init__(self, nodes: int, gpu_nodes: int, pods: int, seed: int = 4) -> None:
        self.rng = random.Random(seed)
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
        return self.node_names[start:start + 3]

    def nodes(self) -> list[dict]:
        return [node(i, 8 if i < self.gpu_nodes else 0) for i in range(len(self.node_names))]

    def pods(self) -> list[dict]:
        return [pod(i, w, n, g, 5000 + i) for i, (w, n, g) in self.placement.items()]

    def replicasets(self) -> list[dict]:
        counts: dict[int, int] = {}
        for w, _, _ in self.placement.values():
            counts[w] = counts.get(w, 0) + 1
        return [replicaset(w, c) for w, c in sorted(counts.items())]

    def events(self, count: int) -> list[WatchEvent]:
        """A batch of watch events, consistent with the current layout."""
        out: list[WatchEvent] = []
        rng = self.rng
        keys = self._keys
        while len(out) < count:
            self.rv += 1
            r = rng.random()
            idx = rng.randrange(len(keys))
            i = keys[idx]
            w, where, gpus = self.placement[i]
            if r < 0.55:  # status update: a restart, a readiness flip
                out.append(WatchEvent("Pod", "MODIFIED", pod(i, w, where, gpus, self.rv, restarts=rng.randrange(3))))
            elif r < 0.85 and where is not None:  # replaced by its ReplicaSet: delete, create unbound, bind
                out.append(WatchEvent("Pod", "DELETED", pod(i, w, where, gpus, self.rv)))
                del self.placement[i]
                j = self.next_index
                self.next_index += 1
                self.placement[j] = (w, where, gpus)
                keys[idx] = j
                self.rv += 1
                out.append(WatchEvent("Pod", "ADDED", pod(j, w, None, gpus, self.rv)))
                self.rv += 1
                out.append(WatchEvent("Pod", "MODIFIED", pod(j, w, where, gpus, self.rv)))
            elif r < 0.97:  # finished
                out.append(WatchEvent("Pod", "MODIFIED", pod(i, w, where, gpus, self.rv, phase="Succeeded")))
            else:  # node heartbeat: a new resourceVersion, same figures
                n = rng.randrange(len(self.node_names))
                obj = node(n, 8 if n < self.gpu_nodes else 0)
                obj["metadata"]["resourceVersion"] = str(self.rv)
                out.append(WatchEvent("Node", "MODIFIED", obj))
        return out


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


# -- the benchmark --------------------------------------------------------------------------------
def measure(nodes: int = NODES, gpu_nodes: int = GPU_NODES, pods: int = PODS, events: int = EVENTS,
            progress=None, claims: int = 0) -> tuple[list[Figure], dict]:
    """`claims` > 0: the DRA case (bench/model_dra.py): the GPU nodes publish ResourceSlices instead."""
    say = progress or (lambda _msg: None)
    say(f"generating {nodes:,} nodes and {pods:,} pods as API dicts ...")
    dra_lists: list[tuple[str, list[dict]]] = []
    if claims:
        from kubeview.bench.model_dra import DraCluster, device_class
        cluster = DraCluster(nodes, gpu_nodes, pods, claims)
        dra_lists = [("DeviceClass", [device_class()]), ("ResourceSlice", cluster.slices()),
                     ("ResourceClaim", cluster.claims())]
    else:
        cluster = Cluster(nodes, gpu_nodes, pods)
    node_list, pod_list, rs_list = cluster.nodes(), cluster.pods(), cluster.replicasets()

    say("building the model from the lists ...")
    model = ClusterModel("synthetic")
    t0, c0 = time.perf_counter(), time.process_time()
    model.apply(Listed("Node", node_list, "1"))
    model.apply(Listed("Pod", pod_list, "1"))
    model.apply(Listed("ReplicaSet", rs_list, "1"))
    for kind, objects in dra_lists:
        model.apply(Listed(kind, objects, "1"))
    model.allocation()
    build, build_cpu = time.perf_counter() - t0, time.process_time() - c0
    del pod_list, node_list, rs_list, dra_lists  # the source drops its lists once they are applied
    gc.collect()

    say(f"applying {events:,} watch events ...")
    applied, elapsed, elapsed_cpu = 0, 0.0, 0.0
    while applied < events:
        batch = cluster.events(min(20_000, events - applied))
        t0, c0 = time.perf_counter(), time.process_time()
        for e in batch:
            model.apply(e)
        elapsed += time.perf_counter() - t0
        elapsed_cpu += time.process_time() - c0
        applied += len(batch)
        del batch
    model.allocation()

    say("building the snapshot JSON ...")
    t0, c0 = time.perf_counter(), time.process_time()
    text = snapshot_json(model)
    snap, snap_cpu = time.perf_counter() - t0, time.process_time() - c0

    figures = [
        Figure("build from lists", build, "s", 2.0, False, build_cpu),
        Figure("watch events applied", applied / elapsed, "events/s", 20_000, True, applied / max(elapsed_cpu, 1e-9)),
        Figure("snapshot JSON", snap, "s", 1.0, False, snap_cpu),
        Figure("peak RSS", peak_rss_bytes() / 2**30, "GiB", 1.5, False),
    ]
    info = {"nodes": nodes, "gpu_nodes": gpu_nodes, "pods": pods, "events": applied, "snapshot_bytes": len(text),
            "pods_in_model": len(model.pods), "pending": model.pending_count(),
            "gpus_free": model.fragmentation().free_total, "claims": len(model.gpus.claims),
            "dra_devices": sum(len(n.devices) for n in model.gpus.nodes().values())}
    return figures, info


def plain_case(quick: bool) -> dict[str, float]:
    """The plain (device-plugin) case's figures, measured in a child process just before the DRA case
    (its own peak RSS; the same machine load)."""
    argv = [sys.executable, "-m", "kubeview", "bench", "model", "--json"] + (["--quick"] if quick else [])
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return {f["name"]: f["value"] for f in json.loads(out)["figures"]}


def run(args: argparse.Namespace) -> int:
    quick = getattr(args, "quick", False)
    as_json = getattr(args, "json", False)
    dra = getattr(args, "dra", False)
    scale = 10 if quick else 1
    sizes = dict(nodes=NODES // scale, gpu_nodes=(DRA_NODES if dra else GPU_NODES) // scale, pods=PODS // scale,
                 events=EVENTS // scale, claims=CLAIMS // scale if dra else 0)
    plain = plain_case(quick) if dra and not as_json else None  # same run, same load: a ratio, not two days
    figures, info = measure(**sizes, progress=None if as_json else lambda m: print(m, file=sys.stderr))
    if as_json:
        print(json.dumps({"benchmark": "model", "quick": quick, "dra": dra, **info,
                          "figures": [{**asdict(f), "ratio": round(f.ratio, 3), "pass": f.passed} for f in figures]},
                         indent=2))
        return 0
    kind = f"8 DRA GPUs; {info['claims']:,} claims" if dra else "8 GPUs"
    print(f"kubeview bench model: {info['nodes']:,} nodes ({info['gpu_nodes']:,} with {kind}), "
          f"{info['pods']:,} pods, {info['events']:,} watch events{' (--quick: sizes / 10)' if quick else ''}")
    for f in figures:
        op = ">=" if f.higher_is_better else "<="
        value = f"{f.value:,.0f}" if f.value >= 1000 else f"{f.value:.2f}"
        target = f"{f.target:,.0f}" if f.target >= 1000 else f"{f.target:g}"
        cpu = cpu_note(f)
        print(f"  {f.name:<22} {value:>10} {f.unit:<9} target {op} {target:>7} {f.unit:<9} "
              f"x{f.ratio:5.2f}  {'pass' if f.passed else 'FAIL'}{cpu}")
        if plain is not None and f.name in plain:
            print(f"  {'':<22} {'plain':>10} {plain[f.name]:,.2f} {f.unit}: DRA / plain = {f.value / plain[f.name]:.2f}")
    print(f"  snapshot document {info['snapshot_bytes'] / 2**20:.1f} MiB; {info['pending']:,} pending pods; "
          f"{info['gpus_free']:,} GPUs free; pass/fail on wall-clock time, load average {os.getloadavg()[0]:.1f}")
    return 0
