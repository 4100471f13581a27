"""A deterministic synthetic cluster source: N nodes, M pods, workloads and an optional event rate.

It exists for the TUI's snapshot tests, the README screenshots and `kubeview bench tui`: the same
seed gives the same objects byte for byte (no clocks, no uuids in what is shown), and at 5,000 nodes
and 150,000 pods it builds in about a second. Objects are shaped as kube-apiserver returns them, so
the model cannot tell this source from the real one. Pods of one workload share their container
dicts (read-only by convention, as the API's objects are in the model), which keeps memory down.

Events (`events_per_second > 0`) are a fixed pseudo-random mix: container restarts, pods replaced by
their ReplicaSet (one DELETED, one ADDED), pods going Pending and being bound again, node condition
flips. `scale()` really changes the workload and its pods, through the same event stream.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from kubeview.cluster.source import ActionError
from kubeview.model.events import ConnectionState, Listed, SourceEvent, WatchEvent
from kubeview.model.usage import NodeUsage, UsageUpdate
from kubeview.scheduling.config import PackingConfig

GPU = "nvidia.com/gpu"
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
NAMESPACES = ("default", "render", "training", "inference", "batch", "monitoring")
# (cpu, memory, gpu) requests of the pod profiles workloads are drawn from.
PROFILES = (("100m", "128Mi", 0), ("250m", "256Mi", 0), ("500m", "1Gi", 0), ("1", "2Gi", 0),
            ("2", "4Gi", 0), ("1", "8Gi", 1), ("2", "16Gi", 2), ("4", "32Gi", 4))
CPU_NODE = {"cpu": "32", "memory": "128Gi", "pods": "110", "ephemeral-storage": "200Gi"}
GPU_NODE = {"cpu": "64", "memory": "512Gi", "pods": "110", "ephemeral-storage": "500Gi", GPU: "8"}
UNITS = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30}


def _milli(q: str) -> int:
    return int(q[:-1]) if q.endswith("m") else int(q) * 1000


def _bytes(q: str) -> int:
    return int(q[:-2]) * UNITS[q[-2:]]


@dataclass(slots=True)
class _Workload:
    kind: str
    namespace: str
    name: str
    replicas: int
    profile: int
    containers: list[dict]
    owner_refs: list[dict]
    labels: dict[str, str]
    pods: list[str] = field(default_factory=list)
    serial: int = 0
    parent: str | None = None  # a ReplicaSet's Deployment
    child: _Workload | None = None  # a Deployment's ReplicaSet (which owns the pods)


class SyntheticSource:
    """A ClusterSource whose cluster is generated from `seed` (see the module docstring)."""

    is_local = True

    def __init__(self, nodes: int = 12, pods: int = 80, events_per_second: float = 0.0, seed: int = 1,
                 gpu_fraction: float = 0.25, pending_fraction: float = 0.03, usage: bool = True,
                 title: str | None = None) -> None:
        self.node_count, self.pod_count = nodes, pods
        self.events_per_second = events_per_second
        self.title = title or f"synthetic {nodes:,} nodes"
        self.usage = usage
        self.packing = PackingConfig()  # what its (pretend) scheduler would use
        self._rng = random.Random(seed)
        self._rv = 1
        self._actions: queue.Queue[SourceEvent] = queue.Queue()
        self._lock = threading.Lock()
        self._nodes: dict[str, dict] = {}
        self._node_free: dict[str, list[int]] = {}  # name -> [cpu m, memory bytes, gpu]
        self._node_names: list[str] = []
        self._pods: dict[tuple[str, str], dict] = {}
        self._keys: list[tuple[str, str]] = []  # the pods' keys, for O(1) random picks
        self._key_at: dict[tuple[str, str], int] = {}
        self._workloads: dict[tuple[str, str, str], _Workload] = {}
        self._build(nodes, pods, gpu_fraction, pending_fraction)

    # -- generation --------------------------------------------------------------------------
    def _next_rv(self) -> str:
        self._rv += 1
        return str(self._rv)

    def _suffix(self, n: int = 5) -> str:
        return "".join(self._rng.choice(_ALPHANUMS) for _ in range(n))

    def _build(self, nodes: int, pods: int, gpu_fraction: float, pending_fraction: float) -> None:
        gpu_every = max(1, round(1 / gpu_fraction)) if gpu_fraction > 0 else 0
        for i in range(nodes):
            gpu = bool(gpu_every) and i % gpu_every == gpu_every - 1
            name = f"{'gpu' if gpu else 'cpu'}-node-{i + 1:0{len(str(nodes))}d}"
            cap = GPU_NODE if gpu else CPU_NODE
            taints = [{"key": GPU, "value": "present", "effect": "NoSchedule"}] if gpu else []
            ready = i % 97 != 13
            cordoned = i % 211 == 7
            self._nodes[name] = self._node_object(name, cap, taints, ready, cordoned, gpu)
            self._node_free[name] = [_milli(cap["cpu"]), _bytes(cap["memory"]), int(cap.get(GPU, 0))]
            self._node_names.append(name)
        self._pending_fraction = pending_fraction
        gpus = sum(int(GPU_NODE[GPU]) for n in self._node_names if n.startswith("gpu"))
        gpu_pod_share = min(0.5, 0.85 * gpus / 2.33 / max(pods, 1))  # fill ~85% of the GPUs
        n, gpu_nodes = len(self._node_names), gpus // int(GPU_NODE[GPU])
        self._messages = (
            f"0/{n} nodes are available: {n - gpu_nodes} Insufficient cpu, "
            f"{gpu_nodes} node(s) had untolerated taint(s).",
            f"0/{n} nodes are available: {gpu_nodes} Insufficient {GPU}, "
            f"{n - gpu_nodes} node(s) didn't match Pod's node affinity/selector.")
        made = w = 0
        while made < pods:
            ns = NAMESPACES[w % len(NAMESPACES)]
            gpu = self._rng.random() < gpu_pod_share
            profile = self._rng.randrange(5, 8) if gpu else self._rng.randrange(0, 5)
            sizes = (1, 1, 2, 3, 4) if gpu else (1, 2, 3, 5, 8, 12, 20, 30, 50)
            replicas = min(pods - made, max(1, pods // 12), self._rng.choice(sizes))
            kind = "StatefulSet" if w % 7 == 6 else "Deployment"
            name = f"{('db' if kind == 'StatefulSet' else 'app')}-{w:05d}"
            wl = self._add_workload(kind, ns, name, replicas, profile)
            for _ in range(replicas):
                self._new_pod(wl, pending_ok=True)
            made += replicas
            w += 1

    def _node_object(self, name: str, cap: dict, taints: list, ready: bool, cordoned: bool, gpu: bool) -> dict:
        alloc = dict(cap)
        alloc["memory"] = f"{_bytes(cap['memory']) // 2**20 - 100}Mi"
        labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                  "topology.kubernetes.io/zone": f"zone-{'abc'[len(self._nodes) % 3]}"}
        if gpu:
            labels["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-80GB"
        spec: dict = {"taints": taints} if taints else {}
        if cordoned:
            spec["unschedulable"] = True
            spec["taints"] = [*taints, {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
        conds = [{"type": "MemoryPressure", "status": "False"}, {"type": "DiskPressure", "status": "False"},
                 {"type": "PIDPressure", "status": "False"},
                 {"type": "Ready", "status": "True" if ready else "False"}]
        return {"metadata": {"name": name, "labels": labels, "resourceVersion": self._next_rv()},
                "spec": spec, "status": {"capacity": dict(cap), "allocatable": alloc, "conditions": conds}}

    def _add_workload(self, kind: str, ns: str, name: str, replicas: int, profile: int) -> _Workload:
        """The workload whose pods get created: a Deployment's ReplicaSet, or the StatefulSet itself."""
        cpu, mem, gpu = PROFILES[profile]
        requests = {"cpu": cpu, "memory": mem}
        limits = {"memory": mem}
        if gpu:
            requests[GPU] = limits[GPU] = str(gpu)
        containers = [{"name": "main", "image": f"registry.example/{name}:1.0",
                       "resources": {"requests": requests, "limits": limits}}]
        labels = {"app": name}
        wl = _Workload(kind, ns, name, replicas, profile, containers,
                       [{"apiVersion": "apps/v1", "kind": kind, "name": name, "controller": True}], labels)
        self._workloads[(kind, ns, name)] = wl
        if kind != "Deployment":
            return wl
        rs_name = f"{name}-{self._suffix(10)}"
        rs = _Workload("ReplicaSet", ns, rs_name, replicas, profile, containers,
                       [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs_name, "controller": True}],
                       labels, pods=wl.pods, parent=name)
        self._workloads[("ReplicaSet", ns, rs_name)] = rs
        wl.child = rs
        return rs

    def _place(self, profile: int) -> str | None:
        cpu, mem, gpu = PROFILES[profile]
        need = (_milli(cpu), _bytes(mem), gpu)
        names = self._node_names
        for _ in range(8):
            node = names[self._rng.randrange(len(names))]
            free = self._node_free[node]
            is_gpu = node.startswith("gpu")
            if bool(gpu) != is_gpu or self._nodes[node]["status"]["conditions"][3]["status"] != "True":
                continue
            if self._nodes[node]["spec"].get("unschedulable"):
                continue
            if free[0] >= need[0] and free[1] >= need[1] and free[2] >= need[2]:
                free[0] -= need[0]
                free[1] -= need[1]
                free[2] -= need[2]
                return node
        return None

    def _release(self, node: str | None, profile: int) -> None:
        if node is None:
            return
        cpu, mem, gpu = PROFILES[profile]
        free = self._node_free[node]
        free[0] += _milli(cpu)
        free[1] += _bytes(mem)
        free[2] += gpu

    def _new_pod(self, wl: _Workload, pending_ok: bool = False) -> dict:
        if wl.kind == "StatefulSet":
            name = f"{wl.name}-{wl.serial}"
            wl.serial += 1
        else:
            name = f"{wl.name}-{self._suffix()}"
        node = None
        if not (pending_ok and self._rng.random() < self._pending_fraction):
            node = self._place(wl.profile)
        pod = self._pod_object(wl, name, node)
        self._pods[(wl.namespace, name)] = pod
        self._key_at[(wl.namespace, name)] = len(self._keys)
        self._keys.append((wl.namespace, name))
        wl.pods.append(name)
        return pod

    def _pod_object(self, wl: _Workload, name: str, node: str | None, restarts: int = 0) -> dict:
        meta = {"namespace": wl.namespace, "name": name, "labels": wl.labels, "ownerReferences": wl.owner_refs,
                "resourceVersion": self._next_rv()}
        spec: dict = {"containers": wl.containers}
        if PROFILES[wl.profile][2]:
            spec["tolerations"] = [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}]
        if node is None:
            status = {"phase": "Pending", "conditions": [{
                "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                "message": self._pending_message(wl.profile)}]}
        else:
            spec["nodeName"] = node
            status = {"phase": "Running", "conditions": [{"type": "PodScheduled", "status": "True"}],
                      "containerStatuses": [{"name": "main", "ready": True, "restartCount": restarts}]}
        return {"metadata": meta, "spec": spec, "status": status}

    def _pending_message(self, profile: int) -> str:
        return self._messages[1 if PROFILES[profile][2] else 0]

    def _workload_object(self, wl: _Workload) -> dict:
        bound = sum(1 for p in wl.pods if self._pods[(wl.namespace, p)]["spec"].get("nodeName"))
        meta: dict = {"namespace": wl.namespace, "name": wl.name, "labels": wl.labels,
                      "resourceVersion": self._next_rv()}
        if wl.parent:
            meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": wl.parent,
                                        "controller": True}]
        return {"metadata": meta,
                "spec": {"replicas": wl.replicas, "selector": {"matchLabels": wl.labels}},
                "status": {"replicas": len(wl.pods), "readyReplicas": bound, "availableReplicas": bound}}

    # -- the ClusterSource interface ---------------------------------------------------------
    def lists(self) -> list[Listed]:
        """The full state as one Listed per kind (what `run` emits first)."""
        with self._lock:
            by_kind: dict[str, list[dict]] = {"ReplicaSet": [], "Deployment": [], "StatefulSet": []}
            for wl in self._workloads.values():
                by_kind[wl.kind].append(self._workload_object(wl))
            rv = str(self._rv)
            out = [Listed("Node", list(self._nodes.values()), rv), Listed("Pod", list(self._pods.values()), rv)]
            return out + [Listed(k, v, rv) for k, v in by_kind.items()] + [Listed("Job", [], rv)]

    def usage_update(self) -> UsageUpdate:
        """Deterministic utilization: each node uses 40..95% of what its pods request."""
        nodes: dict[str, NodeUsage] = {}
        with self._lock:
            for i, name in enumerate(self._node_names):
                cap = self._nodes[name]["status"]["capacity"]
                free = self._node_free[name]
                used_cpu = _milli(cap["cpu"]) - free[0]
                used_mem = _bytes(cap["memory"]) - free[1]
                frac = 0.4 + (i * 37 % 56) / 100
                gpus = int(cap.get(GPU, 0))
                gpu_util = tuple(float((i * 13 + g * 29) % 100) for g in range(gpus - free[2])) + (0.0,) * free[2]
                nodes[name] = NodeUsage(cpu=used_cpu * frac, memory=int(used_mem * frac),
                                        gpu_util=gpu_util if gpus else None)
        return UsageUpdate(nodes=nodes, source="synthetic", at=0.0, window="1m")

    def run(self, emit: Callable[[SourceEvent], None], stop: threading.Event) -> None:
        emit(ConnectionState("connecting", time.time()))
        for listed in self.lists():
            emit(listed)
        if self.usage:
            emit(self.usage_update())
        emit(ConnectionState("live", time.time()))
        rate = self.events_per_second
        tick = 0.01
        owed = 0.0
        next_at = time.monotonic()
        while not stop.is_set():
            while True:
                try:
                    emit(self._actions.get_nowait())
                except queue.Empty:
                    break
            if rate <= 0:
                stop.wait(0.05)
                continue
            owed += rate * tick
            while owed >= 1:
                owed -= 1
                for ev in self._random_event():
                    emit(ev)
            next_at += tick
            delay = next_at - time.monotonic()
            if delay > 0:
                stop.wait(delay)
            elif delay < -5:  # starved for seconds: catch up in one burst, then keep the rate
                owed += rate * min(-delay, 5.0)
                next_at = time.monotonic()

    def _random_event(self) -> list[WatchEvent]:
        with self._lock:
            r = self._rng.random()
            keys = self._keys
            key = keys[self._rng.randrange(len(keys))] if keys else None
            if key is None or r < 0.02:
                name = self._node_names[self._rng.randrange(len(self._node_names))]
                node = self._nodes[name]
                node = {**node, "metadata": {**node["metadata"], "resourceVersion": self._next_rv()}}
                self._nodes[name] = node
                return [WatchEvent("Node", "MODIFIED", node)]
            pod = self._pods[key]
            wl = self._owner_of(pod)
            if r < 0.6 or wl is None:  # a container restart
                restarts = (pod["status"].get("containerStatuses") or [{}])[0].get("restartCount", 0) + 1
                if pod["spec"].get("nodeName") is None or wl is None:
                    return []
                new = self._pod_object(wl, key[1], pod["spec"]["nodeName"], restarts)
                self._pods[key] = new
                return [WatchEvent("Pod", "MODIFIED", new)]
            # the pod is replaced by its controller: DELETED then ADDED
            self._release(pod["spec"].get("nodeName"), wl.profile)
            self._forget(key)
            wl.pods.remove(key[1])
            new = self._new_pod(wl)
            return [WatchEvent("Pod", "DELETED", pod), WatchEvent("Pod", "ADDED", new)]

    def _forget(self, key: tuple[str, str]) -> dict:
        """Remove a pod (swap-remove from the key list: O(1))."""
        pod = self._pods.pop(key)
        i = self._key_at.pop(key)
        last = self._keys.pop()
        if last != key:
            self._keys[i] = last
            self._key_at[last] = i
        return pod

    def _owner_of(self, pod: dict) -> _Workload | None:
        refs = pod["metadata"].get("ownerReferences") or []
        if not refs:
            return None
        return self._workloads.get((refs[0]["kind"], pod["metadata"]["namespace"], refs[0]["name"]))

    def scale(self, kind: str, namespace: str, name: str, replicas: int) -> str:
        if replicas < 0:
            raise ActionError(f"replicas must be 0 or more, not {replicas}.")
        with self._lock:
            wl = self._workloads.get((kind, namespace, name))
            if wl is None:
                raise ActionError(f"{kind} {namespace}/{name} was not found.")
            owner = wl.child or wl
            old = wl.replicas
            events: list[SourceEvent] = []
            wl.replicas = owner.replicas = replicas
            while len(owner.pods) > replicas:
                pod = self._forget((namespace, owner.pods.pop()))
                self._release(pod["spec"].get("nodeName"), owner.profile)
                events.append(WatchEvent("Pod", "DELETED", pod))
            while len(owner.pods) < replicas:
                events.append(WatchEvent("Pod", "ADDED", self._new_pod(owner)))
            events += [WatchEvent(w.kind, "MODIFIED", self._workload_object(w)) for w in ([wl] if owner is wl else [wl, owner])]
        for ev in events:
            self._actions.put(ev)
        return f"{kind} {namespace}/{name} scaled from {old} to {replicas}."

    def set_packing(self, config: PackingConfig) -> str:
        self.packing = config
        return f"packing policy {config.policy} is live on the synthetic cluster's scheduler."

    def close(self) -> None:
        pass
