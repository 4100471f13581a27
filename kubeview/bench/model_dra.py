"""The DRA case of `kubeview bench model --dra`: the same synthetic cluster, but its GPU nodes publish
their GPUs as ResourceSlices (no `nvidia.com/gpu` in node status) and GPU pods hold them through the
extended-resource claims kube-scheduler makes (KEP-5004), shaped like tests/fixtures/k8s/dra.

5,000 nodes of which 1,000 publish 8 DRA GPUs each, 150,000 pods, 8,000 claims: one per placed GPU
pod (its `nvidia.com/gpu` mapped through `status.extendedResourceClaimStatus`), the rest unallocated
claims of pending pods. Watch events gain the claims' side of a pod's replacement: the old claim
DELETED, the new one ADDED allocated before the pod is bound (the recorded order).
"""

from __future__ import annotations

from kubeview.bench.model_cluster import CLAIMS, Cluster, pod
from kubeview.model.events import WatchEvent

DRIVER = "gpu.nvidia.com"


def device_class() -> dict:
    return {"metadata": {"name": DRIVER, "resourceVersion": "2"},
            "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}],
                     "extendedResourceName": "nvidia.com/gpu"}}


def resource_slice(name: str, i: int) -> dict:
    devices = [{"name": f"gpu-{k}", "attributes": {
        "type": {"string": "gpu"}, "uuid": {"string": f"GPU-{i:08x}-0000-4000-8000-{k:012x}"},
        "productName": {"string": "NVIDIA H100 80GB HBM3"}, "architecture": {"string": "Hopper"},
        "driverVersion": {"version": "580.95.5"}}, "capacity": {"memory": {"value": "80Gi"}}} for k in range(8)]
    return {"metadata": {"name": f"{name}-{DRIVER}-x{i:04d}", "resourceVersion": str(3000 + i),
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name, "controller": True}]},
            "spec": {"driver": DRIVER, "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "nodeName": name, "devices": devices}}


def claim(i: int, namespace: str, pod_name: str, pod_uid: str, gpus: int, node_name: str | None,
          devices: list[int], rv: int) -> dict:
    meta = {"name": f"{pod_name}-extended-resources-{i:05x}", "namespace": namespace, "resourceVersion": str(rv),
            "uid": f"{i:08x}-3333-4000-8000-000000000000",
            "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": pod_uid,
                                 "controller": True}],
            "finalizers": ["resource.kubernetes.io/delete-protection"]}
    spec = {"devices": {"requests": [{"name": "container-0-request-1", "exactly": {
        "deviceClassName": DRIVER, "allocationMode": "ExactCount", "count": gpus}}]}}
    status: dict = {}
    if node_name is not None:
        status = {"allocation": {
            "devices": {"results": [{"request": "container-0-request-1", "driver": DRIVER, "pool": node_name,
                                     "device": f"gpu-{k}"} for k in devices]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}},
            "reservedFor": [{"resource": "pods", "name": pod_name, "uid": pod_uid}]}
    return {"metadata": meta, "spec": spec, "status": status}


class DraCluster(Cluster):
    """`Cluster` whose GPU nodes are DRA nodes and whose GPU pods hold claims."""

    def __init__(self, nodes: int, gpu_nodes: int, pods: int, claims: int = CLAIMS, seed: int = 4) -> None:
        super().__init__(nodes, gpu_nodes, pods, seed)
        self.claim_target = claims
        self.devices: dict[int, list[int]] = {}  # pod index -> device numbers on its node
        used: dict[str, int] = {}
        for i, (_, where, gpus) in self.placement.items():
            if gpus and where is not None:
                first = used.get(where, 0)
                self.devices[i] = list(range(first, first + gpus))
                used[where] = first + gpus
        self.claimed: set[int] = set(self.devices)  # pods whose claim exists and is allocated
        self._claims: dict[int, dict] = {}  # the last version of each claim (a DELETED event repeats it)

    def nodes(self) -> list[dict]:
        out = super().nodes()
        for obj in out[:self.gpu_nodes]:
            for key in ("capacity", "allocatable"):
                obj["status"][key].pop("nvidia.com/gpu", None)
        return out

    def slices(self) -> list[dict]:
        return [resource_slice(name, i) for i, name in enumerate(self.node_names[:self.gpu_nodes])]

    def _pod(self, i: int, rv: int) -> dict:
        w, where, gpus = self.placement[i]
        return self._mapped(i, pod(i, w, where, gpus, rv))

    def _mapped(self, i: int, obj: dict) -> dict:
        """The pod as the scheduler leaves it once its nvidia.com/gpu went through a claim."""
        if i in self.devices and obj["spec"].get("nodeName"):
            obj["status"]["extendedResourceClaimStatus"] = {
                "resourceClaimName": f"{obj['metadata']['name']}-extended-resources-{i:05x}",
                "requestMappings": [{"containerName": "main", "resourceName": "nvidia.com/gpu",
                                     "requestName": "container-0-request-1"}]}
        return obj

    def _claim(self, i: int, rv: int, allocated: bool = True) -> dict:
        w, where, gpus = self.placement[i]
        p = pod(i, w, None, gpus, rv)
        meta = p["metadata"]
        obj = claim(i, meta["namespace"], meta["name"], meta["uid"], gpus, where if allocated else None,
                    self.devices.get(i, []), rv)
        self._claims[i] = obj
        return obj

    def pods(self) -> list[dict]:
        return [self._pod(i, 5000 + i) for i in self.placement]

    def claims(self) -> list[dict]:
        out = [self._claim(i, 7000 + i) for i in self.devices]
        pending = (i for i, (_, where, gpus) in self.placement.items() if where is None)
        for i in pending:
            if len(out) >= self.claim_target:
                break
            out.append(self._claim(i, 7000 + i, allocated=False))
        for k in range(self.claim_target - len(out)):  # the rest: standalone claims no pod uses yet
            out.append(claim(10_000_000 + k, f"team-{k % 40}", f"spare-{k:05d}", "", 1, None, [], 9000 + k))
            out[-1]["metadata"].pop("ownerReferences")
            out[-1]["metadata"].pop("annotations")
        return out

    def events(self, count: int) -> list[WatchEvent]:
        """The base events with DRA pods' claim status and their claims' events interleaved."""
        out: list[WatchEvent] = []
        while len(out) < count:
            for e in super().events(1):  # one change at a time: the layout is where that change left it
                self._follow(e, out)
        return out

    def _follow(self, e: WatchEvent, out: list[WatchEvent]) -> None:
        if e.kind != "Pod":  # a node heartbeat: a DRA node's status has no nvidia.com/gpu
            if e.obj["metadata"]["name"] in self._dra_nodes():
                for key in ("capacity", "allocatable"):
                    e.obj["status"][key].pop("nvidia.com/gpu", None)
            out.append(e)
            return
        i = int(e.obj["metadata"]["name"].rsplit("-", 1)[1])
        _, where, gpus = self.placement.get(i, (0, None, 0))
        if e.type == "DELETED" and i in self.claimed:
            out.append(e)
            gone = self._claims.pop(i, None)
            if gone is not None:
                gone = {**gone, "metadata": {**gone["metadata"], "resourceVersion": str(self._next_rv())}}
                out.append(WatchEvent("ResourceClaim", "DELETED", gone))
            self.claimed.discard(i)
            self.devices.pop(i, None)
            return
        if gpus and where is not None and e.obj["spec"].get("nodeName") and i not in self.claimed \
                and where in self._dra_nodes():  # scheduled: the claim is allocated before the binding
            self.devices[i] = self._free_devices(where, gpus)
            out.append(WatchEvent("ResourceClaim", "ADDED", self._claim(i, self._next_rv())))
            self.claimed.add(i)
        out.append(WatchEvent("Pod", e.type, self._mapped(i, e.obj)))

    def _next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def _dra_nodes(self) -> set[str]:
        cached = getattr(self, "_dra_set", None)
        if cached is None:
            cached = self._dra_set = set(self.node_names[:self.gpu_nodes])
        return cached

    def _free_devices(self, where: str, gpus: int) -> list[int]:
        taken = {k for j, ks in self.devices.items() if self.placement.get(j, (0, None))[1] == where for k in ks}
        free = [k for k in range(8) if k not in taken]
        return free[:gpus]

