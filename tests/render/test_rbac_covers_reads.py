"""Every shipped read role grants what the kube source actually reads (#24 item 0).

The reads are not a hand-written list: the test runs `KubeSource` (all kinds, Events, the DRA
kinds and every gang API it knows, cluster-wide and with -n) against the test API server serving the recorded DRA cluster and
turns each request it made into (group, resource, verb), as the API server's authorizer would.
The roles checked are the static `manifests/render/00-namespace-rbac.yaml` and what
`kubeview render-manifests` generates (`rbac_objects`). A real API server enforcing RBAC is the
real-Kubernetes test plane's job; the test API server does not enforce it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from kubeapi import KubeAPI, WatchScript
from kubeapi.server import CA_STATUS_LIST
from kubeapi.source_run import collect_events

from kubeview.cluster.kube.source import KubeSource, WatchSettings
from kubeview.render.manifests import rbac_objects

ROOT = Path(__file__).resolve().parents[2]
FAST = WatchSettings(error_backoffs=(0.05,), watch_timeout=(30, 30))
DRA = "/apis/resource.k8s.io/v1"
WATCHED = ["/api/v1/nodes", "/api/v1/pods", "/apis/apps/v1/replicasets", "/apis/apps/v1/deployments",
           "/apis/apps/v1/statefulsets", "/apis/batch/v1/jobs", "/api/v1/events", f"{DRA}/deviceclasses",
           f"{DRA}/resourceslices", f"{DRA}/resourceclaims", "/api/v1/resourcequotas"]
IN_DEFAULT = [p.replace("/v1/", "/v1/namespaces/default/") for p in [*WATCHED[2:7], WATCHED[-1]]]
# every gang API kube/gangs.py reads, served (the batch schedulers' discovery written from their CRDs)
GANGS = {"scheduling.k8s.io/v1beta1": ("workloads", "podgroups"), "scheduling.run.ai/v2alpha2": ("podgroups",),
         "kueue.x-k8s.io/v1beta2": ("workloads", "clusterqueues", "localqueues", "resourceflavors"), "scheduling.volcano.sh/v1beta1": ("podgroups",)}
Grant = tuple[str, str, str, str]  # (apiGroup, resource, verb, name: "" for none)
KARPENTER = "/apis/karpenter.sh/v1"


def attributes(method: str, path: str, watch: bool, query: dict[str, str] | None = None) -> Grant | None:
    """The authorizer's (group, resource, verb, name) for one request path; None for discovery. A list or
    watch with the field selector `metadata.name=X` is checked as a request for X (kube-apiserver's
    RequestInfoFactory sets the name from it), so a role's resourceNames can allow it."""
    parts = path.strip("/").split("/")
    if parts[0] == "api":
        group, rest = "", parts[2:]
    elif parts[0] == "apis":
        group, rest = parts[1], parts[3:]
    else:
        return None
    if rest[:1] == ["namespaces"] and len(rest) >= 3:
        rest = rest[2:]
    if not rest:
        return None  # discovery (/apis/resource.k8s.io/v1): allowed to every authenticated user
    resource = rest[0] + (f"/{rest[2]}" if len(rest) > 2 else "")
    named = len(rest) > 1
    verb = {"GET": "watch" if watch else ("get" if named else "list"), "PATCH": "patch", "PUT": "update",
            "POST": "create", "DELETE": "delete"}[method]
    selector = (query or {}).get("fieldSelector", "")
    name = rest[1] if named else selector.removeprefix("metadata.name=") if selector.startswith("metadata.name=") else ""
    return group, resource, verb, name


def serve_gangs(api: KubeAPI) -> None:
    for gv, plurals in GANGS.items():
        api.set_list(f"/apis/{gv}", json.dumps({"kind": "APIResourceList", "groupVersion": gv, "resources": [
            {"name": p, "namespaced": True, "kind": "X", "verbs": ["get", "list", "watch"]} for p in plurals]}))
        for p in plurals:
            api.set_list(f"/apis/{gv}/{p}", json.dumps({"kind": "List", "metadata": {"resourceVersion": "1"},
                                                        "items": []}))
            api.script_watch(f"/apis/{gv}/{p}", WatchScript([], end="close"), WatchScript([], end="close"))


def serve_karpenter(api: KubeAPI) -> None:
    """Karpenter's group version as discovery lists it (written from its CRDs: sigs.k8s.io/karpenter
    v1.15.0 pkg/apis/crds, cluster-scoped), with empty lists."""
    api.set_list(KARPENTER, json.dumps({"kind": "APIResourceList", "groupVersion": "karpenter.sh/v1", "resources": [
        {"name": p, "namespaced": False, "kind": k, "verbs": ["delete", "get", "list", "patch", "watch"]}
        for p, k in (("nodepools", "NodePool"), ("nodeclaims", "NodeClaim"))]}))
    for p in ("nodepools", "nodeclaims"):
        api.set_list(f"{KARPENTER}/{p}", json.dumps({"kind": "List", "metadata": {"resourceVersion": "1"}, "items": []}))
        api.script_watch(f"{KARPENTER}/{p}", WatchScript([], end="close"), WatchScript([], end="close"))


def source_reads(api: KubeAPI, tmp_path: Path) -> set[Grant]:
    api.serve_recording("dra", lists={"/api/v1/pods": "pods.json"})
    serve_gangs(api)
    serve_karpenter(api)
    api.script_watch(CA_STATUS_LIST, WatchScript([], end="close"), WatchScript([], end="close"))
    api.set_list_fixture("/api/v1/events", "events.json")
    api.set_list_fixture("/api/v1/namespaces/default/events", "events.json")
    for namespace in (None, "default"):
        collect_events(KubeSource(str(api.kubeconfig), namespace=namespace, settings=FAST, events=True), 1)
    return {g for r in api.requests if (g := attributes(r.method, r.path, r.watch, r.query)) is not None}


def granted(role: dict) -> set[Grant]:
    """What a role allows; a rule without resourceNames allows every name ("")."""
    return {(g, r, v, n) for rule in role["rules"] for n in rule.get("resourceNames") or [""]
            for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}


def denied(reads: set[Grant], role: dict) -> list[Grant]:
    allows = granted(role)
    return sorted(r for r in reads if r not in allows and (*r[:3], "") not in allows)


def read_role(objects: list[dict]) -> dict:
    return next(o for o in objects if o["kind"] == "ClusterRole" and o["metadata"]["name"] == "kubeview-read")


@pytest.fixture
def reads(kube_api: KubeAPI, tmp_path: Path) -> set[Grant]:
    for path in WATCHED + IN_DEFAULT:  # each watch ends at once (the source runs one watch per kind)
        kube_api.script_watch(path, WatchScript([], end="close"), WatchScript([], end="close"))
    got = source_reads(kube_api, tmp_path)
    # the premise: every kind was read, the DRA ones included
    assert {("resource.k8s.io", r, v, "") for r in ("deviceclasses", "resourceslices", "resourceclaims")
            for v in ("list", "watch")} <= got
    assert {("", "events", "list", ""), ("batch", "jobs", "watch", ""), ("", "resourcequotas", "watch", "")} <= got
    assert {(gv.split("/")[0], p, v, "") for gv, plurals in GANGS.items() for p in plurals
            for v in ("list", "watch")} <= got
    assert {("karpenter.sh", p, v, "") for p in ("nodepools", "nodeclaims") for v in ("list", "watch")} <= got
    assert {("", "configmaps", v, "cluster-autoscaler-status") for v in ("list", "watch")} <= got
    assert not {r for r in got if r[1] == "configmaps" and r[3] != "cluster-autoscaler-status"}  # no other
    return got


def test_the_static_read_role_grants_every_read_of_the_kube_source(reads: set[Grant]) -> None:
    docs = [d for d in yaml.safe_load_all((ROOT / "manifests/render/00-namespace-rbac.yaml").read_text()) if d]
    assert denied(reads, read_role(docs)) == []


def test_the_generated_read_role_grants_every_read_of_the_kube_source(reads: set[Grant]) -> None:
    assert denied(reads, read_role(rbac_objects("kubeview-render"))) == []
