"""The real Kueue (sigs.k8s.io/kueue v0.17.0, its manager `cmd/kueue`) running against the realk8s plane.

scripts/build-kueue.sh builds the manager and copies the module's CRDs (config/components/crd/bases)
beside it. How it is run here, read from that module's source:
- Configuration (apis/config/v1beta2, a file given with `--config`): leader election off (one
  replica); the health probes on a free loopback port (`/readyz` is ready once the webhook server
  listens: cmd/kueue/main.go setupProbeEndpoints); metrics off (`bindAddress: "0"`); the webhook
  server on a free loopback port; only the `batch/job` integration (the default).
- `--feature-gates=VisibilityOnDemand=false` unless `visibility=True`: the on-demand visibility API (queue
  positions) is an aggregated API server; kueue_visibility.py says how it is made reachable on loopback
  (an ExternalName Service, its own /visibility in a mount namespace) when a test asks for it.
- Certificates: with internal certificate management off, main.go reads the metrics certificate from
  the fixed path /etc/kueue/metrics/certs, so it stays on (the default). Its rotator
  (pkg/util/cert, open-policy-agent/cert-controller) writes a CA and a serving certificate into the
  Secret kueue-system/kueue-webhook-server-cert (created here, empty, as the Deployment's manifests
  do) and waits for the kubelet to mount it into `webhook.certDir`; here `start` plays the kubelet
  and copies the Secret's files there. The rotator also injects its CA into the conversion webhooks of
  the localqueues, clusterqueues, workloads, cohorts and multikueueclusters CRDs and fails unless
  each has one (kustomize's patches add them in a release); `install_crds` adds one whose URL is the
  webhook server on loopback.
- Webhooks: not registered with the API server. Its serving certificate names only
  kueue-webhook-service.kueue-system.svc, which no loopback address answers to, so the API server
  could not call them (nor the conversion webhook: everything here reads v1beta2, the storage
  version, so nothing is converted). Without the Job webhook, which suspends a Job that names a
  LocalQueue, the tests create their Jobs suspended with the `kueue.x-k8s.io/queue-name` label, as
  Kueue's documentation asks of a cluster without it; Kueue's Job reconciler does the rest
  (pkg/controller/jobframework/reconciler.go: creates the Workload, unsuspends the Job on admission).
- `stop` deletes every Job of the test namespaces and every Kueue object while Kueue still runs (its
  finalizers), waits up to 30 s for them without failing, strips the finalizers of what is left before and
  after stopping it, and deletes the CRDs and kueue-system without waiting; `install_crds` waits out an
  earlier module's CRDs (stripping what still holds them after 30 s). In one CI run under load, a 60 s
  wait for the CRDs in teardown timed out and the next module then failed waiting for them.
"""

from __future__ import annotations

import base64
import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import yaml
from kubernetes import client

from . import kueue_visibility
from .objects import api, ensure_namespace, ignoring
from .plane import REPO, Plane
from .procs import Proc, free_port, wait_until

BUILD = REPO / "scripts" / "build-kueue.sh"
BINARY = "kueue"
GROUP, VERSION = "kueue.x-k8s.io", "v1beta2"
NAMESPACE, SECRET = "kueue-system", "kueue-webhook-server-cert"
CONVERTED = ("localqueues", "clusterqueues", "workloads", "cohorts", "multikueueclusters")  # pkg/util/cert
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
POOL = "kubeview.test/pool"  # the label of the kwok nodes the tests' Jobs run on (value "kueue")
FATE = "kubeview.test/fate"  # kwok-stages.yaml: a pod with fate=hold stays Running, fate=succeed finishes
START_TIMEOUT = 90.0
# cluster-scoped first in the order they are deleted: Workloads before the queues they hold
NAMESPACED = ("workloads", "localqueues")
CLUSTER = ("clusterqueues", "resourceflavors", "cohorts")


def bin_dir() -> Path:
    """Where build-kueue.sh puts (or would put) the binary; the CRDs sit in its sibling `crds` folder."""
    out = subprocess.run(["bash", str(BUILD), "--print-dir"], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def missing() -> str | None:
    """What of the build is not there (None: all of it)."""
    d = bin_dir()
    if not (d / BINARY).is_file() or len(list((d.parent / "crds").glob("*.yaml"))) < 11:
        return f"{BINARY} and its CRDs in {d.parent}"
    return None


# --- the objects the tests make -----------------------------------------------------------------------
def flavor(name: str) -> dict:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": {}}


def cluster_queue(name: str, flavor_name: str, gpus: int, cohort: str | None = None) -> dict:
    """`gpus` nvidia.com/gpu nominal (cpu and memory ample) in one flavor, open to every namespace."""
    quotas = [{"name": "cpu", "nominalQuota": "64"}, {"name": "memory", "nominalQuota": "256Gi"},
              {"name": "nvidia.com/gpu", "nominalQuota": str(gpus)}]
    spec: dict = {"namespaceSelector": {}, "resourceGroups": [{
        "coveredResources": [q["name"] for q in quotas], "flavors": [{"name": flavor_name, "resources": quotas}]}]}
    if cohort:
        spec["cohortName"] = cohort
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def local_queue(namespace: str, name: str, cq: str) -> dict:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "LocalQueue",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"clusterQueue": cq}}


def job(namespace: str, name: str, queue: str, gpus: int) -> dict:
    """A Job of one pod asking `gpus` GPUs, submitted to LocalQueue `queue`: created suspended, as the
    Job webhook would leave it. Its pod runs on a kwok node until its fate label says otherwise."""
    res = {"cpu": "100m", "memory": "64Mi", "nvidia.com/gpu": str(gpus)}
    template = {"metadata": {"labels": {FATE: "hold"}},
                "spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 0, "nodeSelector": {POOL: "kueue"},
                         "containers": [{"name": "train", "image": "busybox:1.36",
                                         "resources": {"requests": res, "limits": res}}]}}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": namespace, "labels": {QUEUE_LABEL: queue}},
            "spec": {"suspend": True, "parallelism": 1, "completions": 1, "backoffLimit": 0, "template": template}}


class Kueue:
    """The started manager; `custom` reads and writes its objects, `log_tail()` is for failures."""

    def __init__(self, plane: Plane, namespaces: tuple[str, ...] = (), visibility: bool = False) -> None:
        self.plane = plane
        self.visibility = visibility  # serve the visibility API (queue positions) through the API server
        self.visibility_port = free_port() if visibility else 0
        self.namespaces = namespaces  # the tests' own: their Jobs go in `stop`
        self.bin = bin_dir()
        self.crds = sorted((self.bin.parent / "crds").glob("*.yaml"))
        self.health_port, self.webhook_port = free_port(), free_port()
        self.root = plane.root / "kueue"
        self.certs = self.root / "certs"
        self.api = api(plane.kubeconfig)
        self.custom = client.CustomObjectsApi(self.api)
        self.core = client.CoreV1Api(self.api)
        self.batch = client.BatchV1Api(self.api)
        self.proc: Proc | None = None

    # --- start ------------------------------------------------------------------------------------
    def start(self) -> Kueue:
        self.certs.mkdir(parents=True, exist_ok=True)
        self.install_crds()
        ensure_namespace(self.core, NAMESPACE)
        try:
            self.core.create_namespaced_secret(NAMESPACE, client.V1Secret(metadata=client.V1ObjectMeta(name=SECRET)))
        except client.ApiException as exc:
            if exc.status != 409:
                raise
        config = self.root / "config.yaml"
        config.write_text(yaml.safe_dump({
            "apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", "namespace": NAMESPACE,
            "leaderElection": {"leaderElect": False},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{self.health_port}"},
            "metrics": {"bindAddress": "0"},
            "webhook": {"host": "127.0.0.1", "port": self.webhook_port, "certDir": str(self.certs)},
            "internalCertManagement": {"enable": True},
            "clientConnection": {"qps": 100, "burst": 200},
            "integrations": {"frameworks": ["batch/job"]},
            **(kueue_visibility.config(self.visibility_port) if self.visibility else {})}))
        argv = [str(self.bin / BINARY), f"--config={config}", f"--kubeconfig={self.plane.kubeconfig}",
                f"--feature-gates=VisibilityOnDemand={str(self.visibility).lower()}", "--zap-log-level=2"]
        if self.visibility:
            argv = kueue_visibility.with_visibility_dir(argv, self.root / "root")
        self.proc = Proc("kueue", argv, self.plane.logs, env={"KUBECONFIG": str(self.plane.kubeconfig)})
        self.wait(lambda: self._mount_certs() and self._ready(), START_TIMEOUT, "Kueue's /readyz")
        if self.visibility:
            kueue_visibility.register(self.api, NAMESPACE, self.visibility_port)
            self.wait(lambda: kueue_visibility.available(self.api), START_TIMEOUT, "the visibility APIService Available")
        return self

    def install_crds(self) -> None:
        """The module's CRDs as built, then a conversion webhook on loopback for those the rotator injects
        its CA into (a merge patch: the Workload CRD is 1.4 MB of YAML, not worth parsing here)."""
        if not _settled(lambda: not any(map(self._terminating, self.crds)), 30):
            self._strip_leftovers()  # an earlier module's objects still finalized by a Kueue that is gone
        wait_until(lambda: not any(map(self._terminating, self.crds)), 90, "earlier Kueue CRDs deleted")
        self.plane.kubectl("apply", "--server-side", "--force-conflicts", *(f"--filename={c}" for c in self.crds))
        conversion = json.dumps({"spec": {"conversion": {"strategy": "Webhook", "webhook": {
            "conversionReviewVersions": ["v1"], "clientConfig": {"url": f"https://127.0.0.1:{self.webhook_port}/convert"}}}}})
        for plural in CONVERTED:
            self.plane.kubectl("patch", f"crd/{plural}.{GROUP}", "--type=merge", f"--patch={conversion}")
        self.plane.kubectl("wait", "--for=condition=Established", "--timeout=60s", *(f"crd/{_crd_name(c)}" for c in self.crds))

    def _mount_certs(self) -> bool:
        """The kubelet's part: the Secret's files into the cert dir, once the rotator wrote them."""
        if (self.certs / "tls.key").is_file():
            return True
        data = self.core.read_namespaced_secret(SECRET, NAMESPACE).data or {}
        if not {"tls.crt", "tls.key"} <= set(data):
            return False
        for name, value in data.items():
            tmp = self.certs / f".{name}.tmp"
            tmp.write_bytes(base64.b64decode(value))
            tmp.rename(self.certs / name)  # tls.key last is not needed: the rotator looks for tls.crt
        return True

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
        """wait_until, failing with the end of Kueue's log (and at once if Kueue exited)."""
        def alive_and(pred=predicate):  # noqa: ANN001, ANN202
            if self.proc is not None and not self.proc.alive:
                raise AssertionError(f"Kueue exited with {self.proc.popen.returncode}:\n{self.log_tail()}")
            return pred()
        try:
            return wait_until(alive_and, timeout, what, interval=0.1)
        except AssertionError as exc:
            log = self.proc.log_path if self.proc else "-"
            raise AssertionError(f"{exc}\n--- Kueue's log ({log}), last lines:\n{self.log_tail()}") from None

    # --- its objects ------------------------------------------------------------------------------
    def create(self, obj: dict) -> dict:
        plural = obj["kind"].lower() + "s"
        ns = obj["metadata"].get("namespace")
        if ns:
            return self.custom.create_namespaced_custom_object(GROUP, VERSION, ns, plural, obj)
        return self.custom.create_cluster_custom_object(GROUP, VERSION, plural, obj)

    def get(self, plural: str, name: str, namespace: str | None = None) -> dict:
        if namespace:
            return self.custom.get_namespaced_custom_object(GROUP, VERSION, namespace, plural, name)
        return self.custom.get_cluster_custom_object(GROUP, VERSION, plural, name)

    def items(self, plural: str, namespace: str | None = None) -> list[dict]:
        if namespace:
            return self.custom.list_namespaced_custom_object(GROUP, VERSION, namespace, plural)["items"]
        return self.custom.list_cluster_custom_object(GROUP, VERSION, plural)["items"]

    def workload_of(self, namespace: str, job_name: str) -> dict | None:
        """The Workload Kueue's Job reconciler made for this Job (owned by it), None before."""
        for wl in self.items("workloads", namespace):
            if any(o.get("kind") == "Job" and o.get("name") == job_name for o in wl["metadata"].get("ownerReferences", [])):
                return wl
        return None

    # --- stop -------------------------------------------------------------------------------------
    def stop(self) -> None:
        try:
            if self.visibility:
                kueue_visibility.unregister(self.api, NAMESPACE)
            if self.proc is not None and self.proc.alive:
                for ns in self.namespaces:
                    self.batch.delete_collection_namespaced_job(ns, propagation_policy="Background")
                self._delete_all()
                _settled(lambda: not any(self._all(p) for p in (*NAMESPACED, *CLUSTER)), 30)  # the rest: stripped below
        finally:
            self._strip_leftovers()  # while its conversion webhook may still answer (a busy plane: not all gone)
            if self.proc is not None:
                self.proc.stop()
            self._strip_leftovers()
            # the CRDs go without waiting here: the next module's `install_crds` waits them out (and strips what
            # still holds them); a wait here raised past the test's own error when a busy plane was slow
            self.plane.kubectl("delete", "--ignore-not-found", "--wait=false",
                               *(f"crd/{_crd_name(c)}" for c in self.crds), check=False)
            self.plane.kubectl("delete", "--ignore-not-found", "--wait=false", f"namespace/{NAMESPACE}", check=False)

    def _all(self, plural: str) -> list[dict]:
        try:
            if plural in NAMESPACED:
                return self.custom.list_cluster_custom_object(GROUP, VERSION, plural)["items"]
            return self.items(plural)
        except client.ApiException:
            return []

    def _delete_all(self) -> None:
        for plural in (*NAMESPACED, *CLUSTER):
            for obj in self._all(plural):
                meta = obj["metadata"]
                ignoring(404, self._call("delete", plural, meta))

    def _call(self, verb: str, plural: str, meta: dict, body: dict | None = None):  # noqa: ANN202
        ns = meta.get("namespace")
        if ns:
            fn = getattr(self.custom, f"{verb}_namespaced_custom_object")
            args = (GROUP, VERSION, ns, plural, meta["name"])
        else:
            fn = getattr(self.custom, f"{verb}_cluster_custom_object")
            args = (GROUP, VERSION, plural, meta["name"])
        return lambda: fn(*args, body) if body is not None else fn(*args)

    def _strip_leftovers(self) -> None:
        """What Kueue did not finalize (it died): its objects without their finalizers."""
        for plural in (*NAMESPACED, *CLUSTER):
            for obj in self._all(plural):
                if obj["metadata"].get("finalizers"):
                    ignoring(404, self._call("patch", plural, obj["metadata"], {"metadata": {"finalizers": None}}))


def _settled(predicate, timeout: float) -> bool:  # noqa: ANN001 -- a teardown's wait: never raises
    """`wait_until` that answers whether `predicate` held within `timeout` instead of failing."""
    try:
        wait_until(predicate, timeout, "", interval=0.1)
    except AssertionError:
        return False
    return True


def _crd_name(path: Path) -> str:
    """kueue.x-k8s.io_workloads.yaml -> workloads.kueue.x-k8s.io"""
    group, plural = path.stem.split("_", 1)
    return f"{plural}.{group}"


def dump(objects: list[dict]) -> str:
    """JSON as the API server answered (for recordings)."""
    return json.dumps(objects, indent=1, sort_keys=True) + "\n"
