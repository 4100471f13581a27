"""The kube source's autoscaling rows on the real API server: Karpenter's NodePool and NodeClaim
(Karpenter's own CRDs, v1.15.0, installed on the plane; read only because discovery serves them) and
Cluster Autoscaler's status ConfigMap (read in kube-system by field selector), with the read role
shipped in manifests/ allowing exactly that, and a role without it one line, never fatal.

This is the source's wiring: the objects are written by the test through the API (shaped as in
tests/fixtures/autoscaling, which say where their shapes come from); the real controllers writing
them is test_karpenter_real's and the CA recordings' job.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from kubeview.model.autoscaling.groups import CLUSTER_AUTOSCALER, KARPENTER, WAIT_NEVER, Limit
from kubeview.model.autoscaling.store import CA_STATUS, KARPENTER_NODECLAIM, KARPENTER_NODEPOOL
from kubeview.model.kinds import autoscaling_unavailable

from .access import rbac_documents
from .autoscaling_crds import karpenter_crds
from .live_view import LiveView
from .objects import add_node, api, ensure_namespace, sa_kubeconfig
from .plane import REPO, Plane
from .procs import wait_until

FIXTURES = REPO / "tests" / "fixtures" / "autoscaling"
GROUP, VERSION = "karpenter.sh", "v1"
NODES = {f"as-gpu-{i}": {"karpenter.sh/nodepool": "gpu"} for i in range(2)} | {
    f"as-ca-{i}": {"kwok-nodegroup": "gpu-pool"} for i in range(3)}
RUNS = 3


def fixture(name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((FIXTURES / name).read_text()) if d]


@pytest.fixture(scope="module")
def cluster(plane: Plane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[client.ApiClient]:
    crds = karpenter_crds()
    if isinstance(crds, str):
        pytest.skip(crds)
    d = tmp_path_factory.mktemp("autoscaling")
    (d / "crds.yaml").write_text(yaml.safe_dump_all(crds))
    plane.kubectl("apply", "--server-side", "-f", str(d / "crds.yaml"))
    plane.kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd/nodepools.karpenter.sh",
                  "crd/nodeclaims.karpenter.sh")
    c = api(plane.kubeconfig)
    core, custom = client.CoreV1Api(c), client.CustomObjectsApi(c)
    for name, labels in NODES.items():
        add_node(core, name, {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"}, labels)
    for kind, plural in (("NodePool", "nodepools"), ("NodeClaim", "nodeclaims")):
        for obj in fixture("karpenter.yaml"):
            if obj["kind"] == kind:
                create_with_status(custom, plural, obj)
    ensure_namespace(core, "kube-system")
    (cm,) = fixture("ca-status-yaml.yaml")
    core.create_namespaced_config_map("kube-system", strip(cm))
    try:
        yield c
    finally:
        for name in NODES:
            core.delete_node(name)
        core.delete_namespaced_config_map("cluster-autoscaler-status", "kube-system")
        plane.kubectl("delete", "--wait=false", "-f", str(d / "crds.yaml"), check=False)


def strip(obj: dict) -> dict:
    """The object as a client creates it (no resourceVersion or creation time of the fixture's)."""
    out = copy.deepcopy(obj)
    for key in ("resourceVersion", "creationTimestamp"):
        out["metadata"].pop(key, None)
    return out


def create_with_status(custom: client.CustomObjectsApi, plural: str, obj: dict) -> None:
    """Create, then write its status through the status subresource (as a controller does)."""
    body = strip(obj)
    status = body.pop("status", None)
    made = custom.create_cluster_custom_object(GROUP, VERSION, plural, body)
    if status:
        made["status"] = status
        custom.replace_cluster_custom_object_status(GROUP, VERSION, plural, obj["metadata"]["name"], made)


def view_of(kubeconfig: Path) -> LiveView:
    view = LiveView(kubeconfig, kinds=("Node", "Pod"))
    view.source.events = True  # the autoscalers' words on pods
    return view.start()


def test_nodepools_nodeclaims_and_ca_status_reach_the_model(plane: Plane, cluster: client.ApiClient) -> None:
    view = view_of(plane.kubeconfig)
    try:
        wait_until(lambda: view.read(lambda m: len(m.autoscaling.groups()) == 5), 30, "two NodePools, three CA groups")
        gpu = view.read(lambda m: m.autoscaling.group((KARPENTER, "gpu")))
        assert gpu is not None and gpu.size == 2 and gpu.gpus == 16 and gpu.target == 3
        assert gpu.at_limit == Limit("nvidia.com/gpu", 48, 48)  # status.resources as the fixture wrote it
        assert view.read(lambda m: m.autoscaling.nodes_of((KARPENTER, "gpu"))) == ["as-gpu-0", "as-gpu-1"]
        ca = view.read(lambda m: m.autoscaling.group((CLUSTER_AUTOSCALER, "gpu-pool")))
        assert ca is not None and (ca.size, ca.max_size, ca.target, ca.gpus) == (6, 38, 38, 24)
        assert view.read(lambda m: m.autoscaling.listed) == {KARPENTER_NODEPOOL, KARPENTER_NODECLAIM, CA_STATUS}
        assert view.read(lambda m: autoscaling_unavailable(m.unavailable)) is None
    finally:
        view.stop()


def test_a_status_change_reaches_the_view_each_time(plane: Plane, cluster: client.ApiClient) -> None:
    """The NodePool's status.resources moving, and a pod's Karpenter event, seen live over several runs."""
    custom, core = client.CustomObjectsApi(cluster), client.CoreV1Api(cluster)
    view = view_of(plane.kubeconfig)
    try:
        for run in range(RUNS):
            used = 16 * (run + 1)
            pool = custom.get_cluster_custom_object(GROUP, VERSION, "nodepools", "gpu")
            pool["status"]["resources"]["nvidia.com/gpu"] = str(used)
            custom.replace_cluster_custom_object_status(GROUP, VERSION, "nodepools", "gpu", pool)
            wait_until(lambda u=used: view.read(lambda m: m.autoscaling.group((KARPENTER, "gpu")).limits[1].used == u),
                       30, f"the view's NodePool gpu at {used} GPUs")
            name = f"as-train-{run}"
            pod = core.create_namespaced_pod("default", client.V1Pod(
                metadata=client.V1ObjectMeta(name=name),
                spec=client.V1PodSpec(node_selector={"kubeview.test/none": "x"}, containers=[client.V1Container(
                    name="c", image="x", resources=client.V1ResourceRequirements(requests={"nvidia.com/gpu": "8"},
                                                                                 limits={"nvidia.com/gpu": "8"}))])))
            core.create_namespaced_event("default", karpenter_event(pod))
            want = f"NodePool gpu {'at' if used == 48 else 'near'} its limit nvidia.com/gpu {used}/48"
            wait_until(lambda n=name, w=want: (wait := view.read(lambda m: m.pod_wait(("default", n)))) is not None
                       and wait.words.startswith(w), 30, f"{name} waiting on NodePool gpu ({want})")
            assert view.read(lambda m, n=name: m.pod_wait(("default", n))).state == WAIT_NEVER
            core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
    finally:
        view.stop()


def karpenter_event(pod: client.V1Pod) -> client.CoreV1Event:
    """The Event Karpenter's FailedScheduling is (tests/fixtures/autoscaling/events.yaml), on this pod."""
    (ev,) = [e for e in fixture("events.yaml") if e["involvedObject"]["name"] == "train-0"]
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    ref = client.V1ObjectReference(api_version="v1", kind="Pod", namespace="default", name=pod.metadata.name,
                                   uid=pod.metadata.uid)
    return client.CoreV1Event(metadata=client.V1ObjectMeta(generate_name=f"{pod.metadata.name}."), involved_object=ref,
                              reason=ev["reason"], message=ev["message"], type=ev["type"],
                              source=client.V1EventSource(component="karpenter"), first_timestamp=now,
                              last_timestamp=now, count=1)


@pytest.fixture(scope="module")
def roles(plane: Plane, cluster: client.ApiClient, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: ARG001
    d = tmp_path_factory.mktemp("autoscaling-rbac")
    (d / "rbac.yaml").write_text(rbac_documents(REPO / "manifests" / "render" / "00-namespace-rbac.yaml")
                                 + "---\n" + yaml.safe_dump_all(NARROW))
    plane.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(d / "rbac.yaml"))
    return d


# a read role from before #39: nodes and pods, no ConfigMap, no Karpenter
NARROW = [
    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "old-reader", "namespace": "default"}},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "kubeview-old-read"},
     "rules": [{"apiGroups": [""], "resources": ["nodes", "pods"], "verbs": ["get", "list", "watch"]}]},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "kubeview-old-read"},
     "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kubeview-old-read"},
     "subjects": [{"kind": "ServiceAccount", "name": "old-reader", "namespace": "default"}]},
]


def test_the_shipped_read_role_reads_them(plane: Plane, cluster: client.ApiClient, roles: Path) -> None:
    """kubeview-read lists the CA status by name (resourceNames) and Karpenter's kinds; the authorizer agrees."""
    kc = sa_kubeconfig(plane, client.CoreV1Api(cluster), "kubeview-render", "kubeview", roles / "read.kubeconfig")
    view = view_of(kc)
    try:
        wait_until(lambda: view.read(lambda m: len(m.autoscaling.groups()) == 5), 30, "every group, as kubeview-read")
        assert view.read(lambda m: dict(m.unavailable)) == {}
    finally:
        view.stop()


def test_a_role_without_them_is_one_line_and_the_view_runs(plane: Plane, cluster: client.ApiClient,
                                                           roles: Path) -> None:
    kc = sa_kubeconfig(plane, client.CoreV1Api(cluster), "default", "old-reader", roles / "old.kubeconfig")
    view = view_of(kc)
    try:
        wait_until(lambda: view.read(lambda m: {CA_STATUS, KARPENTER_NODEPOOL, KARPENTER_NODECLAIM}
                                     <= set(m.unavailable)), 30, "the three kinds said unavailable")
        assert view.state() == "live" and view.read(lambda m: len(m.nodes)) >= len(NODES)
        assert view.read(lambda m: m.autoscaling.groups()) == []
        note = view.read(lambda m: autoscaling_unavailable(m.unavailable))
        assert note is not None and note.startswith("node groups are not shown: ") and "\n" not in note
        assert "configmaps" in note and "nodepools.karpenter.sh" in note
    finally:
        view.stop()


def test_fit_says_what_a_node_group_could_add(plane: Plane, cluster: client.ApiClient, tmp_path: Path) -> None:
    """`kubeview fit` on the plane: four 8-GPU pods for gpu-pool's three nodes; the fourth would fit a
    node of gpu-pool, which CA's status says is at its maximum (38 asked for, 38 its max)."""
    manifest = tmp_path / "four.yaml"
    manifest.write_text(yaml.safe_dump({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "four", "namespace": "default"},
        "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "four"}}, "template": {
            "metadata": {"labels": {"app": "four"}},
            "spec": {"nodeSelector": {"kwok-nodegroup": "gpu-pool"}, "containers": [{
                "name": "c", "image": "x", "resources": {"requests": {"nvidia.com/gpu": "8"},
                                                          "limits": {"nvidia.com/gpu": "8"}}}]}}}}))
    out = subprocess.run([sys.executable, "-m", "kubeview", "fit", str(manifest), "--kubeconfig",
                          str(plane.kubeconfig), "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 1, out.stderr
    (unit,) = json.loads(out.stdout)["units"]
    assert unit["autoscaling"] == {
        "unplaced": 1, "words": "would fit a node of gpu-pool, but gpu-pool is at its maximum 38",
        "group": {"autoscaler": "cluster-autoscaler", "name": "gpu-pool"}, "canAdd": 0, "perNode": 1,
        "willCome": False}
    text = subprocess.run([sys.executable, "-m", "kubeview", "fit", str(manifest), "--kubeconfig",
                           str(plane.kubeconfig)], capture_output=True, text=True, timeout=120)
    assert ("  node groups: 1 pod fit no node now; would fit a node of gpu-pool, but gpu-pool is at its "
            "maximum 38\n") in text.stdout, text.stdout
