"""The DRA GPU ledger through the real `kubernetes` client against the test API server serving the
recorded v1.36.2 DRA cluster (tests/fixtures/k8s/dra): discovery, lists and the recorded watch streams.

Expected figures are derived from the recorded claims (`status.allocation.devices.results`), not
from kubeview's own arithmetic: every allocated device counted once on the node of its pool.
"""

from __future__ import annotations

import json

from kubeapi import KubeAPI, WatchScript, fixtures
from kubeapi.dra_model import recorded_dra_model
from kubeapi.server import CA_STATUS_LIST, QUOTA_LISTS
from kubeapi.source_run import collect_events

from kubeview.cluster.kube.source import KubeSource, WatchSettings
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, WatchEvent

FAST = WatchSettings(error_backoffs=(0.05,), watch_timeout=(30, 30))
DRA = "/apis/resource.k8s.io/v1"
# every watch the source opens ends cleanly (an unscripted one would hold its informer for watch_timeout)
WATCHES = ["/api/v1/nodes", "/api/v1/pods", "/apis/apps/v1/replicasets", "/apis/apps/v1/deployments",
           "/apis/apps/v1/statefulsets", CA_STATUS_LIST, f"{DRA}/deviceclasses", f"{DRA}/resourceslices",
           f"{DRA}/resourceclaims", QUOTA_LISTS[0], "/apis/batch/v1/jobs"]
GPU = "nvidia.com/gpu"


def serve_dra(api: KubeAPI, *, scripted: dict[str, WatchScript] | None = None) -> None:
    api.serve_recording("dra", lists={"/api/v1/pods": "pods.json"})
    for path in WATCHES:
        api.script_watch(path, (scripted or {}).get(path) or WatchScript([], end="close"))


def run(api: KubeAPI, **kwargs) -> list:
    return collect_events(KubeSource(str(api.kubeconfig), settings=FAST, **kwargs), 1)


def recorded_allocations(claims: list[dict]) -> dict[str, set[tuple[str, str]]]:
    """node (the pool's node in this recording) -> allocated (pool, device), from the claims alone."""
    out: dict[str, set] = {}
    for c in claims:
        alloc = (c.get("status") or {}).get("allocation")
        if not alloc:
            continue
        node = alloc["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"][0]
        for r in alloc["devices"]["results"]:
            out.setdefault(node, set()).add((r["pool"], r["device"]))
    return out


def gpu_requested(model: ClusterModel) -> dict[str, int]:
    a = model.allocation()
    col = a.column(GPU)
    return {n: int(a.requested[i, col]) for i, n in enumerate(a.nodes)}


def test_dra_kinds_are_listed_where_discovery_serves_them(kube_api: KubeAPI) -> None:
    serve_dra(kube_api)
    events = run(kube_api)
    listed = {e.kind: e for e in events if isinstance(e, Listed)}
    assert {"DeviceClass", "ResourceSlice", "ResourceClaim"} <= set(listed)
    assert len(kube_api.requests_to(f"{DRA}/", method="GET")) == 1  # discovery, asked once
    model = ClusterModel()
    model.apply_all(events)
    claims = fixtures.load("dra/resourceclaims.json")["items"]
    expected = recorded_allocations(claims)
    requested = gpu_requested(model)
    for node, devices in expected.items():
        ng = model.gpus.node(node)
        held = {(d.device.pool, d.device.name) for d in ng.devices if d.state == "allocated"}
        assert held == devices
        assert requested[node] == len(devices)  # each device once, mapped pod requests not again
    # device-plugin node: mixed-ext-pod's plain request against status.allocatable, no claim
    assert requested["gpu-node-1"] == 1 and model.gpus.node("gpu-node-1") is None
    a = model.allocation()
    col = a.column(GPU)
    alloc = {n: int(a.allocatable[i, col]) for i, n in enumerate(a.nodes)}
    assert alloc["dra-node-1"] == alloc["dra-node-2"] == alloc["gpu-node-1"] == 2
    assert alloc["dra-mig-node-1"] == 7  # six 1g.10gb slices taken + the one still free; gpu-0 and 3g.40gb blocked
    assert not (set(requested) - set(alloc)) and all(requested[n] <= alloc[n] for n in alloc)
    # the shared claim is one device, reserved for both pods
    shared = next(d for d in model.gpus.node("dra-node-1").devices if d.claim == ("dra", "shared-gpu"))
    assert shared.pods == ("shared-1", "shared-2")
    # the scheduler's 1,1,2 and 8-GPU refusals hold in kubeview's view: 2 GPUs fit nowhere among the
    # DRA nodes, 8 nowhere at all
    fits = dict(zip(a.nodes, model.largest_fit().tolist(), strict=True))
    assert max(fits[n] for n in ("dra-node-1", "dra-node-2", "dra-mig-node-1")) == 1
    assert model.fragmentation().size(8).placeable == 0


def test_without_resource_k8s_io_v1_nothing_changes(kube_api: KubeAPI) -> None:
    for path in [*WATCHES[:6], *WATCHES[-2:]]:
        kube_api.script_watch(path, WatchScript([], end="close"))
    events = run(kube_api)
    assert {e.kind for e in events if isinstance(e, Listed)} == {"Node", "Pod", "ReplicaSet", "Deployment",
                                                                  "StatefulSet", "Job", "ca.Status", "ResourceQuota"}
    assert not kube_api.requests_to(f"{DRA}/resourceclaims")


def test_recorded_watch_streams_allocate_and_free_devices(kube_api: KubeAPI) -> None:
    serve_dra(kube_api, scripted={
        "/api/v1/pods": WatchScript.recorded("dra/watch-pods.jsonl", end="close"),
        f"{DRA}/resourceclaims": WatchScript.recorded("dra/watch-resourceclaims.jsonl", end="close")})
    empty = {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "297"}, "items": []}
    kube_api.set_list("/api/v1/pods", empty)  # namespace dra was empty where both watches start
    kube_api.set_list_fixture(f"{DRA}/resourceclaims", "dra/resourceclaims-list-initial.json")
    events = run(kube_api)
    (watch,) = kube_api.requests_to(f"{DRA}/resourceclaims", watch=True)
    assert watch.query["resourceVersion"] == "297" and watch.query["allowWatchBookmarks"] == "true"

    # the end of the streams is the recorded final lists
    model = ClusterModel()
    model.apply_all(events)
    final = recorded_dra_model()
    assert gpu_requested(model) == gpu_requested(final)
    assert model.allocation().requested.tolist() == final.allocation().requested.tolist()

    # claim by claim: frag-1 and frag-2 take one GPU on each DRA node; frag-1's deletion frees its device
    step = ClusterModel()
    step.apply_all(e for e in events if isinstance(e, Listed) and e.kind != "ResourceClaim")
    step.apply(Listed("ResourceClaim", []))
    seen = []
    for e in events:
        if isinstance(e, WatchEvent) and e.kind == "ResourceClaim":
            step.apply(e)
            req = gpu_requested(step)
            seen.append((e.obj["metadata"]["name"].split("-extended")[0], e.obj["metadata"]["resourceVersion"],
                         req["dra-node-1"], req["dra-node-2"]))
    by_rv = {rv: (n1, n2) for _, rv, n1, n2 in seen}
    assert by_rv["312"] == (1, 1)  # frag-1 and frag-2 allocated: 2 free GPUs, no 2-GPU fit
    assert by_rv["321"] == (1, 1)  # frag-1 deleting: still allocated
    assert by_rv["322"] == (1, 0)  # its allocation cleared: the device is free again
    assert by_rv["327"] == (1, 2)  # frag-3 got both GPUs of dra-node-2
    assert by_rv["340"] == (0, 0)


def test_pod_mapped_to_a_claim_counts_its_gpu_once() -> None:
    pod = fixtures.load("dra/pod-ext-pod.json")
    claim = fixtures.load("dra/resourceclaim-ext-pod.json")
    model = ClusterModel()
    model.apply(Listed("Node", fixtures.load("dra/nodes.json")["items"]))
    model.apply(Listed("DeviceClass", fixtures.load("dra/deviceclasses.json")["items"]))
    model.apply(Listed("ResourceSlice", fixtures.load("dra/resourceslices.json")["items"]))
    model.apply(Listed("Pod", [pod]))
    assert gpu_requested(model)["dra-node-2"] == 0  # the spec's nvidia.com/gpu is not a device-plugin request
    model.apply(Listed("ResourceClaim", [claim]))
    assert gpu_requested(model)["dra-node-2"] == 1
    view = model.pods[("dra", "ext-pod")]
    assert view.claim_names == (claim["metadata"]["name"],) and GPU not in view.requests
    assert json.dumps(pod["spec"]).count(GPU) == 2  # the spec still asks (requests and limits)
