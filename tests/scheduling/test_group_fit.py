"""A pod that fits no node now, against the nodes its node groups could add (scheduling/group_fit.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from kubeview.model.autoscaling.groups import CLUSTER_AUTOSCALER, KARPENTER, NODES, Limit, NodeGroup
from kubeview.model.autoscaling.words import nodes_it_can_add
from kubeview.model.views import PodView
from kubeview.scheduling.group_fit import group_answer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "model"))
from autoscaling_builders import pod  # noqa: E402

GPU_NODE = {"cpu": 32_000, "memory": 256 * 2**30, "pods": 110, "nvidia.com/gpu": 8}
TAINT = {"key": "nvidia.com/gpu", "effect": "NoSchedule"}


def ca(name: str, size: int, max_size: int, template: dict | None = GPU_NODE, **kw: object) -> NodeGroup:
    return NodeGroup(CLUSTER_AUTOSCALER, name, size, 0, max_size, size, (Limit(NODES, size, max_size),),
                     template=template, **kw)  # type: ignore[arg-type]


def gpu_pod(gpus: int = 8, **kw: object) -> PodView:
    return PodView.from_api(pod("p", gpus=gpus, **kw))  # type: ignore[arg-type]


def test_a_group_that_can_grow() -> None:
    a = group_answer(gpu_pod(), [ca("gpu-pool", 6, 38)])
    assert a is not None and a.words == "would fit a new node of gpu-pool (it can add 32)"
    assert a.will_come and a.can_add == 32 and a.per_node == 1


def test_a_group_at_its_maximum() -> None:
    a = group_answer(gpu_pod(), [ca("gpu-pool", 6, 6)])
    assert a is not None and a.words == "would fit a node of gpu-pool, but gpu-pool is at its maximum 6"
    assert not a.will_come


def test_a_nodepool_at_its_gpu_limit_and_one_that_can_grow_is_preferred() -> None:
    pool = NodeGroup(KARPENTER, "gpu", 6, limits=(Limit("nvidia.com/gpu", 48, 48),), template=GPU_NODE)
    a = group_answer(gpu_pod(), [pool])
    assert a is not None and a.words == "would fit a node of gpu, but NodePool gpu is at its limit nvidia.com/gpu 48/48"
    near = NodeGroup(KARPENTER, "gpu", 5, limits=(Limit("nvidia.com/gpu", 44, 48),), template=GPU_NODE)
    assert nodes_it_can_add(near) == 0  # 4 GPUs left, a node has 8
    b = group_answer(gpu_pod(), [pool, ca("spare", 1, 3)])
    assert b is not None and b.words == "would fit a new node of spare (it can add 2)"


def test_a_failing_group_says_the_clouds_words() -> None:
    g = ca("a-pool", 3, 12, backoff="Quota 'CPUS' exceeded.", error="Quota 'CPUS' exceeded.")
    a = group_answer(gpu_pod(), [g])
    assert a is not None and a.words == "would fit a node of a-pool, but its scale-up failed: Quota 'CPUS' exceeded."


def test_selectors_and_taints_filter_templates_as_the_scheduler_does() -> None:
    tainted = ca("gpu-pool", 6, 38, taints=(TAINT,), node_labels={"pool": "gpu"})
    a = group_answer(gpu_pod(), [tainted])
    assert a is not None and a.group is None
    assert a.words == "would not fit a new node of any node group either (1 node(s) had untolerated taint(s))"
    tolerating = gpu_pod(tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}], selector={"pool": "gpu"})
    assert group_answer(tolerating, [tainted]).words.startswith("would fit a new node of gpu-pool")  # type: ignore[union-attr]
    too_big = group_answer(gpu_pod(gpus=16), [ca("gpu-pool", 6, 38)])
    assert too_big is not None and too_big.words.endswith("(1 Insufficient nvidia.com/gpu)")


def test_no_template_no_answer() -> None:
    assert group_answer(gpu_pod(), [ca("gpu-pool", 0, 38, template=None)]) is None
    assert group_answer(gpu_pod(), []) is None
