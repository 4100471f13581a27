"""kubeview's numbers against the real kube-state-metrics on the same API server (issue #25, 3a).

A mix a real cluster has: sidecars (init containers with restartPolicy Always), init containers,
RuntimeClass overhead, pod-level resources, odd units, Succeeded/Failed/Terminating pods and an
extended resource. `kubeview snapshot --metrics` must print the same series as KSM for
kube_node_status_allocatable and kube_pod_container_resource_requests; kubeview prints no
kube_pod_init_container_resource_requests (the node's requested figure is what it shows for init
containers: the scheduler's arithmetic), so those are checked through the per-node requested figure
in the second test, computed from KSM's series with kube-scheduler's formula.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from kubernetes import client
from kubernetes.utils import parse_quantity

from .ksm import KSM, parse, running_ksm
from .objects import add_node, api, ensure_namespace, wait_nodes_ready
from .plane import Plane

NS = "ksm-test"
NODE, STATIC = "ksm-node", "ksm-static"  # kwok's, and one nobody runs (its pods' phases are ours to set)
SHARED = {"kube_node_status_allocatable", "kube_pod_container_resource_requests"}


def _c(name: str, requests: dict | None = None, **extra) -> dict:
    c = {"name": name, "image": "registry.k8s.io/pause:3.10", **extra}
    if requests:
        c["resources"] = {"requests": requests, "limits": dict(requests)}
    return c


def _pod(name: str, node: str, containers: list[dict], **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"nodeName": node, "containers": containers, "terminationGracePeriodSeconds": 0, **spec}}


MIX = [
    _pod("plain-gpu", NODE, [_c("main", {"cpu": "1500m", "memory": "1.5Gi", "nvidia.com/gpu": "1"})]),
    _pod("with-init", NODE, [_c("app", {"cpu": "500m", "memory": "100M"})],
         initContainers=[_c("setup", {"cpu": "2", "memory": "64Mi"})]),
    _pod("with-sidecar", NODE, [_c("app", {"cpu": "250m", "memory": "129e6"})],
         initContainers=[_c("proxy", {"cpu": "300m", "memory": "100Mi"}, restartPolicy="Always"),
                         _c("setup", {"cpu": "1", "memory": "10Mi"})]),
    _pod("overhead", NODE, [_c("app", {"cpu": "0.5", "memory": "128974848"})], runtimeClassName="kata"),
    _pod("pod-level", NODE, [_c("a"), _c("b")], resources={"requests": {"cpu": "2", "memory": "1Gi"},
                                                           "limits": {"cpu": "2", "memory": "1Gi"}}),
    _pod("odd-units", NODE, [_c("m", {"cpu": "1m", "memory": "1k"}), _c("n", {"cpu": "0.1", "memory": "123Mi"})]),
    _pod("done", STATIC, [_c("app", {"cpu": "3", "memory": "1Gi"})]),
    _pod("failed", STATIC, [_c("app", {"cpu": "2", "memory": "1Gi"})]),
    _pod("leaving", NODE, [_c("app", {"cpu": "700m", "memory": "200Mi"})]),
]


@pytest.fixture(scope="module")
def mix(plane: Plane) -> Iterator[client.CoreV1Api]:
    core = client.CoreV1Api(api(plane.kubeconfig))
    ensure_namespace(core, NS)
    add_node(core, NODE, {"cpu": "32", "memory": "128Gi", "pods": "110", "nvidia.com/gpu": "4",
                          "ephemeral-storage": "100Gi"})
    core.create_node(client.V1Node(metadata=client.V1ObjectMeta(name=STATIC),
                                   status=client.V1NodeStatus(capacity={"cpu": "8", "memory": "16Gi", "pods": "10"},
                                                              allocatable={"cpu": "7500m", "memory": "15Gi", "pods": "10"})))
    wait_nodes_ready(core, [NODE])
    node_api = client.NodeV1Api(core.api_client)
    node_api.create_runtime_class({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"},
                                   "handler": "kata", "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}}})
    for pod in MIX:
        core.create_namespaced_pod(NS, pod)
    for name, phase in (("done", "Succeeded"), ("failed", "Failed")):
        core.patch_namespaced_pod_status(name, NS, {"status": {"phase": phase}})
    core.patch_namespaced_pod("leaving", NS, {"metadata": {"finalizers": ["kubeview.test/hold"]}})
    core.delete_namespaced_pod("leaving", NS, grace_period_seconds=30)
    yield core
    core.patch_namespaced_pod("leaving", NS, {"metadata": {"finalizers": None}})
    core.delete_collection_namespaced_pod(NS, grace_period_seconds=0)
    for name in (NODE, STATIC):
        core.delete_node(name)
    node_api.delete_runtime_class("kata")


@pytest.fixture(scope="module")
def ksm(plane: Plane, mix) -> Iterator[KSM]:  # noqa: ARG001
    yield from running_ksm(plane)


def _ours(series: set, nodes=(NODE, STATIC)) -> set:
    return {s for s in series if dict(s[1]).get("namespace", NS) == NS and dict(s[1]).get("node", NODE) in nodes}


def _kubeview_metrics(plane: Plane) -> str:
    out = subprocess.run([sys.executable, "-m", "kubeview", "snapshot", "--metrics", "--kubeconfig", str(plane.kubeconfig)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_snapshot_metrics_equal_ksm_series(plane: Plane, ksm: KSM, realk8s_counts: dict[str, str]) -> None:
    ours = _ours(parse(_kubeview_metrics(plane), SHARED))
    pods = {dict(s[1])["pod"] for s in ours if "pod" in dict(s[1])}
    assert {p["metadata"]["name"] for p in MIX} - {"pod-level"} <= pods, pods  # pod-level: no container requests
    ksm.wait_same(ours, SHARED, _ours)
    realk8s_counts["KSM series compared"] = f"{len(ours)} ({', '.join(sorted(SHARED))})"


RESOURCES = {"cpu": "cpu", "memory": "memory", "nvidia.com/gpu": "nvidia_com_gpu"}  # API name -> KSM label


def _requested_from_ksm(text: str, pods_on_node: dict[str, dict]) -> dict[str, int]:
    """Requested on the node from KSM's per-container series with kube-scheduler's arithmetic, in
    kubeview's units (millicores, bytes, GPUs): max(app sum + sidecars, each init + the sidecars
    before it) + overhead; pod-level resources win; only pods not finished."""
    app = parse(text, {"kube_pod_container_resource_requests"})
    init = parse(text, {"kube_pod_init_container_resource_requests"})
    total = dict.fromkeys(RESOURCES, 0.0)
    for name, pod in pods_on_node.items():
        spec = pod["spec"]
        level = (spec.get("resources") or {}).get("requests") or {}
        overhead = spec.get("overhead") or {}
        for r, label in RESOURCES.items():
            if level and r in ("cpu", "memory"):
                need = float(parse_quantity(level.get(r, "0")))
            else:
                sidecars = init_peak = 0.0
                need = sum(_amount(app, name, c["name"], label) for c in spec["containers"])
                for c in spec.get("initContainers") or []:
                    if c.get("restartPolicy") == "Always":
                        sidecars += _amount(init, name, c["name"], label)
                    else:
                        init_peak = max(init_peak, _amount(init, name, c["name"], label) + sidecars)
                need = max(need + sidecars, init_peak)
            total[r] += need + float(parse_quantity(overhead.get(r, "0")))
    return {r: round(v * 1000) if r == "cpu" else round(v) for r, v in total.items()}


def _amount(series: set, pod: str, container: str, resource: str) -> float:
    """A container's request (cores, bytes, count) from KSM's series; 0 when it has none."""
    return next((v for _, lab, v in series if dict(lab).get("pod") == pod and dict(lab).get("container") == container
                 and dict(lab)["resource"] == resource), 0.0)


def test_node_requested_equals_scheduler_arithmetic_over_ksm(plane: Plane, ksm: KSM, mix) -> None:
    """kubeview's per-node cpu, memory and GPU requested (snapshot --json) equals kube-scheduler's formula applied to
    KSM's container and init-container series, with the pods' overhead and pod-level resources as
    the API server stored them (KSM has no series for either)."""
    pods = {p.metadata.name: mix.api_client.sanitize_for_serialization(p) for p in mix.list_namespaced_pod(NS).items}
    live = {n: p for n, p in pods.items() if p["spec"].get("nodeName") == NODE
            and p["status"].get("phase") not in ("Succeeded", "Failed")}
    out = subprocess.run([sys.executable, "-m", "kubeview", "snapshot", "--json", "--kubeconfig", str(plane.kubeconfig)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    node = next(n for n in doc["nodes"] if n["name"] == NODE)
    got = {r: node["resources"][r]["requested"] for r in RESOURCES}
    want = _requested_from_ksm(ksm.scrape(), live)
    assert got == want, (got, want, sorted(live))
