"""kubeview starts and shows the right thing on the Kubernetes versions users still run (issue #36).

Each `skew` (and `next`) version of .ci/kubernetes-versions is a plane of its own: kube-apiserver and
kube-controller-manager of that version (scripts/build-kubernetes.sh --skew), with the default
build's etcd (the storage every version speaks the same v3 API to) and kwok (to make nodes Ready and
pods Running: a client of the API, not part of the version under test). No scheduler: the pods are bound by `spec.nodeName`, which every version
accepts, so the figures are known by construction: two GPU nodes (8 + 4 GPUs), pods holding 2 + 1
GPUs and 3 cpu. Then `kubeview snapshot --json` as an operator runs it: exit 0, nothing on stderr
that looks like a traceback, the figures exact, the server's version named, and what it does not
serve named once (the title, which is the header's first words, and `cluster.kubernetes`).

The default plane (1.37.2) and the gated one (1.37.2 with the gang gates) are checked the same way:
the gang API is named missing on the first and not on the second (docs/versions.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from tui.tui_helpers import kube_app_on, run_async, wait_for

from kubeview.tui.widgets.cluster_header import ClusterHeader

from .objects import add_node, api, ensure_namespace, wait_nodes_ready
from .plane import BUILD, REPO, Plane, bin_dir, cleanup_dir
from .procs import DIRS, install_cleanup, wait_until

VERSIONS = REPO / ".ci" / "kubernetes-versions"
SKEW_BINARIES = ("kube-apiserver", "kube-controller-manager")
NAMESPACE = "skew"


def versions(*roles: str) -> list[str]:
    rows = [line.split() for line in VERSIONS.read_text().splitlines() if line.strip() and not line.startswith("#")]
    return [row[1] for row in rows if row[0] in roles]


def skew_dir(version: str) -> Path:
    out = subprocess.run(["bash", str(BUILD), "--skew", "--version", version, "--print-dir"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


class SkewPlane(Plane):
    """kube-apiserver and kube-controller-manager of one version; etcd and kwok from the default build."""

    def __init__(self, root: Path, bin: Path, tools: Path) -> None:
        super().__init__(root, bin)
        self.tools = tools

    def start(self) -> Plane:
        bin_, self.bin = self.bin, self.tools
        try:
            self._start_etcd()
        finally:
            self.bin = bin_
        self.start_apiserver()
        self._start_controller_manager()
        self._start_kwok()
        wait_until(lambda: self._get("/api/v1/namespaces/default/serviceaccounts/default") is not None, 90.0,
                   "the default ServiceAccount (kube-controller-manager running)")
        return self

    def _start_kwok(self) -> None:
        bin_, self.bin = self.bin, self.tools
        try:
            super()._start_kwok()
        finally:
            self.bin = bin_


@pytest.fixture(scope="module", params=versions("skew", "next"))
def skew_plane(request: pytest.FixtureRequest) -> Iterator[Plane]:
    version: str = request.param
    d = skew_dir(version)
    refused = d.parent / "refused.txt"
    if refused.is_file():  # the module proxy does not serve what this version needs (a pre-release)
        pytest.skip(f"{version}: {refused.read_text().strip()}")
    missing = [b for b in SKEW_BINARIES if not (d / b).is_file()]
    if missing and version in versions("next"):  # a pre-release: built where it can be, never required
        pytest.skip(f"{version} (the coming release) is not built: `build-kubernetes.sh --skew --version {version}` "
                    "failed or was not run (CI's log has its line)")
    if missing:
        pytest.skip(f"realk8s: no {', '.join(missing)} of {version} in {d}; build them with "
                    f"`bash scripts/build-kubernetes.sh --skew --version {version}`")
    install_cleanup()
    root = Path(tempfile.mkdtemp(prefix=f"kubeview-realk8s-skew-{version}-"))
    DIRS.append(root)
    p = SkewPlane(root, d, bin_dir())
    try:
        p.start()
        yield p
    finally:
        p.stop()
        cleanup_dir(root)


def _fill(plane: Plane) -> None:
    core = client.CoreV1Api(api(plane.kubeconfig))
    add_node(core, "skew-a", {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "8"})
    add_node(core, "skew-b", {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "4"})
    wait_nodes_ready(core, ["skew-a", "skew-b"])
    ensure_namespace(core, NAMESPACE)
    for name, node, gpus, cpu in (("two", "skew-a", "2", "2"), ("one", "skew-b", "1", "1")):
        limits = {"nvidia.com/gpu": gpus}
        container = client.V1Container(name="c", image="busybox",
                                       resources=client.V1ResourceRequirements(requests={"cpu": cpu, **limits},
                                                                               limits=limits))
        core.create_namespaced_pod(NAMESPACE, client.V1Pod(
            metadata=client.V1ObjectMeta(name=name), spec=client.V1PodSpec(node_name=node, containers=[container])))
    wait_until(lambda: all(p.status.phase == "Running" for p in core.list_namespaced_pod(NAMESPACE).items), 60,
               "the bound pods Running (kwok)")


def _snapshot(plane: Plane) -> dict:
    out = subprocess.run([sys.executable, "-m", "kubeview", "snapshot", "--json", "--kubeconfig", str(plane.kubeconfig)],
                         capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    return json.loads(out.stdout)


def _header(plane: Plane) -> str:
    """The TUI's first header line on this plane, once its lists are in."""
    line: list[str] = []

    @run_async
    async def drive() -> None:
        async with kube_app_on("1", str(plane.kubeconfig), (200, 40)) as pilot:
            header = pilot.app.screen.query_one(ClusterHeader)
            await wait_for(pilot, lambda: "2 nodes" in header._line1(header.summary).plain, what="the header")
            line.append(header._line1(header.summary).plain)

    drive()
    return line[0]


def _server_version(plane: Plane) -> str:
    doc = plane._get("/version")
    assert doc is not None
    return doc["gitVersion"]


def test_start_and_snapshot_on_an_older_version(skew_plane: Plane) -> None:
    """Exact figures on 1.35/1.36 (and 1.38 where it builds), the version in the title and the
    snapshot, the gang API named missing once (no version so far serves it by default)."""
    _fill(skew_plane)
    doc = _snapshot(skew_plane)
    cluster = doc["cluster"]
    version = _server_version(skew_plane)
    assert cluster["kubernetes"]["version"] == version
    assert set(cluster["kubernetes"]["notServed"]) == {"gang API"}  # DRA: resource.k8s.io/v1 since 1.34
    nodes = {n["name"]: n for n in doc["nodes"]}
    assert set(nodes) == {"skew-a", "skew-b"}
    gpu = cluster["totals"]["nvidia.com/gpu"]
    assert (gpu["allocatable"], gpu["requested"]) == (12, 3)
    assert cluster["totals"]["cpu"]["requested"] == 3000
    assert cluster["pods"] == 2 and cluster["pendingPods"] == 0
    assert doc["gangs"] == []
    line = _header(skew_plane)
    assert f"({version}, no gang API) │" in line and line.count("gang API") == 1, line
    assert "2 nodes" in line and "0 pending" in line, line


def test_default_plane_names_its_version_and_the_gang_api_it_keeps_off(plane: Plane) -> None:
    cluster = _snapshot(plane)["cluster"]
    assert cluster["kubernetes"]["version"] == _server_version(plane) == versions("default")[0]
    assert "gang API" in cluster["kubernetes"]["notServed"]
    assert "DRA" not in cluster["kubernetes"]["notServed"]


def test_a_second_scheduler_of_another_version_is_said(plane: Plane) -> None:
    """The shipped second-scheduler Deployment (manifests/scheduler/second-scheduler), its image set to
    each version in turn: one minor older is allowed during an upgrade, newer is not, the plane's own
    says nothing. Replicas 0: only the object is read, no scheduler runs."""
    shipped = yaml.safe_load_all((REPO / "manifests" / "scheduler" / "second-scheduler" / "kubeview-scheduler.yaml")
                                 .read_text())
    deployment = next(d for d in shipped if d and d.get("kind") == "Deployment")
    namespace = deployment["metadata"]["namespace"]
    core, apps = client.CoreV1Api(api(plane.kubeconfig)), client.AppsV1Api(api(plane.kubeconfig))
    ensure_namespace(core, namespace)
    deployment["spec"]["replicas"] = 0
    server = _server_version(plane)
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"].endswith(f":{server}")  # as shipped
    apps.create_namespaced_deployment(namespace, deployment)
    name = deployment["metadata"]["name"]
    try:
        assert _snapshot(plane)["cluster"]["kubernetes"]["schedulerSkew"] == []
        minor = int(server.split(".")[1])
        for tag, verdict in ((f"v1.{minor - 1}.3", "allowed during an upgrade"),
                             (f"v1.{minor + 1}.0", "newer than the API server: not supported"),
                             (f"v1.{minor - 2}.4", "more than one minor older")):
            apps.patch_namespaced_deployment(name, namespace, {"spec": {"template": {"spec": {"containers": [
                {"name": "kube-scheduler", "image": f"registry.k8s.io/kube-scheduler:{tag}"}]}}}})
            skew = _snapshot(plane)["cluster"]["kubernetes"]["schedulerSkew"]
            assert len(skew) == 1 and f"Deployment {namespace}/{name} runs" in skew[0] and verdict in skew[0], skew
    finally:
        apps.delete_namespaced_deployment(name, namespace)


def test_gated_plane_serves_the_gang_api(gated_plane: Plane) -> None:
    cluster = _snapshot(gated_plane)["cluster"]
    assert cluster["kubernetes"]["notServed"] == {}
