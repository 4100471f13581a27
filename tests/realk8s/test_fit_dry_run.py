"""`kubeview fit` refuses what the real API server refuses (issue 40 item 6).

The careless manifests of tests/data/fit are dry-run created (`dryRun=All`) on the plane: each is a
422 whose causes hold the field and words kubeview's own validation (model/resource_validation.py)
gives first. `kubeview fit` on the plane prints the API server's answer, the same line it prints on
the demo from its local checks; a quota's 403 is reported in the API server's words (exit 1); a
ServiceAccount that may read but not create gets one line saying the dry run was not allowed, then
the local checks.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from kubeview.model.resource_validation import object_errors, refusal

from .objects import api, ensure_namespace, sa_kubeconfig
from .plane import REPO, Plane
from .procs import wait_until

DATA = REPO / "tests" / "data" / "fit"
CARELESS = ["gpu-negative.yaml", "gpu-half.yaml", "gpu-request-over-limit.yaml", "careless-workloads.yaml"]
PATHS = {"Pod": "/api/v1/namespaces/default/pods", "Deployment": "/apis/apps/v1/namespaces/default/deployments",
         "Job": "/apis/batch/v1/namespaces/default/jobs"}
READER_NS, READER = "fit-reader", "reader"


@pytest.fixture(scope="module")
def admin(plane: Plane) -> client.ApiClient:
    a = api(plane.kubeconfig)
    ensure_namespace(client.CoreV1Api(a), "default")
    return a


def _fit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubeview", "fit", *args], capture_output=True, text=True,
                          timeout=120, cwd=REPO)


def _dry_run(a: client.ApiClient, obj: dict) -> tuple[int, dict]:
    """The API server's answer (the client returns 4xx answers; it raises only on the way to them)."""
    response = a.call_api(*a.param_serialize("POST", PATHS[obj["kind"]], query_params=[("dryRun", "All")],
                                             header_params={"Content-Type": "application/json",
                                                            "Accept": "application/json"},
                                             body=obj, auth_settings=["BearerToken"]))
    return response.status, json.loads(response.read() or b"{}")


@pytest.mark.parametrize("name", CARELESS)
def test_the_local_verdict_is_the_api_servers(admin: client.ApiClient, plane: Plane, name: str) -> None:
    for obj in yaml.safe_load_all((DATA / name).read_text()):
        errors = object_errors(obj)
        status, answer = _dry_run(admin, obj)
        causes = {c["field"]: c["message"] for c in answer.get("details", {}).get("causes", [])
                  if c["field"] == errors[0].field} if errors else {}
        assert (status, causes) == (422, {errors[0].field: errors[0].body}), answer.get("message")
        assert answer["message"].startswith(refusal(obj, errors).partition(" is invalid: ")[0] + " is invalid: ")
    out = _fit(str(DATA / name), "--kubeconfig", str(plane.kubeconfig))
    demo = _fit(str(DATA / name), "--demo")
    assert (out.returncode, out.stdout, out.stderr) == (2, "", demo.stderr)


def test_a_quota_refusal_is_the_api_servers_and_exit_1(admin: client.ApiClient, plane: Plane, tmp_path: Path) -> None:
    core = client.CoreV1Api(admin)
    ensure_namespace(core, "fit-quota")
    core.create_namespaced_resource_quota("fit-quota", client.V1ResourceQuota(
        metadata=client.V1ObjectMeta(name="gpus"), spec=client.V1ResourceQuotaSpec(hard={"requests.nvidia.com/gpu": "1"})))
    wait_until(lambda: (q := core.read_namespaced_resource_quota("gpus", "fit-quota")).status and q.status.hard, 30,
               "the quota controller's status")
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "two", "namespace": "fit-quota"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 2}}}]}}
    (tmp_path / "two.yaml").write_text(yaml.safe_dump(pod))
    out = _fit(str(tmp_path / "two.yaml"), "--kubeconfig", str(plane.kubeconfig))
    assert (out.returncode, out.stdout) == (1, ""), out.stderr
    assert out.stderr.startswith(f'kubeview: fit: {tmp_path / "two.yaml"}: pods "two" is forbidden: exceeded quota: '
                                 "gpus, requested: requests.nvidia.com/gpu=2, ") and out.stderr.count("\n") == 1, out.stderr


def test_without_create_the_local_checks_stand_in_and_say_so(admin: client.ApiClient, plane: Plane,
                                                               tmp_path: Path) -> None:
    core, rbac = client.CoreV1Api(admin), client.RbacAuthorizationV1Api(admin)
    ensure_namespace(core, READER_NS)
    core.create_namespaced_service_account(READER_NS, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name=READER)))
    rbac.create_cluster_role(client.V1ClusterRole(metadata=client.V1ObjectMeta(name="fit-reader"), rules=[
        client.V1PolicyRule(api_groups=["*"], resources=["*"], verbs=["get", "list", "watch"])]))
    rbac.create_cluster_role_binding(client.V1ClusterRoleBinding(
        metadata=client.V1ObjectMeta(name="fit-reader"),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name="fit-reader"),
        subjects=[client.RbacV1Subject(kind="ServiceAccount", name=READER, namespace=READER_NS)]))
    kc = sa_kubeconfig(plane, core, READER_NS, READER, tmp_path / "reader.kubeconfig")
    said = "kubeview: fit: no dry run: the API server does not let this identity create pods in default (RBAC); " \
           "kubeview's own checks instead\n"
    refused = _fit(str(DATA / "gpu-half.yaml"), "--kubeconfig", str(kc))
    demo = _fit(str(DATA / "gpu-half.yaml"), "--demo")
    assert (refused.returncode, refused.stdout, refused.stderr) == (2, "", said + demo.stderr)
    (tmp_path / "ok.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec:\n"
                                      "  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]\n")
    placed = _fit(str(tmp_path / "ok.yaml"), "--kubeconfig", str(kc))
    assert placed.stderr.startswith(said) and "Pod default/ok (1 pod): " in placed.stdout, placed.stderr
