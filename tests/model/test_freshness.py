"""The completeness rule (model/freshness.py): a figure is a fact only while every kind it counts is
listed completely, no relist is in progress and the link is live; the model's events drive it."""

from __future__ import annotations

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import ConnectionState, Listed, Listing
from kubeview.model.freshness import FACT, NODE_FIGURES, depends, freshness

NODE = {"metadata": {"name": "n1", "resourceVersion": "1"},
        "status": {"allocatable": {"cpu": "32", "memory": "64Gi", "pods": "110"}, "conditions": [
            {"type": "Ready", "status": "True"}]}}
LIVE = ConnectionState("live", 1.0)


def _pod(name: str) -> dict:
    return {"metadata": {"namespace": "ns", "name": name, "uid": name, "resourceVersion": "2"},
            "spec": {"nodeName": "n1", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
            "status": {"phase": "Running"}}


def test_never_listed_kinds_are_pending_with_what_is_read_so_far() -> None:
    f = freshness(("Node", "Pod"), {"Node"}, {"Pod": (90_000, 5.0)}, LIVE)
    assert (f.state, f.why) == ("pending", "listing Pod 90,000…")
    assert freshness(("Node", "Pod"), set(), {}, LIVE).why == "listing Node…, Pod…"  # not begun: no count


def test_a_relist_keeps_the_last_figures_as_of_when_it_began() -> None:
    f = freshness(("Node", "Pod"), {"Node", "Pod"}, {"Pod": (40_000, 12.0), "Node": (0, 11.0)}, LIVE)
    assert (f.state, f.why, f.as_of) == ("stale", "relisting Node…, Pod 40,000…", 11.0)


def test_a_link_down_is_stale_since_it_went_down() -> None:
    down = ConnectionState("reconnecting", 7.0, "connection refused")
    f = freshness(("Node",), {"Node"}, {}, down)
    assert (f.state, f.why, f.as_of) == ("stale", "reconnecting", 7.0)
    # back, and the watch answered 410: relisting, still as of when the link went down
    f = freshness(("Node", "Pod"), {"Node", "Pod"}, {"Pod": (10, 9.0)}, down)
    assert (f.state, f.why, f.as_of) == ("stale", "relisting Pod 10…, reconnecting", 7.0)
    assert freshness(("Node",), {"Node"}, {}, LIVE) == FACT


def test_only_the_kinds_a_figure_counts_matter() -> None:
    assert freshness(("Node",), {"Node"}, {"Pod": (10, 1.0)}, LIVE) == FACT  # node count: pods do not matter
    # DRA kinds only where the source lists them
    assert depends(NODE_FIGURES, ("Node", "Pod", "Job")) == ("Node", "Pod")
    assert depends(NODE_FIGURES, ("Node", "Pod", "ResourceSlice")) == ("Node", "Pod", "ResourceSlice")


def test_the_model_follows_the_source_through_a_list_and_a_relist() -> None:
    m = ClusterModel()
    kinds = ("Node", "Pod")
    m.apply_all([ConnectionState("live", 1.0), Listing("Node", 0, 1.0), Listing("Pod", 0, 1.0),
                 Listed("Node", [NODE])])
    assert m.lists().freshness(kinds).why == "listing Pod…"
    m.apply(Listing("Pod", 2, 1.0))  # a page: the model holds none of its pods yet
    assert m.lists().freshness(kinds) == freshness(kinds, {"Node"}, {"Pod": (2, 1.0)}, m.connection)
    m.apply(Listed("Pod", [_pod("a"), _pod("b"), _pod("c")]))
    assert m.lists().freshness(kinds) == FACT
    # the watch expired (410): the relist begins; the last complete figures stay, as of its start
    m.apply(Listing("Pod", 0, 20.0))
    m.apply(Listing("Pod", 2, 20.0))
    m.apply(Listing("Pod", 0, 25.0))  # a 410 on its `continue`: listed again from the start
    f = m.lists().freshness(kinds)
    assert (f.state, f.why, f.as_of) == ("stale", "relisting Pod…", 20.0)
    assert m.totals()["cpu"]["requested"] == 3000  # what the view keeps meanwhile: the complete list's
    m.apply(Listed("Pod", [_pod("a")]))
    assert m.lists().freshness(kinds) == FACT and m.totals()["cpu"]["requested"] == 1000
