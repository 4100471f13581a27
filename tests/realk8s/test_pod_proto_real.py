"""Pods listed as protobuf read as their JSON does (#41 item 2; kube/pod_proto.py), on the real API
server: every recorded pod (tests/fixtures/k8s, from real API servers) created again with its status,
and pods made for the fields the recordings lack (overhead, pod-level resources, sidecars, gates,
affinity, a deletion under way, container states), listed at one exact resourceVersion as JSON
(pod_wire, what kubeview read before) and as protobuf. Every pod's dict, every reading of it and the
model's snapshot must be equal; a list that asks for protobuf gets it; and an informer paging the
same pods as protobuf emits what one paging them as JSON emits. Listing at one exact resourceVersion
makes the two lists the same objects by construction, whatever a controller writes meanwhile.
"""

from __future__ import annotations

import copy
import functools
import json
import threading

import pytest
from cluster.test_pod_wire import model_of, pod_lists, readings
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kubeview.cluster.kube import pod_proto, pod_wire
from kubeview.cluster.kube.raw import RawApi
from kubeview.cluster.kube.watch import Informer, KindSpec, Link, WatchSettings
from kubeview.model.events import Listed, Listing

from .objects import api, ensure_namespace
from .plane import Plane
from .procs import wait_until

NS = "pod-proto"
FINALIZER = "kubeview.io/test-hold"
# what the API server sets or refuses on create: taken from the recording, the rest kept
_META_DROP = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "selfLink", "generation",
              "deletionTimestamp", "deletionGracePeriodSeconds", "finalizers", "namespace", "generateName")


def _recorded() -> list[dict]:
    seen: dict[tuple, dict] = {}
    for _, data in pod_lists():
        for pod in json.loads(data)["items"]:
            m = pod["metadata"]
            seen[(m.get("namespace"), m["name"], m.get("resourceVersion"))] = pod
    return list(seen.values())


def _as_new(pod: dict, name: str, owner: dict) -> tuple[dict, dict]:
    """(the pod to create, the status to write after) from a recorded pod."""
    pod = copy.deepcopy(pod)
    meta = {k: v for k, v in pod["metadata"].items() if k not in _META_DROP}
    meta["name"] = name
    if meta.get("ownerReferences"):  # a real owner, so the garbage collector leaves the pod be
        meta["ownerReferences"] = [{**ref, **owner} for ref in meta["ownerReferences"]]
    spec = pod["spec"]
    spec.pop("priority", None)  # the priority admission computes it from the class (created below)
    spec.pop("schedulingGroup", None)  # the gang API is off on this plane; its gated plane has it
    spec["serviceAccountName"] = spec["serviceAccount"] = "default"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}, pod.get("status") or {}


def _made() -> list[tuple[dict, dict]]:
    """Pods for what the recordings do not hold."""
    def pod(name: str, spec: dict, status: dict | None = None, meta: dict | None = None) -> tuple[dict, dict]:
        base = {"containers": [{"name": "main", "image": "registry.example/x:1"}], "nodeName": "proto-node"}
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **(meta or {})},
                "spec": {**base, **spec}}, status or {}

    gpu = {"requests": {"cpu": "1500m", "memory": "2Gi", "nvidia.com/gpu": "2"}, "limits": {"nvidia.com/gpu": "2"}}
    waiting = {"name": "main", "ready": False, "restartCount": 3, "image": "x", "imageID": "",
               "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s"}},
               "lastState": {"terminated": {"exitCode": 137, "signal": 9, "reason": "OOMKilled",
                                            "startedAt": "2026-11-30T08:00:00Z", "finishedAt": "2026-11-30T08:01:02Z",
                                            "containerID": "containerd://abc"}}}
    running = {"name": "main", "ready": True, "started": True, "restartCount": 0, "image": "x", "imageID": "",
               "state": {"running": {"startedAt": "2026-11-30T08:02:00Z"}}, "lastState": {}}
    return [
        pod("made-overhead", {"runtimeClassName": "proto-overhead", "containers": [
            {"name": "main", "image": "x", "resources": gpu}]}),
        pod("made-pod-resources", {"resources": {"requests": {"cpu": "2", "memory": "1Gi"},
                                                 "limits": {"cpu": "4", "memory": "1Gi"}}}),
        pod("made-sidecar", {"initContainers": [
            {"name": "init", "image": "x", "resources": {"requests": {"cpu": "3"}}},
            {"name": "proxy", "image": "x", "restartPolicy": "Always", "resources": {"requests": {"cpu": "250m"}}}],
            "containers": [{"name": "main", "image": "x", "resources": gpu}]},
            {"phase": "Running", "initContainerStatuses": [running | {"name": "proxy"}], "containerStatuses": [waiting],
             "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                             "message": "containers with unready status: [main]",
                             "lastTransitionTime": "2026-11-30T08:00:00Z"}]}),
        pod("made-gated", {"nodeName": None, "schedulingGates": [{"name": "kubeview.io/hold"}],
                           "priorityClassName": "proto-high", "preemptionPolicy": "Never",
                           "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                                           {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                            "effect": "NoExecute", "tolerationSeconds": 0}],
                           "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                               "nodeSelectorTerms": [{"matchExpressions": [
                                   {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["H100", "A100"]}]}]},
                               "preferredDuringSchedulingIgnoredDuringExecution": [
                                   {"weight": 10, "preference": {"matchExpressions": [
                                       {"key": "zone", "operator": "NotIn", "values": ["b"]}]}}]},
                               "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                                   {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}]}},
                           "nodeSelector": {"pool": "gpu"}, "schedulerName": "kubeview-scheduler",
                           "terminationGracePeriodSeconds": 0},
            {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                                                 "message": "Scheduling is blocked due to non-empty scheduling gates"}]}),
        pod("made-host", {"hostNetwork": True, "containers": [
            {"name": "main", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]},
            {"phase": "Running", "nominatedNodeName": "", "startTime": "2026-11-30T08:00:00Z",
             "containerStatuses": [running]}),
        pod("made-deleting", {}, {"phase": "Running"},
            {"finalizers": [FINALIZER], "labels": {"app": "x", "empty": ""}, "annotations": {"note": ""}}),
        pod("made-failed", {"restartPolicy": "Never"},
            {"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory."}),
    ]


def _difference(a: object, b: object, path: str = "") -> str:
    """The first place two decoded pods differ, to say it."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key, "<absent>") != b.get(key, "<absent>"):
                return _difference(a.get(key, "<absent>"), b.get(key, "<absent>"), f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _difference(x, y, f"{path}[{i}]")
    return f"{path}: JSON {a!r:.200} protobuf {b!r:.200}"


def _list(core_api: client.ApiClient, accept: str, rv: str, limit: int | None = None) -> tuple[bytes, str]:
    response = RawApi(core_api, "CoreV1Api").list_namespaced_pod(
        NS, resource_version=rv, limit=limit, _headers={"Accept": accept}, _preload_content=False)
    return response.data, response.headers.get("Content-Type", "")  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def pods_made(plane: Plane) -> tuple[client.ApiClient, int]:
    core_api = api(plane.kubeconfig)
    core, node = client.CoreV1Api(core_api), client.NodeV1Api(core_api)
    sched = client.SchedulingV1Api(core_api)
    ensure_namespace(core, NS)
    try:
        node.create_runtime_class({"metadata": {"name": "proto-overhead"}, "handler": "runc",
                                   "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}}})
    except ApiException as exc:
        if exc.status != 409:
            raise
    owner = core.create_namespaced_config_map(NS, {"metadata": {"name": "proto-owner"}})
    owner_ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "proto-owner", "uid": owner.metadata.uid}
    recorded = _recorded()
    classes = {p["spec"]["priorityClassName"]: p["spec"].get("priority", 0) for p in recorded
               if p["spec"].get("priorityClassName") and not p["spec"]["priorityClassName"].startswith("system-")}
    for name, value in {**classes, "proto-high": 1000}.items():
        try:
            sched.create_priority_class({"metadata": {"name": name}, "value": value,
                                         **({"preemptionPolicy": "Never"} if name == "proto-high" else {})})
        except ApiException as exc:
            if exc.status != 409:
                raise
    made = [_as_new(p, f"rec-{i:03d}", owner_ref) for i, p in enumerate(recorded)] + _made()
    try:
        refused = []
        for body, status in made:
            try:
                core.create_namespaced_pod(NS, body)
                if status:
                    core.patch_namespaced_pod_status(body["metadata"]["name"], NS, {"status": status})
            except ApiException as exc:
                refused.append(f"{body['metadata']['name']}: {exc.status} {str(exc.body)[:300]}")
        assert not refused, refused
        core.delete_namespaced_pod("made-deleting", NS)  # held by its finalizer: listed with deletionTimestamp
        yield core_api, len(made)
    finally:
        try:
            core.patch_namespaced_pod("made-deleting", NS, {"metadata": {"finalizers": None}})
        except ApiException as exc:
            if exc.status != 404:
                raise
        core.delete_collection_namespaced_pod(NS, grace_period_seconds=0)  # no kubelet to wait for
        core.delete_namespace(NS, grace_period_seconds=0)
        wait_until(lambda: not core.list_namespace(field_selector=f"metadata.name={NS}").items, 120, f"{NS} deleted")


def test_protobuf_pods_read_as_their_json(pods_made: tuple[client.ApiClient, int]) -> None:
    core_api, count = pods_made
    rv = json.loads(_list(core_api, "application/json", "0", limit=1)[0])["metadata"]["resourceVersion"]
    data_json, type_json = _list(core_api, "application/json", rv)
    data_proto, type_proto = _list(core_api, pod_proto.ACCEPT, rv)
    assert type_json.startswith("application/json") and type_proto == pod_proto.CONTENT_TYPE
    assert pod_proto.is_protobuf(data_proto) and not pod_proto.is_protobuf(data_json)
    from_json, from_proto = pod_wire.pod_list(data_json), pod_proto.pod_list(data_proto)
    assert len(from_json["items"]) == len(from_proto["items"]) == count
    assert from_proto["metadata"]["resourceVersion"] == from_json["metadata"]["resourceVersion"]
    for a, b in zip(from_json["items"], from_proto["items"], strict=True):
        assert a == b, (a["metadata"]["name"], _difference(a, b))
        assert readings(a) == readings(b)
    deleting = next(p for p in from_proto["items"] if p["metadata"]["name"] == "made-deleting")
    assert deleting["metadata"]["deletionTimestamp"]  # the pointer Time read where it is set
    sidecar = next(p for p in from_proto["items"] if p["metadata"]["name"] == "made-sidecar")
    assert sidecar["spec"]["initContainers"][1]["restartPolicy"] == "Always"
    assert sidecar["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"] == 137
    overhead = next(p for p in from_proto["items"] if p["metadata"]["name"] == "made-overhead")
    assert overhead["spec"]["overhead"] == {"cpu": "250m", "memory": "120Mi"}  # set by the RuntimeClass admission
    one, other = model_of(from_json["items"]), model_of(from_proto["items"])
    assert one == other, _difference(json.loads(one), json.loads(other))
    assert count > 100  # the recordings, not just the made pods


@pytest.mark.parametrize("protobuf", [True, False])
def test_an_informer_pages_protobuf_as_it_pages_json(pods_made: tuple[client.ApiClient, int], protobuf: bool) -> None:
    """Seven pods a page: each page asked ahead is asked with the peeked token of a protobuf page too,
    and the events are those of a JSON list of the same pods."""
    core_api, count = pods_made
    events: list = []
    settings = WatchSettings(page_size=7, pod_protobuf=protobuf)
    spec = KindSpec("Pod", "pods", functools.partial(RawApi(core_api, "CoreV1Api").list_namespaced_pod, NS), NS)
    informer = Informer(spec, events.append, threading.Event(), Link(["Pod"], lambda e: None), "plane", settings)
    informer._list()  # the list half of run()
    listed = [e for e in events if isinstance(e, Listed)]
    assert len(listed) == 1 and len(listed[0].objects) == count
    pages = [e for e in events if isinstance(e, Listing) and e.page]
    assert len(pages) == -(-count // 7) - 1
    assert informer.pages_ahead == len(pages)  # every next page asked ahead from the peeked token
    again: list = []
    Informer(spec, again.append, threading.Event(), Link(["Pod"], lambda e: None), "plane",
             WatchSettings(page_size=count, pod_protobuf=not protobuf))._list()
    other = [e for e in again if isinstance(e, Listed)][0]
    by_name = {p["metadata"]["name"]: p for p in other.objects}
    same_rv = [p for p in listed[0].objects if by_name[p["metadata"]["name"]]["metadata"]["resourceVersion"]
               == p["metadata"]["resourceVersion"]]
    assert same_rv and all(p == by_name[p["metadata"]["name"]] for p in same_rv)
