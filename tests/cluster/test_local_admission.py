"""The local cluster's admission defaults pods as the apiserver does, so they land where they would."""

from __future__ import annotations

from kubeview.cluster.local.objects import admit_pod
from kubeview.model.views import PodView


def pod(resources: dict, init: dict | None = None) -> dict:
    spec = {"containers": [{"name": "app", "image": "x", "resources": resources}]}
    if init is not None:
        spec["initContainers"] = [{"name": "init", "image": "x", "resources": init}]
    return {"metadata": {"name": "p"}, "spec": spec}


def test_each_limit_without_a_request_becomes_the_request() -> None:
    admitted = admit_pod(pod({"requests": {"cpu": "250m"}, "limits": {"cpu": "1", "nvidia.com/gpu": 1}}))
    view = PodView.from_api(admitted)
    assert view.requests["cpu"] == 250  # an explicit request stays
    assert view.requests["nvidia.com/gpu"] == 1  # the GPU limit became the request
    tolerations = admitted["spec"]["tolerations"]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in tolerations


def test_init_containers_are_defaulted_too() -> None:
    admitted = admit_pod(pod({}, init={"limits": {"memory": "1Gi"}}))
    assert admitted["spec"]["initContainers"][0]["resources"]["requests"] == {"memory": "1Gi"}
    assert PodView.from_api(admitted).requests["memory"] == 2**30
