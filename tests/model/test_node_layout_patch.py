"""A node's update swaps its view in the kept layout (no rebuild); whatever the sequence of node and pod
events, layout() and allocation() equal what a model built from scratch gives."""

from __future__ import annotations

import random

import numpy as np

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, WatchEvent


def node(name: str, rv: int, gpus: int = 8, ready: str = "True") -> dict:
    amounts = {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    return {"metadata": {"name": name, "resourceVersion": str(rv), "labels": {"zone": name[-1]}},
            "spec": {}, "status": {"capacity": amounts, "allocatable": amounts,
                                   "conditions": [{"type": "Ready", "status": ready}]}}


def pod(name: str, node_name: str, rv: int) -> dict:
    return {"metadata": {"name": name, "namespace": "default", "uid": name, "resourceVersion": str(rv)},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "resources": {
                "requests": {"cpu": "1", "nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}}]},
            "status": {"phase": "Running"}}


def test_node_updates_patch_the_layout_and_agree_with_a_fresh_model() -> None:
    rng = random.Random(5)
    names = [f"node-{i:02}" for i in range(30)]
    nodes = {n: node(n, 1) for n in names}
    pods: dict[str, dict] = {}
    model = ClusterModel()
    model.apply(Listed("Node", list(nodes.values()), "1"))
    model.apply(Listed("Pod", [], "1"))
    rv = 2
    patched = 0
    for step in range(400):
        rv += 1
        before = model.node_pods._layout
        what = rng.random()
        name = rng.choice(names)
        if what < 0.5 and name in nodes:  # a heartbeat or a resize
            nodes[name] = node(name, rv, gpus=rng.choice((8, 8, 8, 4)), ready=rng.choice(("True", "False")))
            model.apply(WatchEvent("Node", "MODIFIED", nodes[name]))
            if before is not None:
                patched += model.node_pods._layout is not None
        elif what < 0.6:  # a node leaves or comes back
            if name in nodes:
                model.apply(WatchEvent("Node", "DELETED", nodes.pop(name)))
            else:
                nodes[name] = node(name, rv)
                model.apply(WatchEvent("Node", "ADDED", nodes[name]))
        else:
            p = pod(f"p{step}", name, rv)
            pods[p["metadata"]["name"]] = p
            model.apply(WatchEvent("Pod", "ADDED", p))
        fresh = ClusterModel()
        fresh.apply(Listed("Node", list(nodes.values()), "1"))
        fresh.apply(Listed("Pod", list(pods.values()), "1"))
        rows, order, views = model.node_pods.layout()
        f_rows, f_order, f_views = fresh.node_pods.layout()
        assert order == f_order and views == f_views, f"step {step}"
        assert [model.node_pods.table.row[n] for n in order] == rows.tolist()
        a, b = model.allocation(), fresh.allocation()
        assert a.nodes == b.nodes and a.views == b.views
        for m in ("capacity", "allocatable", "requested", "limits"):
            assert np.array_equal(getattr(a, m)[:, [a.resources.index(r) for r in b.resources]], getattr(b, m)), m
    assert patched > 100  # the swap, not a rebuild, took most updates
