"""The embedded cluster as a DRA cluster (clusters/dra.yaml, shaped like tests/fixtures/k8s/dra): its
scheduler allocates DRA GPUs as the recordings show kube-scheduler doing it, and the 1, 1, 2 story
gives the recorded outcome under `spread` and places all three under `pack`. Pure state transitions
(no processes); several seeds, since names (and nothing else) depend on the seed."""

from __future__ import annotations

import pytest
from kubeapi import fixtures

from kubeview.cluster.local.config import DEFAULT_FILE, ClusterFileError, load_cluster, parse_cluster
from kubeview.cluster.local.state import LocalCluster
from kubeview.cluster.source import ActionError
from kubeview.scheduling.config import PackingConfig

DRA_FILE = DEFAULT_FILE.parent / "dra.yaml"
GPU = "nvidia.com/gpu"
SEEDS = (1, 2, 3)


def gpu_pod(name: str, gpus: int, pool: str | None = "dra") -> dict:
    spec: dict = {"containers": [{"name": "cuda", "image": "cuda", "resources": {
        "requests": {"cpu": "100m", GPU: str(gpus)}, "limits": {GPU: str(gpus)}}}]}
    if pool:
        spec["nodeSelector"] = {"kubeview.local/pool": pool}
    return {"metadata": {"name": name, "namespace": "dra"}, "spec": spec}


def cluster(policy: str, seed: int) -> LocalCluster:
    return LocalCluster(load_cluster(DRA_FILE), PackingConfig(policy=policy), seed=seed)


def claims_of(c: LocalCluster, pod: dict) -> list[dict]:
    uid = pod["metadata"]["uid"]
    return [cl for cl in c.list("ResourceClaim")
            if any(r.get("uid") == uid for r in cl["metadata"].get("ownerReferences") or [])]


def node_of(c: LocalCluster, name: str) -> str | None:
    return c.get("Pod", "dra", name)["spec"].get("nodeName")


def scheduled_message(c: LocalCluster, name: str) -> str:
    pod = c.get("Pod", "dra", name)
    return next(x["message"] for x in pod["status"]["conditions"] if x["type"] == "PodScheduled")


@pytest.mark.parametrize("seed", SEEDS)
def test_one_one_two_under_spread_is_the_recorded_outcome(seed: int) -> None:
    c = cluster("spread", seed)
    for name, gpus in (("frag-1", 1), ("frag-2", 1), ("frag-3", 2)):
        c.create_pod(gpu_pod(name, gpus))
    assert {node_of(c, "frag-1"), node_of(c, "frag-2")} == {"dra-node-1", "dra-node-2"}
    assert node_of(c, "frag-3") is None
    recorded = fixtures.load("dra/pod-frag-3-unschedulable.json")
    recorded_msg = next(x["message"] for x in recorded["status"]["conditions"] if x["type"] == "PodScheduled")
    assert scheduled_message(c, "frag-3") == recorded_msg.split(" still not schedulable")[0]
    # frag-1 goes: its claim is deallocated and deleted, and frag-3 takes both GPUs of that node
    freed = node_of(c, "frag-1")
    c.remove_pod("dra", "frag-1", grace=0)
    assert node_of(c, "frag-3") == freed
    (claim,) = claims_of(c, c.get("Pod", "dra", "frag-3"))
    assert claim["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2  # one request, count 2
    assert sorted(r["device"] for r in claim["status"]["allocation"]["devices"]["results"]) == ["gpu-0", "gpu-1"]
    assert len(c.list("ResourceClaim")) == 2


@pytest.mark.parametrize("seed", SEEDS)
def test_one_one_two_under_pack_places_all_three(seed: int) -> None:
    c = cluster("pack", seed)
    for name, gpus in (("frag-1", 1), ("frag-2", 1), ("frag-3", 2)):
        c.create_pod(gpu_pod(name, gpus))
    assert node_of(c, "frag-1") == node_of(c, "frag-2") and node_of(c, "frag-3") not in (None, node_of(c, "frag-1"))
    a = c.model.allocation()
    col = a.column(GPU)
    for n in ("dra-node-1", "dra-node-2"):
        assert a.requested[a.nodes.index(n), col] == a.allocatable[a.nodes.index(n), col] == 2


@pytest.mark.parametrize("seed", SEEDS)
def test_claims_look_like_the_schedulers(seed: int) -> None:
    c = cluster("spread", seed)
    pod = c.create_pod(gpu_pod("ext-pod", 1))
    pod = c.get("Pod", "dra", "ext-pod")
    (claim,) = claims_of(c, pod)
    recorded = fixtures.load("dra/resourceclaim-ext-pod.json")
    meta, rmeta = claim["metadata"], recorded["metadata"]
    assert meta["generateName"] == "ext-pod-extended-resources-" and meta["name"].startswith(meta["generateName"])
    assert meta["annotations"] == rmeta["annotations"] and meta["finalizers"] == rmeta["finalizers"]
    assert [(r["kind"], r["name"], r["controller"]) for r in meta["ownerReferences"]] == [("Pod", "ext-pod", True)]
    assert claim["spec"] == recorded["spec"]
    assert set(claim["status"]) == set(recorded["status"]) and \
        set(claim["status"]["allocation"]) == set(recorded["status"]["allocation"])
    node = pod["spec"]["nodeName"]
    assert claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [node]
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "ext-pod", "uid": pod["metadata"]["uid"]}]
    ercs = pod["status"]["extendedResourceClaimStatus"]
    assert ercs["resourceClaimName"] == meta["name"] and ercs["requestMappings"] == \
        fixtures.load("dra/pod-ext-pod.json")["status"]["extendedResourceClaimStatus"]["requestMappings"]
    # the order of events for one pod, as recorded: claim ADDED, claim allocated, pod mapped, pod bound
    order = [(e.kind, e.type, bool(e.obj.get("status", {}).get("allocation")) if e.kind == "ResourceClaim"
              else bool(e.obj["spec"].get("nodeName")))
             for e in c.events if e.obj["metadata"].get("name") in ("ext-pod", meta["name"])]
    assert order[:5] == [("Pod", "ADDED", False), ("ResourceClaim", "ADDED", False),
                         ("ResourceClaim", "MODIFIED", True), ("Pod", "MODIFIED", False), ("Pod", "MODIFIED", True)]


def test_mig_slices_and_a_mixed_ledger() -> None:
    c = cluster("spread", 1)
    c.create_pod(gpu_pod("big-ext-pod", 4, pool="dra-mig"))
    c.create_pod(gpu_pod("mixed-ext-pod", 1, pool="gpu"))  # a device-plugin node: no claim
    big = c.get("Pod", "dra", "big-ext-pod")
    (claim,) = claims_of(c, big)
    devices = [r["device"] for r in claim["status"]["allocation"]["devices"]["results"]]
    assert len(devices) == 4 and all("-mig-1g10gb-" in d for d in devices)
    mixed = c.get("Pod", "dra", "mixed-ext-pod")
    assert mixed["spec"]["nodeName"].startswith("gpu-node-") and not claims_of(c, mixed)
    assert "extendedResourceClaimStatus" not in mixed["status"]
    m = c.model
    a = m.allocation()
    col = a.column(GPU)
    gpus = {n: (int(a.allocatable[i, col]), int(a.requested[i, col])) for i, n in enumerate(a.nodes)}
    assert gpus[mixed["spec"]["nodeName"]] == (2, 1) and gpus["dra-mig-node-1"] == (7, 4)
    assert gpus["dra-node-1"] == gpus["dra-node-2"] == (2, 0)
    frag = m.fragmentation()
    # free: 1 + 2 (device plugin) + 2 + 2 (DRA) + 3 MIG; 2-GPU pods: 0+1+1+1+1 = 4 placeable
    assert frag.free_total == 10 and frag.size(2).placeable == 4 and frag.size(4).placeable == 0
    states = {d.device.name: d for d in m.gpus.node("dra-mig-node-1").devices}
    assert {d.device.attr("profile") for d in states.values()} == {"1g.10gb"}
    assert sum(d.state == "allocated" for d in states.values()) == 4


def test_bad_dra_fields_are_one_clear_line() -> None:
    bad = "nodes:\n  - {name: n, capacity: {cpu: '1', memory: 1Gi}, dra: {gpus: 0}}\n"
    with pytest.raises(ClusterFileError) as err:
        parse_cluster(bad, "c.yaml")
    assert str(err.value) == "c.yaml: nodes[0].dra.gpus: must be a positive integer"


# --- a pod's own claims: the resourceclaim controller's template claims, allocated by the scheduler ----
def template(name: str, request: str = "gpu", selectors: tuple[str, ...] = (), count: int | None = None) -> dict:
    exactly: dict = {"deviceClassName": "gpu.nvidia.com"}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if count is not None:
        exactly["count"] = count
    return {"kind": "ResourceClaimTemplate", "metadata": {"name": name, "namespace": "dra"},
            "spec": {"spec": {"devices": {"requests": [{"name": request, "exactly": exactly}]}}}}


def claim_pod(name: str, claims: dict[str, str], pool: str | None = "dra", by_name: bool = False) -> dict:
    key = "resourceClaimName" if by_name else "resourceClaimTemplateName"
    spec: dict = {"resourceClaims": [{"name": k, key: v} for k, v in claims.items()],
                  "containers": [{"name": "cuda", "image": "cuda", "resources": {
                      "requests": {"cpu": "100m"}, "claims": [{"name": k} for k in claims]}}]}
    if pool:
        spec["nodeSelector"] = {"kubeview.local/pool": pool}
    return {"metadata": {"name": name, "namespace": "dra"}, "spec": spec}


@pytest.mark.parametrize("seed", SEEDS)
def test_template_claims_look_like_the_controllers_and_are_allocated(seed: int) -> None:
    c = cluster("spread", seed)
    c.create_claim_object(template("gpu-template"))
    c.create_pod(claim_pod("claim-pod", {"gpu": "gpu-template"}))
    pod = c.get("Pod", "dra", "claim-pod")
    (claim,) = claims_of(c, pod)
    recorded = next(x for x in fixtures.load("dra/resourceclaims.json")["items"]
                    if x["metadata"]["name"].startswith("claim-pod-"))
    meta, rmeta = claim["metadata"], recorded["metadata"]
    assert meta["generateName"] == rmeta["generateName"] == "claim-pod-gpu-"
    assert meta["name"].startswith("claim-pod-gpu-") and len(meta["name"]) == len(rmeta["name"])
    assert meta["annotations"] == rmeta["annotations"] and meta["finalizers"] == rmeta["finalizers"]
    assert [{k: r[k] for k in ("apiVersion", "kind", "name", "controller")} for r in meta["ownerReferences"]] == \
        [{k: r[k] for k in ("apiVersion", "kind", "name", "controller")} for r in rmeta["ownerReferences"]]
    assert meta["ownerReferences"][0]["uid"] == pod["metadata"]["uid"]
    assert claim["spec"] == recorded["spec"]  # the apiserver's defaults: ExactCount, count 1
    assert set(claim["status"]) == set(recorded["status"]) == {"allocation", "reservedFor"}
    node = pod["spec"]["nodeName"]
    assert node in ("dra-node-1", "dra-node-2")
    (result,) = claim["status"]["allocation"]["devices"]["results"]
    assert (result["request"], result["driver"], result["pool"]) == ("gpu", "gpu.nvidia.com", node)
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "claim-pod", "uid": pod["metadata"]["uid"]}]
    recorded_pod = next(x for x in fixtures.load("dra/pods.json")["items"] if x["metadata"]["name"] == "claim-pod")
    assert [s["name"] for s in pod["status"]["resourceClaimStatuses"]] == \
        [s["name"] for s in recorded_pod["status"]["resourceClaimStatuses"]]
    assert pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"] == meta["name"]
    # recorded order: claim ADDED (no status), pod gets resourceClaimStatuses, claim allocated, pod bound
    order = [(e.kind, e.type) for e in c.events if e.obj["metadata"].get("name") in ("claim-pod", meta["name"])]
    assert order[:5] == [("Pod", "ADDED"), ("ResourceClaim", "ADDED"), ("Pod", "MODIFIED"),
                         ("ResourceClaim", "MODIFIED"), ("Pod", "MODIFIED")]
    ng = c.model.gpus.node(node)
    assert [d.device.name for d in ng.devices if d.claim == ("dra", meta["name"])] == [result["device"]]
    # the pod goes: its claim is deallocated and deleted, the device is free again
    c.remove_pod("dra", "claim-pod", grace=0)
    assert not c.list("ResourceClaim") and c.model.gpus.node(node).gpu_allocated == 0


@pytest.mark.parametrize("seed", SEEDS)
def test_template_claims_fill_the_dra_nodes_then_cannot_allocate(seed: int) -> None:
    c = cluster("spread", seed)
    c.create_claim_object(template("two", count=2))
    c.create_claim_object(template("full", selectors=("device.attributes['gpu.nvidia.com'].type == 'gpu'",)))
    c.create_pod(claim_pod("a", {"gpu": "two"}))
    c.create_pod(claim_pod("b", {"gpu": "two"}))
    assert {node_of(c, "a"), node_of(c, "b")} == {"dra-node-1", "dra-node-2"}
    c.create_pod(claim_pod("c", {"gpu": "full"}, pool=None))  # no full GPU left anywhere; MIG slices do not match
    assert node_of(c, "c") is None
    assert scheduled_message(c, "c") == "0/8 nodes are available: 8 cannot allocate all claims."
    (pending_claim,) = claims_of(c, c.get("Pod", "dra", "c"))  # made by the controller, not allocated
    assert pending_claim["status"] == {}
    freed = node_of(c, "a")
    c.remove_pod("dra", "a", grace=0)  # its claim is deleted: c's full GPU is on a's node now
    assert node_of(c, "c") == freed


@pytest.mark.parametrize("seed", SEEDS)
def test_mig_profile_selector_and_a_shared_claim(seed: int) -> None:
    c = cluster("spread", seed)
    c.create_claim_object(template("mig", request="mig",
                                   selectors=("device.attributes['gpu.nvidia.com'].profile == '1g.10gb'",)))
    c.create_pod(claim_pod("mig-pod", {"mig": "mig"}, pool=None))
    assert node_of(c, "mig-pod") == "dra-mig-node-1"
    (mig_claim,) = claims_of(c, c.get("Pod", "dra", "mig-pod"))
    assert mig_claim["status"]["allocation"]["devices"]["results"][0]["device"].startswith("gpu-0-mig-1g10gb-")
    # a standalone claim (recorded shared-gpu): both pods on one node, one device, both in reservedFor
    c.create_claim_object({"kind": "ResourceClaim", "metadata": {"name": "shared-gpu", "namespace": "dra"},
                           "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                               "deviceClassName": "gpu.nvidia.com"}}]}}})
    shared = c.get("ResourceClaim", "dra", "shared-gpu")
    assert shared["spec"] == fixtures.load("dra/resourceclaim-create-shared-gpu.json")["spec"]
    for name in ("shared-1", "shared-2"):
        c.create_pod(claim_pod(name, {"gpu": "shared-gpu"}, by_name=True))
    assert node_of(c, "shared-1") == node_of(c, "shared-2") is not None
    shared = c.get("ResourceClaim", "dra", "shared-gpu")
    assert [r["name"] for r in shared["status"]["reservedFor"]] == ["shared-1", "shared-2"]
    assert len(shared["status"]["allocation"]["devices"]["results"]) == 1
    assert "resourceClaimStatuses" not in c.get("Pod", "dra", "shared-1")["status"]
    c.remove_pod("dra", "shared-1", grace=0)
    assert [r["name"] for r in c.get("ResourceClaim", "dra", "shared-gpu")["status"]["reservedFor"]] == ["shared-2"]
    c.remove_pod("dra", "shared-2", grace=0)
    assert c.get("ResourceClaim", "dra", "shared-gpu")["status"] == {}  # deallocated, still there


def test_claim_objects_need_a_dra_cluster() -> None:
    c = LocalCluster(load_cluster(DEFAULT_FILE), PackingConfig(), seed=1)
    with pytest.raises(ActionError, match="serves no resource.k8s.io/v1"):
        c.create_claim_object(template("t"))
