"""Scheduling previews on the recorded DRA cluster (tests/fixtures/k8s/dra): DRA GPUs taken make a node
full, kube-scheduler's recorded messages for the pods it could not place come out the same, full Node
objects (the extender with nodeCacheCapable: false) keep the DRA GPUs, and a pod's ResourceClaims are
reported as not evaluated instead of guessed."""

from __future__ import annotations

import copy

from kubeapi import fixtures
from kubeapi.dra_model import recorded_dra_model

from kubeview.model.views import NodeView, PodView
from kubeview.scheduling.allocations import with_usage_from
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.evaluate import evaluate

recorded = recorded_dra_model


def pod(name: str) -> dict:
    return next(p for p in fixtures.load("dra/pods.json")["items"] if p["metadata"]["name"] == name)


def recorded_message(obj: dict) -> str:
    cond = next(c for c in obj["status"]["conditions"] if c["type"] == "PodScheduled")
    return cond["message"].split(" still not schedulable")[0]


def test_unplaceable_pods_get_the_recorded_messages() -> None:
    m = recorded()
    alloc = m.allocation()
    for name in ("ext-2gpu-pod", "huge-ext-pod"):
        obj = pod(name)
        placement = evaluate(alloc, PodView.from_api(obj), PackingConfig())
        assert placement.best is None
        assert placement.message == recorded_message(obj)
        assert placement.notes == ()


def test_a_one_gpu_pod_fits_only_where_a_device_is_free() -> None:
    m = recorded()
    obj = copy.deepcopy(pod("ext-2gpu-pod"))
    obj["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m", "nvidia.com/gpu": "1"},
                                                 "limits": {"nvidia.com/gpu": "1"}}
    placement = evaluate(m.allocation(), PodView.from_api(obj), PackingConfig(policy="pack"))
    feasible = {n for n, ok in zip(placement.nodes, placement.feasible.tolist(), strict=True) if ok}
    assert feasible == {"dra-node-2"}  # dra-node-1's two GPUs are taken (claim-pod, shared-gpu): full


def test_full_node_objects_keep_the_dra_gpus() -> None:
    m = recorded()
    base = m.allocation()
    views = [NodeView.from_api(n) for n in fixtures.load("dra/nodes.json")["items"]]
    over = with_usage_from(views, base)
    col = over.resources.index("nvidia.com/gpu")
    for name in ("dra-node-1", "dra-node-2", "dra-mig-node-1", "gpu-node-1"):
        i, j = over.nodes.index(name), base.nodes.index(name)
        assert (over.allocatable[i, col], over.requested[i, col]) == (base.allocatable[j, col], base.requested[j, col])
    obj = pod("huge-ext-pod")
    assert evaluate(over, PodView.from_api(obj), PackingConfig()).message == recorded_message(obj)


def test_a_pending_pod_with_a_resource_claim_is_previewed_honestly() -> None:
    m = recorded()
    obj = copy.deepcopy(pod("claim-pod"))
    obj["metadata"]["name"] = "claim-pod-2"
    obj["spec"].pop("nodeName")
    obj["status"] = {"phase": "Pending"}
    view = PodView.from_api(obj)
    placement = evaluate(m.allocation(), view, PackingConfig())
    assert view.pod_claims == ("gpu",) and "nvidia.com/gpu" not in view.requests
    assert len(placement.notes) == 1 and "not evaluated (gpu)" in placement.notes[0]


def test_a_node_failing_cpu_first_reports_only_cpu() -> None:
    """DynamicResources runs after NodeResourcesFit, and a node reports its first failing filter: the
    huge-ext-pod asking more cpu than any node has reads `Insufficient cpu` everywhere, never also
    `cannot allocate all claims` (kube-scheduler's plugin order, pkg/scheduler/apis/config/v1/default_plugins.go)."""
    m = recorded()
    obj = copy.deepcopy(pod("huge-ext-pod"))
    obj["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1000"
    placement = evaluate(m.allocation(), PodView.from_api(obj), PackingConfig())
    # NodeResourcesFit reports every resource it checks: the device-plugin nodes say GPU too
    assert placement.message == "0/8 nodes are available: 2 Insufficient nvidia.com/gpu, 8 Insufficient cpu."
    assert all("cannot allocate all claims" not in r for r in placement.reasons.values()), placement.reasons
