"""KubeSource's Events informer through the real `kubernetes` client against the test API server.

The list is the recorded core/v1 EventList (tests/fixtures/k8s/events.json). No watch of Events was
recorded, so the watch stream here is built from the recorded events (`fixtures.event_watch_lines`):
the objects are the recorded ones with the changes an apiserver would make (a new resourceVersion,
the scheduler's series count rising), in the `{"type":…,"object":…}` line format of watch-pods.jsonl.
"""

from __future__ import annotations

from kubeapi import KubeAPI, WatchScript, fixtures, status_body
from test_kube_source import NS_WATCHES, OTHER_WATCHES, PODS, fresh, run, state

from kubeview.model.events import ConnectionState, Listed, Scope
from kubeview.model.kinds import events_unavailable

EVENTS = "/api/v1/events"
FORBIDDEN = status_body(403, "Forbidden", 'events is forbidden: User "system:serviceaccount:kubeview-render:kubeview" '
                        'cannot list resource "events" in API group "" at the cluster scope',
                        {"kind": "events"})


def quiet(api: KubeAPI, *paths: str) -> None:
    for path in (*OTHER_WATCHES, PODS, *paths):
        api.script_watch(path, WatchScript([], end="close"))


def test_events_are_listed_and_watched_per_pod(kube_api: KubeAPI) -> None:
    quiet(kube_api)
    kube_api.script_watch(EVENTS, WatchScript(fixtures.event_watch_lines(), end="close"))
    events, model = run(kube_api, 1, events=True)
    listed = next(e for e in events if isinstance(e, Listed) and e.kind == "Event")
    assert len(listed.objects) == 19 and listed.resource_version == "345"
    (watch,) = kube_api.requests_to(EVENTS, watch=True)
    assert watch.query["resourceVersion"] == "345" and watch.query["allowWatchBookmarks"] == "true"
    gpu_c = model.pod_events(("default", "gpu-c"))
    assert [(e.reason, e.count) for e in gpu_c] == [("FailedScheduling", 1), ("FailedScheduling", 3)]
    assert gpu_c[-1].interval(gpu_c[-1].first + 60) == "29s (x3 over 60s)"  # last seen 30.01 s after the first
    assert [(e.type, e.reason, e.source) for e in model.pod_events(("default", "gpu-b"))] == [
        ("Normal", "Scheduled", "default-scheduler"), ("Warning", "FailedMount", "kubelet")]
    deleted = [e.message for e in model.events.for_object("ReplicaSet", "default", "consumer")
               if e.reason == "SuccessfulDelete"]
    assert deleted == ["Deleted pod: consumer-q67w4", "Deleted pod: consumer-ft89s"]
    assert events_unavailable(model.unavailable) is None
    assert [e.state for e in events if isinstance(e, ConnectionState)][-1] == "live"


def test_a_403_on_events_leaves_pods_and_the_connection_intact(kube_api: KubeAPI) -> None:
    quiet(kube_api)
    kube_api.respond("GET", EVENTS, 403, FORBIDDEN)
    events, model = run(kube_api, 1, events=True)
    assert state(model) == state(fresh())  # nodes, pods, workloads as without Events
    assert [e.state for e in events if isinstance(e, ConnectionState)][-1] == "live"
    assert len(model.events) == 0 and model.pod_events(("default", "gpu-c")) == []
    assert events_unavailable(model.unavailable) is not None and "events is forbidden" in events_unavailable(model.unavailable)
    assert events_unavailable(model.unavailable).startswith("events are not shown: ")
    assert kube_api.requests_to(EVENTS, watch=True) == []  # given up, not retried


def test_with_a_namespace_events_are_read_there_and_a_403_there_is_harmless(kube_api: KubeAPI) -> None:
    ns_events = "/api/v1/namespaces/default/events"
    quiet(kube_api, ns_events, *NS_WATCHES)
    events, model = run(kube_api, 1, events=True, namespace="default")
    assert kube_api.requests_to(EVENTS) == []  # never cluster-wide with -n
    assert [e.reason for e in model.pod_events(("default", "gpu-a"))] == ["Scheduled"]
    kube_api.respond("GET", ns_events, 403, FORBIDDEN)
    quiet(kube_api, *NS_WATCHES)
    events, model = run(kube_api, 1, events=True, namespace="default")
    scopes = [e for e in events if isinstance(e, Scope)]
    assert scopes[-1].namespace == "default" and scopes[-1].partial is None and events_unavailable(scopes[-1].unavailable)
    assert sorted(model.shown_pods()) == sorted(fresh().pods)
    assert [e.state for e in events if isinstance(e, ConnectionState)][-1] == "live"
