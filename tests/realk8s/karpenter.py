"""The real Karpenter (v1.15.0, its kwok cloud provider) running against the realk8s plane.

scripts/build-karpenter.sh builds sigs.k8s.io/karpenter's `kwok/` main package and copies the CRDs
beside it. How it is run here, read from that module's source:
- "Launching an instance" is the kwok provider creating a Node annotated `kwok.x-k8s.io/node: fake`
  (kwok/cloudprovider/cloudprovider.go); the plane's kwok manages exactly such nodes
  (`--manage-nodes-with-annotation-selector`), makes them Ready, and Karpenter then registers and
  initializes the NodeClaim as it would on a cloud.
- CRDs: NodePool and NodeClaim as the kwok chart ships them (kwok/charts/crds), KWOKNodeClass
  (kwok/apis/crds). That CRD defaults a new KWOKNodeClass's status to Ready, so no controller has to
  write it; the NodePool's NodeClassReady and Ready are Karpenter's own.
- Instance types: `INSTANCE_TYPES_FILE_PATH` (kwok/options). The built-in list has no GPUs; an
  instance type's `resources` is a ResourceList, so `nvidia.com/gpu` in it is capacity Karpenter
  filters by and counts against a NodePool's limits like cpu (`GPU_INSTANCE`).
- One quirk of the kwok provider shapes the tests: the Node it creates has capacity = the NodeClaim's
  requests (the pods Karpenter packed onto it), not the instance type's. A NodePool's
  status.resources (summed node capacity) equals the instance types' only when each node's pods ask
  for all of it, so the tests' pods ask for a whole 8-GPU node each.
- Options (pkg/operator/options): the admin's KUBECONFIG; DISABLE_LEADER_ELECTION (one replica);
  METRICS_PORT and HEALTH_PROBE_PORT on free ports (Karpenter binds them on every interface; there is
  no address option); LOG_LEVEL=debug into the plane's log folder. v1.15 serves no webhooks and needs
  no cluster name; feature gates stay at their defaults.
- Ready is /readyz on the health port (caches synced, NodePool and NodeClaim served). `stop` deletes
  every NodePool and waits for their NodeClaims and Nodes to go while Karpenter still runs (its
  termination finalizers), then stops it and removes the CRDs, so later tests find the plane as it was.
"""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

from kubernetes import client

from .objects import api
from .plane import REPO, Plane
from .procs import Proc, free_port, wait_until

BUILD = REPO / "scripts" / "build-karpenter.sh"
BINARY = "karpenter-kwok"
GROUP, VERSION = "karpenter.sh", "v1"
NODECLASS = "kubeview-realk8s"
TAINT = "kubeview.test/karpenter"  # on every node the tests' NodePools make: no other test's pod lands there
START_TIMEOUT = 60.0
GPU_INSTANCE = {
    "name": "gpu-8x-amd64-linux", "architecture": "amd64", "operatingSystems": ["linux"],
    "resources": {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8", "pods": "110"},
    "offerings": [{"Price": 24.0, "Available": True, "Requirements": [
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["test-zone-a"]}]}],
}


def bin_dir() -> Path:
    """Where build-karpenter.sh puts (or would put) the binary; the CRDs sit in its sibling `crds` folder."""
    out = subprocess.run(["bash", str(BUILD), "--print-dir"], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def missing() -> str | None:
    """What of the build is not there (None: all of it)."""
    d = bin_dir()
    crds = sorted((d.parent / "crds").glob("*.yaml"))
    if not (d / BINARY).is_file() or len(crds) < 3:
        return f"{BINARY} and its CRDs in {d.parent}"
    return None


def nodepool(name: str, limits: dict[str, str]) -> dict:
    """A NodePool on the GPU instance type, tainted TAINT, that never consolidates or expires."""
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "NodePool", "metadata": {"name": name},
            "spec": {"limits": limits,
                     "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "Never"},
                     "template": {"spec": {
                         "expireAfter": "Never",
                         "taints": [{"key": TAINT, "value": name, "effect": "NoSchedule"}],
                         "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In",
                                           "values": ["on-demand"]}],
                         "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": NODECLASS}}}}}


def gpu_pod(name: str, namespace: str, pool: str, gpus: int) -> client.V1Pod:
    """A pod only `pool`'s nodes can take (its label, its taint), asking for `gpus` GPUs."""
    requests = {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": str(gpus)}
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, namespace=namespace, labels={"kubeview.test/pool": pool}),
        spec=client.V1PodSpec(
            node_selector={"karpenter.sh/nodepool": pool}, termination_grace_period_seconds=0,
            tolerations=[client.V1Toleration(key=TAINT, operator="Exists", effect="NoSchedule")],
            containers=[client.V1Container(name="train", image="busybox:1.36", resources=client.V1ResourceRequirements(
                requests=requests, limits={"nvidia.com/gpu": str(gpus)}))]))


class Karpenter:
    """The started controller; `custom` reads and writes its objects, `log_tail()` is for failures."""

    def __init__(self, plane: Plane) -> None:
        self.plane = plane
        self.bin = bin_dir()
        self.crds = sorted((self.bin.parent / "crds").glob("*.yaml"))
        self.health_port, self.metrics_port = free_port(), free_port()
        self.api = api(plane.kubeconfig)
        self.custom = client.CustomObjectsApi(self.api)
        self.core = client.CoreV1Api(self.api)
        self.proc: Proc | None = None

    def start(self) -> Karpenter:
        # an earlier module's copy of these CRDs (test_autoscaling_source's) may still be going away
        wait_until(lambda: not any(map(self._terminating, self.crds)), 60, "earlier Karpenter CRDs deleted")
        self.plane.kubectl("apply", "--server-side", "--force-conflicts", *(f"--filename={c}" for c in self.crds))
        self.plane.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                           *(f"crd/{_crd_name(c)}" for c in self.crds))
        self.custom.create_cluster_custom_object("karpenter.kwok.sh", "v1alpha1", "kwoknodeclasses", {
            "apiVersion": "karpenter.kwok.sh/v1alpha1", "kind": "KWOKNodeClass", "metadata": {"name": NODECLASS}})
        types = self.plane.root / "karpenter-instance-types.json"
        types.write_text(json.dumps([GPU_INSTANCE]))
        self.proc = Proc("karpenter", [str(self.bin / BINARY)], self.plane.logs, env={
            "KUBECONFIG": str(self.plane.kubeconfig), "DISABLE_LEADER_ELECTION": "true",
            "METRICS_PORT": str(self.metrics_port), "HEALTH_PROBE_PORT": str(self.health_port),
            "INSTANCE_TYPES_FILE_PATH": str(types), "LOG_LEVEL": "debug"})
        self.wait(self._ready, START_TIMEOUT, "Karpenter's /readyz")
        return self

    def _terminating(self, crd: Path) -> bool:
        try:
            found = client.ApiextensionsV1Api(self.api).read_custom_resource_definition(_crd_name(crd))
        except client.ApiException as exc:
            if exc.status == 404:
                return False
            raise
        return found.metadata.deletion_timestamp is not None

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.health_port}/readyz", timeout=2) as r:
                return r.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def log_tail(self, lines: int = 40) -> str:
        return self.proc.tail(lines) if self.proc else ""

    def wait(self, predicate, timeout: float, what: str):  # noqa: ANN001, ANN201 -- procs.wait_until's
        """wait_until, failing with the end of Karpenter's log (and at once if Karpenter exited)."""
        def alive_and(pred=predicate):  # noqa: ANN001, ANN202
            if self.proc is not None and not self.proc.alive:
                raise AssertionError(f"Karpenter exited with {self.proc.popen.returncode}:\n{self.log_tail()}")
            return pred()
        try:
            return wait_until(alive_and, timeout, what, interval=0.2)
        except AssertionError as exc:
            log = self.proc.log_path if self.proc else "-"
            raise AssertionError(f"{exc}\n--- Karpenter's log ({log}), last lines:\n{self.log_tail()}") from None

    # --- its objects ------------------------------------------------------------------------------
    def nodepools(self) -> list[dict]:
        return self.custom.list_cluster_custom_object(GROUP, VERSION, "nodepools")["items"]

    def nodepool(self, name: str) -> dict:
        return self.custom.get_cluster_custom_object(GROUP, VERSION, "nodepools", name)

    def nodeclaims(self, pool: str | None = None) -> list[dict]:
        selector = f"karpenter.sh/nodepool={pool}" if pool else ""
        return self.custom.list_cluster_custom_object(GROUP, VERSION, "nodeclaims", label_selector=selector)["items"]

    def nodes(self, pool: str | None = None) -> list[client.V1Node]:
        return self.core.list_node(label_selector=f"karpenter.sh/nodepool={pool}" if pool else "karpenter.sh/nodepool").items

    def delete_pools(self, names: list[str], wait: bool = True, timeout: float = 60) -> None:
        """Delete these NodePools; with `wait`, until their NodeClaims and Nodes are gone too (Karpenter
        drains and finalizes them)."""
        for name in names:
            _ignore_404(self.custom.delete_cluster_custom_object, GROUP, VERSION, "nodepools", name)
        if wait:
            self.wait_gone(names, timeout)

    def wait_gone(self, names: list[str], timeout: float = 60) -> None:
        self.wait(lambda: not any(self.nodeclaims(n) or self.nodes(n) for n in names), timeout,
                  f"the NodeClaims and Nodes of {names} gone")

    def stop(self) -> None:
        try:
            if self.proc is not None and self.proc.alive:
                self.delete_pools([p["metadata"]["name"] for p in self.nodepools()])
        finally:
            if self.proc is not None:
                self.proc.stop()
            self._strip_leftovers()
            self.plane.kubectl("delete", "--ignore-not-found", "--timeout=60s",  # gone before the next module
                               *(f"crd/{_crd_name(c)}" for c in self.crds), check=False)

    def _strip_leftovers(self) -> None:
        """What Karpenter did not finalize (it died): NodeClaims and Nodes without their finalizers."""
        unfinalize = {"metadata": {"finalizers": None}}
        try:
            claims = [c["metadata"]["name"] for c in self.nodeclaims()]
        except client.ApiException:
            claims = []
        for name in claims:
            _ignore_404(self.custom.patch_cluster_custom_object, GROUP, VERSION, "nodeclaims", name, unfinalize)
        for node in self.nodes():
            _ignore_404(self.core.patch_node, node.metadata.name, unfinalize)
            _ignore_404(self.core.delete_node, node.metadata.name)


def _ignore_404(call, *args) -> None:  # noqa: ANN001
    try:
        call(*args)
    except client.ApiException as exc:
        if exc.status != 404:
            raise


def _crd_name(path: Path) -> str:
    """karpenter.sh_nodepools.yaml -> nodepools.karpenter.sh"""
    group, plural = path.stem.split("_", 1)
    return f"{plural}.{group}"
