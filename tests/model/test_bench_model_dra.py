"""The DRA case of `kubeview bench model` (kubeview/bench/model_dra.py) makes a consistent cluster:
after the lists and a run of watch events, the ledger's allocated devices are exactly the devices of
the claims whose pods are placed, and no node is over-committed (small sizes: a test, not the bench)."""

from __future__ import annotations

import gc
import sys

from kubeview.bench.model_dra import DraCluster, device_class
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.model.gpus.ledger import GpuLedger


def test_dra_bench_cluster_counts_each_claimed_device_once() -> None:
    cluster = DraCluster(nodes=60, gpu_nodes=12, pods=1500, claims=120)
    m = ClusterModel()
    for kind, objects in (("Node", cluster.nodes()), ("Pod", cluster.pods()), ("DeviceClass", [device_class()]),
                          ("ResourceSlice", cluster.slices()), ("ResourceClaim", cluster.claims())):
        m.apply(Listed(kind, objects))
    for _ in range(3):
        m.apply_all(cluster.events(2000))
    a = m.allocation()
    col = a.column("nvidia.com/gpu")
    allocated = sum(len(c.results) for c in m.gpus.claims.values())
    assert len(m.gpus.claims) >= 100 and allocated > 0
    assert int(a.requested[:, col].sum()) == allocated  # no device-plugin GPUs anywhere, no mapped request counted
    assert int(a.allocatable[:, col].sum()) == 12 * 8
    assert (a.requested[:, col] <= a.allocatable[:, col]).all()


def test_ledger_recompute_after_lists_starts_no_collection() -> None:
    """The first allocation() after the lists recomputes every DRA node; with the collector left on,
    that burst of DeviceStates started the collector's pass over every pod view the relist had just
    made (1.1 s of the 5,000-node bench's 2.4 s build). Threshold 1: any collection due would start."""
    cluster = DraCluster(nodes=60, gpu_nodes=12, pods=1500, claims=120)
    m = ClusterModel()
    for kind, objects in (("Node", cluster.nodes()), ("Pod", cluster.pods()), ("DeviceClass", [device_class()]),
                          ("ResourceSlice", cluster.slices()), ("ResourceClaim", cluster.claims())):
        m.apply(Listed(kind, objects))
    in_compute: list[int] = []  # collections that started while the ledger computed a node's devices

    def watch(phase: str, info: dict) -> None:
        frame = sys._getframe(1)
        while phase == "start" and frame is not None:
            if frame.f_code is GpuLedger._compute.__code__:
                in_compute.append(info["generation"])
                break
            frame = frame.f_back

    threshold = gc.get_threshold()
    gc.callbacks.append(watch)
    gc.set_threshold(1, 1, 1)
    try:
        nodes = m.gpus.nodes()
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(watch)
    assert len(nodes) == 12 and sum(len(n.devices) for n in nodes.values()) == 12 * 8
    assert in_compute == []
    assert gc.isenabled()


def test_listed_views_are_out_of_every_later_collection() -> None:
    """`bench model --dra` built in 3.5 s on a fresh environment, 1.6 s on another: the collector's
    counters (the process's history) decided whether a full collection over every live object (2 s at
    150,000 pods) fired inside the build. A bulk list's views are frozen when it is applied, so no later
    collection walks them, whatever the counters: counted as the objects a collection would walk."""
    from kubeview.model.gpus.dra import ClaimView
    from kubeview.model.views import PodView

    cluster = DraCluster(nodes=60, gpu_nodes=12, pods=3000, claims=1200)
    lists = [("Node", cluster.nodes()), ("Pod", cluster.pods()), ("DeviceClass", [device_class()]),
             ("ResourceSlice", cluster.slices()), ("ResourceClaim", cluster.claims())]
    m = ClusterModel()
    try:
        for kind, objects in lists:
            m.apply(Listed(kind, objects))
        m.allocation()
        walked = [o for o in gc.get_objects() if isinstance(o, (PodView, ClaimView))]
        assert len(m.pods) == 3000 and len(m.gpus.claims) == 1200
        assert walked == []
        assert gc.isenabled()
    finally:
        gc.unfreeze()
