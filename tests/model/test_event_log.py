"""Events in the model: the recorded core/v1 EventList read as kubectl describe reads it, kept bounded."""

from __future__ import annotations

import copy

from kubeapi import fixtures

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, WatchEvent
from kubeview.model.kube_events import EventLog, EventView, human_duration, parse_time


def recorded_events() -> list[dict]:
    return fixtures.load("events.json")["items"]


def test_the_recorded_events_read_as_kubectl_describe_shows_them() -> None:
    items = recorded_events()
    views = [EventView.from_api(o) for o in items]
    gpu_c = [v for v in views if v.involved == ("Pod", "default", "gpu-c")]
    assert [v.reason for v in gpu_c] == ["FailedScheduling", "FailedScheduling"]
    assert gpu_c[0].message.startswith("0/5 nodes are available: 5 Insufficient nvidia.com/gpu.")
    assert gpu_c[0].source == "default-scheduler" and gpu_c[0].warning
    # the second one is an events.k8s.io series seen through core/v1: count 2, last observed 10 ms later
    assert gpu_c[1].count == 2
    first = parse_time("2026-11-22T10:05:03.263067Z")
    assert gpu_c[1].first == first and abs(gpu_c[1].last - first - 0.010536) < 1e-6
    assert gpu_c[1].interval(first + 150) == "2m29s (x2 over 2m30s)"
    assert gpu_c[0].interval(gpu_c[0].first + 45) == "45s"
    created = next(v for v in views if v.reason == "SuccessfulCreate")  # the legacy shape
    assert created.involved == ("ReplicaSet", "default", "consumer")
    assert (created.source, created.count, created.message) == ("replicaset-controller", 1,
                                                               "Created pod: consumer-sxzwf")
    assert created.first == parse_time("2026-11-22T10:04:59Z")


def test_a_legacy_repeated_event_counts_from_first_to_last_timestamp() -> None:
    obj = copy.deepcopy(recorded_events()[6])  # SuccessfulCreate, legacy fields
    obj["count"], obj["lastTimestamp"] = 3, "2026-11-22T10:06:59Z"
    view = EventView.from_api(obj)
    assert view.interval(parse_time("2026-11-22T10:07:09Z")) == "10s (x3 over 2m10s)"


def test_human_duration_matches_apimachinery() -> None:
    cases = {-5: "<invalid>", -1: "0s", 0: "0s", 119: "119s", 120: "2m", 185: "3m5s", 600: "10m",
             179 * 60: "179m", 3 * 3600: "3h", 3 * 3600 + 60 * 7: "3h7m", 30 * 3600: "30h",
             50 * 3600: "2d2h", 48 * 3600: "2d", 20 * 86400: "20d", 3 * 365 * 86400: "3y"}
    assert {s: human_duration(s) for s in cases} == cases


def test_the_model_keeps_each_pods_events_newest_last_and_follows_the_watch() -> None:
    m = ClusterModel()
    m.apply(Listed("Pod", fixtures.load("pods-list.json")["items"]))
    m.apply(Listed("Event", recorded_events(), "345"))
    assert [e.reason for e in m.pod_events(("default", "gpu-a"))] == ["Scheduled"]
    gpu_c = m.pod_events(("default", "gpu-c"))
    assert [e.count for e in gpu_c] == [1, 2] and gpu_c[0].last < gpu_c[1].last
    # a newer observation of the first FailedScheduling moves it last; a deletion takes it away
    later = copy.deepcopy(recorded_events()[-2])
    later["metadata"]["resourceVersion"] = "400"
    later["series"] = {"count": 5, "lastObservedTime": "2026-11-22T10:09:00.000000Z"}
    version = m.version
    assert m.apply(WatchEvent("Event", "MODIFIED", later)) and m.version == version + 1
    assert not m.apply(WatchEvent("Event", "MODIFIED", later))  # the same resourceVersion again
    assert [e.count for e in m.pod_events(("default", "gpu-c"))] == [2, 5]
    assert m.apply(WatchEvent("Event", "DELETED", later))
    assert [e.count for e in m.pod_events(("default", "gpu-c"))] == [2]
    assert m.events.latest_warning("Pod", "default", "gpu-c").count == 2


def test_events_about_an_earlier_pod_of_the_same_name_are_left_out() -> None:
    m = ClusterModel()
    pods = fixtures.load("pods-list.json")["items"]
    for p in pods:
        if p["metadata"]["name"] == "gpu-a":
            p["metadata"]["uid"] = "a-new-pod"
    m.apply(Listed("Pod", pods))
    m.apply(Listed("Event", recorded_events()))
    assert m.pod_events(("default", "gpu-a")) == []
    assert [e.reason for e in m.pod_events(("default", "gpu-b"))] == ["Scheduled"]


def _storm_event(i: int, pod: str) -> dict:
    return {"metadata": {"name": f"{pod}.{i:x}", "namespace": "default", "resourceVersion": str(i)},
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": pod},
            "type": "Warning", "reason": "BackOff", "message": "Back-off restarting failed container " + "x" * 5000,
            "firstTimestamp": "2026-11-22T10:00:00Z", "lastTimestamp": "2026-11-22T10:00:00Z", "count": 1}


def test_an_event_storm_stays_bounded_per_object_and_in_total() -> None:
    log = EventLog(per_object=20, total=300)
    for i in range(5000):
        log.put(_storm_event(i, f"pod-{i % 50}"))
    assert len(log) == 300
    kept = log.for_object("Pod", "default", "pod-49")
    assert len(kept) == 6 and kept[-1].key == ("default", f"pod-49.{4999:x}")  # the most recent stay
    assert all(len(e.message) == 1024 for e in kept)  # messages cut
    for i in range(5000, 5100):  # one object's storm: that object keeps 20, the rest stay
        log.put(_storm_event(i, "pod-0"))
    assert len(log.for_object("Pod", "default", "pod-0")) == 20
    assert len(log) == 300 and len(log.for_object("Pod", "default", "pod-49")) == 6
    log.replace([_storm_event(1, "pod-1")])
    assert len(log) == 1 and log.for_object("Pod", "default", "pod-0") == []
