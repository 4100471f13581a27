"""The filter checks a refusal against the API server before sending it: kube-scheduler's informer
can be ahead of the extender's watch (it saw the pods on a node deleted and retried a Pending pod
because of it), and a refusal based on pods already gone would leave that pod Pending until some
later event (seen once in CI with the captures' configuration, filterVerb set). The API's answer is
a function here; tests/scheduling/test_standin_packing.py runs it over HTTP (KubePodsOnNode)."""

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

    ext = Extender(feed, pods_on=pods_on, catch_up=CATCH_UP)

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
                                               "gpu-node-2": {"uid-old-3"}}[node], catch_up=CATCH_UP)
    started = time.monotonic()
    reply = _filter(ext, 1)
    assert reply["NodeNames"] == [] and set(reply["FailedNodes"]) == {"gpu-node-1", "gpu-node-2"}
    assert ext.counters["stale_refusals"] == 0
    assert time.monotonic() - started < CATCH_UP  # nothing waited for (a wait would last CATCH_UP)


def test_without_the_api_the_watch_is_trusted() -> None:
    feed, _ = _cluster()
    reply = _filter(Extender(feed, pods_on=lambda node: None), 1)
    assert reply["NodeNames"] == []
    assert json.loads(json.dumps(reply))["FailedNodes"]["gpu-node-1"] == "Insufficient nvidia.com/gpu"
