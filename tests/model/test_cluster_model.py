"""ClusterModel: the recorded cluster's allocation checked by hand, and incremental == rebuilt."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
from kubeapi import fixtures

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import ConnectionState, Listed, WatchEvent
from kubeview.model.usage import NodeUsage, UsageUpdate

Gi = 2**30


def listed(kind: str, name: str) -> Listed:
    body = fixtures.load(name)
    return Listed(kind, body["items"], body["metadata"]["resourceVersion"])


def recorded_model(pods: str = "pods-list.json") -> ClusterModel:
    m = ClusterModel("recorded")
    m.apply(listed("Node", "nodes.json"))
    m.apply(listed("Pod", pods))
    m.apply(listed("ReplicaSet", "replicaset-list.json"))
    return m


def row(m: ClusterModel, node: str, what: str = "requested") -> dict[str, int]:
    a = m.allocation()
    i = a.nodes.index(node)
    return {r: int(getattr(a, what)[i, j]) for j, r in enumerate(a.resources)}


def snapshot_of(m: ClusterModel) -> tuple:
    a = m.allocation()
    return (a.nodes, a.resources, a.capacity.tolist(), a.allocatable.tolist(), a.requested.tolist(),
            a.limits.tolist(), m.pod_counts().tolist(), sorted(p.key for p in m.pending()))


def test_recorded_cluster_by_hand() -> None:
    m = recorded_model()
    a = m.allocation()
    assert a.nodes == ["cpu-node-1", "cpu-node-2", "cpu-node-3", "gpu-node-1", "gpu-node-2"]
    assert a.resources[:4] == ["cpu", "memory", "pods", "ephemeral-storage"] and "nvidia.com/gpu" in a.resources
    # pods-list.json: consumer-sxzwf/-2tg9b/-zqcpg on cpu-node-1/2/3, gpu-a on gpu-node-1, gpu-b on gpu-node-2,
    # each 100m and nothing else; gpu-a/b ask 1 GPU each; gpu-c (2 GPUs) is unbound
    for node in a.nodes:
        assert row(m, node)["cpu"] == 100, node
        assert row(m, node)["memory"] == 0
        assert row(m, node)["pods"] == 1
    assert row(m, "gpu-node-1")["nvidia.com/gpu"] == 1
    assert row(m, "gpu-node-1", "allocatable")["nvidia.com/gpu"] == 2
    assert row(m, "gpu-node-1", "limits")["nvidia.com/gpu"] == 1
    assert row(m, "cpu-node-1", "allocatable") == {"cpu": 8000, "memory": 16 * Gi, "pods": 110,
                                                    "ephemeral-storage": 100 * Gi, "hugepages-1Gi": 0,
                                                    "hugepages-2Mi": 0, "nvidia.com/gpu": 0}
    assert m.pod_counts().tolist() == [1, 1, 1, 1, 1]
    assert m.largest_fit().tolist() == [0, 0, 0, 1, 1]
    assert [p.name for p in m.pending()] == ["gpu-c"]
    assert m.pending()[0].pending_reason.startswith("0/5 nodes are available: 5 Insufficient nvidia.com/gpu")
    frag = m.fragmentation()
    assert (frag.free_total, frag.size(1).placeable, frag.size(2).placeable, frag.size(2).ideal) == (2, 2, 0, 1)
    totals = m.totals()
    assert totals["cpu"] == {"capacity": 40000, "allocatable": 40000, "requested": 500, "limits": 0, "free": 39500}
    assert totals["nvidia.com/gpu"]["requested"] == 2 and totals["nvidia.com/gpu"]["free"] == 2
    w = m.workloads[("ReplicaSet", "default", "consumer")]
    assert (w.desired, w.ready) == (3, 3)


def test_terminating_pods_still_count() -> None:
    # pods-list-terminating.json: gpu-node-1 holds gpu-a, consumer-q67w4 and consumer-qzq62 (Terminating)
    m = recorded_model("pods-list-terminating.json")
    assert row(m, "gpu-node-1")["cpu"] == 300 and row(m, "gpu-node-1")["pods"] == 3
    assert row(m, "gpu-node-2")["cpu"] == 200  # gpu-b + consumer-ft89s
    assert row(m, "gpu-node-1")["nvidia.com/gpu"] == 1


def test_recorded_watch_stream_event_by_event() -> None:
    m = ClusterModel()
    m.apply(listed("Node", "nodes.json"))
    m.apply(listed("Pod", "pods-list-initial.json"))
    events = fixtures.watch_events("watch-pods.jsonl")
    seen = {}
    for n, e in enumerate(events, 1):
        before = m.version
        changed = m.apply(WatchEvent("Pod", e["type"], e["object"]))
        assert changed == (e["type"] != "BOOKMARK") and (m.version > before) == changed
        seen[n] = (row(m, "gpu-node-1")["cpu"], row(m, "gpu-node-1")["nvidia.com/gpu"], len(m.pending()))
    assert seen[1] == (0, 0, 1)  # gpu-a created, not bound yet
    assert seen[2] == (100, 1, 0)  # gpu-a bound to gpu-node-1
    assert seen[6][2] == 1  # gpu-c unschedulable
    assert seen[18] == (300, 1, 1)  # + consumer-qzq62 and consumer-q67w4 (scale to 6)
    assert seen[21] == (300, 1, 1)  # Terminating still counts
    assert seen[25] == (200, 1, 1)  # consumer-q67w4 deleted
    assert seen[27] == (100, 1, 1)  # consumer-qzq62 deleted
    fresh = recorded_model()
    assert snapshot_of(m) == snapshot_of(fresh)


def test_replayed_event_is_not_a_change() -> None:
    m = recorded_model()
    pod = fixtures.load("pods-list.json")["items"][0]
    v = m.version
    assert m.apply(WatchEvent("Pod", "MODIFIED", pod)) is False and m.version == v


def test_pods_before_their_node_count_once_it_arrives_and_after_it_returns() -> None:
    m = ClusterModel()
    m.apply(listed("Pod", "pods-list.json"))
    assert m.allocation().nodes == []
    nodes = fixtures.load("nodes.json")["items"]
    gpu1 = next(n for n in nodes if n["metadata"]["name"] == "gpu-node-1")
    m.apply(WatchEvent("Node", "ADDED", gpu1))
    assert row(m, "gpu-node-1")["nvidia.com/gpu"] == 1 and row(m, "gpu-node-1")["cpu"] == 100
    m.apply(WatchEvent("Node", "DELETED", gpu1))
    assert m.allocation().nodes == []
    m.apply(listed("Node", "nodes.json"))
    assert snapshot_of(m) == snapshot_of(recorded_model())


def test_finished_pods_release_their_node() -> None:
    m = recorded_model()
    pod = copy.deepcopy(next(p for p in fixtures.load("pods-list.json")["items"] if p["metadata"]["name"] == "gpu-a"))
    pod["status"]["phase"] = "Succeeded"
    pod["metadata"]["resourceVersion"] = "999"
    m.apply(WatchEvent("Pod", "MODIFIED", pod))
    assert row(m, "gpu-node-1")["nvidia.com/gpu"] == 0 and row(m, "gpu-node-1")["pods"] == 0
    assert m.largest_fit().tolist()[3] == 2
    assert m.fragmentation().size(2).placeable == 1


def test_node_changes_and_new_extended_resources() -> None:
    m = recorded_model()
    node = fixtures.load("node-gpu-node-1.json")
    node["metadata"]["resourceVersion"] = "1000"
    node["status"]["allocatable"]["example.com/fpga"] = "4"
    node["spec"]["unschedulable"] = True
    m.apply(WatchEvent("Node", "MODIFIED", node))
    assert row(m, "gpu-node-1", "allocatable")["example.com/fpga"] == 4
    assert m.allocation().resources[4:] == ["example.com/fpga", "hugepages-1Gi", "hugepages-2Mi", "nvidia.com/gpu"]
    assert m.largest_fit().tolist()[3] == 0  # cordoned
    assert row(m, "gpu-node-1")["cpu"] == 100  # its pods stay counted


def test_many_nodes_grow_the_buffers_and_reuse_rows() -> None:
    m = ClusterModel()
    template = fixtures.load("node-gpu-node-1.json")
    for i in range(100):
        n = copy.deepcopy(template)
        n["metadata"]["name"] = f"n{i:03d}"
        m.apply(WatchEvent("Node", "ADDED", n))
    for i in range(0, 100, 2):
        m.apply(WatchEvent("Node", "DELETED", {"metadata": {"name": f"n{i:03d}"}}))
    for i in range(100, 120):
        n = copy.deepcopy(template)
        n["metadata"]["name"] = f"n{i:03d}"
        m.apply(WatchEvent("Node", "ADDED", n))
    a = m.allocation()
    assert len(a.nodes) == 70 and a.nodes[0] == "n001"
    assert (a.allocatable[:, a.column("nvidia.com/gpu")] == 2).all()
    assert m.node_pods.table.capacity.shape[0] == 128  # doubled from 16, then rows reused from the free list


def _random_pod(rng: random.Random, i: int, nodes: list[str]) -> dict:
    gpus = rng.choice([0, 0, 1, 2])
    res = {"requests": {"cpu": f"{rng.choice([100, 250, 1000])}m", "memory": f"{rng.choice([64, 512])}Mi"}}
    if gpus:
        res["requests"]["nvidia.com/gpu"] = str(gpus)
        res["limits"] = {"nvidia.com/gpu": str(gpus)}
    spec = {"containers": [{"name": "c", "resources": res}]}
    if rng.random() < 0.7:
        spec["nodeName"] = rng.choice(nodes + ["not-a-node-yet"])
    return {"metadata": {"name": f"p{i}", "namespace": rng.choice(["a", "b"]), "resourceVersion": str(rng.random())},
            "spec": spec, "status": {"phase": rng.choice(["Pending", "Running", "Running", "Succeeded", "Failed"])}}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incremental_equals_rebuilt(seed: int) -> None:
    rng = random.Random(seed)
    nodes = fixtures.load("nodes.json")["items"]
    names = [n["metadata"]["name"] for n in nodes]
    m = ClusterModel()
    m.apply(Listed("Node", nodes[:3]))
    live: dict[tuple[str, str], dict] = {}
    for _ in range(600):
        r = rng.random()
        if r < 0.55 or not live:
            pod = _random_pod(rng, rng.randrange(120), names)
            key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
            m.apply(WatchEvent("Pod", "MODIFIED" if key in live else "ADDED", pod))
            live[key] = pod
        elif r < 0.85:
            key = rng.choice(sorted(live))
            m.apply(WatchEvent("Pod", "DELETED", live.pop(key)))
        else:
            node = rng.choice(nodes)
            if node["metadata"]["name"] in m.nodes and rng.random() < 0.5:
                m.apply(WatchEvent("Node", "DELETED", node))
            else:
                m.apply(WatchEvent("Node", "ADDED", node))
    rebuilt = ClusterModel()
    rebuilt.apply(Listed("Pod", list(live.values())))
    rebuilt.apply(Listed("Node", [n for n in nodes if n["metadata"]["name"] in m.nodes]))
    assert snapshot_of(m) == snapshot_of(rebuilt)
    m.apply(Listed("Pod", list(live.values())))  # a relist over an existing state changes nothing
    assert snapshot_of(m) == snapshot_of(rebuilt)


def test_connection_and_usage_bump_the_version() -> None:
    m = recorded_model()
    v = m.version
    assert m.apply(ConnectionState("reconnecting", 1.0, "connection refused"))
    assert m.connection.state == "reconnecting" and m.version == v + 1
    assert not m.apply(ConnectionState("reconnecting", 2.0, "connection refused"))
    m.apply(UsageUpdate(nodes={"gpu-node-1": NodeUsage(cpu=1500.0, memory=2 * Gi, gpu_util=(80.0, 0.0))},
                        source="prometheus", at=10.0))
    assert m.usage.node_cpu("gpu-node-1") == 1500.0 and m.usage.node_cpu("cpu-node-1") is None
    m.apply(UsageUpdate(source="prometheus", error="Prometheus at http://x is unreachable."))
    assert m.usage.error and m.usage.node_cpu("gpu-node-1") == 1500.0  # a failed reading keeps the last one
    assert isinstance(m.allocation().requested, np.ndarray)
