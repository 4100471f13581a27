"""A real Kubernetes control plane on loopback for the `realk8s` tests: etcd, kube-apiserver,
kube-controller-manager, kube-scheduler and kwok, built by scripts/build-kubernetes.sh.

Why each choice:
- kube-apiserver as kubeadm runs it: TLS from our own CA, client-certificate auth, `Node,RBAC`,
  admission = the defaults plus NodeRestriction, ServiceAccount tokens signed by a key the
  controller-manager shares (so the TokenRequest API works), and kubeadm's front-proxy flags (the
  aggregator's client certificate and the request-header CA it publishes in kube-system's
  `extension-apiserver-authentication`), so an aggregated API server can be registered (kueue.py). The `plane` fixture sets no feature gate
  beyond the release's defaults: what 1.37 keeps off stays off there. The `gated_plane` fixture is a
  second plane with `GATED` on in every component (gangs, Jobs that ask for one, group claims, pool
  status, gang topology) and the API versions they serve, so the default plane's tests still judge the defaults.
- etcd with `--unsafe-no-fsync`: the plane is thrown away after the session, and fsync on every
  write is most of etcd's cost on a 2-core VM.
- kube-scheduler is restartable with a new KubeSchedulerConfiguration (`set_scheduler_config`),
  because test modules need different extender setups; leader election off everywhere (one
  replica of each, nothing to elect, no lease writes).
- kwok manages only nodes annotated `kwok.x-k8s.io/node: fake` (`add_node`), so nodes a test did
  not mean for kwok stay untouched; its default stages make nodes Ready and pods Running.
Readiness is waited on by condition (`/readyz`, the default ServiceAccount, node Ready), never a sleep.
"""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import yaml

from .pki import FRONT_PROXY_CLIENT, PKI, make_pki
from .procs import DIRS, Proc, free_port, install_cleanup, wait_until

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "scripts" / "build-kubernetes.sh"
BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok")
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
START_TIMEOUT = 90.0
# 1.37's gang and DRA features that are off by default (pkg/features/kube_features.go at v1.37.2), and
# the API versions that serve them (beta and alpha groups are off unless --runtime-config says so)
GATED = {"GenericWorkload": True, "WorkloadWithJob": True, "DRAWorkloadResourceClaims": True,
         "DRAResourcePoolStatus": True, "TopologyAwareWorkloadScheduling": True}  # the last: PodGroup topology
GATED_APIS = ("scheduling.k8s.io/v1beta1", "resource.k8s.io/v1alpha3")


def bin_dir() -> Path:
    """Where build-kubernetes.sh puts (or would put) the binaries."""
    out = subprocess.run(["bash", str(BUILD), "--print-dir"], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def missing_binaries(d: Path) -> list[str]:
    return [b for b in BINARIES if not (d / b).is_file()]


def kubeconfig(server: str, ca: Path, user: dict, name: str = "realk8s", namespace: str | None = None) -> dict:
    """A one-context kubeconfig document."""
    context: dict = {"cluster": name, "user": name}
    if namespace:
        context["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "Config", "current-context": name,
            "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority": str(ca)}}],
            "users": [{"name": name, "user": user}], "contexts": [{"name": name, "context": context}]}


class Plane:
    """The started plane. `kubeconfig` is the admin's (system:masters); `bin` the binaries' directory."""

    def __init__(self, root: Path, bin: Path, gates: dict[str, bool] | None = None,
                 apis: tuple[str, ...] = ()) -> None:
        self.root = root
        self.gates = dict(gates or {})
        self.apis = apis
        self.bin = bin
        self.logs = root / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.pki: PKI = make_pki(root / "pki")
        self.etcd_port, self.etcd_peer, self.port = free_port(), free_port(), free_port()
        self.server = f"https://127.0.0.1:{self.port}"
        self.etcd_url = f"http://127.0.0.1:{self.etcd_port}"
        self.kubeconfigs = {name: self._write_kubeconfig(name) for name in self.pki.clients}
        self.kubeconfig = self.kubeconfigs["admin"]
        self.procs: dict[str, Proc] = {}
        # kube-controller-manager's --controllers; the bench plane drops node lifecycle (bench_plane.py)
        self.controllers = "*,bootstrapsigner,tokencleaner"
        self.scheduler_config: dict = {}
        self.scheduler_port = 0
        self.scheduler_flags: list[str] = []  # more kube-scheduler flags from the next (re)start on (e.g. -v=4)
        self._ssl = ssl.create_default_context(cafile=str(self.pki.ca.cert))
        admin = self.pki.clients["admin"]
        self._ssl.load_cert_chain(str(admin.cert), str(admin.key))

    # --- files --------------------------------------------------------------------------------
    def _write_kubeconfig(self, name: str) -> Path:
        pair = self.pki.clients[name]
        path = self.root / f"{name}.kubeconfig"
        doc = kubeconfig(self.server, self.pki.ca.cert, {"client-certificate": str(pair.cert), "client-key": str(pair.key)})
        path.write_text(yaml.safe_dump(doc))
        return path

    def token_kubeconfig(self, path: Path, token: str, namespace: str | None = None) -> Path:
        """A kubeconfig that authenticates with a bearer token (a ServiceAccount's, see `sa_token`)."""
        path.write_text(yaml.safe_dump(kubeconfig(self.server, self.pki.ca.cert, {"token": token}, namespace=namespace)))
        return path

    def _gate_flags(self) -> list[str]:
        """`--feature-gates` for every component (they must agree: the scheduler and controllers
        decide on their own gates, not the API server's)."""
        if not self.gates:
            return []
        return ["--feature-gates=" + ",".join(f"{k}={str(v).lower()}" for k, v in sorted(self.gates.items()))]

    # --- processes ----------------------------------------------------------------------------
    def start(self) -> Plane:
        """etcd, then kube-apiserver; once it is ready, the controller-manager, scheduler and kwok together."""
        self._start_etcd()
        self.start_apiserver()
        self._start_controller_manager()
        self._start_kwok()
        self.set_scheduler_config({})
        wait_until(lambda: self._get("/api/v1/namespaces/default/serviceaccounts/default") is not None, START_TIMEOUT,
                   "the default ServiceAccount (kube-controller-manager running)")
        return self

    def _spawn(self, name: str, argv: list[str]) -> Proc:
        proc = Proc(name, argv, self.logs)
        self.procs[name] = proc
        return proc

    def _start_etcd(self) -> None:
        peer = f"http://127.0.0.1:{self.etcd_peer}"
        self._spawn("etcd", [str(self.bin / "etcd"), "--name=realk8s", f"--data-dir={self.root / 'etcd'}",
                             f"--listen-client-urls={self.etcd_url}", f"--advertise-client-urls={self.etcd_url}",
                             f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
                             f"--initial-cluster=realk8s={peer}", "--unsafe-no-fsync", "--log-level=warn"])
        wait_until(lambda: self._etcd_healthy(), START_TIMEOUT, "etcd /health", interval=0.05)

    def _etcd_healthy(self) -> bool:
        self._check_alive("etcd")
        try:
            with urllib.request.urlopen(f"{self.etcd_url}/health", timeout=2) as r:
                return json.load(r).get("health") == "true"
        except (OSError, ValueError):
            return False

    def start_apiserver(self) -> None:
        """Start (or restart, same port and flags) kube-apiserver and wait for /readyz."""
        p = self.pki
        self._spawn("kube-apiserver", [
            str(self.bin / "kube-apiserver"), f"--etcd-servers={self.etcd_url}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={self.port}",
            "--endpoint-reconciler-type=none",  # loopback may not be an endpoint; no pod reaches it anyway
            f"--tls-cert-file={p.serving.cert}", f"--tls-private-key-file={p.serving.key}",
            f"--client-ca-file={p.ca.cert}", "--authorization-mode=Node,RBAC",
            "--enable-admission-plugins=NodeRestriction", "--allow-privileged=true",
            "--enable-bootstrap-token-auth=true", "--service-cluster-ip-range=10.96.0.0/12",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={p.sa_pub}", f"--service-account-signing-key-file={p.sa_key}",
            f"--cert-dir={self.root / 'apiserver-certs'}", "--profiling=false", *self._front_proxy_flags(),
            *self._gate_flags(),
            *([f"--runtime-config={','.join(f'{a}=true' for a in self.apis)}"] if self.apis else [])])
        wait_until(lambda: self._ready("kube-apiserver", f"{self.server}/readyz"), START_TIMEOUT, "kube-apiserver /readyz")

    def _front_proxy_flags(self) -> list[str]:
        """kubeadm's: the aggregator proxies as front-proxy-client; aggregated servers trust its headers."""
        p = self.pki
        return [f"--requestheader-client-ca-file={p.front_proxy_ca.cert}",
                f"--requestheader-allowed-names={FRONT_PROXY_CLIENT}", "--requestheader-username-headers=X-Remote-User",
                "--requestheader-group-headers=X-Remote-Group", "--requestheader-extra-headers-prefix=X-Remote-Extra-",
                f"--proxy-client-cert-file={p.front_proxy.cert}", f"--proxy-client-key-file={p.front_proxy.key}"]

    def stop_apiserver(self, sig: int = 15) -> None:
        self.procs.pop("kube-apiserver").stop(sig)

    def _start_controller_manager(self) -> None:
        p, kc = self.pki, self.kubeconfigs["controller-manager"]
        self._spawn("kube-controller-manager", [
            str(self.bin / "kube-controller-manager"), f"--kubeconfig={kc}", "--secure-port=0",
            "--leader-elect=false", "--use-service-account-credentials=true",
            f"--controllers={self.controllers}", f"--root-ca-file={p.ca.cert}",
            f"--service-account-private-key-file={p.sa_key}", f"--cluster-signing-cert-file={p.ca.cert}",
            f"--cluster-signing-key-file={p.ca.key}", "--node-monitor-grace-period=40s", *self._gate_flags()])

    def set_scheduler_config(self, config: dict, client: dict | None = None) -> None:
        """(Re)start kube-scheduler with this KubeSchedulerConfiguration (without `apiVersion`, `kind`,
        `clientConnection` and `leaderElection`, which the plane sets) and wait for its /readyz.
        `client` adds to `clientConnection` (`{"qps": 1000, "burst": 1000}` for the bench: the
        default 50 QPS, not scheduling, is what a plain scheduler is held to otherwise)."""
        self.scheduler_port = self.start_scheduler("kube-scheduler", config, client)
        self.scheduler_config = yaml.safe_load((self.root / "kube-scheduler-config.yaml").read_text())

    def start_scheduler(self, name: str, config: dict, client: dict | None = None) -> int:
        """(Re)start the kube-scheduler process `name` (a second scheduler has its own profile names)
        and wait for its /readyz; returns its secure port."""
        if name in self.procs:
            self.procs.pop(name).stop()
        doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
               **config, "clientConnection": {"kubeconfig": str(self.kubeconfigs["scheduler"]), **(client or {})},
               "leaderElection": {"leaderElect": False}}
        path = self.root / f"{name}-config.yaml"
        path.write_text(yaml.safe_dump(doc))
        port = free_port()
        kc = self.kubeconfigs["scheduler"]
        self._spawn(name, [
            str(self.bin / "kube-scheduler"), f"--config={path}", "--bind-address=127.0.0.1",
            f"--secure-port={port}", f"--authentication-kubeconfig={kc}",
            f"--authorization-kubeconfig={kc}", f"--cert-dir={self.root / (name + '-certs')}", *self._gate_flags(),
            *self.scheduler_flags])
        wait_until(lambda: self._ready(name, f"https://127.0.0.1:{port}/readyz", verify=False),
                   START_TIMEOUT, f"{name} /readyz")
        return port

    def _start_kwok(self) -> None:
        stages = Path(__file__).with_name("kwok-stages.yaml")  # kwokctl's defaults; never ~/.kwok/kwok.yaml
        self._spawn("kwok", [
            str(self.bin / "kwok"), f"--kubeconfig={self.kubeconfig}", f"--config={stages}",
            "--manage-all-nodes=false", f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}=fake",
            "--node-lease-duration-seconds=40", "--cidr=10.0.0.0/16", "--node-ip=10.255.0.1"])

    def stop(self) -> None:
        for name in reversed(list(self.procs)):
            self.procs.pop(name).stop(timeout=5)

    # --- HTTP ---------------------------------------------------------------------------------
    def _check_alive(self, name: str) -> None:
        proc = self.procs.get(name)
        if proc is not None and not proc.alive:
            raise AssertionError(f"{name} exited with {proc.popen.returncode}:\n{proc.tail()}")

    def _ready(self, name: str, url: str, verify: bool = True) -> bool:
        self._check_alive(name)
        ctx = self._ssl if verify else ssl._create_unverified_context()  # noqa: S323 (own self-signed cert)
        try:
            with urllib.request.urlopen(url, timeout=2, context=ctx) as r:
                return r.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def _get(self, path: str) -> dict | None:
        """GET as the admin; None on any failure (for readiness polls)."""
        try:
            with urllib.request.urlopen(f"{self.server}{path}", timeout=5, context=self._ssl) as r:
                return json.load(r)
        except (OSError, ValueError):
            return None

    def metrics(self) -> str:
        """kube-apiserver's /metrics (Prometheus text) as the admin: what it served, by verb and resource."""
        with urllib.request.urlopen(f"{self.server}/metrics", timeout=10, context=self._ssl) as r:
            return r.read().decode()

    def etcd(self, path: str, body: dict) -> dict:
        """POST to etcd's v3 JSON gateway (`/v3/kv/range`, `/v3/kv/compaction`)."""
        req = urllib.request.Request(f"{self.etcd_url}{path}", data=json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)

    def compact_etcd(self) -> int:
        """Compact etcd up to its current revision (physically); returns that revision."""
        rev = int(self.etcd("/v3/kv/range", {"key": "AA==", "limit": 1})["header"]["revision"])
        self.etcd("/v3/kv/compaction", {"revision": rev, "physical": True})
        return rev

    def kubectl(self, *args: str, kubeconfig: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin / "kubectl"), f"--kubeconfig={kubeconfig or self.kubeconfig}", *args],
                              capture_output=True, text=True, check=check, timeout=60)


def cleanup_dir(root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)


def new_plane(prefix: str, gated: bool = False) -> Plane:
    """A Plane, not started yet, in a fresh directory under /tmp named `prefix`...: the default 1.37
    gates, or `GATED` with `GATED_APIS`. Its processes and directory go with `stop_all` (also on
    SIGTERM/SIGINT); the caller checks `missing_binaries(bin_dir())` first."""
    install_cleanup()
    root = Path(tempfile.mkdtemp(prefix=prefix))
    DIRS.append(root)
    return Plane(root, bin_dir(), GATED, GATED_APIS) if gated else Plane(root, bin_dir())
