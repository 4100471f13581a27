"""The DRA case of `kubeview bench model` (kubeview/bench/model_dra.py) makes a consistent cluster:
after the lists and a run of watch events, the ledger's allocated devices are exactly the devices of
the claims whose pods are placed, and no node is over-committed (small sizes: a test, not the bench)."""

from __future__ import annotations

from kubeview.bench.model_dra import DraCluster, device_class
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed


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
