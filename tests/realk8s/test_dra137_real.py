"""DRA as 1.37 runs it, with the real kube-scheduler and kube-controller-manager v1.37.2 (issue #27
items 5 and 7): kubeview's ledger shows each device as the API server's objects have it.

One kwok node publishes four GPUs of driver `gpu.nvidia.com` in one pool: gpu-0 plain, gpu-1 with a
NoSchedule taint in its slice, gpu-2 tainted NoSchedule by a DeviceTaintRule, and gpu-s that allows
multiple allocations (80Gi of memory as consumable capacity). The real scheduler gives the first
whole-GPU claim gpu-0 and leaves the second one unallocated (its pod Pending: the tainted GPUs are
not handed out), puts two 30Gi claims on gpu-s as two shares, gives an adminAccess claim a device
without using it up, and a prioritized list (`firstAvailable`: two whole GPUs, else 10Gi of gpu-s)
its second alternative. On the gated plane (DRAResourcePoolStatus, v1alpha3 served), the real
controller answers a ResourcePoolStatusRequest, and kubeview compares its pool figures with it.

`DRA137_RECORD=DIR` writes the objects as the API server returned them into DIR/placed and
DIR/pool-status (the recordings in tests/fixtures/k8s/dra137, see its README).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from kubeview.model.cluster import ClusterModel
from kubeview.model.gpus.pools import compare

from .live_view import LiveView
from .objects import add_node, api, ensure_namespace, wait_nodes_ready
from .plane import Plane
from .procs import wait_until

DRIVER = "gpu.nvidia.com"
NS, ADMIN_NS = "dra137", "dra137-admin"
NODE = "dra137-node"
LABEL = "kubeview.test/pool"
TIMEOUT = 60.0
V1 = "resource.k8s.io/v1"


def _dev(name: str, kind: str, **extra) -> dict:
    return {"name": name, "attributes": {"type": {"string": "gpu"}, "kind": {"string": kind},
                                         "uuid": {"string": f"GPU-{name}"}},
            "capacity": {"memory": {"value": "80Gi"}}, **extra}


def resource_slice(node: str) -> dict:
    devices = [_dev("gpu-0", "whole"),
               _dev("gpu-1", "whole", taints=[{"key": "kubeview.test/ecc", "value": "double-bit",
                                                "effect": "NoSchedule"}]),
               _dev("gpu-2", "whole"),
               _dev("gpu-s", "shared", allowMultipleAllocations=True)]
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": f"{node}-{DRIVER}"},
            "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1,
                                                                   "resourceSliceCount": 1}, "devices": devices}}


def taint_rule(node: str) -> dict:
    return {"apiVersion": V1, "kind": "DeviceTaintRule", "metadata": {"name": f"{node}-drain"},
            "spec": {"deviceSelector": {"driver": DRIVER, "pool": node, "device": "gpu-2"},
                     "taint": {"key": "kubeview.test/drain", "effect": "NoSchedule"}}}


def device_class(kind: str) -> dict:
    cel = f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].kind == '{kind}'"
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": f"dra137-{kind}"},
            "spec": {"selectors": [{"cel": {"expression": cel}}]}}


def whole(ns: str, name: str, admin: bool = False) -> dict:
    exactly: dict = {"deviceClassName": "dra137-whole"}
    if admin:
        exactly["adminAccess"] = True
    return {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}


def shared(ns: str, name: str, memory: str) -> dict:
    return {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "dra137-shared", "capacity": {"requests": {"memory": memory}}}}]}}}


def prioritized(ns: str, name: str) -> dict:
    return {"apiVersion": V1, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": ns},
            "spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
                {"name": "two-whole", "deviceClassName": "dra137-whole", "count": 2},
                {"name": "shared", "deviceClassName": "dra137-shared",
                 "capacity": {"requests": {"memory": "10Gi"}}}]}]}}}


def pod(ns: str, name: str, claim: str, node_label: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"nodeSelector": {LABEL: node_label}, "terminationGracePeriodSeconds": 0,
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}],
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": "100m"}, "claims": [{"name": "gpu"}]}}]}}


def _claim(res: client.ResourceV1Api, ns: str, name: str) -> dict:
    resp = res.read_namespaced_resource_claim(name, ns, _preload_content=False)
    return json.loads(resp.data)


def _allocated(res: client.ResourceV1Api, ns: str, name: str) -> bool:
    return bool((_claim(res, ns, name).get("status") or {}).get("allocation"))


def _unschedulable(core: client.CoreV1Api, ns: str, name: str) -> str | None:
    p = core.read_namespaced_pod(name, ns)
    for c in p.status.conditions or ():
        if c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable":
            return c.message
    return None


def _place(core: client.CoreV1Api, res: client.ResourceV1Api, ns: str, name: str, claim: dict, label: str) -> None:
    res.create_namespaced_resource_claim(ns, claim)
    core.create_namespaced_pod(ns, pod(ns, name, claim["metadata"]["name"], label))


def _record(api_client: client.ApiClient, sub: str, extra: dict[str, object]) -> None:
    """The module's DRA objects as the API server returns them now, into $DRA137_RECORD/sub."""
    out = os.environ.get("DRA137_RECORD")
    if not out:
        return
    d = Path(out) / sub
    d.mkdir(parents=True, exist_ok=True)
    res = client.ResourceV1Api(api_client)
    lists = {"resourceslices.json": res.list_resource_slice, "devicetaintrules.json": res.list_device_taint_rule,
             "deviceclasses.json": res.list_device_class,
             "resourceclaims.json": res.list_resource_claim_for_all_namespaces}
    for name, call in lists.items():
        items = [o for o in json.loads(call(_preload_content=False).data)["items"]
                 if "dra137" in json.dumps(o["metadata"]) or "dra137" in (o.get("spec") or {}).get("nodeName", "")]
        (d / name).write_text(json.dumps({"items": items}, indent=1, sort_keys=True) + "\n")
    for name, obj in extra.items():
        (d / name).write_text(json.dumps(obj, indent=1, sort_keys=True) + "\n")


def _setup(plane: Plane, node: str, label: str) -> tuple[client.ApiClient, client.CoreV1Api, client.ResourceV1Api]:
    api_client = api(plane.kubeconfig)
    core, res = client.CoreV1Api(api_client), client.ResourceV1Api(api_client)
    ensure_namespace(core, NS)
    add_node(core, node, {"cpu": "8", "memory": "32Gi", "pods": "110"}, {LABEL: label})
    wait_nodes_ready(core, [node])
    for kind in ("whole", "shared"):
        res.create_device_class(device_class(kind))
    res.create_resource_slice(resource_slice(node))
    res.create_device_taint_rule(taint_rule(node))
    return api_client, core, res


def _teardown(core: client.CoreV1Api, res: client.ResourceV1Api, node: str, namespaces: tuple[str, ...]) -> None:
    for ns in namespaces:
        core.delete_collection_namespaced_pod(ns, grace_period_seconds=0)
        res.delete_collection_namespaced_resource_claim(ns)
    res.delete_device_taint_rule(f"{node}-drain")
    res.delete_collection_resource_slice(field_selector=f"spec.nodeName={node}")
    core.delete_node(node)
    for kind in ("whole", "shared"):
        res.delete_device_class(f"dra137-{kind}")


@pytest.fixture(scope="module")
def placed(plane: Plane) -> Iterator[tuple[client.ApiClient, LiveView]]:
    """Everything placed by the real scheduler (see the module doc), and kubeview watching."""
    api_client, core, res = _setup(plane, NODE, "dra137")
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(
        name=ADMIN_NS, labels={"resource.kubernetes.io/admin-access": "true"})))
    ensure_namespace(core, ADMIN_NS)
    view = LiveView(plane.kubeconfig, dra=True).start()
    try:
        _place(core, res, NS, "whole-a", whole(NS, "whole-a"), "dra137")
        wait_until(lambda: _allocated(res, NS, "whole-a"), TIMEOUT, "whole-a allocated")
        _place(core, res, NS, "whole-b", whole(NS, "whole-b"), "dra137")
        wait_until(lambda: _unschedulable(core, NS, "whole-b"), TIMEOUT, "whole-b found unschedulable")
        for name in ("share-a", "share-b"):
            _place(core, res, NS, name, shared(NS, name, "30Gi"), "dra137")
            wait_until(lambda name=name: _allocated(res, NS, name), TIMEOUT, f"{name} allocated")
        _place(core, res, NS, "prio-a", prioritized(NS, "prio-a"), "dra137")
        wait_until(lambda: _allocated(res, NS, "prio-a"), TIMEOUT, "prio-a allocated")
        _place(core, res, ADMIN_NS, "admin-a", whole(ADMIN_NS, "admin-a", admin=True), "dra137")
        wait_until(lambda: _allocated(res, ADMIN_NS, "admin-a"), TIMEOUT, "admin-a allocated")
        _record(api_client, "placed", {"pod-whole-b-unschedulable.json": {"message": _unschedulable(core, NS, "whole-b")}})
        yield api_client, view
    finally:
        view.stop()
        _teardown(core, res, NODE, (NS, ADMIN_NS))
        core.delete_namespace(ADMIN_NS)


def _states(model: ClusterModel) -> dict:
    ng = model.gpus.node(NODE)
    return {s.device.name: s for s in ng.devices} if ng else {}


def _wait_view(view: LiveView, ready) -> dict:
    wait_until(lambda: view.read(lambda m: ready(_states(m))), TIMEOUT, "kubeview to show the claims")
    return view.read(_states)


def test_tainted_devices_are_not_free_and_the_scheduler_leaves_them(placed) -> None:
    api_client, view = placed
    res = client.ResourceV1Api(api_client)
    got = [r["device"] for r in _claim(res, NS, "whole-a")["status"]["allocation"]["devices"]["results"]]
    assert got == ["gpu-0"]  # the real scheduler: the tainted GPUs were not candidates
    assert not _allocated(res, NS, "whole-b")
    states = _wait_view(view, lambda s: s.get("gpu-0") is not None and s["gpu-0"].claim is not None)
    assert states["gpu-1"].state == "tainted" and states["gpu-2"].state == "tainted"
    assert [(t.key, t.effect, t.rule) for t in states["gpu-1"].taints] == [("kubeview.test/ecc", "NoSchedule", None)]
    assert [(t.key, t.effect, t.rule) for t in states["gpu-2"].taints] == [
        ("kubeview.test/drain", "NoSchedule", f"{NODE}-drain")]
    assert states["gpu-0"].claim == (NS, "whole-a")
    ng = view.read(lambda m: m.gpus.node(NODE))
    # gpu-0 and gpu-s are held (each counts once), the tainted ones are neither free nor column units
    assert (ng.gpu_allocated, ng.gpu_free) == (2, 0)


def test_shared_device_lists_every_share_with_consumed_capacity(placed) -> None:
    api_client, view = placed
    res = client.ResourceV1Api(api_client)
    api_shares = {}
    for name in ("share-a", "share-b", "prio-a"):
        for r in _claim(res, NS, name)["status"]["allocation"]["devices"]["results"]:
            assert r["device"] == "gpu-s" and r["shareID"]
            api_shares[(NS, name)] = (r["shareID"], r["consumedCapacity"]["memory"])
    states = _wait_view(view, lambda s: s.get("gpu-s") is not None and len(s["gpu-s"].shares) == 3)
    s = states["gpu-s"]
    assert s.state == "allocated"
    assert {h.claim: (h.share_id, h.consumed["memory"]) for h in s.shares} == {
        k: (sid, int(mem[:-2]) * 2**30) for k, (sid, mem) in api_shares.items()}
    assert s.consumed == {"memory": 70 * 2**30} and s.device.capacity["memory"] == 80 * 2**30
    assert {h.pods for h in s.shares} == {("share-a",), ("share-b",), ("prio-a",)}


def test_prioritized_list_shows_the_alternative_it_got(placed) -> None:
    api_client, view = placed
    res = client.ResourceV1Api(api_client)
    requests = [r["request"] for r in _claim(res, NS, "prio-a")["status"]["allocation"]["devices"]["results"]]
    assert requests == ["gpu/shared"]
    claim = view.read(lambda m: m.gpus.claims.get((NS, "prio-a")))
    assert claim.chosen() == {"gpu": "shared"}
    assert claim.requests[0].alternatives == ("two-whole", "shared")


def test_admin_access_claim_is_not_counted_as_use(placed) -> None:
    api_client, view = placed
    res = client.ResourceV1Api(api_client)
    results = _claim(res, ADMIN_NS, "admin-a")["status"]["allocation"]["devices"]["results"]
    assert [r.get("adminAccess") for r in results] == [True]
    device = results[0]["device"]
    states = _wait_view(view, lambda s: s.get(device) is not None and s[device].admin)
    assert states[device].admin == ((ADMIN_NS, "admin-a"),)
    ng = view.read(lambda m: m.gpus.node(NODE))
    assert ng.gpu_allocated == 2  # gpu-0 and gpu-s, as before the admin claim
    assert all(c != (ADMIN_NS, "admin-a") for s in states.values() for c in [s.claim])


POOL_NODE = "dra137-pool"


def _rpsr(name: str, node: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourcePoolStatusRequest",
            "metadata": {"name": name}, "spec": {"driver": DRIVER, "poolName": node}}


def test_pool_status_request_is_answered_and_compared(gated_plane: Plane) -> None:
    api_client, core, res = _setup(gated_plane, POOL_NODE, "dra137-pool")
    alpha = client.ResourceV1alpha3Api(api_client)
    view = LiveView(gated_plane.kubeconfig, dra=True).start()
    try:
        _place(core, res, NS, "pool-a", whole(NS, "pool-a"), "dra137-pool")
        wait_until(lambda: _allocated(res, NS, "pool-a"), TIMEOUT, "pool-a allocated")
        alpha.create_resource_pool_status_request(_rpsr("dra137-now", POOL_NODE))

        def answered(name: str) -> dict | None:
            resp = alpha.read_resource_pool_status_request(name, _preload_content=False)
            obj = json.loads(resp.data)
            return obj if obj.get("status") else None

        wait_until(lambda: answered("dra137-now"), TIMEOUT, "the controller to answer the request")
        up = answered("dra137-now")
        pool = up["status"]["pools"][0]
        # upstream's own figures: 4 devices, gpu-0 allocated, gpu-1 and gpu-2 tainted, gpu-s available
        assert (pool["totalDevices"], pool["allocatedDevices"], pool["unavailableDevices"],
                pool["availableDevices"]) == (4, 1, 2, 1)

        def diffs(m: ClusterModel) -> list | None:
            if "dra137-now" not in m.gpus.upstream.answers or not m.gpus.upstream.answers["dra137-now"].answered:
                return None
            return compare(m.gpus.pool_counts(), m.gpus.upstream.answers)

        wait_until(lambda: view.read(diffs) == [], TIMEOUT, "kubeview's pool figures to equal upstream's")
        # the answer is a point in time: a claim allocated after it is a difference kubeview shows
        _place(core, res, NS, "pool-b", shared(NS, "pool-b", "10Gi"), "dra137-pool")
        wait_until(lambda: _allocated(res, NS, "pool-b"), TIMEOUT, "pool-b allocated")
        wait_until(lambda: {(d.what, d.ours, d.upstream) for d in view.read(diffs) or ()} ==
                   {("allocated", 2, 1), ("available", 0, 1)}, TIMEOUT, "kubeview to show the difference")
        shown = view.read(diffs)
        assert all(d.as_of and d.request == "dra137-now" for d in shown)
        _record(api_client, "pool-status", {"resourcepoolstatusrequest.json": up})
    finally:
        view.stop()
        _teardown(core, res, POOL_NODE, (NS,))
