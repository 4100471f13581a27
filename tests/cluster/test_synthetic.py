"""The synthetic source: the same seed gives the same cluster; events and scaling keep it consistent."""

from __future__ import annotations

import threading

from kubeview.cluster.synthetic import SyntheticSource
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import ConnectionState, Listed, WatchEvent


def test_same_seed_same_objects() -> None:
    a, b = SyntheticSource(nodes=40, pods=300, seed=3).lists(), SyntheticSource(nodes=40, pods=300, seed=3).lists()
    assert [(x.kind, x.objects) for x in a] == [(x.kind, x.objects) for x in b]
    c = SyntheticSource(nodes=40, pods=300, seed=4).lists()
    assert [x.objects for x in a] != [x.objects for x in c]


def test_shape_counts_and_fit() -> None:
    src = SyntheticSource(nodes=50, pods=1000, seed=1, gpu_fraction=0.1, pending_fraction=0.02)
    model = ClusterModel()
    for listed in src.lists():
        model.apply(listed)
    assert len(model.nodes) == 50 and len(model.pods) == 1000
    assert sum(1 for n in model.nodes if n.startswith("gpu")) == 5
    assert 0 < model.pending_count() < 100
    free = model.allocation().free
    assert (free >= 0).all()  # the generator only binds pods that fit
    for pod in model.pending():
        assert pod.pending_reason and pod.pending_reason.startswith("0/50 nodes are available: ")


def test_events_flow_and_keep_the_model_consistent() -> None:
    src = SyntheticSource(nodes=20, pods=200, seed=2, events_per_second=2000)
    model = ClusterModel()
    seen: list = []
    stop = threading.Event()

    def emit(event) -> None:  # noqa: ANN001
        seen.append(event)
        model.apply(event)
        if sum(isinstance(e, WatchEvent) for e in seen) >= 500:
            stop.set()

    thread = threading.Thread(target=src.run, args=(emit, stop))
    thread.start()
    thread.join(30)
    assert not thread.is_alive()
    assert isinstance(seen[0], ConnectionState) and seen[0].state == "connecting"
    assert [e.kind for e in seen if isinstance(e, Listed)] == ["Node", "Pod", "ReplicaSet", "Deployment", "StatefulSet", "Job"]
    assert {e.type for e in seen if isinstance(e, WatchEvent)} == {"ADDED", "MODIFIED", "DELETED"}
    fresh = ClusterModel()
    for listed in src.lists():
        fresh.apply(listed)
    assert set(model.pods) == set(fresh.pods)  # the event stream told the whole story
    assert (model.allocation().requested == fresh.allocation().requested).all()


def test_scale_changes_pods_through_events() -> None:
    src = SyntheticSource(nodes=12, pods=80, seed=1)
    dep = next(k for k in (("Deployment", w.namespace, w.name) for w in src._workloads.values()
                           if w.kind == "Deployment"))
    before = src._workloads[dep].replicas
    assert src.scale(*dep, before + 2) == f"Deployment {dep[1]}/{dep[2]} scaled from {before} to {before + 2}."
    model = ClusterModel()
    for listed in src.lists():
        model.apply(listed)
    assert model.workloads[dep].desired == before + 2
    rs = next(w for w in model.workloads.values() if w.kind == "ReplicaSet" and w.owner == ("Deployment", dep[2]))
    assert sum(1 for p in model.pods.values() if p.owner == ("ReplicaSet", rs.name)) == before + 2
