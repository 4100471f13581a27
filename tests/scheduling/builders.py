"""Small builders of API-shaped Node/Pod dicts and allocations for the scheduling tests."""

from __future__ import annotations

import json
from pathlib import Path

from kubeview.model.views import NodeView, PodView
from kubeview.scheduling.allocations import from_pods, from_views

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "k8s"


def node_obj(name: str, cpu: str = "8", memory: str = "16Gi", gpu: int = 0, pods: int = 110,
             labels: dict | None = None, taints: list | None = None, unschedulable: bool = False) -> dict:
    amounts = {"cpu": cpu, "memory": memory, "pods": str(pods)}
    if gpu:
        amounts["nvidia.com/gpu"] = str(gpu)
    spec: dict = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": spec, "status": {"capacity": amounts, "allocatable": amounts}}


def node(name: str, **kw) -> NodeView:
    return NodeView.from_api(node_obj(name, **kw))


def pod_obj(name: str, cpu: str | None = "100m", memory: str | None = None, gpu: int = 0,
            node_name: str | None = None, tolerations: list | None = None, node_selector: dict | None = None,
            affinity: dict | None = None, namespace: str = "default", uid: str | None = None) -> dict:
    requests: dict = {}
    limits: dict = {}
    if cpu:
        requests["cpu"] = cpu
    if memory:
        requests["memory"] = memory
    if gpu:
        requests["nvidia.com/gpu"] = limits["nvidia.com/gpu"] = str(gpu)
    spec: dict = {"containers": [{"name": "main", "resources": {"requests": requests, "limits": limits}}]}
    if node_name:
        spec["nodeName"] = node_name
    if tolerations:
        spec["tolerations"] = tolerations
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity:
        spec["affinity"] = affinity
    return {"metadata": {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}"}, "spec": spec,
            "status": {"phase": "Running" if node_name else "Pending"}}


def pod(name: str = "p", **kw) -> PodView:
    return PodView.from_api(pod_obj(name, **kw))


def cluster(nodes: list[NodeView], pods: list[PodView] | None = None):
    return from_pods(nodes, pods or []) if pods else from_views(nodes)


def fixture(name: str):
    return json.loads((FIXTURES / name).read_text())


class FakeClock:
    """A clock that stands still unless a test moves `now` (bucket refills, ttls, assumed pods)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now
