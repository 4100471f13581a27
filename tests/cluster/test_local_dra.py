"""The embedded cluster as a DRA cluster (clusters/dra.yaml, shaped like tests/fixtures/k8s/dra): its
scheduler allocates DRA GPUs as the recordings show kube-scheduler doing it, and the 1, 1, 2 story
gives the recorded outcome under `spread` and places all three under `pack`. Pure state transitions
(no processes); several seeds, since names (and nothing else) depend on the seed."""

from __future__ import annotations

import pytest
from kubeapi import fixtures

from kubeview.cluster.local_config import DEFAULT_FILE, ClusterFileError, load_cluster, parse_cluster
from kubeview.cluster.local_state import LocalCluster
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
