"""DRA GPUs on the local cluster: the objects a DRA driver publishes and kube-scheduler writes.

Shaped like the recorded v1.36.2 objects (tests/fixtures/k8s/dra; README there has the sequence):
the DeviceClass `gpu.nvidia.com` mapping `nvidia.com/gpu` (KEP-5004), one ResourceSlice per DRA node
(NVIDIA's attribute names; MIG partitions as devices of `type: mig` with `profile` and `parentUUID`,
statically partitioned, so no shared counters), and for a pod whose `nvidia.com/gpu` is served by
DRA the claim kube-scheduler creates: `<pod>-extended-resources-<5>`, owned by the pod, annotated,
one request `container-0-request-1` with `count: N`, allocated (results, nodeSelector) and reserved
for the pod before the pod gets `extendedResourceClaimStatus` and is bound. A pod's own claims
(`spec.resourceClaims`) are what the resourceclaim controller and the scheduler make of them: a
template's claim `<pod>-<claim>-<5>` (owner the pod, annotation `pod-claim-name`, no finalizer until
the scheduler allocates it) and the devices that satisfy each request on one node
(`allocate_on`). Pure: dicts in, dicts out.
"""

from __future__ import annotations

import copy
import random
import uuid

from kubeview.cluster.local import objects as obj
from kubeview.cluster.local.config import DraSpec
from kubeview.model.gpus.dra import (
    EXTENDED_CLAIM_ANNOTATION,
    POD_CLAIM_ANNOTATION,
    ClaimView,
    DeviceKey,
    cel_holds,
    parse_cel,
)
from kubeview.model.gpus.ledger import GPU, GpuLedger
from kubeview.model.quantity import to_units

DRIVER = "gpu.nvidia.com"
DELETE_PROTECTION = "resource.kubernetes.io/delete-protection"
API = "resource.k8s.io/v1"
REQUEST_NAME = "container-0-request-1"  # the scheduler's name for container 0's first mapped resource
_MIG_MEMORY = {"1g.10gb": "9856Mi", "1g.20gb": "19968Mi", "2g.20gb": "19968Mi", "3g.40gb": "40192Mi",
               "4g.40gb": "40192Mi", "7g.80gb": "80Gi"}


def device_class() -> dict:
    """NVIDIA's class as recorded: the driver alone (so MIG slices match too), mapped to nvidia.com/gpu."""
    return {"metadata": obj.metadata(DRIVER),
            "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}],
                     "extendedResourceName": GPU}}


def _uuid(node: str, device: str) -> str:
    u = uuid.uuid5(uuid.NAMESPACE_DNS, f"{node}/{device}")
    return f"GPU-{u}"


def resource_slice(node: dict, spec: DraSpec, rng: random.Random) -> dict:
    """The slice a kubelet plugin publishes for `node` (generateName `<node>-<driver>-`, owner the Node)."""
    name = node["metadata"]["name"]
    common = {"architecture": {"string": "Hopper"}, "brand": {"string": "Nvidia"},
              "productName": {"string": spec.product}, "driverVersion": {"version": "580.95.5"}}
    devices = []
    for g in range(spec.gpus):
        gpu_uuid = _uuid(name, f"gpu-{g}")
        if not spec.mig:
            devices.append({"name": f"gpu-{g}", "attributes": {**common, "type": {"string": "gpu"},
                                                               "uuid": {"string": gpu_uuid}},
                            "capacity": {"memory": {"value": spec.memory}}})
            continue
        for profile, count in sorted(spec.mig.items()):
            tag = profile.replace(".", "")
            for k in range(count):
                devices.append({"name": f"gpu-{g}-mig-{tag}-{k}", "attributes": {
                    **common, "type": {"string": "mig"}, "profile": {"string": profile},
                    "parentUUID": {"string": gpu_uuid}},
                    "capacity": {"memory": {"value": _MIG_MEMORY.get(profile, spec.memory)}}})
    meta = obj.metadata(f"{name}-{spec.driver}-{obj.suffix(rng)}", generate_name=f"{name}-{spec.driver}-")
    meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"]["uid"],
                                "controller": True}]
    return {"metadata": meta, "spec": {"driver": spec.driver, "pool": {"name": name, "generation": 1,
                                                                       "resourceSliceCount": 1},
                                       "nodeName": name, "devices": devices}}


def gpu_request(pod: dict) -> int:
    """The pod's nvidia.com/gpu (container 0's, where the scheduler's request name points)."""
    containers = (pod.get("spec") or {}).get("containers") or []
    total = 0
    for c in containers:
        value = ((c.get("resources") or {}).get("requests") or {}).get(GPU)
        if value is not None:
            total += to_units(GPU, value)
    return total


def free_gpus(ledger: GpuLedger, node: str) -> list[tuple[str, str, str]]:
    """Free GPU-counted devices on `node` in the order the allocator tries them (by name)."""
    ng = ledger.node(node)
    if ng is None:
        return []
    return [s.device.key for s in ng.devices if s.gpu and s.state == "free"]


def extended_claim(pod: dict, rng: random.Random, count: int) -> dict:
    """The claim as kube-scheduler creates it (no status yet)."""
    meta = pod["metadata"]
    base = f"{meta['name']}-extended-resources-"
    m = obj.metadata(base + obj.suffix(rng), meta["namespace"], generate_name=base)
    m["annotations"] = {EXTENDED_CLAIM_ANNOTATION: "true"}
    m["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"],
                             "controller": True}]
    m["finalizers"] = [DELETE_PROTECTION]
    return {"metadata": m, "spec": {"devices": {"requests": [{"name": REQUEST_NAME, "exactly": {
        "deviceClassName": DRIVER, "allocationMode": "ExactCount", "count": count}}]}}, "status": {}}


def allocated(claim: dict, pod: dict, node: str, results: list[tuple[str, DeviceKey]]) -> dict:
    """The claim with the scheduler's allocation ((request, device) results, nodeSelector), the
    delete-protection finalizer and the reservation for `pod`."""
    out = copy.deepcopy(claim)
    finalizers = out["metadata"].setdefault("finalizers", [])
    if DELETE_PROTECTION not in finalizers:
        finalizers.append(DELETE_PROTECTION)
    out["status"] = {
        "allocation": {
            "devices": {"results": [{"request": r, "driver": d, "pool": p, "device": n}
                                    for r, (d, p, n) in results]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]},
            "allocationTimestamp": obj.timestamp()},
        "reservedFor": [_reference(pod)]}
    return out


def reserved(claim: dict, pod: dict) -> dict:
    """An allocated (shared) claim with `pod` added to `reservedFor`."""
    out = copy.deepcopy(claim)
    out["status"]["reservedFor"] = [*(out["status"].get("reservedFor") or []), _reference(pod)]
    return out


def unreserved(claim: dict, uid: str) -> dict:
    """A claim without the pod `uid` in `reservedFor`; deallocated when nobody is left (what the
    resourceclaim controller does for a standalone claim)."""
    out = copy.deepcopy(claim)
    left = [r for r in (out.get("status") or {}).get("reservedFor") or [] if r.get("uid") != uid]
    out["status"] = {**out.get("status", {}), "reservedFor": left} if left else {}
    return out


def _reference(pod: dict) -> dict:
    return {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}


def template_claim(pod: dict, pod_claim: str, template: dict, rng: random.Random) -> dict:
    """The claim the resourceclaim controller makes from a template for one of the pod's
    `spec.resourceClaims` (recorded: `claim-pod-gpu-<5>`, no finalizer and no status yet)."""
    meta = pod["metadata"]
    base = f"{meta['name']}-{pod_claim}-"
    m = obj.metadata(base + obj.suffix(rng), meta["namespace"], generate_name=base)
    m["annotations"] = {POD_CLAIM_ANNOTATION: pod_claim}
    m["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"],
                             "controller": True}]
    return {"metadata": m, "spec": claim_spec(((template.get("spec") or {}).get("spec")) or {}), "status": {}}


def claim_spec(spec: dict) -> dict:
    """A claim spec with the apiserver's defaults (recorded: only `deviceClassName` comes back with
    `allocationMode: ExactCount, count: 1`)."""
    out = copy.deepcopy(spec)
    for r in (out.get("devices") or {}).get("requests") or []:
        exact = r.get("exactly")
        if exact is not None:
            exact.setdefault("allocationMode", "ExactCount")
            if exact["allocationMode"] == "ExactCount":
                exact.setdefault("count", 1)
    return out


def with_claim_statuses(pod: dict, statuses: list[dict]) -> dict:
    """The pod with `status.resourceClaimStatuses` ({name, resourceClaimName} per template claim)."""
    out = copy.deepcopy(pod)
    out["status"]["resourceClaimStatuses"] = statuses
    return out


def allocate_on(ledger: GpuLedger, node: str, claims: list[ClaimView]) -> list[list[tuple[str, DeviceKey]]] | None:
    """Devices on `node` for each of a pod's claims ([] for one already allocated there), or None when
    they cannot all be allocated there: kube-scheduler's DynamicResources filter for the local cluster.
    Free devices are taken in name order; a request needs its DeviceClass and its own selectors to
    be CEL kubeview evaluates (otherwise None: never guessed). The local cluster publishes no shared
    counters, so free devices are independent of each other."""
    ng = ledger.node(node)
    free = [s.device for s in ng.devices if s.state == "free"] if ng is not None else []
    taken: set[DeviceKey] = set()
    out: list[list[tuple[str, DeviceKey]]] = []
    for claim in claims:
        if claim.allocated:
            if claim.node != node:
                return None
            out.append([])
            continue
        results: list[tuple[str, DeviceKey]] = []
        for request in claim.requests:
            cls = ledger.classes.get(request.device_class)
            terms = [parse_cel(e) for e in request.selectors]
            if cls is None or not cls.evaluated or any(t is None for t in terms):
                return None
            matching = [d for d in free if cls.matches(d) and all(cel_holds(t, d) for t in terms if t)]
            if request.mode == "All":
                held = [s for s in (ng.devices if ng else ()) if s.state != "free" and cls.matches(s.device)
                        and all(cel_holds(t, s.device) for t in terms if t)]
                if held or not matching:
                    return None
                picks = [d for d in matching if d.key not in taken]
            else:
                picks = [d for d in matching if d.key not in taken][:request.count]
                if len(picks) < request.count:
                    return None
            taken.update(d.key for d in picks)
            results += [(request.name, d.key) for d in picks]
        out.append(results)
    return out


def deallocated(claim: dict) -> dict:
    out = copy.deepcopy(claim)
    out["status"] = {}
    return out


def mapped(pod: dict, claim_name: str) -> dict:
    """The pod with `status.extendedResourceClaimStatus` (its spec keeps the nvidia.com/gpu request)."""
    out = copy.deepcopy(pod)
    container = ((out.get("spec") or {}).get("containers") or [{}])[0].get("name", "")
    out["status"]["extendedResourceClaimStatus"] = {
        "requestMappings": [{"containerName": container, "resourceName": GPU, "requestName": REQUEST_NAME}],
        "resourceClaimName": claim_name}
    return out
