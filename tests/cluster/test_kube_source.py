"""KubeSource with the real `kubernetes` client against the test API server (tests/kubeapi).

Each test scripts the server's watch streams, runs the source with `_iterations` (every informer
returns after that many watch requests), and checks what was emitted, what the model made of it
and which requests reached the server.
"""

from __future__ import annotations

import json
import re
import threading
import time

import pytest
from kubeapi import KubeAPI, WatchScript, fixtures
from kubeapi.server import CA_STATUS_LIST, QUOTA_LISTS
from kubeapi.source_run import collect_events

from kubeview.cluster.kube.source import KINDS, KubeSource, WatchSettings
from kubeview.cluster.source import SourceError
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import ConnectionState, Listed, Listing, Scope, WatchEvent

FAST = WatchSettings(error_backoffs=(0.05,), watch_timeout=(30, 30))
OTHER_WATCHES = ["/api/v1/nodes", "/apis/apps/v1/replicasets", "/apis/apps/v1/deployments",
                 "/apis/apps/v1/statefulsets", "/apis/batch/v1/jobs", CA_STATUS_LIST, QUOTA_LISTS[0]]
PODS = "/api/v1/pods"


def quiet_ends(api: KubeAPI, times: int) -> None:
    """The other kinds' watches end cleanly (no events) so `_iterations` can finish."""
    for path in OTHER_WATCHES:
        api.script_watch(path, *[WatchScript([], end="close") for _ in range(times)])


def run(api: KubeAPI, iterations: int, **kwargs) -> tuple[list, ClusterModel]:
    src = KubeSource(str(api.kubeconfig), settings=kwargs.pop("settings", FAST), **kwargs)
    events = collect_events(src, iterations)
    model = ClusterModel()
    for e in events:
        model.apply(e)
    return events, model


def fresh(pods: str = "pods-list.json") -> ClusterModel:
    m = ClusterModel()
    for kind, name in (("Node", "nodes.json"), ("Pod", pods), ("ReplicaSet", "replicaset-list.json"),
                       ("Deployment", None), ("StatefulSet", None)):
        m.apply(Listed(kind, fixtures.load(name)["items"] if name else []))
    return m


def state(m: ClusterModel) -> tuple:
    a = m.allocation()
    return (a.nodes, a.resources, a.requested.tolist(), a.allocatable.tolist(), m.pod_counts().tolist(),
            sorted(m.pods), sorted((k, w.desired, w.ready) for k, w in m.workloads.items()),
            [p.name for p in m.pending()])


def pods_of(events: list) -> list:
    return [e for e in events if getattr(e, "kind", None) == "Pod"]


def test_initial_sync(kube_api: KubeAPI) -> None:
    quiet_ends(kube_api, 1)
    kube_api.script_watch(PODS, WatchScript([], end="close"))
    events, model = run(kube_api, 1)
    listed = {e.kind: e for e in events if isinstance(e, Listed)}
    # ca.Status: Cluster Autoscaler's status ConfigMap, read on every cluster (none here: empty)
    assert set(listed) == {"Node", "Pod", "ReplicaSet", "Deployment", "StatefulSet", "Job", "ca.Status", "ResourceQuota"}
    assert listed["ca.Status"].objects == []
    assert listed["Pod"].resource_version == "345" and len(listed["Pod"].objects) == 6
    assert [e.state for e in events if isinstance(e, ConnectionState)][-1] == "live"
    assert state(model) == state(fresh())
    # hand-checked: gpu-node-1 has 1 of 2 GPUs requested, every node 100m of cpu
    a = model.allocation()
    gpu = a.column("nvidia.com/gpu")
    assert a.requested[a.nodes.index("gpu-node-1"), gpu] == 1 and a.allocatable[a.nodes.index("gpu-node-1"), gpu] == 2
    assert a.requested[:, a.column("cpu")].tolist() == [100, 100, 100, 100, 100]
    (watch,) = kube_api.requests_to(PODS, watch=True)
    assert watch.query["resourceVersion"] == "345" and watch.query["allowWatchBookmarks"] == "true"
    assert int(watch.query["timeoutSeconds"]) == 30
    assert kube_api.requests_to(PODS, watch=False)[0].headers["Authorization"] == f"Bearer {kube_api.token}"


def test_recorded_watch_stream_event_by_event(kube_api: KubeAPI) -> None:
    kube_api.set_list_fixture(PODS, "pods-list-initial.json")  # rv 276, where watch-pods.jsonl starts
    quiet_ends(kube_api, 2)
    kube_api.script_watch(PODS, WatchScript.recorded("watch-pods.jsonl", end="close"), WatchScript([], end="close"))
    events, model = run(kube_api, 2)
    recorded = fixtures.watch_events("watch-pods.jsonl")
    got = [(e.type, e.obj["metadata"]["name"], e.obj["metadata"]["resourceVersion"])
           for e in pods_of(events) if isinstance(e, WatchEvent)]
    assert got == [(r["type"], r["object"]["metadata"]["name"], r["object"]["metadata"]["resourceVersion"])
                   for r in recorded if r["type"] != "BOOKMARK"]  # 32 events, the BOOKMARK only moves the RV
    assert state(model) == state(fresh())
    first, second = kube_api.requests_to(PODS, watch=True)
    assert first.query["resourceVersion"] == "276"
    assert second.query["resourceVersion"] == "345"  # from the BOOKMARK, the stream's last line
    assert len(kube_api.requests_to(PODS, watch=False)) == 1  # a clean end re-watches, no relist


def test_410_mid_stream_relists_to_what_a_fresh_list_gives(kube_api: KubeAPI) -> None:
    kube_api.respond("GET", PODS, 200, fixtures.raw("pods-list-initial.json"))  # the first list
    kube_api.set_list_fixture(PODS, "pods-relist-after-410.json")  # every list after it
    gone = fixtures.watch_lines("watch-410-old-rv.jsonl")  # the recorded ERROR 410 event
    quiet_ends(kube_api, 2)
    kube_api.script_watch(PODS, WatchScript.recorded("watch-pods.jsonl", first=10, then=gone, end="close"),
                          WatchScript([], end="close"))
    events, model = run(kube_api, 2)
    kinds = [type(e).__name__ for e in pods_of(events)]
    # each list says it began (Listing, 0 read): the kind is not complete until its Listed (#41)
    assert kinds == ["Listing", "Listed"] + ["WatchEvent"] * 10 + ["Listing", "Listed"]
    assert pods_of(events)[-1].resource_version == "362"
    assert state(model) == state(fresh("pods-relist-after-410.json"))
    assert [r.query["resourceVersion"] for r in kube_api.requests_to(PODS, watch=True)] == ["276", "362"]


def test_410_on_a_list_is_relisted(kube_api: KubeAPI) -> None:
    kube_api.respond_fixture("GET", PODS, "list-410-exact-compacted.json")
    quiet_ends(kube_api, 1)
    kube_api.script_watch(PODS, WatchScript([], end="close"))
    events, model = run(kube_api, 1)
    assert len(kube_api.requests_to(PODS, watch=False)) == 2
    assert [type(e).__name__ for e in pods_of(events)] == ["Listing", "Listing", "Listed"]  # begun twice
    assert state(model) == state(fresh())


def test_410_on_an_expired_continue_restarts_the_list(kube_api: KubeAPI) -> None:
    kube_api.respond("GET", PODS, 200, fixtures.raw("pods-list-page1.json"))  # 2 items + continue
    kube_api.respond_fixture("GET", PODS, "list-410-continue-compacted.json")
    quiet_ends(kube_api, 1)
    kube_api.script_watch(PODS, WatchScript([], end="close"))
    settings = WatchSettings(error_backoffs=(0.05,), watch_timeout=(30, 30), page_size=2)
    events, model = run(kube_api, 1, settings=settings)
    lists = kube_api.requests_to(PODS, watch=False)
    assert [("continue" in r.query, r.query.get("limit")) for r in lists] == [(False, "2"), (True, "2"), (False, "2")]
    assert lists[1].query["continue"] == fixtures.load("pods-list-page1.json")["metadata"]["continue"]
    listed = [e for e in pods_of(events) if isinstance(e, Listed)]
    assert len(listed) == 1 and len(listed[0].objects) == 6  # never the inconsistent remainder
    # the first page said the list was moving (snapshot's initial sync waits while pages come)
    # begun, a page, begun again after the 410: one Pod list in progress throughout, since the first start
    pages = [e for e in events if isinstance(e, Listing) and e.kind == "Pod"]
    assert [e.items for e in pages] == [0, 2, 0] and len({e.as_of for e in pages[:2]}) == 1
    assert model.listing_as_of == {} and "Pod" not in model.listing
    assert state(model) == state(fresh())


def test_dropped_connection_goes_stale_then_reconnects_from_the_last_rv(kube_api: KubeAPI) -> None:
    kube_api.set_list_fixture(PODS, "pods-list-initial.json")
    lines = fixtures.watch_lines("watch-pods.jsonl")
    quiet_ends(kube_api, 2)
    kube_api.script_watch(PODS, WatchScript(lines[:5], end="drop"), WatchScript(lines[5:], end="close"))
    events, model = run(kube_api, 2)
    states = [e.state for e in events if isinstance(e, ConnectionState)]
    assert states.count("reconnecting") == 1 and states[-1] == "live"
    assert "live" in states[states.index("reconnecting") + 1:]
    drop = next(e for e in events if isinstance(e, ConnectionState) and e.state == "reconnecting")
    assert "127.0.0.1" in drop.detail and "connection broken" in drop.detail
    # the model in between: stale, with the first 5 events applied
    between = ClusterModel()
    for e in events[: events.index(drop) + 1]:
        between.apply(e)
    assert between.connection.state == "reconnecting" and len(between.pods) == 3
    watches = kube_api.requests_to(PODS, watch=True)
    assert [w.query["resourceVersion"] for w in watches] == ["276", "283"]  # RV of the 5th event
    assert len(kube_api.requests_to(PODS, watch=False)) == 1
    assert state(model) == state(fresh())


def test_429_waits_for_retry_after(kube_api: KubeAPI) -> None:
    throttled = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                 "message": "Too many requests, please try again later.", "reason": "TooManyRequests", "code": 429}
    kube_api.respond("GET", "/api/v1/nodes", 429, throttled, headers={"Retry-After": "1"})
    quiet_ends(kube_api, 1)
    kube_api.script_watch(PODS, WatchScript([], end="close"))
    events, model = run(kube_api, 1)
    first, second = kube_api.requests_to("/api/v1/nodes", watch=False)
    assert second.at - first.at >= 0.95
    assert len(model.nodes) == 5 and "reconnecting" not in [e.state for e in events if isinstance(e, ConnectionState)]


NS_WATCHES = ("/api/v1/nodes", "/apis/apps/v1/namespaces/default/replicasets",
              "/apis/apps/v1/namespaces/default/deployments", "/apis/apps/v1/namespaces/default/statefulsets",
              "/apis/batch/v1/namespaces/default/jobs", CA_STATUS_LIST, QUOTA_LISTS[1])


def other_namespace_pods() -> dict:
    """The all-namespaces pod list plus a pod of namespace `other` bound to gpu-node-1 (500m CPU)."""
    doc = fixtures.load("pods-list-all-namespaces.json")
    pod = json.loads(json.dumps(next(p for p in doc["items"] if p["spec"].get("nodeName") == "gpu-node-1")))
    pod["metadata"].update(namespace="other", name="elsewhere", uid="elsewhere-uid")
    pod["metadata"].pop("ownerReferences", None)
    for c in pod["spec"]["containers"]:
        c["resources"] = {"requests": {"cpu": "500m"}}
    doc["items"].append(pod)
    return doc


def test_namespace_reads_pods_cluster_wide_and_shows_the_namespace(kube_api: KubeAPI) -> None:
    """-n: pods still come cluster-wide (node figures count every pod); only the namespace's are shown."""
    kube_api.set_list(PODS, other_namespace_pods())
    for path in (*NS_WATCHES, PODS):
        kube_api.script_watch(path, WatchScript([], end="close"))
    events, model = run(kube_api, 1, namespace="default")
    assert kube_api.requests_to(PODS, watch=False)
    assert not kube_api.requests_to("/api/v1/namespaces/default/pods")
    scopes = [e for e in events if isinstance(e, Scope)]
    assert [(s.title, s.namespace, s.partial) for s in scopes] == [
        (f"kubeview-test @ {kube_api.url} (namespace default)", "default", None)]
    # the recordings' server (1.36.2, no DRA, no gang API): said once, in the same Scope
    assert scopes[0].kubernetes == "v1.36.2" and set(scopes[0].not_served) == {"gang API", "DRA"}
    assert model.partial is None and model.display_namespace == "default"
    assert ("other", "elsewhere") in model.pods and ("other", "elsewhere") not in model.shown_pods()
    assert sorted(model.shown_pods()) == sorted(fresh().pods)
    a, whole = model.allocation(), fresh().allocation()
    gpu1, cpu = a.nodes.index("gpu-node-1"), a.column("cpu")
    assert a.requested[gpu1, cpu] == whole.requested[gpu1, cpu] + 500
    assert model.pod_counts()[gpu1] == fresh().pod_counts()[gpu1] + 1


def test_namespace_falls_back_to_its_own_pods_when_cluster_wide_is_forbidden(kube_api: KubeAPI) -> None:
    kube_api.respond_fixture("GET", PODS, "status-403-forbidden-serviceaccount.json")
    for path in (*NS_WATCHES, "/api/v1/namespaces/default/pods"):
        kube_api.script_watch(path, WatchScript([], end="close"))
    events, model = run(kube_api, 1, namespace="default")
    assert kube_api.requests_to("/api/v1/namespaces/default/pods", watch=False)
    assert len(kube_api.requests_to(PODS)) == 1
    scopes = [e for e in events if isinstance(e, Scope)]
    assert [s.partial is None for s in scopes] == [True, False]
    assert scopes[-1].title == f"kubeview-test @ {kube_api.url} (namespace default; node figures partial)"
    assert "forbidden" in model.partial and model.title == scopes[-1].title
    assert state(model) == state(fresh())


def test_stop_ends_run_promptly_while_watches_are_quiet(kube_api: KubeAPI) -> None:
    src = KubeSource(str(kube_api.kubeconfig), settings=FAST)
    stop = threading.Event()
    events: list = []
    t = threading.Thread(target=src.run, args=(events.append, stop), daemon=True)
    t.start()
    try:
        _stop_ends_run_promptly(kube_api, src, stop, t, events)
    finally:  # a failed assertion must not leave the source watching (its threads kept pytest from exiting)
        stop.set()
        src.close()


def _stop_ends_run_promptly(kube_api: KubeAPI, src: KubeSource, stop: threading.Event, t: threading.Thread,
                            events: list) -> None:
    # every informer watching: the core kinds and CA's status ConfigMap (the stand-in serves no Karpenter);
    # ">=" because the count only grows, and an "==" polled after the last watch began could never hold
    informers = len(KINDS) + 1
    assert kube_api.wait_for(lambda reqs: sum(r.watch for r in reqs) >= informers, timeout=30)
    started = time.monotonic()
    stop.set()
    t.join(timeout=5)
    assert not t.is_alive() and time.monotonic() - started < 3
    assert isinstance(events[-1], ConnectionState) and events[-1].state == "live"


@pytest.mark.parametrize(("setup", "expected"), [
    ("bad-token", "Listing nodes failed: the API server rejected the credentials (401 Unauthorized: an expired or "
                  "revoked token?); log in again or refresh the kubeconfig."),
    ("rbac", 'Listing pods was forbidden (403): pods is forbidden: User "system:serviceaccount:default:viewer" '
             'cannot list resource "pods" in API group "" at the cluster scope; ask a cluster admin for access '
             "or pass -n NAMESPACE."),
    ("unreachable", "Cannot reach the API server at http://127.0.0.1:9 (connection refused); check that the "
                    "cluster is running and the kubeconfig's server address is right."),
])
def test_startup_failures_are_one_sentence(kube_api: KubeAPI, tmp_path, setup: str, expected: str) -> None:
    if setup == "bad-token":
        kube_api.write_kubeconfig(kube_api.kubeconfig, token="expired")
    elif setup == "rbac":
        msg = ('pods is forbidden: User "system:serviceaccount:default:viewer" cannot list resource "pods" in API '
               'group "" at the cluster scope')
        kube_api.respond("GET", PODS, 403, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                            "message": msg, "reason": "Forbidden",
                                            "details": {"kind": "pods"}, "code": 403})
    else:
        kube_api.write_kubeconfig(kube_api.kubeconfig, server="http://127.0.0.1:9")
    src = KubeSource(str(kube_api.kubeconfig), settings=FAST)
    events: list = []
    with pytest.raises(SourceError) as err:
        src.run(events.append, threading.Event())
    src.close()
    if setup == "bad-token":  # every kind's list is refused; which informer reports it first is a race
        assert re.fullmatch(re.escape(expected).replace("nodes", "(nodes|pods|replicasets|deployments|statefulsets|jobs)"),
                            str(err.value)), str(err.value)
    else:
        assert str(err.value) == expected
    assert events[-1] == ConnectionState("failed", events[-1].since, str(err.value))


def test_kubeconfig_problems_are_one_sentence(tmp_path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(SourceError, match=r"^No kubeconfig at .*nope: pass an existing file with --kubeconfig or "
                                          r"set KUBECONFIG\.$"):
        KubeSource(str(missing))
    broken = tmp_path / "broken"
    broken.write_text("clusters: [\n  - name: x\n  bad: : :\n")
    with pytest.raises(SourceError, match=r"^The kubeconfig .*broken is not valid YAML at line \d+; "
                                          r"point --kubeconfig at a real one\.$") as named:
        KubeSource(str(broken))
    assert named.value.exit_code == 2  # a file named on the command line: a usage error (issue 42 item 9)
    deep = tmp_path / "deep"  # issue 16 item 9: this was a RecursionError traceback
    deep.write_text("clusters: " + "[" * 25_000 + "]" * 25_000)
    with pytest.raises(SourceError, match=r"^The kubeconfig .*deep is nested more than 64 levels deep \(line 1\); "):
        KubeSource(str(deep))
    api = KubeAPI()
    path = api.write_kubeconfig(tmp_path / "kc", server="http://127.0.0.1:9")
    with pytest.raises(SourceError) as err:
        KubeSource(str(path), context="prod")
    assert str(err.value) == (f'Context "prod" is not in the kubeconfig {path}; use one of: kubeview-test, '
                              "kubeview-test-default.")
