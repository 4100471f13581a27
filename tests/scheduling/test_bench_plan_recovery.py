"""`plan_recovery.recover`: what a kubeview plan places of the pods a scheduler left Pending."""

from __future__ import annotations

from kubeview.bench.scheduler.plan_recovery import recover

SHAPE = {"pods": "110", "cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8"}


def node(i: int) -> dict:
    return {"metadata": {"name": f"n{i}", "labels": {"pool": "gpu"}}, "status": {"capacity": SHAPE, "allocatable": SHAPE}}


def pod(name: str, gpus: int, on: str | None = None) -> dict:
    requests = {"cpu": str(gpus), "memory": f"{8 * gpus}Gi", "nvidia.com/gpu": str(gpus)}
    obj: dict = {"metadata": {"name": name, "namespace": "bench"},
                 "spec": {"nodeSelector": {"pool": "gpu"}, "containers": [{"name": "c", "resources": {"requests": requests}}]},
                 "status": {"phase": "Running" if on else "Pending"}}
    if on:
        obj["spec"]["nodeName"] = on
    return obj


def test_spread_pods_moved_together_free_whole_nodes() -> None:
    """4 nodes with 4, 4, 2 and 2 GPUs in use: moving the two 2-GPU pods onto the 4s frees two nodes,
    so two of three 8-GPU pods fit, the third nowhere (12 + 24 GPUs > 32)."""
    nodes = [node(i) for i in range(4)]
    bound = [pod("a", 4, "n0"), pod("b", 4, "n1"), pod("c", 2, "n2"), pod("d", 2, "n3")]
    r = recover(nodes, bound, [pod(f"big-{i}", 8) for i in range(3)])
    assert (r.pending, r.placed, r.moves, r.moved_gpus) == (3, 2, 2, 4), r
    assert r.words().startswith("places 2 of 3 Pending by moving 2 running pods (4 GPUs"), r.words()


def test_nothing_to_recover_when_the_gpus_are_used() -> None:
    nodes = [node(i) for i in range(2)]
    bound = [pod("a", 8, "n0"), pod("b", 4, "n1"), pod("c", 2, "n1")]
    r = recover(nodes, bound, [pod("big", 8)])
    assert (r.placed, r.moves) == (0, 0)
    assert r.words() == "no plan places any of the 1 Pending pods by moving others"
    assert recover(nodes, bound, []).words() == "nothing left Pending"
