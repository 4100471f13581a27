"""The shipped RBAC (manifests/) on a real API server: each ServiceAccount does its job and nothing
more (issue #25 3e; issue #24 item 0).

The test API server does not enforce RBAC, so only the real plane can say whether a role is enough.
What kubeview reads comes from its own kind tables (access.source_reads), so a kind added to the
source without a rule fails here. The read role's missing `resource.k8s.io` rules (#24 item 0) make
`test_read_account_*` fail until that fix is merged.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kubernetes import client

from kubeview.cluster.kube import source as kube
from kubeview.commands.extender import WATCHED

from .access import Ask, allowed, rbac_documents, source_reads
from .objects import add_node, api, sa_kubeconfig, wait_nodes_ready
from .plane import REPO, Plane
from .procs import wait_until

RENDER_NS, READ_SA = "kubeview-render", "kubeview"
SYSTEM_NS, EXTENDER_SA, SCHEDULER_SA = "kubeview-system", "kubeview-extender", "kubeview-scheduler"
MANIFESTS = [REPO / "manifests" / "render" / "00-namespace-rbac.yaml",
             REPO / "manifests" / "scheduler" / "00-namespace-rbac.yaml",
             REPO / "manifests" / "scheduler" / "second-scheduler" / "kubeview-scheduler.yaml"]


@pytest.fixture(scope="module")
def core(plane: Plane) -> client.CoreV1Api:
    return client.CoreV1Api(api(plane.kubeconfig))


@pytest.fixture(scope="module")
def authz(plane: Plane) -> client.AuthorizationV1Api:
    return client.AuthorizationV1Api(api(plane.kubeconfig))


@pytest.fixture(scope="module")
def applied(plane: Plane, core: client.CoreV1Api, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("rbac")
    (d / "rbac.yaml").write_text(rbac_documents(*MANIFESTS))
    plane.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(d / "rbac.yaml"))
    add_node(core, "rbac-node", {"cpu": "4", "memory": "8Gi", "pods": "110"})
    wait_nodes_ready(core, ["rbac-node"])
    return d


def _denied(authz, ns: str, sa: str, asks: list[Ask]) -> list[str]:
    return [str(a) for a in asks if not allowed(authz, ns, sa, a)]


def _granted(authz, ns: str, sa: str, asks: list[Ask]) -> list[str]:
    return [str(a) for a in asks if allowed(authz, ns, sa, a)]


# what no kubeview identity may ever do
NEVER = [Ask("get", "secrets"), Ask("list", "secrets"), Ask("list", "secrets", namespace="kube-system"),
         Ask("create", "pods", namespace="default"), Ask("delete", "pods", namespace="default"),
         Ask("update", "pods/status", namespace="default"), Ask("create", "pods/eviction", namespace="default"),
         Ask("patch", "nodes"), Ask("delete", "nodes"), Ask("update", "nodes/status"),
         Ask("create", "clusterrolebindings", "rbac.authorization.k8s.io"),
         Ask("escalate", "clusterroles", "rbac.authorization.k8s.io"),
         Ask("create", "serviceaccounts/token", namespace="kube-system"),
         Ask("create", "resourceclaims", "resource.k8s.io", namespace="default")]


def test_read_account_may_read_what_kubeview_reads(authz, applied) -> None:  # noqa: ARG001
    """Every list and watch of the TUI's source (the kinds, Events, DRA) cluster-wide."""
    asks = source_reads((*kube.KINDS, "Event"))
    assert _denied(authz, RENDER_NS, READ_SA, asks) == [], "kubeview-read lacks what kubeview reads"


def test_read_account_may_read_the_autoscalers(authz, applied) -> None:  # noqa: ARG001
    """Karpenter's kinds cluster-wide, and CA's status ConfigMap by its name only (kube/autoscaling.py)."""
    asks = [Ask(v, p, "karpenter.sh") for p in ("nodepools", "nodeclaims") for v in ("list", "watch")]
    asks += [Ask(v, "configmaps", "", "kube-system", "cluster-autoscaler-status") for v in ("get", "list", "watch")]
    assert _denied(authz, RENDER_NS, READ_SA, asks) == []
    others = [Ask("list", "configmaps", "", "kube-system"), Ask("get", "configmaps", "", "kube-system", "kubeadm-config"),
              Ask("create", "nodepools", "karpenter.sh"), Ask("patch", "nodeclaims", "karpenter.sh")]
    assert _granted(authz, RENDER_NS, READ_SA, others) == []


def test_read_account_snapshot_succeeds(plane: Plane, core, applied: Path) -> None:
    """`kubeview snapshot --json` as the read ServiceAccount (token from the TokenRequest API)."""
    kc = sa_kubeconfig(plane, core, RENDER_NS, READ_SA, applied / "read.kubeconfig")
    out = subprocess.run([sys.executable, "-m", "kubeview", "snapshot", "--json", "--kubeconfig", str(kc)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert "rbac-node" in json.dumps(doc["nodes"])


def test_read_account_scales_only_in_its_namespace(authz, applied) -> None:  # noqa: ARG001
    ns = RENDER_NS
    mine = [Ask("patch", f"{r}/scale", "apps", ns) for r in ("deployments", "replicasets", "statefulsets")]
    mine += [Ask("get", "deployments/scale", "apps", ns), Ask("patch", "jobs", "batch", ns)]
    assert _denied(authz, ns, READ_SA, mine) == []
    others = [Ask("patch", "deployments/scale", "apps", "default"), Ask("patch", "jobs", "batch", "default"),
              Ask("patch", "deployments", "apps", ns, "not-the-producer"),
              Ask("create", "configmaps", "", ns, "not-render-scene"), Ask("get", "secrets", "", ns, "render-token"),
              Ask("get", "services/proxy", "", ns, "http:other:80")]
    assert _granted(authz, ns, READ_SA, others + NEVER) == []


def test_extender_account_has_exactly_its_job(authz, applied) -> None:  # noqa: ARG001
    """Reads nodes, pods and the DRA kinds; nothing else, not even Bindings, which kube-scheduler posts
    with the shipped configuration (it ran as this account in test_extender_real_scheduler)."""
    needs = source_reads(WATCHED) + [Ask("get", "pods", namespace="default"), Ask("get", "nodes")]
    assert _denied(authz, SYSTEM_NS, EXTENDER_SA, needs) == []
    beyond = [Ask("create", "pods/binding", namespace="default"),
              Ask("list", "events"), Ask("list", "deployments", "apps"), Ask("patch", "pods", namespace="default"),
              Ask("patch", "deployments/scale", "apps", "default"), Ask("patch", "jobs", "batch", "default")]
    assert _granted(authz, SYSTEM_NS, EXTENDER_SA, beyond + NEVER) == []


def test_second_scheduler_account(authz, applied) -> None:  # noqa: ARG001
    """kube-scheduler's roles plus its own lease in kubeview-system, and not the default scheduler's lease."""
    needs = [Ask("create", "pods/binding", namespace="default"), Ask("list", "pods"), Ask("watch", "nodes"),
             Ask("create", "leases", "coordination.k8s.io", SYSTEM_NS),
             Ask("update", "leases", "coordination.k8s.io", SYSTEM_NS, "kubeview-scheduler"),
             Ask("get", "configmaps", "", "kube-system", "extension-apiserver-authentication")]
    assert _denied(authz, SYSTEM_NS, SCHEDULER_SA, needs) == []
    beyond = [Ask("update", "leases", "coordination.k8s.io", SYSTEM_NS, "someone-else"), Ask("get", "secrets")]
    assert _granted(authz, SYSTEM_NS, SCHEDULER_SA, beyond) == []


def _deployment(name: str) -> client.V1Deployment:
    labels = {"app": name}
    pod = client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels=labels),
                                   spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="x")]))
    return client.V1Deployment(metadata=client.V1ObjectMeta(name=name),
                               spec=client.V1DeploymentSpec(replicas=0, selector=client.V1LabelSelector(match_labels=labels),
                                                            template=pod))


def _job(name: str) -> client.V1Job:
    pod = client.V1PodTemplateSpec(spec=client.V1PodSpec(restart_policy="Never",
                                                         containers=[client.V1Container(name="c", image="x")]))
    return client.V1Job(metadata=client.V1ObjectMeta(name=name),
                        spec=client.V1JobSpec(suspend=True, parallelism=1, template=pod))


def test_read_account_scales_and_patches_jobs_through_kubeview(plane: Plane, core, applied: Path) -> None:
    """kubeview's own actions (KubeSource.scale, set_parallelism) as the read ServiceAccount: done in
    its namespace, refused with one sentence elsewhere."""
    from kubeview.cluster.kube.source import KubeSource
    from kubeview.cluster.source import ActionError

    apps, batch = client.AppsV1Api(core.api_client), client.BatchV1Api(core.api_client)
    for ns in (RENDER_NS, "default"):
        apps.create_namespaced_deployment(ns, _deployment("rbac-work"))
        batch.create_namespaced_job(ns, _job("rbac-job"))
    kc = sa_kubeconfig(plane, core, RENDER_NS, READ_SA, applied / "actions.kubeconfig")
    source = KubeSource(kubeconfig=str(kc))
    try:
        assert "scaled to 2" in source.scale("Deployment", RENDER_NS, "rbac-work", 2)
        assert apps.read_namespaced_deployment("rbac-work", RENDER_NS).spec.replicas == 2
        assert "parallelism set to 3" in source.set_parallelism(RENDER_NS, "rbac-job", 3)
        with pytest.raises(ActionError, match="forbidden"):
            source.scale("Deployment", "default", "rbac-work", 2)
        with pytest.raises(ActionError, match="forbidden"):
            source.set_parallelism("default", "rbac-job", 3)
    finally:
        source.close()


def test_plan_role_evicts_and_nominates_only_once_bound(plane: Plane, authz, applied) -> None:  # noqa: ARG001
    """`kubeview plan` reads PodDisruptionBudgets with the read role; applying a plan takes the shipped
    but unbound ClusterRole `kubeview-plan`: the read account cannot evict, an account bound to it can
    evict and nominate in any namespace, and nothing more (no delete, no pod writes beyond status)."""
    budgets = [Ask("list", "poddisruptionbudgets", "policy"), Ask("watch", "poddisruptionbudgets", "policy")]
    assert _denied(authz, RENDER_NS, READ_SA, budgets) == []
    apply = [Ask("create", "pods/eviction", namespace="default"), Ask("patch", "pods/status", namespace="team-a")]
    assert _granted(authz, RENDER_NS, READ_SA, apply) == []
    plane.kubectl("create", "serviceaccount", "planner", "-n", RENDER_NS, check=False)
    plane.kubectl("create", "clusterrolebinding", "kubeview-plan-planner", "--clusterrole=kubeview-plan",
                  f"--serviceaccount={RENDER_NS}:planner")
    try:
        # the API server's RBAC authorizer reads bindings from its informer: wait until it has this one
        # (under load it answered the first review before the binding arrived), then check all of it
        wait_until(lambda: _denied(authz, RENDER_NS, "planner", apply[:1]) == [], 30,
                   "the API server's authorizer has the new ClusterRoleBinding")
        assert _denied(authz, RENDER_NS, "planner", apply) == []
        more = [Ask("delete", "pods", namespace="default"), Ask("update", "pods", namespace="default"),
                Ask("create", "pods", namespace="default"), Ask("get", "secrets", namespace="default")]
        assert _granted(authz, RENDER_NS, "planner", more) == []
    finally:
        plane.kubectl("delete", "clusterrolebinding", "kubeview-plan-planner", check=False)
        plane.kubectl("delete", "serviceaccount", "planner", "-n", RENDER_NS, check=False)
