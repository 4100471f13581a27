"""Pod requests the scheduler's way: init containers, sidecars, overhead, pod-level resources (hand-computed)."""

from __future__ import annotations

import copy

from kubeapi import fixtures

from kubeview.model.requests import effective, pod_amounts
from kubeview.model.views import PodView

Mi, Gi = 2**20, 2**30


def container(name: str, cpu: str, memory: str, **extra: object) -> dict:
    return {"name": name, "image": "x", "resources": {"requests": {"cpu": cpu, "memory": memory}}, **extra}


SPEC = {
    "containers": [container("app", "500m", "1Gi"), container("helper", "250m", "512Mi")],
    "initContainers": [
        container("migrate", "2", "256Mi"),  # runs alone: 2000m, 256Mi
        container("proxy", "100m", "128Mi", restartPolicy="Always"),  # sidecar: runs with everything after
        container("warmup", "1", "2Gi"),  # runs beside the sidecar: 1100m, 2Gi + 128Mi
    ],
    "overhead": {"cpu": "250m", "memory": "64Mi"},
}


def test_init_containers_sidecars_and_overhead() -> None:
    # app sum with the sidecar: 500 + 250 + 100 = 850m; 1Gi + 512Mi + 128Mi = 1664Mi
    # init peak: max(2000m, 1100m) = 2000m; max(256Mi, 2176Mi) = 2176Mi
    # effective: max(850, 2000) + 250 overhead = 2250m; max(1664, 2176) + 64 = 2240Mi
    assert effective(SPEC) == {"cpu": 2250, "memory": 2240 * Mi, "pods": 1}


def test_sidecar_alone_adds_to_the_app_sum() -> None:
    spec = {"containers": [container("app", "1", "1Gi")],
            "initContainers": [container("log", "200m", "100Mi", restartPolicy="Always")]}
    assert effective(spec) == {"cpu": 1200, "memory": Gi + 100 * Mi, "pods": 1}


def test_pod_level_resources_win_for_cpu_and_memory() -> None:
    spec = {"containers": [container("a", "1", "1Gi"), container("b", "1", "1Gi")],
            "resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}}}
    assert effective(spec) == {"cpu": 1500, "memory": Gi, "pods": 1}


def test_cached_amounts_equal_the_reference_and_are_shared() -> None:
    a, b = copy.deepcopy(SPEC), copy.deepcopy(SPEC)
    ra, rb = pod_amounts(a), pod_amounts(b)
    assert ra[0] == effective(SPEC, "requests") and ra[1] == effective(SPEC, "limits")
    assert ra[0] is rb[0]  # same content, one parsed result
    b["containers"][0]["resources"]["requests"]["cpu"] = "600m"
    assert pod_amounts(b)[0]["cpu"] == 2250  # init peak still dominates
    b["initContainers"] = []
    assert pod_amounts(b)[0] == {"cpu": 600 + 250 + 250, "memory": Gi + 512 * Mi + 64 * Mi, "pods": 1}


def test_pod_views_of_the_recorded_pods() -> None:
    pods = {p["metadata"]["name"]: PodView.from_api(p) for p in fixtures.load("pods-list.json")["items"]}
    a = pods["gpu-a"]
    assert (a.node, a.phase, a.requests, a.limits) == ("gpu-node-1", "Running",
                                                       {"cpu": 100, "nvidia.com/gpu": 1, "pods": 1},
                                                       {"nvidia.com/gpu": 1})
    assert a.containers == [("cuda", {"cpu": 100, "nvidia.com/gpu": 1})]
    c = pods["gpu-c"]
    assert c.node is None and c.pending
    assert c.pending_reason.startswith("0/5 nodes are available: 5 Insufficient nvidia.com/gpu.")
    consumer = pods["consumer-2tg9b"]
    assert consumer.owner == ("ReplicaSet", "consumer")
    assert consumer.requests == {"cpu": 100, "pods": 1}
