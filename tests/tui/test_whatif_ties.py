"""The Packing what-if under native scoring says when kube-scheduler will pick among equal nodes at
random (the extender makes its best node unique, so there it says nothing)."""

from __future__ import annotations

from kubeview.model.views import NodeView
from kubeview.scheduling.allocations import from_views
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.native_profile import native_config
from kubeview.tui.rows.whatif import compute, hypothetical_pod


def _node(name: str) -> NodeView:
    amounts = {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "2"}
    return NodeView.from_api({"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                              "spec": {}, "status": {"capacity": amounts, "allocatable": amounts}})


def test_native_ties_are_said_the_extenders_are_not() -> None:
    alloc = from_views([_node("gpu-a"), _node("gpu-b"), _node("gpu-c")], {"gpu-c": {"nvidia.com/gpu": 1}})
    native = native_config(PackingConfig())
    w = compute(alloc, hypothetical_pod(1), PackingConfig(), native)
    assert w.ties == (0, 0)  # gpu-c, half full, is the one best node under both
    w = compute(alloc, hypothetical_pod(2), PackingConfig(), native)  # only the empty nodes fit 2 GPUs
    assert w.edited.best_set == ["gpu-a", "gpu-b"] and w.ties == (0, 1)
    # (100 x 100 for the GPUs + 12 for 1 of 8 cpus + 3 for 1 of 32Gi) // 102 = 98
    assert "edited → gpu-a (score 98) or 1 other tied: kube-scheduler picks at random" in w.summary.plain
    assert "live → gpu-a (score 10)   " in w.summary.plain
