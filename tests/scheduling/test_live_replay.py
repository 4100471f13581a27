"""The live captures replayed in order (tests/fixtures/k8s/extender-live): kube-scheduler v1.36.2's
extender requests and the pods watch, interleaved by their timestamps on the capture machine's one
clock, fed to the extender as its watch and its HTTP clients did. Every answer is checked against the
truth at that moment (what the watch had shown): filter passes exactly the nodes with room, and
prioritize makes one node the unique best, the most packed one with room. Answers like that let all
three pods of every run fit, wherever the captured scheduler really put them.

When a request carries a pod version the replayed watch has not reached, the events up to it are
applied first: that is what the extender's wait for its watch (`catch_up`) sees happen live.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubeview.model.events import Listed, WatchEvent
from kubeview.scheduling.extender import Extender
from kubeview.scheduling.feed import ModelFeed
from kubeview.scheduling.protocol import host_scores

LIVE = Path(__file__).resolve().parents[1] / "fixtures" / "k8s" / "extender-live"
NODES = Path(__file__).resolve().parents[1] / "fixtures" / "k8s" / "nodes.json"
CAPACITY = {"gpu-node-1": 2, "gpu-node-2": 2}


def _timeline(mode: str) -> list[tuple[float, str, dict]]:
    items: list[tuple[float, str, dict]] = []
    for line in (LIVE / f"traffic-{mode}.jsonl").read_text().splitlines():
        rec = json.loads(line)
        items.append((rec["ts"], "call", rec))
    for line in (LIVE / f"watch-pods-{mode}.jsonl").read_text().splitlines():
        rec = json.loads(line)
        items.append((rec["t"], "event", rec["event"]))
    items.sort(key=lambda x: (x[0], x[1] == "call"))  # same instant: the event first
    return items


def _gpus(pod: dict) -> int:
    return sum(int(((c.get("resources") or {}).get("requests") or {}).get("nvidia.com/gpu", 0))
               for c in pod["spec"].get("containers") or ())


class Truth:
    """GPUs used per node, from the watch events applied so far (independent of kubeview's model)."""

    def __init__(self, pods: list[dict]) -> None:
        self.pods: dict[str, tuple[str | None, int]] = {}
        for pod in pods:
            self.apply("ADDED", pod)

    def apply(self, type_: str, pod: dict) -> None:
        uid = pod["metadata"]["uid"]
        if type_ == "DELETED" or pod["status"].get("phase") in ("Succeeded", "Failed"):
            self.pods.pop(uid, None)
        else:
            self.pods[uid] = (pod["spec"].get("nodeName"), _gpus(pod))

    def used(self) -> dict[str, int]:
        out = dict.fromkeys(CAPACITY, 0)
        for node, gpus in self.pods.values():
            if node in out:
                out[node] += gpus
        return out


@pytest.mark.parametrize("mode", ["cache", "nocache"])
def test_every_recorded_answer_lets_all_three_pods_fit(mode: str) -> None:
    initial = json.loads((LIVE / f"pods-list-initial-{mode}.json").read_text())
    feed = ModelFeed()
    extender = Extender(feed, catch_up=0.0)  # the replay delivers what the wait would
    feed.apply(Listed("Node", json.loads(NODES.read_text())["items"], "1"))
    feed.apply(Listed("Pod", initial["items"], initial["metadata"]["resourceVersion"]))
    truth = Truth(initial["items"])
    timeline = _timeline(mode)
    events = [i for i, item in enumerate(timeline) if item[1] == "event"]
    applied: set[int] = set()

    def apply(i: int) -> None:
        if i not in applied:
            applied.add(i)
            event = timeline[i][2]
            feed.apply(WatchEvent("Pod", event["type"], event["object"]))
            truth.apply(event["type"], event["object"])

    checked = {"filter": 0, "prioritize": 0}
    for i, (_ts, what, rec) in enumerate(timeline):
        if what == "event":
            apply(i)
            continue
        args = json.loads(rec["req"])
        pod = args["Pod"]
        rv = int(pod["metadata"]["resourceVersion"])
        for j in events:  # the watch catching up to the pod's version (see the module docstring)
            if feed.pod_rv >= rv:
                break
            apply(j)
        names = args["NodeNames"] if args["NodeNames"] is not None else [n["metadata"]["name"] for n in args["Nodes"]["items"]]
        used, need = truth.used(), _gpus(pod)
        room = [n for n in names if used[n] + need <= CAPACITY[n]]
        where = f"{mode} {rec['path']} {pod['metadata']['name']} at {rec['ts']:.3f}: truth {used}"
        reply = json.loads(getattr(extender, rec["path"].strip("/"))(rec["req"].encode()))
        if rec["path"] == "/filter":
            passed = reply["NodeNames"] if args["NodeNames"] is not None else [n["metadata"]["name"] for n in reply["Nodes"]["items"]]
            assert passed == room, f"{where}: passed {passed}, failed {reply['FailedNodes']}"
            # ignoredByScheduler: false: kube-scheduler's NodeResourcesFit had already left out every node
            # without room, so the filter has nothing to refuse (docs/scheduler.md, "The filter verb")
            assert names == room, f"{where}: kube-scheduler sent {names}, room on {room}"
        else:
            scores = host_scores(reply, names)
            top = max(scores.values())
            best = [n for n, s in scores.items() if s == top]
            assert len(best) == 1, f"{where}: a tie {scores}"
            fullest = max((used[n] + need) / CAPACITY[n] for n in room)
            assert (used[best[0]] + need) / CAPACITY[best[0]] == fullest, f"{where}: best {best[0]} of {scores}"
        checked[rec["path"].strip("/")] += 1
    # every call of the capture was answered and checked (cache: 60 filter + 1 prioritize ... as recorded)
    calls = [json.loads(line)["path"] for line in (LIVE / f"traffic-{mode}.jsonl").read_text().splitlines()]
    assert checked == {"filter": calls.count("/filter"), "prioritize": calls.count("/prioritize")}
