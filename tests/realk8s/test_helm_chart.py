"""charts/kubeview-extender installed by the real helm on the real plane (issue 30 item 3): the API
server validates every object (helm 4 applies server-side), the namespace's "restricted" Pod
Security admits the extender's pod, an upgrade keeps the token, and `helm uninstall` leaves nothing.

The release uses its own namespace and object name, so the fixed-name objects of manifests/scheduler/
(applied by test_rbac_manifests.py on the same plane) never meet it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helm.chart import CHART, helm, objects

from .plane import Plane
from .procs import wait_until

NS, NAME, RELEASE = "kubeview-helm", "kubeview-extender-helmtest", "extender"
NAMESPACED = "pods,replicasets,deployments,services,secrets,configmaps,serviceaccounts"


def _helm(plane: Plane, home: Path, *args: str, check: bool = True):  # noqa: ANN202
    return helm(*args, f"--kubeconfig={plane.kubeconfig}", "-n", NS, home=home, check=check)


def _left(plane: Plane) -> list[str]:
    """Everything of the release still in the cluster: its labelled objects, its cluster-wide RBAC and
    helm's release records."""
    out = plane.kubectl("get", NAMESPACED, "-n", NS, "-o", "name", "-l", f"app.kubernetes.io/name={NAME}").stdout.split()
    out += plane.kubectl("get", "secrets", "-n", NS, "-o", "name", "-l", "owner=helm").stdout.split()
    for kind in ("clusterrole", "clusterrolebinding"):
        got = plane.kubectl("get", kind, NAME, "-o", "name", "--ignore-not-found").stdout.split()
        out += got
    return out


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("helm")


def test_install_is_validated_present_and_uninstall_leaves_nothing(plane: Plane, home: Path) -> None:
    plane.kubectl("create", "namespace", NS)
    plane.kubectl("label", "namespace", NS, "pod-security.kubernetes.io/enforce=restricted")

    # server-side validation: a value the chart's schema allows but the API server refuses; the
    # failed install is rolled back (helm's --dry-run=server sends no object, so this is a real one)
    bad = _helm(plane, home, "install", RELEASE, str(CHART), "--set", f"name={NAME}",
                "--set", "resources.requests.cpu=lots", "--rollback-on-failure", check=False)
    assert bad.returncode != 0 and "quantities must match" in bad.stderr, bad.stderr
    wait_until(lambda: _left(plane) == [], 120, "nothing left of the refused install")

    installed = _helm(plane, home, "install", RELEASE, str(CHART), "--set", f"name={NAME}")
    assert "kubectl label namespace" in installed.stdout  # NOTES
    manifest = objects(_helm(plane, home, "get", "manifest", RELEASE).stdout)
    assert {kind for kind, _ in manifest} == {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Secret",
                                             "ConfigMap", "Deployment", "Service"}
    for kind, name in manifest:
        scope = [] if kind.startswith("Cluster") else ["-n", NS]
        plane.kubectl("get", kind, name, *scope)  # check=True: present, or the test fails here

    # the Deployment's pod passes "restricted" Pod Security: the ReplicaSet controller creates it
    def pods() -> list[str]:
        return plane.kubectl("get", "pods", "-n", NS, "-o", "name", "-l", f"app.kubernetes.io/name={NAME}").stdout.split()

    wait_until(pods, 60, "the extender's pod created by the real controllers")

    def token() -> str:
        secret = plane.kubectl("get", "secret", f"{NAME}-token", "-n", NS, "-o", "json").stdout
        return json.loads(secret)["data"]["token"]

    before = token()
    _helm(plane, home, "upgrade", RELEASE, str(CHART), "--set", f"name={NAME}", "--set", "policy=spread")
    assert token() == before  # lookup kept the token that kube-scheduler's side may already use
    deploy = json.loads(plane.kubectl("get", "deployment", NAME, "-n", NS, "-o", "json").stdout)
    assert deploy["spec"]["template"]["spec"]["containers"][0]["args"][5:7] == ["--policy", "spread"]

    _helm(plane, home, "uninstall", RELEASE, "--wait")
    wait_until(lambda: _left(plane) == [], 120, f"nothing of the release left (still: {_left(plane)})")
    plane.kubectl("delete", "namespace", NS, "--wait=false")
