"""The filter checks a refusal against the API server before sending it: kube-scheduler's informer
can be ahead of the extender's watch (it saw the pods on a node deleted and retried a Pending pod
because of it), and a refusal based on pods already gone would leave that pod Pending until some
later event (seen once in CI with the captures' configuration, filterVerb set). The API's answer is
a function here; tests/scheduling/test_standin_packing.py runs it over HTTP (KubePodsOnNode).

The filter refuses on a resource at all only when kube-scheduler leaves it to the extender
(`ignoredByScheduler: true`, `--scheduler-ignores`): otherwise kube-scheduler's NodeResourcesFit has
already checked it on a view at least as fresh, and the filter refuses nothing."""

from __future__ import annotations

import json
import threading
import time

from builders import node_obj, pod_obj

from kubeview.model.events import Listed, WatchEvent
from kubeview.scheduling.extender import Extender
from kubeview.scheduling.feed import ModelFeed

CATCH_UP = 30.0
"""Long, so that a wait that ran out cannot pass for one the watch ended (the default is 0.25 s:
a loaded machine took longer than that to deliver the deletions 60 ms late)."""
IGNORED = ("nvidia.com/gpu",)  # the scheduler configuration's ignoredByScheduler: true


def _cluster() -> tuple[ModelFeed, dict]:
    feed = ModelFeed()
    feed.apply(Listed("Node", [node_obj("gpu-node-1", gpu=2), node_obj("gpu-node-2", gpu=2)], "1"))
    old = [pod_obj("old-1", gpu=1, node_name="gpu-node-1"), pod_obj("old-2", gpu=1, node_name="gpu-node-1"),
           pod_obj("old-3", gpu=2, node_name="gpu-node-2")]
    for i, p in enumerate(old):
        p["metadata"]["resourceVersion"] = str(2 + i)
    feed.apply(Listed("Pod", old, "4"))
    return feed, {p["metadata"]["name"]: p for p in old}


def _filter(ext: Extender, gpus: int) -> dict:
    pod = pod_obj("new", gpu=gpus)
    pod["metadata"]["resourceVersion"] = "3"  # older than the watch: no wait for the pod itself
    body = json.dumps({"Pod": pod, "NodeNames": ["gpu-node-1", "gpu-node-2"]}).encode()
    return json.loads(ext.filter(body))


def test_a_refusal_on_pods_the_api_no_longer_has_waits_for_the_watch() -> None:
    feed, old = _cluster()
    api = {"gpu-node-1": set(), "gpu-node-2": {"uid-old-3"}}  # old-1, old-2 are gone at the API
    asked: list[str] = []

    def pods_on(node: str) -> set[str]:
        asked.append(node)
        return api[node]

    ext = Extender(feed, pods_on=pods_on, catch_up=CATCH_UP, scheduler_ignores=IGNORED)

    def watch_catches_up() -> None:  # the deletions reach kubeview's watch once the refusal was found stale
        deadline = time.monotonic() + CATCH_UP
        while ext.counters["stale_refusals"] < 1:  # by construction, not 60 ms of sleep against a 0.25 s wait
            assert time.monotonic() < deadline
            time.sleep(0.005)
        for rv, name in ((10, "old-1"), (11, "old-2")):
            gone = dict(old[name], metadata={**old[name]["metadata"], "resourceVersion": str(rv)})
            feed.apply(WatchEvent("Pod", "DELETED", gone))

    late = threading.Thread(target=watch_catches_up)
    late.start()
    started = time.monotonic()
    reply = _filter(ext, 2)
    late.join()
    assert reply["NodeNames"] == ["gpu-node-1"], reply
    assert reply["FailedNodes"] == {"gpu-node-2": "Insufficient nvidia.com/gpu"}
    assert ext.counters["stale_refusals"] == 1  # one node checked stale (its two pods)
    assert sorted(asked) == ["gpu-node-1", "gpu-node-2"]
    assert time.monotonic() - started < CATCH_UP  # it went on when the watch caught up, not at the timeout


def test_a_refusal_the_api_confirms_is_sent_at_once() -> None:
    feed, _ = _cluster()
    ext = Extender(feed, pods_on=lambda node: {"gpu-node-1": {"uid-old-1", "uid-old-2"},
                                               "gpu-node-2": {"uid-old-3"}}[node], catch_up=CATCH_UP,
                   scheduler_ignores=IGNORED)
    started = time.monotonic()
    reply = _filter(ext, 1)
    assert reply["NodeNames"] == [] and set(reply["FailedNodes"]) == {"gpu-node-1", "gpu-node-2"}
    assert ext.counters["stale_refusals"] == 0
    assert time.monotonic() - started < CATCH_UP  # nothing waited for (a wait would last CATCH_UP)


def test_without_the_api_the_watch_is_trusted() -> None:
    feed, _ = _cluster()
    reply = _filter(Extender(feed, pods_on=lambda node: None, scheduler_ignores=IGNORED), 1)
    assert reply["NodeNames"] == []
    assert json.loads(json.dumps(reply))["FailedNodes"]["gpu-node-1"] == "Insufficient nvidia.com/gpu"


def test_a_resource_kube_scheduler_checks_is_never_refused_on() -> None:
    """The shipped configurations (ignoredByScheduler: false): both nodes full in our view, and the
    API is not even asked; kube-scheduler sent them after its own NodeResourcesFit passed them."""
    feed, _ = _cluster()
    asked: list[str] = []
    ext = Extender(feed, pods_on=lambda node: asked.append(node) or set(), catch_up=CATCH_UP)
    reply = _filter(ext, 2)
    assert reply["NodeNames"] == ["gpu-node-1", "gpu-node-2"] and reply["FailedNodes"] == {}, reply
    assert asked == [] and ext.counters["stale_refusals"] == 0 and ext.counters["filtered_out"] == 0
    # with GPUs left to it, the same view refuses both (a control: the view does say "full")
    ext = Extender(feed, pods_on=lambda node: None, scheduler_ignores=IGNORED)
    assert set(_filter(ext, 2)["FailedNodes"]) == {"gpu-node-1", "gpu-node-2"}


def test_only_the_ignored_resources_are_refused_on() -> None:
    """A taint or a full cpu in our view is kube-scheduler's to judge (it checks both itself)."""
    feed = ModelFeed()
    tainted = node_obj("gpu-node-1", gpu=2, taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}])
    feed.apply(Listed("Node", [tainted, node_obj("gpu-node-2", gpu=2)], "1"))
    feed.apply(Listed("Pod", [pod_obj("cpu-hog", cpu="8", node_name="gpu-node-2")], "2"))
    pod = pod_obj("new", gpu=1, cpu="1")
    body = json.dumps({"Pod": pod, "NodeNames": ["gpu-node-1", "gpu-node-2"]}).encode()
    reply = json.loads(Extender(feed, scheduler_ignores=IGNORED).filter(body))
    assert reply["NodeNames"] == ["gpu-node-1", "gpu-node-2"] and reply["FailedNodes"] == {}, reply
