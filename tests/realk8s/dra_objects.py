"""What a GPU DRA driver would publish, and the pods and claims of the DRA test (issue #25, 3c).

The ResourceSlices are the recorded ones (tests/fixtures/k8s/dra/resourceslice-create-*.json: the
devices and shared counters NVIDIA's driver publishes for full H100s and a partitionable one, KEP-4815)
with their node renamed: the same bytes the v1.36 recordings were made with, so a difference the real
1.37 plane shows is a difference of the release, not of our objects. Both DeviceClasses are the
recordings' too: `gpu.nvidia.com` (driver-only selector, `extendedResourceName: nvidia.com/gpu`) and
`mig.nvidia.com` (MIG devices only).

`api_ledger` is the oracle: the claims' allocations as the API server holds them now.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from kubernetes import client

DRA_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "k8s" / "dra"
DRIVER = "gpu.nvidia.com"
POOL_LABEL = "kubeview.test/pool"
GPU = "nvidia.com/gpu"
DeviceKey = tuple[str, str, str]
Holder = tuple[tuple[str, str], tuple[str, ...]]  # (claim namespace, name), its reservedFor pods sorted


def _fixture(name: str) -> dict:
    return json.loads((DRA_FIXTURES / name).read_text())


def device_classes() -> list[dict]:
    return [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
             "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}'"}}],
                      "extendedResourceName": GPU}},
            {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "mig.nvidia.com"},
             "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{DRIVER}' && "
                                                           f"device.attributes['{DRIVER}'].type == 'mig'"}}]}}]


def slices_for(node: str, mig: bool) -> list[dict]:
    """The recorded slices of a full-GPU node (one slice, gpu-0 and gpu-1) or of the MIG node (a
    counters slice and a devices slice in one pool), for `node`."""
    names = (["resourceslice-create-dra-mig-node-1-counters.json", "resourceslice-create-dra-mig-node-1-devices.json"]
             if mig else ["resourceslice-create-dra-node-1.json"])
    out = []
    for i, name in enumerate(names):
        spec = copy.deepcopy(_fixture(name)["spec"])
        spec["nodeName"] = node
        spec["pool"]["name"] = node
        out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                    "metadata": {"name": f"{node}-{DRIVER}-{i}"}, "spec": spec})
    return out


def claim_template(namespace: str, name: str, device_class: str, cel: str | None = None) -> dict:
    exactly: dict = {"deviceClassName": device_class}
    if cel:
        exactly["selectors"] = [{"cel": {"expression": cel}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}


def claim(namespace: str, name: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name, "namespace": namespace},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}


def pod(namespace: str, name: str, pool: str, *, gpus: int = 0, template: str | None = None,
        claim_name: str | None = None) -> dict:
    """A one-container pod on the pool's nodes: `gpus` as `nvidia.com/gpu` (served through a claim the
    scheduler makes), or a claim from a template, or a standalone claim by name."""
    resources: dict = {"requests": {"cpu": "100m"}}
    spec: dict = {"nodeSelector": {POOL_LABEL: pool}, "terminationGracePeriodSeconds": 0,
                  "containers": [{"name": "cuda", "image": "registry.k8s.io/pause:3.10", "resources": resources}]}
    if gpus:
        resources["requests"][GPU] = str(gpus)
        resources["limits"] = {GPU: str(gpus)}
    if template or claim_name:
        ref = {"resourceClaimTemplateName": template} if template else {"resourceClaimName": claim_name}
        spec["resourceClaims"] = [{"name": "gpu", **ref}]
        resources["claims"] = [{"name": "gpu"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def list_claims(api_client: client.ApiClient, namespace: str) -> list[dict]:
    resp = client.ResourceV1Api(api_client).list_namespaced_resource_claim(namespace, _preload_content=False)
    return json.loads(resp.data)["items"]


def api_ledger(claims: list[dict]) -> dict[DeviceKey, Holder]:
    """Every allocated device -> the claim holding it and the pods it is reserved for. A device in two
    claims' allocations fails here: the scheduler must never hand one device out twice."""
    out: dict[DeviceKey, Holder] = {}
    for c in claims:
        meta, status = c["metadata"], c.get("status") or {}
        pods = tuple(sorted(r["name"] for r in status.get("reservedFor") or () if r.get("resource") == "pods"))
        for r in ((status.get("allocation") or {}).get("devices") or {}).get("results") or ():
            key = (r["driver"], r["pool"], r["device"])
            assert key not in out, f"{key} allocated to {out[key][0]} and {meta['name']}"
            out[key] = ((meta["namespace"], meta["name"]), pods)
    return out
