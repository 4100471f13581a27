"""`KubeRenderJob` against the test API server: the exact requests, pod reasons, scale, clean-up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubernetes import client

from kubeview.render import manifests as m
from kubeview.render.kube import KubeRenderJob, pod_problem
from kubeview.render.local import RenderError, RenderSettings
from tests.render_kube.conftest import NS
from tests.render_kube.renderapi import RenderKubeAPI, header, pod, pod_list

ROOT = Path(__file__).resolve().parents[2]
THREE = ROOT / "renderer" / "scenes" / "three-spheres.yaml"
WORKLOAD_PATHS = [
    f"/api/v1/namespaces/{NS}/configmaps/render-scene",
    f"/api/v1/namespaces/{NS}/secrets/render-token",
    f"/api/v1/namespaces/{NS}/services/producer",
    f"/apis/apps/v1/namespaces/{NS}/deployments/producer",
    f"/apis/apps/v1/namespaces/{NS}/replicasets/consumer",
]


def make_job(api_client: client.ApiClient, tmp_path: Path, **kw: object) -> KubeRenderJob:
    settings = RenderSettings(scene=THREE, output=tmp_path / "out.png", replicas=2, cpu="100m", namespace=NS)
    return KubeRenderJob(api_client, settings, **kw)  # type: ignore[arg-type]


def test_start_is_server_side_apply_of_each_object(render_api: RenderKubeAPI, api_client: client.ApiClient,
                                                   tmp_path: Path) -> None:
    job = make_job(api_client, tmp_path, image="registry.example/kubeview:1")
    job.start()
    applies = render_api.applies()
    assert [r.path for r in applies] == WORKLOAD_PATHS
    expected = m.workload_objects(job.spec)  # type: ignore[arg-type]
    for req, obj in zip(applies, expected, strict=True):
        assert req.method == "PATCH"
        assert header(req, "Content-Type") == "application/apply-patch+yaml"
        assert req.query == {"fieldManager": "kubeview", "force": "true"}
        assert req.json() == obj
    # the bodies are the render-manifests objects for these settings
    rs = applies[-1].json()
    assert rs["spec"]["replicas"] == 2
    assert rs["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "100m"
    assert rs["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example/kubeview:1"
    assert applies[0].json()["data"]["scene.yaml"] == THREE.read_text()
    assert not render_api.requests_to(f"/api/v1/namespaces/{NS}", method="PATCH")  # it exists: not touched

    assert job.stop() == f"render: deleted its objects in {NS}"
    deletes = [r for r in render_api.requests if r.method == "DELETE"]
    assert [r.path for r in deletes] == list(reversed(WORKLOAD_PATHS))
    assert all(r.json() == {"propagationPolicy": "Background"} for r in deletes)
    assert render_api.objects == {}


def test_a_missing_namespace_is_applied_then_deleted(render_api: RenderKubeAPI, api_client: client.ApiClient,
                                                     tmp_path: Path) -> None:
    render_api.namespaces.discard(NS)
    job = make_job(api_client, tmp_path)
    job.start()
    patches = [r.path for r in render_api.requests if r.method == "PATCH"]
    assert patches == [WORKLOAD_PATHS[0], f"/api/v1/namespaces/{NS}", *WORKLOAD_PATHS]
    ns = render_api.requests_to(f"/api/v1/namespaces/{NS}", method="PATCH")[0]
    assert ns.json() == m.namespace_object(NS)
    assert ns.query == {"fieldManager": "kubeview", "force": "true"}
    job.stop()
    deletes = [r.path for r in render_api.requests if r.method == "DELETE"]
    assert deletes == [*reversed(WORKLOAD_PATHS), f"/api/v1/namespaces/{NS}"]


def test_forbidden_is_one_sentence_and_rolls_back(render_api: RenderKubeAPI, api_client: client.ApiClient,
                                                  tmp_path: Path) -> None:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "Forbidden",
            "message": 'secrets "render-token" is forbidden: User "alice" cannot patch resource "secrets" '
                       f'in API group "" in the namespace "{NS}"',
            "details": {"name": "render-token", "kind": "secrets"}, "code": 403}
    render_api.respond("PATCH", WORKLOAD_PATHS[1], 403, body)
    job = make_job(api_client, tmp_path)
    with pytest.raises(RenderError) as err:
        job.start()
    text = str(err.value)
    assert "\n" not in text and "forbidden (403)" in text and "render-manifests" in text
    assert [r.path for r in render_api.requests if r.method == "DELETE"] == [WORKLOAD_PATHS[0]]
    assert job.stop() == f"render: deleted its objects in {NS}"  # what start() rolled back, said once
    assert job.stop() == ""  # nothing left to clean


def test_ctrl_c_while_applying_deletes_and_says_so(render_api: RenderKubeAPI, api_client: client.ApiClient,
                                                   tmp_path: Path) -> None:
    """Ctrl-C between two applies (the real plane's Ctrl-C test hit this window once in CI: the objects
    went, but nothing said so). The interrupt is raised by the job itself after its third apply."""
    job = make_job(api_client, tmp_path)
    real_apply, applied = job._apply, []

    def apply_then_interrupt(obj: dict) -> None:
        real_apply(obj)
        applied.append(obj)
        if len(applied) == 3:
            raise KeyboardInterrupt

    job._apply = apply_then_interrupt  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        job.start()
    deletes = [r.path for r in render_api.requests if r.method == "DELETE"]
    assert deletes == list(reversed(WORKLOAD_PATHS[:3]))  # the third too: applied, then the interrupt
    assert job.stop() == f"render: deleted its objects in {NS}"


def test_pending_and_image_pull_reasons_are_reported(render_api: RenderKubeAPI, api_client: client.ApiClient,
                                                     tmp_path: Path) -> None:
    unschedulable = "0/5 nodes are available: 5 Insufficient cpu. preemption: 0/5 nodes are available."
    pull = 'Back-off pulling image "kubeview:latest"'
    render_api.set_list(f"/api/v1/namespaces/{NS}/pods", pod_list(
        pod("producer-7d9f-abcde", "producer", ready=False),
        pod("consumer-a", "consumer"),
        pod("consumer-b", "consumer", phase="Pending", unschedulable=unschedulable),
        pod("consumer-c", "consumer", phase="Pending", ready=False, waiting=("ImagePullBackOff", pull),
            init_waiting=True),
    ))
    job = make_job(api_client, tmp_path)
    job.start()
    progress = job.poll()
    assert (progress.running, progress.pending, progress.status) == (1, 2, None)
    assert progress.pending_reason == f"consumer-b: Unschedulable: {unschedulable}"
    assert job.problems == [f"consumer-b: Unschedulable: {unschedulable}", f"consumer-c: ImagePullBackOff: {pull}"]
    # the pods are listed by the render's label, and /status is not asked before the producer is Ready
    (listing,) = render_api.requests_to(f"/api/v1/namespaces/{NS}/pods", method="GET")
    assert listing.query == {"labelSelector": "app.kubernetes.io/name=kubeview-render"}
    assert not [r for r in render_api.requests if "/proxy/" in r.path]
    job.stop()


def test_a_producer_that_cannot_pull_its_image_ends_the_render(render_api: RenderKubeAPI,
                                                               api_client: client.ApiClient, tmp_path: Path) -> None:
    pull = 'Back-off pulling image "registry.invalid/kubeview:1"'
    render_api.set_list(f"/api/v1/namespaces/{NS}/pods", pod_list(
        pod("producer-7d9f-abcde", "producer", phase="Pending", ready=False, waiting=("ImagePullBackOff", pull))))
    job = make_job(api_client, tmp_path)
    job.start()
    with pytest.raises(RenderError) as err:
        job.poll()
    assert str(err.value) == f"the producer pod producer-7d9f-abcde cannot start: ImagePullBackOff: {pull}"
    job.stop()


def test_scale_patches_the_scale_subresource(render_api: RenderKubeAPI, api_client: client.ApiClient,
                                             tmp_path: Path) -> None:
    render_api.add_scale("replicasets", NS, "consumer", 2)
    job = make_job(api_client, tmp_path)
    job.start()
    assert job.scale(7) == f"ReplicaSet {NS}/consumer scaled to 7 replicas."
    (req,) = render_api.requests_to(f"/apis/apps/v1/namespaces/{NS}/replicasets/consumer/scale", method="PATCH")
    assert header(req, "Content-Type") == "application/merge-patch+json"
    assert req.json() == {"spec": {"replicas": 7}}
    assert render_api.scale_of("replicasets", NS, "consumer") == 7
    with pytest.raises(RenderError, match="422"):
        render_api.respond_fixture("PATCH", req.path, "status-422-invalid-scale.json")
        job.scale(3)
    job.stop()


def test_keep_leaves_everything(render_api: RenderKubeAPI, api_client: client.ApiClient, tmp_path: Path) -> None:
    job = make_job(api_client, tmp_path, keep=True)
    job.start()
    assert "kept" in job.stop()
    assert not [r for r in render_api.requests if r.method == "DELETE"]
    assert len(render_api.objects) == 5


def test_bad_settings_fail_before_any_request(render_api: RenderKubeAPI, api_client: client.ApiClient,
                                              tmp_path: Path) -> None:
    settings = RenderSettings(scene=THREE, output=tmp_path / "o.png", raw=tmp_path / "o.npy", namespace=NS)
    with pytest.raises(RenderError, match="--raw"):
        KubeRenderJob(api_client, settings).start()
    settings = RenderSettings(scene=THREE, output=tmp_path / "o.png", cpu="lots", namespace=NS)
    with pytest.raises(RenderError, match="--cpu") as err:
        KubeRenderJob(api_client, settings).start()
    assert err.value.exit_code == 2
    assert render_api.requests == []


def test_unreachable_api_server_is_one_sentence(api_client: client.ApiClient, render_api: RenderKubeAPI,
                                                tmp_path: Path) -> None:
    render_api.stop()
    job = make_job(api_client, tmp_path)
    with pytest.raises(RenderError) as err:
        job.start()
    assert "Cannot reach" in str(err.value) or "cannot reach" in str(err.value)
    assert "\n" not in str(err.value)


def test_pod_problem_reads_the_recorded_unschedulable_pod(k8s_fixtures: Path) -> None:
    recorded = json.loads((k8s_fixtures / "pod-gpu-c-pending.json").read_text())
    assert pod_problem(recorded) == (
        "Unschedulable: 0/5 nodes are available: 5 Insufficient nvidia.com/gpu. no new claims to deallocate, "
        "preemption: 0/5 nodes are available: 2 No preemption victims found for incoming pod, 3 Preemption is "
        "not helpful for scheduling.")
    assert pod_problem(pod("c", "consumer")) is None
    assert pod_problem(pod("c", "consumer", ready=False, waiting=("ContainerCreating", ""))) is None
    assert pod_problem(pod("c", "consumer", ready=False, restarts=4,
                           waiting=("CrashLoopBackOff", "back-off 40s restarting failed container"))) == \
        "CrashLoopBackOff: back-off 40s restarting failed container"


def test_kubeview_render_with_a_kubeconfig_uses_the_cluster(render_api: RenderKubeAPI, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """`kubeview --render` picks KubeRenderJob for a real cluster; a producer that cannot pull its image
    ends it with the cluster's reason in one line, and what was applied is deleted."""
    from kubeview.cli import main

    pull = 'Back-off pulling image "registry.example/kubeview:2"'
    render_api.set_list(f"/api/v1/namespaces/{NS}/pods", pod_list(
        pod("producer-5f7c9-x2x4p", "producer", phase="Pending", ready=False, waiting=("ImagePullBackOff", pull))))
    code = main(["--kubeconfig", str(render_api.kubeconfig), "-n", NS, "--render", str(THREE), "--headless",
                 "-o", str(tmp_path / "out.png"), "--replicas", "3", "--cpu", "250m", "--gpu", "1",
                 "--image", "registry.example/kubeview:2"])
    out = capsys.readouterr()
    assert code == 1
    assert out.err == f"kubeview: the producer pod producer-5f7c9-x2x4p cannot start: ImagePullBackOff: {pull}\n"
    assert out.out.splitlines()[-1] == f"render: deleted its objects in {NS}"
    rs = render_api.applies()[-1].json()
    (c,) = rs["spec"]["template"]["spec"]["containers"]
    assert rs["spec"]["replicas"] == 3 and c["image"] == "registry.example/kubeview:2"
    assert c["resources"]["requests"]["cpu"] == "250m"
    assert c["resources"]["requests"]["nvidia.com/gpu"] == c["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert [r.path for r in render_api.requests if r.method == "DELETE"] == list(reversed(WORKLOAD_PATHS))


def test_pods_refused_by_a_quota_are_reported_from_their_workload(render_api: RenderKubeAPI,
                                                                  api_client: client.ApiClient,
                                                                  tmp_path: Path) -> None:
    quota = ('pods "consumer-x7k2p" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, '
             "used: requests.nvidia.com/gpu=2, limited: requests.nvidia.com/gpu=2")
    render_api.set_list(f"/api/v1/namespaces/{NS}/pods", pod_list(pod("producer-5f7c9-x2x4p", "producer", ready=False)))
    render_api.set_list(f"/apis/apps/v1/namespaces/{NS}/replicasets/consumer", {
        "kind": "ReplicaSet", "apiVersion": "apps/v1", "metadata": {"name": "consumer", "namespace": NS},
        "spec": {"replicas": 2}, "status": {"replicas": 0, "conditions": [
            {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": quota}]}})
    job = make_job(api_client, tmp_path)
    job.start()
    progress = job.poll()
    assert progress.pending_reason == f"ReplicaSet consumer: FailedCreate: {quota}"
    assert job.problems == [f"ReplicaSet consumer: FailedCreate: {quota}"]
    job.stop()


def test_pods_left_counts_terminating_pods_and_a_namespace_being_deleted(
        render_api: RenderKubeAPI, api_client: client.ApiClient, tmp_path: Path) -> None:
    """What `kubeview tune` waits on between trials: every render pod gone, and the namespace the job
    created (deleting a namespace takes a while; applying into a Terminating one is refused)."""
    render_api.namespaces.discard(NS)
    job = make_job(api_client, tmp_path)
    job.start()
    terminating = pod("consumer-7d9c-abcde", "consumer")
    terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    render_api.set_list(f"/api/v1/namespaces/{NS}/pods", pod_list(pod("producer-5f7c9-x2x4p", "producer"), terminating))
    job.stop()
    namespace = {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": NS},
                 "status": {"phase": "Terminating"}}
    render_api.respond("GET", f"/api/v1/namespaces/{NS}", 200, namespace, times=2)
    assert job.pods_left() == 3  # two pods (one terminating) and the namespace
    render_api.set_list(f"/api/v1/namespaces/{NS}/pods", pod_list())
    assert job.pods_left() == 1  # the namespace is still there
    assert job.pods_left() == 0  # and now it is gone (404)
    lists = render_api.requests_to(f"/api/v1/namespaces/{NS}/pods", method="GET")
    assert all(r.query.get("labelSelector") == "app.kubernetes.io/name=kubeview-render" for r in lists)
