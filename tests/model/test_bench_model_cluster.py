"""The synthetic cluster `bench model` and the snapshot's table test build, at small sizes too."""

from __future__ import annotations

import pytest

from kubeview.bench.model_cluster import Cluster


@pytest.mark.parametrize(("nodes", "gpu_nodes", "pods"), [(3, 1, 20), (20, 2, 200), (300, 30, 3000)])
def test_gpu_pods_go_to_gpu_nodes_only_and_never_past_eight(nodes: int, gpu_nodes: int, pods: int) -> None:
    """First-fit looked at the three nodes from a GPU node on, which ran into the CPU nodes (a
    KeyError) when fewer than three GPU nodes were left after it."""
    cluster = Cluster(nodes, gpu_nodes, pods)
    used: dict[str, int] = {}
    for _, node, gpus in cluster.placement.values():
        if gpus and node is not None:
            assert node.startswith("gpu-node-")
            used[node] = used.get(node, 0) + gpus
    assert used and max(used.values()) <= 8
