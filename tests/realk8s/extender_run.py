"""`kubeview extender` as a real process beside the real kube-scheduler, and the 1-1-2 GPU story.

The extender runs as its shipped ServiceAccount (manifests/scheduler/00-namespace-rbac.yaml, token
from the TokenRequest API), so these runs also prove that role is enough for what it does. The
scheduler configuration is the shipped one (manifests/scheduler/default-scheduler), with only the
URL, the kubeconfig and leader election changed (and `nodeCacheCapable` per test).
"""

from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from kubernetes import client

from .objects import add_node, ensure_namespace, sa_kubeconfig, wait_nodes_ready
from .plane import REPO, Plane
from .procs import Proc, free_port, wait_until

SHIPPED_CONFIG = REPO / "manifests" / "scheduler" / "default-scheduler" / "kubeview-scheduler-config.yaml"
TOKEN = "realk8s-extender-token"
BIND_TIMEOUT = 20.0


def scheduler_config(url: str, node_cache_capable: bool) -> dict:
    """The shipped KubeSchedulerConfiguration pointed at `url` (profiles and extenders as shipped)."""
    shipped = yaml.safe_load(SHIPPED_CONFIG.read_text())
    extenders = []
    for ext in shipped["extenders"]:
        ext = dict(ext, urlPrefix=url, nodeCacheCapable=node_cache_capable)
        extenders.append(ext)
    return {"profiles": shipped["profiles"], "extenders": extenders}


class ExtenderProc:
    """`kubeview extender` on a free loopback port, startable again after a kill on the same port."""

    def __init__(self, plane: Plane, kubeconfig: Path, args: tuple[str, ...] = ()) -> None:
        self.plane = plane
        self.args = args  # more `kubeview extender` options
        self.kubeconfig = kubeconfig
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token_file = plane.root / "extender-token"
        self.token_file.write_text(TOKEN)
        self.proc: Proc | None = None

    def start(self) -> None:
        argv = [sys.executable, "-m", "kubeview", "extender", "--kubeconfig", str(self.kubeconfig),
                "--listen", f"127.0.0.1:{self.port}", "--token-file", str(self.token_file), "--policy", "pack", *self.args]
        self.proc = Proc("kubeview-extender", argv, self.plane.logs)
        wait_until(self._ready, 60, "kubeview extender /readyz")

    def _ready(self) -> bool:
        assert self.proc is not None
        if not self.proc.alive:
            raise AssertionError(f"kubeview extender exited:\n{self.proc.tail()}")
        try:
            with urllib.request.urlopen(f"{self.url}/readyz", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.stop(sig=9)

    def put_config(self, doc: dict) -> dict:
        req = urllib.request.Request(f"{self.url}/config", data=json.dumps(doc).encode(), method="PUT",
                                     headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)

    def calls(self, verb: str) -> int:
        """`kubeview_extender_requests_total` for this verb answered 200 (from /metrics)."""
        with urllib.request.urlopen(f"{self.url}/metrics", timeout=10) as r:
            text = r.read().decode()
        total = 0
        for line in text.splitlines():
            if line.startswith("kubeview_extender_requests_total{") and f'verb="{verb}"' in line and 'code="200"' in line:
                total += int(float(line.rsplit(" ", 1)[1]))
        return total

    def status(self) -> dict:
        with urllib.request.urlopen(f"{self.url}/status", timeout=10) as r:
            return json.load(r)


def extender_on_gpu_nodes(plane: Plane, core: client.CoreV1Api, namespace: str, nodes: dict[str, str],
                          labels: dict[str, str], workdir: Path, args: tuple[str, ...] = ()) -> ExtenderProc:
    """The shipped extender RBAC, `namespace`, kwok nodes with these GPU counts (Ready), and the
    extender started as its ServiceAccount with `args`."""
    plane.kubectl("apply", "-f", str(REPO / "manifests" / "scheduler" / "00-namespace-rbac.yaml"))
    ensure_namespace(core, namespace)
    for name, gpus in nodes.items():
        add_node(core, name, {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": gpus}, labels=labels)
    wait_nodes_ready(core, list(nodes))
    ext = ExtenderProc(plane, sa_kubeconfig(plane, core, "kubeview-system", "kubeview-extender", workdir / "kc"), args)
    ext.start()
    return ext


def stop_and_clean(ext: ExtenderProc, core: client.CoreV1Api, namespace: str, nodes: list[str]) -> None:
    """The extender stopped, the namespace's pods and the nodes deleted."""
    if ext.proc is not None:
        ext.proc.stop()
    core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)
    for name in nodes:
        core.delete_node(name)


def gpu_pod(name: str, run: str, gpus: int, select: dict[str, str] | None = None,
            scheduler: str | None = None) -> client.V1Pod:
    res = {"nvidia.com/gpu": str(gpus), "cpu": "100m", "memory": "64Mi"}
    container = client.V1Container(name="train", image="registry.k8s.io/pause:3.10",
                                   resources=client.V1ResourceRequirements(requests=res, limits=res))
    return client.V1Pod(metadata=client.V1ObjectMeta(name=name, labels={"run": run, "app": "gpu-story"}),
                        spec=client.V1PodSpec(containers=[container], termination_grace_period_seconds=0,
                                              node_selector=select, scheduler_name=scheduler))


@dataclass
class Story:
    """Creates the pods of one run and reads where they went."""

    core: client.CoreV1Api
    namespace: str
    select: dict[str, str] | None = None  # the story's own nodes: GPU nodes other tests left do not count
    scheduler: str | None = None  # spec.schedulerName (None: default-scheduler)
    runs: int = 0
    placements: list[dict[str, str]] = field(default_factory=list)

    def create(self, run: str, gpus: tuple[int, ...]) -> list[str]:
        names = [f"{run}-{i}-{g}gpu" for i, g in enumerate(gpus)]
        for name, g in zip(names, gpus, strict=True):
            self.core.create_namespaced_pod(self.namespace, gpu_pod(name, run, g, self.select, self.scheduler))
        return names

    def nodes_of(self, run: str) -> dict[str, str | None]:
        pods = self.core.list_namespaced_pod(self.namespace, label_selector=f"run={run}").items
        return {p.metadata.name: p.spec.node_name for p in pods}

    def wait_bound(self, run: str, count: int, timeout: float = BIND_TIMEOUT) -> dict[str, str]:
        def bound() -> dict[str, str] | None:
            nodes = self.nodes_of(run)
            return nodes if len(nodes) == count and all(nodes.values()) else None  # type: ignore[return-value]
        try:
            return wait_until(bound, timeout, f"{count} pods of {run} bound", interval=0.02)
        except AssertionError as exc:
            raise AssertionError(f"{exc}: {self.nodes_of(run)}; {self.why(run)}") from None

    def why(self, run: str) -> str:
        pods = self.core.list_namespaced_pod(self.namespace, label_selector=f"run={run}").items
        out = []
        for p in pods:
            conds = [f"{c.type}={c.status} {c.reason or ''} {c.message or ''}" for c in p.status.conditions or []]
            out.append(f"{p.metadata.name}: {conds}")
        return "; ".join(out)

    def unschedulable(self, namespace_pod: str) -> bool:
        pod = self.core.read_namespaced_pod(namespace_pod, self.namespace)
        return any(c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable"
                   for c in pod.status.conditions or [])

    def delete(self, run: str) -> None:
        """Grace 0, no waiting: the next run's pods are created while these go."""
        self.core.delete_collection_namespaced_pod(self.namespace, label_selector=f"run={run}", grace_period_seconds=0)

    def one_packed_run(self) -> dict[str, str]:
        """1, 1, 2 GPUs on two 2-GPU nodes: all three must bind (the 1-GPU pods share a node)."""
        run = f"r{self.runs}-{int(time.time() * 1000) % 100000}"
        self.runs += 1
        names = self.create(run, (1, 1, 2))
        nodes = self.wait_bound(run, 3)
        self.delete(run)
        self.placements.append(nodes)
        assert nodes[names[0]] == nodes[names[1]] != nodes[names[2]], f"not packed in {run}: {nodes}"
        return nodes


def wait_gone(core: client.CoreV1Api, namespace: str, timeout: float = 30) -> None:
    wait_until(lambda: not core.list_namespaced_pod(namespace).items, timeout, f"no pods left in {namespace}")


def clear(core: client.CoreV1Api, namespace: str) -> None:
    """Delete every pod in `namespace` and wait until they are gone: a test starts on an empty
    namespace even when the one before it failed halfway (its pods were never deleted)."""
    core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)
    wait_gone(core, namespace)

