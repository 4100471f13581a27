"""`kubeview fit`'s server-side dry run (cluster/kube/dry_run.py) against the test API server, over
real HTTP: a server that cannot dry-run a create (a 404 naming no object, 405, 501; the stand-in
answers every create with that 404) is no refusal: one line says so and the local checks stand in,
as they do where RBAC forbids the dry run. A 400 or 422 is the API server's refusal (exit 2), and so
is a 404 that names what is missing (`namespaces "x" not found`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from kubeapi import KubeAPI, status_body

from kubeview.cluster.kube.config import connect
from kubeview.cluster.kube.dry_run import dry_run

DATA = Path(__file__).resolve().parents[1] / "data" / "fit"
PODS = "/api/v1/namespaces/default/pods"
OK_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ok"},
          "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "100m"}}}]}}
INVALID = status_body(422, "Invalid", 'Pod "ok" is invalid: spec.containers[0].image: Required value',
                      {"name": "ok", "kind": "Pod",
                       "causes": [{"reason": "FieldValueRequired", "message": "Required value",
                                   "field": "spec.containers[0].image"}]})


def fit(api: KubeAPI, manifest: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
    env["KUBECONFIG"] = str(api.kubeconfig)
    return subprocess.run([sys.executable, "-m", "kubeview", "fit", str(manifest)], capture_output=True, text=True,
                          env=env, timeout=120)


def said(code: int) -> str:
    return (f"kubeview: fit: no dry run: the API server could not dry-run creating pods in default (it answered "
            f"{code}); kubeview's own checks instead\n")


@pytest.mark.parametrize(("code", "body"), [
    (404, None),  # the stand-in's own answer to a create: "the server could not find the requested resource"
    (405, status_body(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")),
    (501, status_body(501, "NotImplemented", "dry run is not supported")),
])
def test_a_server_that_cannot_dry_run_is_no_refusal(kube_api: KubeAPI, code: int, body: dict | None) -> None:
    if body is not None:
        kube_api.respond("POST", PODS, code, body)
    answer = dry_run(connect(str(kube_api.kubeconfig)).api_client, [OK_POD], "default")
    assert (answer.asked, answer.refused, answer.why_not) == (False, [], said(code)[len("kubeview: fit: "):-1])
    (sent,) = kube_api.requests_to(PODS, method="POST")
    assert sent.query == {"dryRun": "All"} and sent.json() == OK_POD


def test_after_a_404_the_local_checks_refuse_and_fit_says_why(kube_api: KubeAPI, tmp_path: Path) -> None:
    """gpu-half.yaml: the local checks refuse it (exit 2) in the words they give on the demo."""
    out = fit(kube_api, DATA / "gpu-half.yaml")
    assert (out.returncode, out.stdout) == (2, ""), out.stderr
    assert out.stderr == said(404) + (f"kubeview: fit: {DATA / 'gpu-half.yaml'}: Pod \"gpu-half\" is invalid: "
                                      "spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "
                                      '"500m": must be an integer\n')


@pytest.mark.slow
def test_after_a_404_what_the_local_checks_pass_is_placed(kube_api: KubeAPI, tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec:\n"
                                      "  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]\n")
    out = fit(kube_api, tmp_path / "ok.yaml")
    assert (out.returncode, out.stderr) == (0, said(404)), out.stderr
    assert "Pod default/ok (1 pod): fits\n" in out.stdout


@pytest.mark.parametrize(("code", "body", "message"), [
    (422, INVALID, 'Pod "ok" is invalid: spec.containers[0].image: Required value'),
    (400, status_body(400, "BadRequest", "the object provided is unrecognized"), "the object provided is unrecognized"),
    (404, status_body(404, "NotFound", 'namespaces "default" not found', {"name": "default", "kind": "namespaces"}),
     'namespaces "default" not found'),
])
def test_a_validation_refusal_stays_a_refusal(kube_api: KubeAPI, tmp_path: Path, code: int, body: dict,
                                              message: str) -> None:
    kube_api.respond("POST", PODS, code, body)
    (tmp_path / "ok.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec:\n"
                                      "  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]\n")
    out = fit(kube_api, tmp_path / "ok.yaml")
    assert (out.returncode, out.stdout, out.stderr) == (2, "", f"kubeview: fit: {tmp_path / 'ok.yaml'}: {message}\n")
