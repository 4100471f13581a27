"""ResourceQuota with the real quota admission and the real quota controller (kube-apiserver and
kube-controller-manager v1.37.2, issue #40): a namespace with `requests.nvidia.com/gpu: 2` and a Job of
parallelism 3 × 1 GPU. Two pods exist, the third never (the admission refuses it; the Job controller
records FailedCreate with the API server's words). kubeview, live (KubeSource -> ClusterModel) and
`kubeview snapshot --json` as a separate process, shows the Job held by that quota with the API
server's message and used 2/2 equal to the controller's status.used, and `kubeview fit` of one more such Job
says the quota refuses it although the nodes have room; then the quota is raised to 3,
the third pod is created and the hold is gone. A ReplicaSet is held the same way; DRA device quota is
counted from the claims as the controller counts it. ROUNDS namespaces side by side for each, every wait
on observed state (about 15 s after the plane is up).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from kubeview.model.quota.held import FAILED_CREATE, parse_refusal

from .live_view import LiveView
from .objects import add_node, api, ensure_namespace, wait_nodes_ready
from .plane import Plane
from .procs import wait_until

ROUNDS = 3
NODES = ("quota-gpu-a", "quota-gpu-b")
GPU_KEY = "requests.nvidia.com/gpu"
FATE = "kubeview.test/fate"


def ns_of(i: int) -> str:
    return f"quota-real-{i}"


def gpu_job(ns: str) -> dict:
    res = {"cpu": "100m", "memory": "64Mi", "nvidia.com/gpu": "1"}
    template = {"metadata": {"labels": {FATE: "hold"}},
                "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 0, "nodeSelector": {"type": "kwok"},
                         "containers": [{"name": "train", "image": "busybox:1.36",
                                         "resources": {"requests": res, "limits": res}}]}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": ns},
            "spec": {"parallelism": 3, "completions": 3, "template": template}}


def quota(ns: str, gpus: int) -> dict:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "gpus", "namespace": ns},
            "spec": {"hard": {GPU_KEY: str(gpus)}}}


@pytest.fixture(scope="module")
def quota_plane(plane: Plane) -> Iterator[tuple[client.ApiClient, LiveView]]:
    api_client = api(plane.kubeconfig)
    core = client.CoreV1Api(api_client)
    for i in range(ROUNDS):
        ensure_namespace(core, ns_of(i))
        ensure_namespace(core, f"quota-dra-{i}")
        ensure_namespace(core, f"quota-rs-{i}")
    for name in NODES:
        add_node(core, name, {"cpu": "64", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"})
    wait_nodes_ready(core, list(NODES))
    view = LiveView(plane.kubeconfig, kinds=("Node", "Pod", "Job", "ReplicaSet", "ResourceQuota"), dra=True, events=True).start()
    yield api_client, view
    view.stop()
    for i in range(ROUNDS):
        core.delete_namespace(ns_of(i))
        core.delete_namespace(f"quota-dra-{i}")
        core.delete_namespace(f"quota-rs-{i}")
    for name in NODES:
        try:
            core.delete_node(name)
        except client.ApiException as exc:
            if exc.status != 404:
                raise


def job_pods(core: client.CoreV1Api, ns: str) -> list[str]:
    return sorted(p.metadata.name for p in core.list_namespaced_pod(ns, label_selector="batch.kubernetes.io/job-name=train").items
                  if p.status.phase not in ("Succeeded", "Failed"))


def refusals(core: client.CoreV1Api, ns: str) -> list[client.CoreV1Event]:
    events = core.list_namespaced_event(ns, field_selector="involvedObject.kind=Job,involvedObject.name=train").items
    return [e for e in events if e.reason == FAILED_CREATE and "exceeded quota" in (e.message or "")]


def status_used(core: client.CoreV1Api, ns: str) -> str | None:
    q = core.read_namespaced_resource_quota("gpus", ns)
    return ((q.status and q.status.used) or {}).get(GPU_KEY)


def test_job_held_by_the_real_quota_then_released(plane: Plane, quota_plane, realk8s_counts: dict[str, str],
                                                  tmp_path: Path) -> None:
    api_client, view = quota_plane
    core, batch = client.CoreV1Api(api_client), client.BatchV1Api(api_client)
    start = time.monotonic()
    spaces = [ns_of(i) for i in range(ROUNDS)]
    for ns in spaces:
        core.create_namespaced_resource_quota(ns, quota(ns, 2))
    # the admission refuses every pod ("status unknown for quota") until the controller wrote status.hard
    wait_until(lambda: all((core.read_namespaced_resource_quota("gpus", ns).status or client.V1ResourceQuotaStatus()).hard
                           for ns in spaces), 30, "the quota controller's first status")
    for ns in spaces:
        batch.create_namespaced_job(ns, gpu_job(ns))
    wait_until(lambda: all(len(job_pods(core, ns)) == 2 and refusals(core, ns) and status_used(core, ns) == "2"
                           for ns in spaces), 60, "two pods, the third refused, used 2 by the controller")

    def held_as_the_api_says() -> bool:
        for ns in spaces:
            said = max(refusals(core, ns), key=lambda e: (e.last_timestamp or e.first_timestamp, e.count or 1))
            h = view.read(lambda m, ns=ns: m.held().get(("Job", ns, "train")))
            use = view.read(lambda m, ns=ns: m.quota_uses().get((ns, "gpus")))
            if h is None or use is None or h.message != said.message or use[0].used != 2 or use[0].counted != 2:
                return False
        return True

    wait_until(held_as_the_api_says, 30, "kubeview's hold with the API server's message and used 2/2")
    for ns in spaces:
        h = view.read(lambda m, ns=ns: m.held()[("Job", ns, "train")])
        assert h.words() == "held by quota gpus: requests.nvidia.com/gpu 2/2 — 1 pod not created", h
        assert h.reporter == "job-controller" and h.not_created == 1
        refusal = parse_refusal(h.message)
        assert refusal is not None and (refusal.quota, refusal.requested, refusal.used, refusal.limited) == (
            "gpus", {GPU_KEY: "1"}, {GPU_KEY: "2"}, {GPU_KEY: "2"}), h.message
        assert h.message.startswith("Error creating: pods ") and " is forbidden: exceeded quota: gpus, " in h.message
        assert len(job_pods(core, ns)) == 2  # the third never existed
    realk8s_counts["quota message"] = view.read(lambda m: m.held()[("Job", spaces[0], "train")].message)

    # --- and `kubeview snapshot --json`, a separate process reading the plane once ---------------------
    out = subprocess.run([sys.executable, "-m", "kubeview", "snapshot", "--json", "--kubeconfig", str(plane.kubeconfig)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)["quotas"]
    snap = {n["namespace"]: n for n in doc["namespaces"]}
    for ns in spaces:
        [q] = snap[ns]["quotas"]
        assert [(r["key"], r["hard"], r["used"], r["counted"]) for r in q["resources"]] == [(GPU_KEY, 2, 2, 2)]
        [held] = snap[ns]["held"]
        assert (held["kind"], held["name"], held["notCreated"], held["quota"]) == ("Job", "train", 1, "gpus")
        assert held["message"] in {e.message for e in refusals(core, ns)}
    assert doc["heldPods"] >= ROUNDS and doc["unavailable"] is None

    # --- `kubeview fit` checks the quota before the nodes: the Job's dry run passes (quota is on pods) --
    manifest = tmp_path / "job.json"
    manifest.write_text(json.dumps(gpu_job(spaces[0]) | {"metadata": {"name": "more", "namespace": spaces[0]}}))
    fit = subprocess.run([sys.executable, "-m", "kubeview", "fit", str(manifest), "-n", spaces[0],
                          "--kubeconfig", str(plane.kubeconfig)], capture_output=True, text=True, timeout=120)
    assert fit.returncode == 1, (fit.stdout, fit.stderr)
    unit, said = fit.stdout.splitlines()[1:3]
    assert unit == f"Job {spaces[0]}/more (3 pods): does not fit", fit.stdout
    # on one node or both: the spread places by the real scheduler's earlier placements, not by construction
    assert said.startswith(("  quota: fits on quota-gpu-", "  quota: fits on the nodes,")) and said.endswith(
        f", but namespace {spaces[0]}'s quota gpus requests.nvidia.com/gpu is 2/2: room for 0 of 3 pods"), fit.stdout

    # --- the quota raised: the third pod is admitted and the hold goes --------------------------------
    for ns in spaces:
        core.patch_namespaced_resource_quota("gpus", ns, {"spec": {"hard": {GPU_KEY: "3"}}})
    wait_until(lambda: all(len(job_pods(core, ns)) == 3 and status_used(core, ns) == "3" for ns in spaces), 90,
               "the third pod created after the quota was raised (the Job controller's backoff)")
    wait_until(lambda: view.read(lambda m: not any(k[1] in spaces for k in m.held())
                                 and all(m.quota_uses()[(ns, "gpus")][0].used == 3 for ns in spaces)), 30,
               "kubeview's hold gone and used 3/3")
    realk8s_counts["quota rounds"] = f"{ROUNDS} in {time.monotonic() - start:.1f} s"


DEVICES = "gpu.example.com.deviceclass.resource.k8s.io/devices"
CLAIMS = "count/resourceclaims.resource.k8s.io"


def test_dra_device_quota_counted_as_the_controller_counts(quota_plane) -> None:
    """The quota controller's claim evaluator (resource_claims.go) and kubeview's count from the claims
    agree: an exact request of 2, one of All (another class), a prioritized list of 4 or 1 (charged 4)."""
    api_client, view = quota_plane
    core = client.CoreV1Api(api_client)
    spaces = [f"quota-dra-{i}" for i in range(ROUNDS)]
    exact = {"name": "r", "exactly": {"deviceClassName": "gpu.example.com", "count": 2}}
    every = {"name": "all", "exactly": {"deviceClassName": "nic.example.com", "allocationMode": "All"}}
    prioritized = {"name": "p", "firstAvailable": [{"name": "big", "deviceClassName": "gpu.example.com", "count": 4},
                                                   {"name": "small", "deviceClassName": "gpu.example.com", "count": 1}]}
    for ns in spaces:
        core.create_namespaced_resource_quota(ns, {"metadata": {"name": "devices"},
                                                   "spec": {"hard": {DEVICES: "16", CLAIMS: "10"}}})
    wait_until(lambda: all((core.read_namespaced_resource_quota("devices", ns).status
                            or client.V1ResourceQuotaStatus()).hard for ns in spaces), 30, "the quota's first status")
    claims = client.ResourceV1Api(api_client)
    for ns in spaces:
        for name, requests in (("a", [exact]), ("b", [exact, every]), ("c", [prioritized])):
            claims.create_namespaced_resource_claim(ns, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                                         "metadata": {"name": name},
                                                         "spec": {"devices": {"requests": requests}}})

    def used(ns: str) -> dict:
        return dict(core.read_namespaced_resource_quota("devices", ns).status.used or {})

    wait_until(lambda: all(used(ns) == {DEVICES: "8", CLAIMS: "3"} for ns in spaces), 30,
               "the controller's used: 2 + 2 + 4 devices, 3 claims")

    def mine() -> list[dict]:
        return view.read(lambda m: [{u.key: (u.used, u.counted) for u in m.quota_uses().get((ns, "devices"), ())}
                                    for ns in spaces])

    wait_until(lambda: mine() == [{DEVICES: (8, 8), CLAIMS: (3, 3)}] * ROUNDS, 30,
               "kubeview's count equal to the controller's")


def test_replicaset_held_by_the_real_quota(quota_plane) -> None:
    """The ReplicaSet controller's FailedCreate (controller_utils.go, the same words as the Job
    controller's) and its status.replicas: 3 replicas × 1 GPU under a quota of 2 are held, 1 pod not created."""
    api_client, view = quota_plane
    core, apps = client.CoreV1Api(api_client), client.AppsV1Api(api_client)
    spaces = [f"quota-rs-{i}" for i in range(ROUNDS)]
    for ns in spaces:
        core.create_namespaced_resource_quota(ns, quota(ns, 2))
    wait_until(lambda: all((core.read_namespaced_resource_quota("gpus", ns).status or client.V1ResourceQuotaStatus()).hard
                           for ns in spaces), 30, "the quota controller's first status")
    template = gpu_job("")["spec"]["template"]
    template["metadata"]["labels"]["app"] = "web"
    template["spec"]["restartPolicy"] = "Always"
    for ns in spaces:
        apps.create_namespaced_replica_set(ns, {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web"},
                                                "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                                                         "template": template}})

    def refused(ns: str) -> list[str]:
        events = core.list_namespaced_event(ns, field_selector="involvedObject.kind=ReplicaSet").items
        return [e.message for e in events if e.reason == FAILED_CREATE and "exceeded quota" in (e.message or "")]

    wait_until(lambda: all(refused(ns) and apps.read_namespaced_replica_set("web", ns).status.replicas == 2
                           for ns in spaces), 60, "two pods, the third refused")
    wait_until(lambda: view.read(lambda m: all(("ReplicaSet", ns, "web") in m.held() for ns in spaces)), 30,
               "kubeview's hold on each ReplicaSet")
    for ns in spaces:
        h = view.read(lambda m, ns=ns: m.held()[("ReplicaSet", ns, "web")])
        assert h.words() == "held by quota gpus: requests.nvidia.com/gpu 2/2 — 1 pod not created", h
        assert h.reporter == "replicaset-controller" and h.message in refused(ns)
