"""Scaling through the `scale` subresource: the exact PATCH, and every recorded refusal as one sentence."""

from __future__ import annotations

import pytest
from kubeapi import KubeAPI, fixtures

from kubeview.cluster.kube.errors import describe_api_error
from kubeview.cluster.kube.source import KubeSource
from kubeview.cluster.source import ActionError

RS_SCALE = "/apis/apps/v1/namespaces/default/replicasets/consumer/scale"
ACTION = "Scaling ReplicaSet default/consumer to 6"

# every recorded error Status, and the sentence the user sees for it
SENTENCES = {
    "status-401-unauthorized.json":
        f"{ACTION} failed: the API server rejected the credentials (401 Unauthorized: an expired or revoked token?); "
        "log in again or refresh the kubeconfig.",
    "status-403-forbidden-serviceaccount.json":
        f'{ACTION} was forbidden (403): pods "err-sa" is forbidden: error looking up service account '
        'default/missing: serviceaccount "missing" not found; ask a cluster admin for access.',
    "status-404-notfound.json":
        f'{ACTION} failed: pods "does-not-exist" not found (404 Not Found); it may have been deleted or renamed.',
    "status-409-alreadyexists.json":
        f'{ACTION} failed: pods "err-probe" already exists (409 Conflict); refresh and try again.',
    "status-422-invalid-scale.json":
        f"{ACTION} was rejected as invalid (422): spec.replicas: Invalid value: -1: must be greater than or equal to 0.",
    "status-422-invalid-extended-resource.json":
        f"{ACTION} was rejected as invalid (422): spec.containers[0].resources.limits: Required value: Limit must be "
        "set for non overcommitable resources.",
}


def test_the_exact_patch(kube_api: KubeAPI) -> None:
    src = KubeSource(str(kube_api.kubeconfig))
    try:
        assert src.scale("ReplicaSet", "default", "consumer", 6) == "ReplicaSet default/consumer scaled to 6 replicas."
    finally:
        src.close()
    (patch,) = kube_api.requests_to(RS_SCALE, method="PATCH")
    assert patch.headers["Content-Type"] == "application/merge-patch+json"
    assert patch.body == b'{"spec": {"replicas": 6}}' and patch.json() == {"spec": {"replicas": 6}}
    assert patch.headers["Authorization"] == f"Bearer {kube_api.token}"
    assert kube_api.scale_of("replicasets", "default", "consumer") == 6


@pytest.mark.parametrize(("kind", "resource"), [("Deployment", "deployments"), ("statefulset", "statefulsets")])
def test_deployments_and_statefulsets(kube_api: KubeAPI, kind: str, resource: str) -> None:
    kube_api.add_scale(resource, "render", "consumers", 2)
    src = KubeSource(str(kube_api.kubeconfig))
    try:
        assert src.scale(kind, "render", "consumers", 1).endswith("render/consumers scaled to 1 replica.")
    finally:
        src.close()
    (patch,) = kube_api.requests_to(f"/apis/apps/v1/namespaces/render/{resource}/consumers/scale", method="PATCH")
    assert patch.json() == {"spec": {"replicas": 1}}


@pytest.mark.parametrize("fixture", sorted(SENTENCES))
def test_every_recorded_error_is_one_sentence(kube_api: KubeAPI, fixture: str) -> None:
    kube_api.respond_fixture("PATCH", RS_SCALE, fixture)
    src = KubeSource(str(kube_api.kubeconfig))
    try:
        with pytest.raises(ActionError) as err:
            src.scale("ReplicaSet", "default", "consumer", 6)
    finally:
        src.close()
    assert str(err.value) == SENTENCES[fixture]
    body = fixtures.raw(fixture)
    assert describe_api_error(fixtures.load(fixture)["code"], body, ACTION) == SENTENCES[fixture]


def test_the_server_refusing_negative_replicas(kube_api: KubeAPI) -> None:
    src = KubeSource(str(kube_api.kubeconfig))
    try:
        with pytest.raises(ActionError, match=r"^Scaling ReplicaSet default/consumer to -1 was rejected as invalid "
                                              r"\(422\): spec\.replicas: Invalid value: -1: must be greater than or "
                                              r"equal to 0\.$"):
            src.scale("ReplicaSet", "default", "consumer", -1)
        with pytest.raises(ActionError, match=r'failed: replicasets\.apps "gone" not found \(404 Not Found\)'):
            src.scale("ReplicaSet", "default", "gone", 1)
        with pytest.raises(ActionError, match="^Cannot scale a Pod: only ReplicaSets, Deployments and StatefulSets"):
            src.scale("Pod", "default", "gpu-a", 1)
    finally:
        src.close()


def test_connection_error(kube_api: KubeAPI) -> None:
    kube_api.write_kubeconfig(kube_api.kubeconfig, server="http://127.0.0.1:9")
    src = KubeSource(str(kube_api.kubeconfig))
    with pytest.raises(ActionError) as err:
        src.scale("ReplicaSet", "default", "consumer", 2)
    src.close()
    assert str(err.value) == ("Scaling ReplicaSet default/consumer to 2 failed: cannot reach the API server at "
                              "http://127.0.0.1:9 (connection refused); check that the cluster is running and the "
                              "kubeconfig's server address is right.")
