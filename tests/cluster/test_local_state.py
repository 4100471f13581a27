"""The local cluster's objects, controllers and scheduler, without processes (pure state transitions).

Pods here have no `command`, so the local kubelet simulates them: bound means Running at once.
"""

from __future__ import annotations

import json

import pytest

from kubeview.cluster.local.config import load_cluster
from kubeview.cluster.local.kubelet_status import StartPod, StopPod
from kubeview.cluster.local.state import LocalCluster
from kubeview.cluster.source import ActionError
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, WatchEvent
from kubeview.model.views import NodeView, PodView
from kubeview.scheduling.config import PackingConfig

GPU = "nvidia.com/gpu"


def consumer_rs(replicas: int, cpu: str = "1000m", command: list[str] | None = None) -> dict:
    container = {"name": "consumer", "image": "kubeview/renderer", "resources": {"requests": {"cpu": cpu}}}
    if command:
        container["command"] = command
    return {"kind": "ReplicaSet", "metadata": {"name": "consumer", "namespace": "render"},
            "spec": {"replicas": replicas, "template": {"metadata": {"labels": {"app": "consumer"}},
                                                        "spec": {"containers": [container]}}}}


def gpu_pod(name: str, gpus: int) -> dict:
    return {"metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "cuda", "image": "cuda",
                                     "resources": {"requests": {"cpu": "100m", GPU: str(gpus)},
                                                   "limits": {GPU: str(gpus)}}}]}}


@pytest.fixture
def cluster() -> LocalCluster:
    return LocalCluster(load_cluster(), seed=1)


def owned(cluster: LocalCluster, name: str = "consumer") -> list[dict]:
    return [p for p in cluster.active_pods("ReplicaSet", "render", name)]


def test_default_cluster_is_the_field_cluster_plus_two_gpu_nodes(cluster: LocalCluster) -> None:
    nodes = {n.name: n for n in map(NodeView.from_api, cluster.list("Node"))}
    assert sorted(nodes) == ["cpu-node-1", "cpu-node-2", "cpu-node-3", "gpu-node-1", "gpu-node-2"]
    assert [nodes[f"cpu-node-{i}"].capacity["memory"] for i in (1, 2, 3)] == [16 * 2**30, 16 * 2**30, 6 * 2**30]
    assert all(n.capacity["cpu"] == 8000 and n.ready for n in nodes.values())
    assert nodes["gpu-node-1"].allocatable[GPU] == 2 and GPU not in nodes["cpu-node-1"].allocatable
    # allocatable = capacity less the kubelet's default hard eviction threshold
    assert nodes["cpu-node-3"].allocatable["memory"] == 6 * 2**30 - 100 * 2**20
    # system pods: a kube-proxy and a flannel per node, two coredns, the control plane on cpu-node-1
    pods = [PodView.from_api(p) for p in cluster.list("Pod")]
    names = sorted(p.name.rsplit("-", 1)[0] if p.owner and p.owner[0] != "Node" else p.name for p in pods)
    assert names.count("kube-proxy") == 5 and names.count("kube-flannel-ds") == 5
    assert sum(1 for p in pods if p.name.startswith("coredns-")) == 2
    assert {"etcd-cpu-node-1", "kube-apiserver-cpu-node-1"} <= {p.name for p in pods}
    assert all(p.phase == "Running" and p.node for p in pods)
    alloc = cluster.model.allocation()
    cpu = alloc.column("cpu")
    # flannel 100m everywhere; cpu-node-1 adds etcd 100m + apiserver 250m + controller-manager 200m +
    # scheduler 100m, and both coredns (100m each) land there under `pack`
    assert dict(zip(alloc.nodes, alloc.requested[:, cpu].tolist(), strict=True)) == {
        "cpu-node-1": 950, "cpu-node-2": 100, "cpu-node-3": 100, "gpu-node-1": 100, "gpu-node-2": 100}


def test_objects_have_the_api_shape(cluster: LocalCluster, k8s_fixtures) -> None:
    real_node = json.loads((k8s_fixtures / "nodes.json").read_text())["items"][0]
    real_pod = json.loads((k8s_fixtures / "pods-list.json").read_text())["items"][0]
    node = cluster.get("Node", "", "cpu-node-1")
    assert set(real_node["metadata"]) - {"managedFields"} <= set(node["metadata"])
    assert set(real_node["status"]) <= set(node["status"])
    assert node["metadata"]["labels"]["kubernetes.io/hostname"] == "cpu-node-1"
    assert cluster.get("Node", "", "gpu-node-1")["spec"]["taints"][0]["key"] == GPU
    cluster.apply_workload(consumer_rs(1))
    pod = owned(cluster)[0]
    assert set(real_pod["metadata"]) - {"managedFields", "generation"} <= set(pod["metadata"])
    assert set(real_pod["status"]) <= set(pod["status"])
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 0
    assert [c["type"] for c in pod["status"]["conditions"]] == [c["type"] for c in real_pod["status"]["conditions"]]


def test_24_consumers_at_1000m_21_run_and_3_wait_with_the_schedulers_message(cluster: LocalCluster) -> None:
    cluster.apply_workload(consumer_rs(24))
    pods = owned(cluster)
    running = [p for p in pods if p["status"]["phase"] == "Running"]
    pending = [PodView.from_api(p) for p in pods if p["status"]["phase"] == "Pending"]
    # 7 x 1000m fit in each CPU node's free cpu (7050m, 7900m, 7900m); the GPU nodes are tainted
    assert len(running) == 21 and len(pending) == 3
    assert {p["spec"]["nodeName"] for p in running} == {"cpu-node-1", "cpu-node-2", "cpu-node-3"}
    assert all(p.node is None for p in pending)
    assert pending[0].pending_reason == "0/5 nodes are available: 2 node(s) had untolerated taint(s), 3 Insufficient cpu."
    cond = next(c for c in pods[-1]["status"]["conditions"] if c["type"] == "PodScheduled")
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    rs = cluster.get("ReplicaSet", "render", "consumer")
    assert rs["status"]["replicas"] == 24 and rs["status"]["readyReplicas"] == 21


def test_scale_down_removes_pending_pods_first_then_the_newest(cluster: LocalCluster) -> None:
    cluster.apply_workload(consumer_rs(24))
    running = sorted((p for p in owned(cluster) if p["spec"].get("nodeName")),
                     key=lambda p: cluster.created_seq("Pod", "render", p["metadata"]["name"]))
    assert cluster.scale("ReplicaSet", "render", "consumer", 2) == "replicaset render/consumer scaled to 2"
    left = owned(cluster)
    assert [p["metadata"]["name"] for p in left] == [p["metadata"]["name"] for p in running[:2]]
    assert cluster.get("ReplicaSet", "render", "consumer")["status"]["replicas"] == 2


def test_freed_resources_let_pending_pods_in(cluster: LocalCluster) -> None:
    cluster.apply_workload(consumer_rs(21))
    cluster.create_pod({"metadata": {"name": "late", "namespace": "default"},
                        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}})
    assert cluster.get("Pod", "default", "late")["status"]["phase"] == "Pending"
    cluster.scale("ReplicaSet", "render", "consumer", 20)
    late = cluster.get("Pod", "default", "late")
    assert late["status"]["phase"] == "Running" and late["spec"]["nodeName"]


def test_one_one_two_gpu_pods_fit_under_pack_and_not_under_spread() -> None:
    for policy, expect in (("pack", 3), ("spread", 2)):
        cluster = LocalCluster(load_cluster(), PackingConfig(policy=policy), seed=1)
        for name, gpus in (("gpu-a", 1), ("gpu-b", 1), ("gpu-c", 2)):
            cluster.create_pod(gpu_pod(name, gpus))
        pods = {n: PodView.from_api(cluster.get("Pod", "default", n)) for n in ("gpu-a", "gpu-b", "gpu-c")}
        assert sum(p.phase == "Running" for p in pods.values()) == expect, policy
        if policy == "pack":
            assert pods["gpu-a"].node == pods["gpu-b"].node != pods["gpu-c"].node
        else:
            assert pods["gpu-a"].node != pods["gpu-b"].node
            # what the real default scheduler said for this pod (fixtures/k8s/pod-gpu-c-pending.json)
            assert pods["gpu-c"].pending_reason == "0/5 nodes are available: 5 Insufficient nvidia.com/gpu."
            # the ExtendedResourceToleration admission gave the GPU pods the taint's toleration
            assert any(t.get("key") == GPU for t in pods["gpu-c"].tolerations)


def test_set_packing_retries_pending_pods(cluster: LocalCluster) -> None:
    cluster.set_packing(PackingConfig(policy="spread"))
    for name, gpus in (("gpu-a", 1), ("gpu-b", 1), ("gpu-c", 2)):
        cluster.create_pod(gpu_pod(name, gpus))
    assert cluster.get("Pod", "default", "gpu-c")["status"]["phase"] == "Pending"
    cluster.remove_pod("default", "gpu-b")
    assert cluster.get("Pod", "default", "gpu-c")["status"]["phase"] == "Running"
    assert cluster.packing.policy == "spread"


def test_deployment_owns_a_hashed_replicaset_and_deletion_cascades(cluster: LocalCluster) -> None:
    dep = {"kind": "Deployment", "metadata": {"name": "producer", "namespace": "render"},
           "spec": {"replicas": 1, "template": {"metadata": {"labels": {"app": "producer"}}, "spec": {
               "containers": [{"name": "p", "image": "x", "resources": {"requests": {"cpu": "50m"}}}]}}}}
    cluster.apply_workload(dep)
    rss = [rs for rs in cluster.list("ReplicaSet") if rs["metadata"]["name"].startswith("producer-")]
    assert len(rss) == 1 and rss[0]["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    assert "pod-template-hash" in rss[0]["metadata"]["labels"]
    pods = cluster.active_pods("Deployment", "render", "producer")
    assert len(pods) == 1 and pods[0]["metadata"]["name"].startswith(rss[0]["metadata"]["name"] + "-")
    status = cluster.get("Deployment", "render", "producer")["status"]
    assert status["availableReplicas"] == 1 and status["conditions"][0]["status"] == "True"
    assert "managed by deployment producer" in pytest.raises(
        ActionError, cluster.scale, "ReplicaSet", "render", rss[0]["metadata"]["name"], 3).value.args[0]
    cluster.scale("Deployment", "render", "producer", 2)
    assert len(cluster.active_pods("Deployment", "render", "producer")) == 2
    cluster.delete_workload("Deployment", "render", "producer")
    assert not [p for p in cluster.list("Pod") if p["metadata"]["namespace"] == "render"]
    assert not [rs for rs in cluster.list("ReplicaSet") if rs["metadata"]["name"].startswith("producer-")]


def test_scale_refusals_are_one_sentence(cluster: LocalCluster) -> None:
    with pytest.raises(ActionError, match="not found"):
        cluster.scale("ReplicaSet", "render", "nope", 1)
    cluster.apply_workload(consumer_rs(1))
    with pytest.raises(ActionError, match="0 or more"):
        cluster.scale("ReplicaSet", "render", "consumer", -1)
    with pytest.raises(ActionError, match="StatefulSet"):
        cluster.scale("StatefulSet", "render", "consumer", 1)
    with pytest.raises(ActionError, match="requests cpu: 'lots' is not a valid quantity"):
        cluster.apply_workload(consumer_rs(1, cpu="lots"))
    with pytest.raises(ActionError, match="requests nvidia.com/gpu: '-1' is not a valid quantity"):
        cluster.create_pod(gpu_pod("neg", -1))


def test_events_rebuild_the_same_model(cluster: LocalCluster) -> None:
    """A client that lists and then watches ends up where the cluster's own model is."""
    listed = cluster.snapshot()
    assert [x.kind for x in listed] == ["Node", "Pod", "ReplicaSet", "Deployment", "Event", "Job", "ResourceQuota",
                                        "Workload", "PodGroup", "StatefulSet"]
    assert all("kind" not in o for x in listed for o in x.objects)  # list items carry no kind
    cluster.events.clear()
    cluster.apply_workload(consumer_rs(24))
    cluster.scale("ReplicaSet", "render", "consumer", 5)
    events = list(cluster.events)
    assert all(isinstance(e, WatchEvent) and e.obj["kind"] == e.kind for e in events)
    pod_events = [e for e in events if e.kind == "Pod"]
    assert pod_events[0].type == "ADDED"
    bind = next(e for e in pod_events if e.type == "MODIFIED" and e.obj["spec"].get("nodeName"))
    assert any(c["type"] == "PodScheduled" and c["status"] == "True" for c in bind.obj["status"]["conditions"])
    rvs = [int(e.obj["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and len(set(rvs)) == len(rvs)
    client = ClusterModel()
    for x in listed:
        client.apply(Listed(x.kind, x.objects, x.resource_version))
    for e in events:
        client.apply(e)
    assert (client.allocation().requested == cluster.model.allocation().requested).all()
    assert set(client.pods) == set(cluster.model.pods)
    assert client.workloads[("ReplicaSet", "render", "consumer")].desired == 5
    some = next(k for k in client.pods if k[0] == "render")
    assert client.pod_events(some) == cluster.model.pod_events(some) != []


def test_pods_with_a_command_become_process_intents(cluster: LocalCluster) -> None:
    cluster.apply_workload(consumer_rs(3, command=["sleep", "60"]))
    starts = [i for i in cluster.intents if isinstance(i, StartPod)]
    assert len(starts) == 3
    pod = owned(cluster)[0]
    assert pod["status"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
    cluster.container_started(key, 4242, 0)
    assert cluster.get("Pod", *key)["status"]["phase"] == "Running"
    cluster.container_exited(key, 137, 1, 0.5)
    crashed = cluster.get("Pod", *key)["status"]["containerStatuses"][0]
    assert crashed["restartCount"] == 1 and crashed["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert crashed["lastState"]["terminated"]["exitCode"] == 137
    cluster.intents.clear()
    cluster.scale("ReplicaSet", "render", "consumer", 2)
    stops = [i for i in cluster.intents if isinstance(i, StopPod)]
    assert len(stops) == 1 and stops[0].grace == 30
    gone = stops[0].key
    assert cluster.get("Pod", *gone)["metadata"]["deletionTimestamp"]
    cluster.container_stopped(gone)
    assert cluster.get("Pod", *gone) is None


def test_a_replicaset_adopts_matching_bare_pods_instead_of_doubling_them(cluster: LocalCluster) -> None:
    """kube's ControllerRefManager: a bare pod whose labels match a new ReplicaSet's selector becomes
    its own (the demo's train-a/train-b); a pod of another namespace or label, or with a controller
    already, is left alone."""
    def bare(name: str, namespace: str, app: str) -> dict:
        return {"metadata": {"name": name, "namespace": namespace, "labels": {"app": app}},
                "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]}}
    cluster.create_pod(bare("hand-made", "render", "consumer"))
    cluster.create_pod(bare("other-ns", "default", "consumer"))
    cluster.create_pod(bare("other-app", "render", "web"))
    cluster.apply_workload(consumer_rs(2))
    names = sorted(p["metadata"]["name"] for p in owned(cluster))
    assert len(names) == 2 and "hand-made" in names  # adopted, and only one new pod
    rs_uid = cluster.get("ReplicaSet", "render", "consumer")["metadata"]["uid"]
    [ref] = cluster.get("Pod", "render", "hand-made")["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["uid"], ref["controller"]) == ("ReplicaSet", rs_uid, True)
    for ns, name in (("default", "other-ns"), ("render", "other-app")):
        assert not cluster.get("Pod", ns, name)["metadata"].get("ownerReferences")
