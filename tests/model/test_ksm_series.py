"""kube-state-metrics-named series: names, labels, units and sanitising as KSM prints them."""

from __future__ import annotations

from kubeapi import fixtures

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.snapshot.ksm import exposition, sanitize, unit


def test_sanitising_and_units_follow_ksm() -> None:
    assert sanitize("nvidia.com/gpu") == "nvidia_com_gpu"
    assert sanitize("hugepages-2Mi") == "hugepages_2Mi"
    assert [unit(r) for r in ("cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/gpu", "hugepages-1Gi")] == \
        ["core", "byte", "byte", "integer", "integer", "byte"]
    assert unit("kubernetes.io/something") is None and unit("madeup") is None


def test_recorded_cluster_series() -> None:
    m = ClusterModel()
    m.apply(Listed("Node", fixtures.load("nodes.json")["items"]))
    m.apply(Listed("Pod", fixtures.load("pods-list.json")["items"]))
    lines = exposition(m).splitlines()
    for expected in (
        "# TYPE kube_node_status_allocatable gauge",
        'kube_node_status_allocatable{node="gpu-node-1",resource="nvidia_com_gpu",unit="integer"} 2',
        'kube_node_status_allocatable{node="gpu-node-1",resource="cpu",unit="core"} 8',
        'kube_node_status_capacity{node="cpu-node-1",resource="memory",unit="byte"} 17179869184',
        'kube_pod_container_resource_requests{namespace="default",pod="gpu-a",container="cuda",node="gpu-node-1",'
        'resource="nvidia_com_gpu",unit="integer"} 1',
        'kube_pod_container_resource_requests{namespace="default",pod="gpu-a",container="cuda",node="gpu-node-1",'
        'resource="cpu",unit="core"} 0.1',
        'kube_pod_container_resource_requests{namespace="default",pod="gpu-c",container="cuda",node="",'
        'resource="nvidia_com_gpu",unit="integer"} 2',
        'kube_pod_container_resource_limits{namespace="default",pod="gpu-b",container="cuda",node="gpu-node-2",'
        'resource="nvidia_com_gpu",unit="integer"} 1',
    ):
        assert expected in lines, expected
    assert not any('resource="nvidia_com_gpu"' in line and 'node="cpu-node-1"' in line for line in lines)
    assert sum(line.startswith("kube_pod_container_resource_requests{") for line in lines) == 6 + 3  # cpu x6, gpu x3
