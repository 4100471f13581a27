"""Assumed pods against a model view that lags the watch (ModelFeed with max_staleness)."""

from __future__ import annotations

from builders import node_obj, pod_obj

from kubeview.model.events import Listed, WatchEvent
from kubeview.model.views import PodView
from kubeview.scheduling import evaluate
from kubeview.scheduling.assumed import AssumedPods
from kubeview.scheduling.feed import ModelFeed
from kubeview.scheduling.node_index import index_for


def test_assumption_stays_until_the_scored_view_includes_the_binding() -> None:
    feed = ModelFeed(max_staleness=3600).start()  # the background refresh never comes in this test
    try:
        feed.apply(Listed("Node", [node_obj("gpu-node-1", gpu=1), node_obj("gpu-node-2", gpu=1)], "1"))
        feed.apply(Listed("Pod", [], "1"))
        feed.refresh()
        assumed = AssumedPods(ttl=30)
        x = pod_obj("x", gpu=1)
        assumed.assume("uid-x", "default", "x", "gpu-node-1", PodView.from_api(x).requests)

        x["spec"]["nodeName"] = "gpu-node-1"
        x["metadata"]["resourceVersion"] = "2"
        feed.apply(WatchEvent("Pod", "MODIFIED", x))  # the live model has the binding...
        view = feed.view()  # ...the published view does not yet
        assumed.prune(feed.bound, view.version, feed.live_version)
        assert len(assumed) == 1  # so the assumption must keep covering gpu-node-1
        index = index_for(view.alloc)
        placement = evaluate(view.alloc, PodView.from_api(pod_obj("y", gpu=1)), assumed=assumed.load(view.alloc, index.row))
        assert placement.best == "gpu-node-2"

        view = feed.refresh()  # now it does: dropping the assumption cannot double-book
        assumed.prune(feed.bound, view.version, feed.live_version)
        assert len(assumed) == 0 and assumed.confirmed == 1
        placement = evaluate(view.alloc, PodView.from_api(pod_obj("y", gpu=1)), assumed=assumed.load(view.alloc, index.row))
        assert placement.best == "gpu-node-2"
    finally:
        feed.stop()


def test_reassuming_a_pod_moves_it_and_excluding_its_own_uid() -> None:
    feed = ModelFeed()
    feed.apply(Listed("Node", [node_obj("a", gpu=2), node_obj("b", gpu=2)], "1"))
    alloc = feed.view().alloc
    row = index_for(alloc).row
    assumed = AssumedPods()
    assumed.assume("u", "default", "p", "a", {"nvidia.com/gpu": 2})
    assumed.assume("u", "default", "p", "b", {"nvidia.com/gpu": 2})  # re-scored: it moved
    col = alloc.column("nvidia.com/gpu")
    load = assumed.load(alloc, row)
    assert load.rows.tolist() == [1] and load.amounts[:, col].tolist() == [2]  # all on b
    assert assumed.load(alloc, row, exclude_uid="u") is None  # a pod never competes with itself
    assumed.assume("v", "default", "q", "b", {"nvidia.com/gpu": 1})
    assert assumed.load(alloc, row).amounts[:, col].tolist() == [3]
    assert assumed.load(alloc, row, exclude_uid="u").amounts[:, col].tolist() == [1]  # u's own taken off
