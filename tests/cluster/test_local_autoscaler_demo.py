"""The demo's autoscaling story on real processes: farm/frames outgrows batch-pool (asked for more, got 6).

`kubeview --demo` as every command opens it, with the autoscaler's clock and loop in the test's hands
(`open_demo(clock=..., autoscale_every=None)`): the provisioning delay passes when the test moves the
clock, so no step waits on timing luck; the pods are the demo's real processes. Several runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
import yaml

from kubeview.cluster.local import ca_status
from kubeview.cluster.local.autoscaler import GROUP_LABEL
from kubeview.cluster.local.demo import BATCH_JOB, BATCH_POOL, DEMO_PENDING, open_demo
from kubeview.cluster.local.source import LocalSource
from kubeview.model.events import Listed, WatchEvent

MAX_REACHED = "pod didn't trigger scale-up: 1 max node group size reached"
TRIGGERED = "pod triggered scale-up: [{batch-pool 0->6 (max: 6)}]"


class Clock:
    def __init__(self) -> None:
        self.t = time.time()

    def __call__(self) -> float:
        return self.t


def wait_until(check: Callable[[], object], timeout: float = 60.0, what: str = "condition") -> object:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
    return value


def said(source: LocalSource) -> dict[str, list[str]]:
    """Pod name -> the autoscaler's messages on it, oldest first."""
    out: dict[str, list[tuple[int, str]]] = {}
    for e in source._state.list("Event"):
        if (e.get("source") or {}).get("component") == ca_status.COMPONENT and e["involvedObject"]["kind"] == "Pod":
            out.setdefault(e["involvedObject"]["name"], []).append((int(e["metadata"]["resourceVersion"]), e["message"]))
    return {k: [m for _, m in sorted(v)] for k, v in out.items()}


def status(source: LocalSource) -> dict:
    cm = source.get("ca.Status", ca_status.NAMESPACE, ca_status.NAME)
    assert cm is not None
    return yaml.safe_load(cm["data"]["status"])["nodeGroups"][0]


def test_the_demo_starts_with_the_pool_empty_and_says_so() -> None:
    """The first state stays the screenshots' one: no node of batch-pool, the Job suspended, and the
    9 pods that wait hear, in CA's words, that the pool's nodes would not take them."""
    source = open_demo(clock=Clock(), autoscale_every=None)
    try:
        assert not [n for n in source._state.list("Node") if GROUP_LABEL in n["metadata"]["labels"]]
        assert (source.get("Job", *BATCH_JOB) or {})["spec"]["suspend"] is True
        words = said(source)
        assert len(words) == DEMO_PENDING and {w[-1] for w in words.values()} == {
            "pod didn't trigger scale-up: 1 node(s) had untolerated taint(s)"}
        group = status(source)
        assert (group["name"], group["health"]["minSize"], group["health"]["maxSize"],
                group["health"]["cloudProviderTarget"], group["scaleUp"]["status"]) == (BATCH_POOL, 0, 6, 0, "NoActivity")
        first: list[object] = []
        stop = threading.Event()
        runner = threading.Thread(target=source.run, args=(first.append, stop))
        runner.start()
        wait_until(lambda: any(isinstance(e, Listed) and e.kind == "StatefulSet" for e in first), 10, "the first list")
        stop.set()
        runner.join()
        (listed,) = [e for e in first if isinstance(e, Listed) and e.kind == "ca.Status"]
        assert [o["metadata"]["name"] for o in listed.objects] == [ca_status.NAME]
    finally:
        source.close()


@pytest.mark.parametrize("run", range(3))
def test_frames_outgrow_the_pool_asked_for_more_got_6(run: int) -> None:
    clock = Clock()
    source = open_demo(clock=clock, autoscale_every=None)
    try:
        stream: list[object] = []
        stop = threading.Event()
        runner = threading.Thread(target=source.run, args=(stream.append, stop))
        runner.start()
        wait_until(lambda: any(isinstance(e, Listed) and e.kind == "StatefulSet" for e in stream), 10, "the first list")
        source.suspend_job(*BATCH_JOB, False)  # `z` on farm/frames
        frames = lambda: source.pods(BATCH_JOB[0])  # noqa: E731
        assert len(frames()) == 266 and not [p for p in frames() if p["spec"].get("nodeName")]
        decision = source.autoscale_now()
        assert decision is not None and decision.scale_up == (BATCH_POOL, 0, 6)
        assert decision.wanted == {BATCH_POOL: 38}  # what the 266 pods need; the group stops at 6
        assert status(source)["scaleUp"]["status"] == "InProgress"
        source.autoscale_now()  # the nodes are coming: the 224 they will not take hear the max
        words = said(source)
        frame_words = [words.get(p["metadata"]["name"], [""])[-1] for p in frames()]
        assert (frame_words.count(TRIGGERED), frame_words.count(MAX_REACHED)) == (42, 224)
        clock.t += 5.0  # the provisioning delay of clusters/demo-batch.yaml
        source.autoscale_now()
        nodes = [n["metadata"]["name"] for n in source._state.list("Node") if GROUP_LABEL in n["metadata"]["labels"]]
        assert len(nodes) == 6
        # 42 frames bound to the new nodes, each a real process that starts there
        bound = [p for p in frames() if p["spec"].get("nodeName")]
        assert len(bound) == 42 and {p["spec"]["nodeName"] for p in bound} == set(nodes)
        wait_until(lambda: sum(k[0] == BATCH_JOB[0] for k in source.pids()) == 42, 90, "42 frame processes")
        group = status(source)
        assert (group["health"]["cloudProviderTarget"], group["health"]["nodeCounts"]["registered"]["ready"],
                group["scaleUp"]["status"]) == (6, 6, "NoActivity")
        assert len([p for p in frames() if not p["spec"].get("nodeName")]) == 224
        # a client saw it all: the new Nodes, the status rewritten, the Events
        def watched() -> list[WatchEvent]:
            return [e for e in list(stream) if isinstance(e, WatchEvent)]

        wait_until(lambda: sum(e.kind == "Node" and e.type == "ADDED" for e in watched()) == 6, 10, "the nodes' events")
        seen = watched()
        assert {e.obj["metadata"]["name"] for e in seen if e.kind == "Node" and e.type == "ADDED"} <= set(nodes)
        assert any(e.kind == "ca.Status" for e in seen)
        stop.set()
        runner.join()
    finally:
        source.close()


@pytest.mark.parametrize("run", range(3))
def test_the_loop_runs_on_its_own_on_the_real_clock(run: int) -> None:
    """Without the test's hands: the source's own loop sees the pods wait, asks, and registers the nodes
    once their (short) delay has passed; the sleepers then run there."""
    from kubeview.cluster.local.config import DEFAULT_FILE, parse_cluster

    doc = yaml.safe_load(DEFAULT_FILE.read_text())
    doc["nodeGroups"] = [{"name": "burst", "maxSize": 3, "provisionSeconds": 0.3,
                          "template": {"capacity": {"cpu": "2", "memory": "4Gi"}, "labels": {"pool": "burst"}}}]
    source = LocalSource(config=parse_cluster(yaml.safe_dump(doc), "burst.yaml"), seed=run, autoscale_every=0.1)
    try:
        source.apply_workload({"kind": "ReplicaSet", "metadata": {"name": "burst", "namespace": "render"}, "spec": {
            "replicas": 2, "template": {"metadata": {"labels": {"app": "burst"}}, "spec": {
                "nodeSelector": {"pool": "burst"}, "terminationGracePeriodSeconds": 1,
                "containers": [{"name": "b", "image": "b", "command": ["sleep", "600"],
                                "resources": {"requests": {"cpu": "1500m"}}}]}}}})
        wait_until(lambda: sum(k[0] == "render" for k in source.pids()) == 2, 60, "both sleepers running")
        nodes = {p["spec"]["nodeName"] for p in source.pods("render")}
        assert len(nodes) == 2 and all(n.startswith("burst-") for n in nodes)
        assert status(source)["health"]["cloudProviderTarget"] == 2
    finally:
        source.close()
