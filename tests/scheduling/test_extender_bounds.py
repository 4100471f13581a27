"""What an unauthenticated caller can make the extender do (issue #37 item 3): API lookups for pods
its watch has not shown are bounded by the lookup budget, waits for the watch by the wait slots.

The API server is a function here that counts its calls (tests/realk8s/test_extender_hostile.py
asserts the same bound against the real kube-apiserver's /metrics). Waits use a catch_up of 30 s,
so a call that returns at all did not wait out a wait it was given: no test depends on a sleep."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable

import pytest
from builders import FakeClock, node_obj, pod_obj

from kubeview.model.events import Listed, WatchEvent
from kubeview.scheduling.errors import MustWait
from kubeview.scheduling.extender import Extender
from kubeview.scheduling.feed import ModelFeed
from kubeview.scheduling.lookup_budget import LookupLimits
from kubeview.scheduling.protocol import host_scores
from kubeview.scheduling.wait_slots import WaitLimits

NODES = ["gpu-node-1", "gpu-node-2"]
LONG = 30.0  # a catch_up no call here could wait out unnoticed


def _feed(pods: list[dict] | None = None) -> ModelFeed:
    feed = ModelFeed()
    feed.apply(Listed("Node", [node_obj(n, gpu=2) for n in NODES], "1"))
    feed.apply(Listed("Pod", pods or [], "2"))
    return feed


def _body(name: str, uid: str | None = None, gpu: int = 1, names: list[str] | None = None, rv: str | None = None) -> bytes:
    pod = pod_obj(name, gpu=gpu, uid=uid)
    if rv is not None:
        pod["metadata"]["resourceVersion"] = rv
    return json.dumps({"Pod": pod, "Nodes": None, "NodeNames": names or NODES}).encode()


def _counting(answer: Callable[[str, str], tuple[str, bool] | None]) -> tuple[list, Callable]:
    asked: list[tuple[str, str]] = []

    def pod_of(namespace: str, name: str) -> tuple[str, bool] | None:
        asked.append((namespace, name))
        return answer(namespace, name)

    return asked, pod_of


def test_made_up_pods_cost_at_most_the_burst_then_the_rate() -> None:
    clock = FakeClock()
    asked, pod_of = _counting(lambda ns, name: None)
    ext = Extender(_feed(), catch_up=0.0, pod_of=pod_of, clock=clock, lookups=LookupLimits(rate=2.0, burst=5.0))
    for i in range(100):
        ext.prioritize(_body(f"made-up-{i}"))
    assert len(asked) == 5  # the burst; before issue #37 every one was a GET (100)
    assert ext.counters["api_lookups_refused"] == 95 and ext.counters["unknown_pod"] == 100
    clock.now += 1.5  # 1.5 s at 2/s: three more
    for i in range(100, 200):
        ext.prioritize(_body(f"made-up-{i}"))
    assert len(asked) == 8
    assert ext.assumed.snapshot() == []  # nothing made up was predicted


def test_with_the_budget_spent_the_call_is_answered_on_the_loop() -> None:
    """No MustWait: a refused lookup costs no worker thread (the server answers it inline)."""
    asked, pod_of = _counting(lambda ns, name: None)
    ext = Extender(_feed(), catch_up=0.0, pod_of=pod_of, clock=FakeClock(), lookups=LookupLimits(rate=1.0, burst=1.0))
    with pytest.raises(MustWait):  # a token left: the lookup is due, off the loop
        ext.prioritize(_body("a"), may_wait=False)
    ext.prioritize(_body("a"))  # in the worker: takes the token
    reply = json.loads(ext.prioritize(_body("b"), may_wait=False))  # none left: answered at once
    assert {h["Host"] for h in reply} == set(NODES) and asked == [("default", "a")]


def test_a_replayed_made_up_pod_is_asked_for_once() -> None:
    clock = FakeClock()
    asked, pod_of = _counting(lambda ns, name: None)
    ext = Extender(_feed(), catch_up=0.0, pod_of=pod_of, clock=clock, lookups=LookupLimits(absent_ttl=5.0))
    for _ in range(50):
        ext.prioritize(_body("replayed"))
    assert len(asked) == 1 and ext.counters["api_lookups_remembered"] == 49
    clock.now += 5.0  # remembered for absent_ttl only: the pod may have been created since
    ext.prioritize(_body("replayed"))
    assert len(asked) == 2


def test_a_real_pod_is_predicted_while_made_up_ones_are_refused() -> None:
    """A pod the watch shows needs no lookup, so a flood that spent the budget costs it nothing; one
    the watch has not shown is predicted while a token is left, and loses only its prediction when
    none is (as when the API server cannot be reached)."""
    shown = pod_obj("shown", gpu=1)
    api = {("default", "not-shown"): ("uid-not-shown", True), ("default", "late"): ("uid-late", True)}
    asked, pod_of = _counting(lambda ns, name: api.get((ns, name)))
    ext = Extender(_feed([shown]), catch_up=0.0, pod_of=pod_of, clock=FakeClock(), lookups=LookupLimits(rate=1.0, burst=2.0))
    ext.prioritize(_body("not-shown"))  # a token: asked, predicted
    for i in range(20):
        ext.prioritize(_body(f"made-up-{i}"))  # the second token, then refused
    ext.prioritize(_body("shown"))
    ext.prioritize(_body("late"))  # not shown, no token: scored, not predicted
    assert sorted(a["pod"] for a in ext.assumed.snapshot()) == ["default/not-shown", "default/shown"]
    assert asked == [("default", "not-shown"), ("default", "made-up-0")]


def test_a_hostile_filter_cannot_drive_pod_lists() -> None:
    """With --scheduler-ignores a filter lists the pods of nodes it would refuse (up to VERIFY_NODES):
    each list takes a token of the same budget; without one the watch is trusted."""
    full = [pod_obj(f"p{i}", gpu=1, node_name=n) for i, n in enumerate(NODES)]
    lists: list[str] = []

    def pods_on(node: str) -> set[str]:
        lists.append(node)
        return {p["metadata"]["uid"] for p in full if p["spec"]["nodeName"] == node}

    ext = Extender(_feed(full), catch_up=LONG, pods_on=pods_on, clock=FakeClock(), scheduler_ignores=("nvidia.com/gpu",),
                   lookups=LookupLimits(rate=1.0, burst=3.0))
    for i in range(50):
        reply = json.loads(ext.filter(_body(f"made-up-{i}", gpu=2)))
        assert set(reply["FailedNodes"]) == set(NODES)  # refused all the same, on the watch's word
    assert len(lists) == 3 and ext.counters["api_lookups_refused"] >= 47


def _waiting(ext: Extender, body: bytes, counter: str) -> tuple[threading.Thread, list]:
    """A call that holds a wait slot: started, and seen waiting (its counter moved) before returning."""
    got: list = []
    before = ext.counters[counter]
    t = threading.Thread(target=lambda: got.append(ext.prioritize(body)))
    t.start()
    deadline = time.monotonic() + LONG
    while ext.counters[counter] == before:
        assert time.monotonic() < deadline and t.is_alive(), got
        time.sleep(0.005)
    return t, got


def test_made_up_node_names_wait_one_call_at_a_time() -> None:
    feed = _feed()
    ext = Extender(feed, catch_up=LONG, waits=WaitLimits(nodes_in_flight=1))
    holder, got = _waiting(ext, _body("first", names=[*NODES, "new-node"]), "waited_for_nodes")
    for i in range(20):  # every other call is answered on the view it has, the ghost scored 0
        names = [*NODES, f"ghost-{i}"]
        assert host_scores(ext.prioritize(_body(f"x{i}", names=names)), names)[f"ghost-{i}"] == 0
    ext.prioritize(_body("y", names=[*NODES, "ghost-y"]), may_wait=False)  # none free: no MustWait
    assert ext.counters["waits_refused"] == 21 and ext.counters["waited_for_nodes"] == 1 and not got
    feed.apply(WatchEvent("Node", "ADDED", node_obj("new-node", gpu=2)))  # the holder's node arrives
    holder.join(LONG)
    assert isinstance(json.loads(got[0]), list)  # answered with a HostPriorityList, new-node known (below)
    assert ext.counters["unknown_nodes"] == 21  # ghost-0..19 and ghost-y
    with pytest.raises(MustWait):  # the slot free again: a wait is due, off the server's loop
        ext.prioritize(_body("z", names=[*NODES, "ghost-z"]), may_wait=False)


def test_one_call_waits_for_a_few_unknown_names_only() -> None:
    ext = Extender(_feed(), catch_up=0.01, waits=WaitLimits(node_names=8))
    ghosts = [f"ghost-{i}" for i in range(50)]
    ext.prioritize(_body("many", names=[*NODES, *ghosts]))
    assert ext.counters["node_names_not_waited"] == 42
    assert ext._never_shown == set(ghosts[:8])  # remembered: only the ones waited for


def test_versions_far_ahead_wait_a_few_calls_at_a_time() -> None:
    """A made-up resourceVersion ahead of the watch waits catch_up; only version_in_flight such waits at once."""
    ext = Extender(_feed(), catch_up=LONG, waits=WaitLimits(version_in_flight=2))
    holders = [_waiting(ext, _body(f"ahead-{i}", rv="999999999"), "waited_for_watch") for i in range(2)]
    for i in range(10):
        ext.prioritize(_body(f"more-{i}", rv="999999999"))
    assert ext.counters["waits_refused"] == 10 and ext.counters["waited_for_watch"] == 2
    ext.feed.apply(WatchEvent("Pod", "ADDED", dict(pod_obj("late", gpu=1),
                                                   metadata={"name": "late", "namespace": "default", "uid": "u-late",
                                                             "resourceVersion": "999999999"})))
    for t, got in holders:
        t.join(LONG)
        assert got
