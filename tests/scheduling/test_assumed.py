"""The extender's ledger of pods it placed that the model does not count yet (assumed.py), through a
ModelFeed as the extender uses it: every Pod event reaches the ledger with the version that carried it."""

from __future__ import annotations

from builders import node_obj, pod_obj

from kubeview.model.events import Listed, WatchEvent
from kubeview.scheduling.assumed import AssumedPods
from kubeview.scheduling.feed import ModelFeed
from kubeview.scheduling.node_index import index_for

GPU = {"nvidia.com/gpu": 1, "cpu": 100, "pods": 1}


def _setup() -> tuple[ModelFeed, AssumedPods]:
    feed = ModelFeed()
    assumed = AssumedPods(ttl=30)
    feed.follow_pods(assumed)
    feed.apply(Listed("Node", [node_obj("gpu-node-1", gpu=2), node_obj("gpu-node-2", gpu=2)], "1"))
    feed.apply(Listed("Pod", [], "1"))
    return feed, assumed


def _gpus(feed: ModelFeed, assumed: AssumedPods, view_version: int | None = None, bound_only: bool = False,
          exclude: str = "") -> dict[str, int]:
    view = feed.view()
    alloc = view.alloc
    load = assumed.load(alloc, index_for(alloc).row, view.version if view_version is None else view_version,
                        exclude_uid=exclude, bound_only=bound_only)
    col = alloc.column("nvidia.com/gpu")
    out = {name: 0 for name in alloc.nodes}
    if load is not None:
        for r, amounts in zip(load.rows.tolist(), load.amounts, strict=True):
            out[alloc.nodes[r]] += int(amounts[col])
    return out


def test_a_bound_pod_counts_until_exactly_the_version_that_carried_its_binding() -> None:
    feed, assumed = _setup()
    feed.apply(WatchEvent("Pod", "ADDED", pod_obj("x", gpu=1)))
    before = feed.live_version
    assumed.bind("uid-x", "default", "x", "gpu-node-1", GPU)
    assert _gpus(feed, assumed) == {"gpu-node-1": 1, "gpu-node-2": 0}
    feed.apply(WatchEvent("Pod", "MODIFIED", pod_obj("x", gpu=1, node_name="gpu-node-1")))
    carried = feed.live_version
    assert carried == before + 1
    # a view older than the binding still needs the ledger; the view that carries it must not add it again
    assert _gpus(feed, assumed, view_version=carried - 1) == {"gpu-node-1": 1, "gpu-node-2": 0}
    assert _gpus(feed, assumed, view_version=carried) == {"gpu-node-1": 0, "gpu-node-2": 0}
    assumed.prune(carried)
    assert len(assumed) == 0 and assumed.confirmed == 1


def test_a_wrong_prediction_moves_to_where_the_pod_really_went() -> None:
    feed, assumed = _setup()
    feed.apply(WatchEvent("Pod", "ADDED", pod_obj("x", gpu=1)))
    assumed.predict("uid-x", "default", "x", "gpu-node-1", GPU)
    feed.apply(WatchEvent("Pod", "MODIFIED", pod_obj("x", gpu=1, node_name="gpu-node-2")))
    assert _gpus(feed, assumed, view_version=feed.live_version - 1) == {"gpu-node-1": 0, "gpu-node-2": 1}
    assert _gpus(feed, assumed) == {"gpu-node-1": 0, "gpu-node-2": 0}  # the model counts it now


def test_a_deleted_pod_frees_its_gpus_at_once() -> None:
    feed, assumed = _setup()
    feed.apply(WatchEvent("Pod", "ADDED", pod_obj("x", gpu=2)))
    assumed.bind("uid-x", "default", "x", "gpu-node-1", {"nvidia.com/gpu": 2})
    feed.apply(WatchEvent("Pod", "DELETED", pod_obj("x", gpu=2)))
    assert _gpus(feed, assumed) == {"gpu-node-1": 0, "gpu-node-2": 0}
    assert len(assumed) == 0 and assumed.gone == 1


def test_a_finished_pod_is_forgotten() -> None:
    feed, assumed = _setup()
    obj = pod_obj("job-0", gpu=1)
    feed.apply(WatchEvent("Pod", "ADDED", obj))
    assumed.predict("uid-job-0", "default", "job-0", "gpu-node-1", GPU)
    obj["status"]["phase"] = "Succeeded"
    feed.apply(WatchEvent("Pod", "MODIFIED", obj))
    assert len(assumed) == 0


def test_predictions_never_count_for_filter_and_never_against_the_pod_itself() -> None:
    feed, assumed = _setup()
    feed.apply(WatchEvent("Pod", "ADDED", pod_obj("x", gpu=1)))
    assumed.predict("uid-x", "default", "x", "gpu-node-1", GPU)
    assert _gpus(feed, assumed, bound_only=True) == {"gpu-node-1": 0, "gpu-node-2": 0}
    assert _gpus(feed, assumed, exclude="uid-x") == {"gpu-node-1": 0, "gpu-node-2": 0}
    assert _gpus(feed, assumed) == {"gpu-node-1": 1, "gpu-node-2": 0}


def test_a_newer_unscheduled_status_voids_a_prediction_an_older_one_does_not() -> None:
    feed, assumed = _setup()
    obj = pod_obj("x", gpu=1)
    obj["metadata"]["resourceVersion"] = "10"
    feed.apply(WatchEvent("Pod", "ADDED", obj))
    assumed.predict("uid-x", "default", "x", "gpu-node-1", GPU, pod_rv="12")
    late = pod_obj("x", gpu=1)
    late["metadata"]["resourceVersion"] = "11"  # an older status reaching the watch late: kept
    feed.apply(WatchEvent("Pod", "MODIFIED", late))
    assert len(assumed) == 1
    newer = pod_obj("x", gpu=1)
    newer["metadata"]["resourceVersion"] = "13"
    newer["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    feed.apply(WatchEvent("Pod", "MODIFIED", newer))
    assert len(assumed) == 0


def test_a_relist_keeps_what_is_there_and_drops_what_is_gone() -> None:
    feed, assumed = _setup()
    feed.apply(WatchEvent("Pod", "ADDED", pod_obj("x", gpu=1)))
    feed.apply(WatchEvent("Pod", "ADDED", pod_obj("y", gpu=1)))
    assumed.bind("uid-x", "default", "x", "gpu-node-1", GPU)
    assumed.bind("uid-y", "default", "y", "gpu-node-2", GPU)
    feed.apply(Listed("Pod", [pod_obj("x", gpu=1, node_name="gpu-node-1")], "9"))
    assert assumed.node_of("uid-y") is None
    assert _gpus(feed, assumed) == {"gpu-node-1": 0, "gpu-node-2": 0}


def test_the_ttl_is_a_safety_net() -> None:
    now = [0.0]
    assumed = AssumedPods(ttl=30, clock=lambda: now[0])
    assumed.bind("u", "default", "p", "a", GPU)
    now[0] = 31
    assumed.prune(0)
    assert len(assumed) == 0 and assumed.expired == 1
