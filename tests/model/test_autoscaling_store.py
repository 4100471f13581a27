"""The autoscaling store: NodePools, NodeClaims and CA's status (both formats) folded into node groups,
with their nodes; read from objects shaped as the controllers write them (tests/fixtures/autoscaling)."""

from __future__ import annotations

from autoscaling_builders import NOW, fixture, node, of_kind

from kubeview.model.autoscaling.ca_status import go_time, status_of
from kubeview.model.autoscaling.groups import CLUSTER_AUTOSCALER, EMBEDDED, KARPENTER, NODES, Limit, ScaleUp
from kubeview.model.autoscaling.store import (
    CA_STATUS,
    KARPENTER_NODECLAIM,
    KARPENTER_NODEPOOL,
    AutoscalingStore,
)
from kubeview.model.autoscaling.words import AT_MAX, FAILED, SCALING, STEADY, group_state
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, Scope, WatchEvent
from kubeview.model.kinds import autoscaling_unavailable
from kubeview.model.kube_events import parse_time

GPU_NODES = [node(f"gpu-{i}", {"karpenter.sh/nodepool": "gpu", "kubernetes.io/hostname": f"gpu-{i}"})
             for i in range(6)]


def karpenter_store() -> AutoscalingStore:
    store = AutoscalingStore()
    store.replace(KARPENTER_NODEPOOL, of_kind("karpenter.yaml", "NodePool"))
    store.replace(KARPENTER_NODECLAIM, of_kind("karpenter.yaml", "NodeClaim"))
    store.relist_nodes(GPU_NODES + [node("other", gpus=0)])
    return store


def test_a_nodepool_at_its_gpu_limit_with_its_nodes_and_claims() -> None:
    store = karpenter_store()
    gpu = store.group((KARPENTER, "gpu"))
    assert gpu is not None
    assert gpu.size == 6 and gpu.gpus == 48 and gpu.max_size is None
    assert gpu.limits == (Limit("cpu", 192_000, 1_000_000), Limit("nvidia.com/gpu", 48, 48))
    assert gpu.at_limit == Limit("nvidia.com/gpu", 48, 48)
    assert gpu.target == 3  # its NodeClaims, one launching and one whose launch failed among them
    assert gpu.scale_up == ScaleUp(6, 8, parse_time("2026-11-22T10:01:00Z"))
    assert gpu.error == "creating instance, insufficient capacity, all requested instance types were unavailable " \
                        "during launch"
    assert gpu.health == "Ready"
    assert gpu.node_labels["node.kubernetes.io/instance-type"] == "g-8x-amd64-linux"
    assert gpu.node_labels["karpenter.sh/nodepool"] == "gpu" and gpu.node_labels["team"] == "ml"
    assert gpu.taints == ({"key": "nvidia.com/gpu", "effect": "NoSchedule"},)
    assert gpu.template == {"cpu": 32_000, "memory": 256 * 2**30, "pods": 110, "nvidia.com/gpu": 8}
    assert store.nodes_of(gpu.key) == [f"gpu-{i}" for i in range(6)]
    assert [c.name for c in store.nodeclaims("gpu")] == ["gpu-a1b2c", "gpu-q9w4e", "gpu-x7k2p"]
    assert [c.stage for c in store.nodeclaims("gpu")] == ["ready", "launching", "launching"]
    assert group_state(gpu, NOW)[0] == FAILED  # a launch failing says so before its scale-up


def test_a_nodepool_with_no_nodes_takes_its_template_from_a_claim() -> None:
    store = AutoscalingStore()
    store.replace(KARPENTER_NODEPOOL, of_kind("karpenter.yaml", "NodePool"))
    store.replace(KARPENTER_NODECLAIM, of_kind("karpenter.yaml", "NodeClaim"))
    gpu = store.group((KARPENTER, "gpu"))
    assert gpu is not None and gpu.size == 6  # status.nodes while kubeview has no nodes
    assert gpu.template == {"cpu": 31_850, "memory": 250 * 2**30, "nvidia.com/gpu": 8, "pods": 110,
                            "ephemeral-storage": 90 * 2**30}
    cpu = store.group((KARPENTER, "cpu"))
    assert cpu is not None and cpu.size == 0 and cpu.template is None and cpu.limits == (Limit("cpu", 0, 64_000),)
    assert group_state(cpu, NOW) == (STEADY, "NodePool cpu: 0 nodes")


def test_ca_status_yaml_groups() -> None:
    store = AutoscalingStore()
    store.replace(CA_STATUS, fixture("ca-status-yaml.yaml"))
    store.relist_nodes([node(f"g{i}", {"kwok-nodegroup": "gpu-pool"}) for i in range(6)]
                       + [node("s0", annotations={"cluster-autoscaler.kwok.nodegroup/name": "small-pool"}, gpus=0)])
    groups = {g.name: g for g in store.groups()}
    assert [g.key for g in store.groups()] == [(CLUSTER_AUTOSCALER, n) for n in ("a-pool", "gpu-pool", "small-pool")]
    gpu = groups["gpu-pool"]
    assert (gpu.size, gpu.min_size, gpu.max_size, gpu.target, gpu.gpus) == (6, 0, 38, 38, 48)
    assert gpu.scale_up == ScaleUp(6, 38, parse_time("2026-11-22T10:03:00Z"))
    assert gpu.limits == (Limit(NODES, 38, 38),)  # asked for all of it
    assert group_state(gpu, NOW) == (SCALING, "node group gpu-pool scaling 6 → 38 (in progress, 2 min)")
    assert store.nodes_of(gpu.key) == [f"g{i}" for i in range(6)]
    a = groups["a-pool"]
    assert a.error == ("Instance 'a-pool-40ce0341-t28s' creation failed: Quota 'CPUS' exceeded.  Limit: 57.0 "
                       "in region us-central1.")
    assert a.backoff == a.error and a.error_at == parse_time("2026-11-22T10:01:00Z")
    assert group_state(a, NOW) == (FAILED, f"scale-up failed: {a.error}")
    small = groups["small-pool"]
    assert group_state(small, NOW) == (AT_MAX, "small-pool is at its maximum 6")
    assert store.nodes_of(small.key) == ["s0"] and small.template is not None and small.template["cpu"] == 32_000


def test_ca_status_text_format_reads_the_same_sizes() -> None:
    status = status_of(fixture("ca-status-text.yaml")[0])
    assert status.problem is None and status.health == "Healthy"
    assert status.time == go_time("2026-11-22 10:05:00.123456789 +0000 UTC")
    (gpu, small) = status.groups
    assert (gpu.name, gpu.registered, gpu.ready, gpu.target, gpu.min_size, gpu.max_size, gpu.scale_up) == (
        "gpu-pool", 6, 6, 38, 0, 38, "InProgress")
    assert gpu.scale_up_since == parse_time("2026-11-22T10:03:00Z")
    assert (small.name, small.max_size, small.scale_up) == ("small-pool", 6, "NoActivity")


def test_go_time_and_rfc3339() -> None:
    assert go_time("2023-11-24 04:28:19.546750398 +0000 UTC") == parse_time("2023-11-24T04:28:19.546750Z")
    assert go_time("2023-11-24 05:28:19 +0100 CET m=+12.5") == parse_time("2023-11-24T04:28:19Z")
    assert go_time("2023-11-24T04:28:19Z") == parse_time("2023-11-24T04:28:19Z")


def test_a_status_in_neither_format_is_one_line() -> None:
    store = AutoscalingStore()
    bad = {"metadata": {"name": "cluster-autoscaler-status", "namespace": "kube-system"}, "data": {"status": "[1, 2"}}
    store.put(CA_STATUS, bad)
    assert store.groups() == []
    (line,) = store.problems()
    assert line.startswith("kube-system/cluster-autoscaler-status: data.status is not YAML")
    store.put(CA_STATUS, {**bad, "data": {}})
    assert store.problems() == ["kube-system/cluster-autoscaler-status: the ConfigMap has no data.status"]


def test_the_embedded_clusters_status_is_its_own() -> None:
    store = AutoscalingStore()
    (cm,) = fixture("ca-status-yaml.yaml")
    cm["metadata"]["labels"] = {"app.kubernetes.io/managed-by": "kubeview"}
    store.put(CA_STATUS, cm)
    assert {g.autoscaler for g in store.groups()} == {EMBEDDED}
    store.put(CA_STATUS, {**cm, "metadata": {**cm["metadata"], "name": "other"}})  # not CA's: ignored
    assert len(store.groups()) == 3


def test_watch_events_update_and_version_moves_only_on_change() -> None:
    store = karpenter_store()
    v = store.version
    (pool, *_) = of_kind("karpenter.yaml", "NodePool")
    assert store.put(KARPENTER_NODEPOOL, pool) is False and store.version == v
    assert store.put_node(GPU_NODES[0]) is False
    store.delete_node(GPU_NODES[0])
    gpu = store.group((KARPENTER, "gpu"))
    assert gpu is not None and gpu.size == 5 and store.version == v + 1
    assert store.delete(KARPENTER_NODEPOOL, pool) and store.group((KARPENTER, "gpu")) is None
    assert store.delete(KARPENTER_NODEPOOL, pool) is False


def test_the_cluster_model_rows_and_unavailable_words() -> None:
    model = ClusterModel()
    model.apply(Listed("Node", GPU_NODES))
    model.apply(Listed(KARPENTER_NODEPOOL, of_kind("karpenter.yaml", "NodePool")))
    model.apply(WatchEvent(KARPENTER_NODECLAIM, "ADDED", of_kind("karpenter.yaml", "NodeClaim")[0]))
    gpu = model.autoscaling.group((KARPENTER, "gpu"))
    assert gpu is not None and gpu.size == 6 and gpu.target == 1
    why = "Listing nodepools.karpenter.sh was forbidden (403)"
    model.apply(Scope("t", None, None, {KARPENTER_NODEPOOL: why, KARPENTER_NODECLAIM: why, "Job": "x"}))
    assert autoscaling_unavailable(model.unavailable) == f"node groups are not shown: {why}"
    assert autoscaling_unavailable({}) is None
