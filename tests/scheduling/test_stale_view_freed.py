"""A view published between two deletions must not decide where the next pods go.

The command republishes the scored view at most every 0.2 s (feed.py). Its assumed pods cover the
extender's own placements in that gap, but not room freed in it: kube-scheduler's cache already
lacks the deleted pods. In CI (tests/realk8s/test_extender_real_scheduler.py, about 1 run in 30)
two 1-GPU pods created right after a deletion both went to one node under spread: the view showed
one deleted pod gone and the other not, so the second pod's two nodes tied and the tie went by
name. Here the view is published at exactly that moment, by construction (the background thread
waits an hour; `refresh()` is called where the server would call it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from builders import node_obj, pod_obj

from kubeview.model.events import Listed, WatchEvent
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.extender import Extender
from kubeview.scheduling.feed import ModelFeed
from kubeview.scheduling.protocol import host_scores

NODES = ["gpu-a", "gpu-b"]


def _pod(name: str, rv: int, node: str | None = None) -> dict:
    obj = pod_obj(name, gpu=1, node_name=node)
    obj["metadata"]["resourceVersion"] = str(rv)
    return obj


@pytest.fixture
def feed() -> Iterator[ModelFeed]:
    feed = ModelFeed(max_staleness=3600.0)  # published views stay until refresh() is called
    feed.apply(Listed("Node", [node_obj(n, gpu=2) for n in NODES], "1"))
    feed.apply(Listed("Pod", [_pod("old-a", 2, "gpu-a"), _pod("old-b", 3, "gpu-b")], "3"))
    feed.start()
    yield feed
    feed.stop()


def _scores(ext: Extender, pod: dict) -> dict[str, int]:
    body = json.dumps({"Pod": pod, "NodeNames": NODES}).encode()
    return host_scores(ext.prioritize(body), NODES)


def _best(scores: dict[str, int]) -> str:
    top = max(scores.values())
    (best,) = [n for n, s in scores.items() if s == top]  # decide() leaves one best node
    return best


def test_spread_after_a_half_published_deletion_puts_two_pods_on_two_nodes(feed: ModelFeed) -> None:
    ext = Extender(feed, config=PackingConfig(policy="spread"), catch_up=5.0)
    feed.apply(WatchEvent("Pod", "DELETED", _pod("old-a", 4, "gpu-a")))
    feed.refresh()  # the server republishes after a reply: this view has old-a gone, old-b not
    feed.apply(WatchEvent("Pod", "DELETED", _pod("old-b", 5, "gpu-b")))
    new0, new1 = _pod("new-0", 6), _pod("new-1", 7)
    feed.apply(WatchEvent("Pod", "ADDED", new0))
    feed.apply(WatchEvent("Pod", "ADDED", new1))

    first = _best(_scores(ext, new0))
    second = _best(_scores(ext, new1))  # new-0 is only predicted: kube-scheduler has not bound it yet
    assert first != second, f"spread sent both pods to {first}"
    assert ext.counters["refreshed_for_freed"] == 1  # once: the next call's view already had both deletions


def test_a_burst_of_new_pods_does_not_republish(feed: ModelFeed) -> None:
    """The refresh is paid only after freed room: creating pods (the bench's case) never pays it."""
    ext = Extender(feed, config=PackingConfig(policy="pack"), catch_up=5.0)
    published = feed.view()
    for i in range(6):
        pod = _pod(f"burst-{i}", 10 + i)
        feed.apply(WatchEvent("Pod", "ADDED", pod))
        _scores(ext, pod)
    assert ext.counters["refreshed_for_freed"] == 0
    assert feed.view() is published


def test_a_finished_pod_frees_room_too(feed: ModelFeed) -> None:
    ext = Extender(feed, config=PackingConfig(policy="spread"), catch_up=5.0)
    done = _pod("old-a", 4, "gpu-a")
    done["status"]["phase"] = "Succeeded"
    feed.apply(WatchEvent("Pod", "MODIFIED", done))
    new = _pod("new", 5)
    feed.apply(WatchEvent("Pod", "ADDED", new))
    scores = _scores(ext, new)
    assert _best(scores) == "gpu-a", scores  # gpu-a is empty now; the published view still had old-a
    assert ext.counters["refreshed_for_freed"] == 1
