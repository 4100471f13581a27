"""The extender as it runs for real (kube source over HTTP, ModelFeed, Extender with a KubeBinder, the
HTTP server), a LiveCluster behind the test API server, and the kube-scheduler stand-in, wired
together; plus the 1, 1, 2 GPU story as the live captures played it (tests/fixtures/k8s/extender-live).
"""

from __future__ import annotations

import contextlib
import json
import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from kube_scheduler_standin import ExtenderConfig, StandInScheduler
from kubeapi import KubeAPI
from kubeapi.live import Event, LiveCluster

from kubeview.cluster.kube.bind import KubeBinder
from kubeview.cluster.kube.pods_on import KubePodsOnNode
from kubeview.cluster.kube.source import KubeSource
from kubeview.scheduling.extender import Extender
from kubeview.scheduling.feed import DEFAULT_MAX_STALENESS, ModelFeed
from kubeview.scheduling.node_index import index_for
from kubeview.scheduling.server import ExtenderServer

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "k8s"
SHIPPED = REPO / "manifests" / "scheduler" / "default-scheduler" / "kubeview-scheduler-config.yaml"
RECORDED = FIXTURES / "extender-live" / "scheduler-config-cache.yaml"
NS = "gpu"


def scheduler_config(path: Path, cache: bool) -> dict:
    doc = yaml.safe_load(path.read_text())
    doc["extenders"][0]["nodeCacheCapable"] = cache
    return doc


def recorded_nodes() -> list[dict]:
    """cpu-node-1..3 and gpu-node-1..2 (2 GPUs each), as the captures' control plane had them."""
    return json.loads((FIXTURES / "nodes.json").read_text())["items"]


def gpu_pod(name: str, gpus: int) -> dict:
    """The captures' pod: one container `cuda`, cpu 100m, N GPUs as request and limit."""
    return {"metadata": {"name": name, "namespace": NS, "labels": {"app": "gpu-story"}},
            "spec": {"containers": [{"name": "cuda", "image": "nvidia/cuda:12.4.0-base-ubuntu22.04",
                                     "resources": {"requests": {"cpu": "100m", "nvidia.com/gpu": str(gpus)},
                                                   "limits": {"nvidia.com/gpu": str(gpus)}}}]}}


@dataclass
class Rig:
    """Everything running; `stop()` ends it all."""

    cluster: LiveCluster
    api: KubeAPI
    source: KubeSource
    feed: ModelFeed
    extender: Extender
    server: ExtenderServer
    scheduler: StandInScheduler
    delays: random.Random
    _halt: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @classmethod
    def start(cls, tmp: Path, config: dict, seed: int, bind_delay: tuple[float, float] = (0.002, 0.06),
              other_delay: tuple[float, float] = (0.0, 0.004)) -> Rig:
        cluster = LiveCluster(recorded_nodes())
        delays = random.Random(seed * 7919 + 1)

        def delay(event: Event) -> float:  # what kubeview's watch sees, late (bindings later still)
            return delays.uniform(*(bind_delay if event.binds else other_delay))

        cluster.delay = delay
        api = KubeAPI(live=cluster).start()
        api.kubeconfig = api.write_kubeconfig(tmp / "kubeconfig")
        source = KubeSource(kubeconfig=str(api.kubeconfig), kinds=("Node", "Pod"))
        feed = ModelFeed(max_staleness=DEFAULT_MAX_STALENESS)
        extender = Extender(feed, binder=KubeBinder(source.api_client, source.server),
                            pods_on=KubePodsOnNode(source.api_client))
        server = ExtenderServer(extender, "127.0.0.1", 0).start()
        rig = cls(cluster, api, source, feed, extender, server, None, delays)  # type: ignore[arg-type]
        rig._thread = threading.Thread(target=source.run, args=(feed.apply, rig._halt), daemon=True)
        rig._thread.start()
        feed.start()
        deadline = time.monotonic() + 20
        while not feed.view().synced:
            assert time.monotonic() < deadline, "the extender never listed the test API server"
            time.sleep(0.02)
            feed.refresh()
        rig.scheduler = StandInScheduler(cluster, ExtenderConfig.from_scheduler_config(config, server.url),
                                         seed).start()
        return rig

    def stop(self) -> None:
        self.scheduler.stop()
        self._halt.set()
        self.server.stop()
        self.feed.stop()
        self.source.close()
        self.api.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # -- the story -------------------------------------------------------------------------------
    def settled(self, name: str) -> bool:
        pod = self.cluster.pod(NS, name)
        if pod is None:
            return True
        if pod["spec"].get("nodeName"):
            return True
        return any(c.get("type") == "PodScheduled" and c.get("status") == "False"
                   for c in pod["status"].get("conditions", []))

    def wait(self, predicate, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.002)

    def delete_all(self, wait: bool) -> threading.Thread | None:
        """`kubectl delete pods -n gpu --all --grace-period=0 --force`; `wait=False` returns at once and
        the deletions go through while the next pods are created."""
        names = sorted(name for (ns, name) in list(self.cluster.pods) if ns == NS)

        def go() -> None:
            for name in names:
                self.cluster.delete_pod(NS, name)
                if not wait:
                    time.sleep(self.delays.uniform(0, 0.004))

        if wait:
            go()
            return None
        t = threading.Thread(target=go, daemon=True)
        t.start()
        return t

    def create(self, name: str, gpus: int, settle: bool = True) -> None:
        self.cluster.create_pod(gpu_pod(name, gpus))
        if settle:
            self.wait(lambda: self.settled(name), 10, f"{name} to be bound or unschedulable")

    def nodes_of(self, names: list[str], timeout: float = 10) -> dict[str, str]:
        """Where each pod ended up, waiting for all to be bound."""
        def bound() -> bool:
            return all((p := self.cluster.pod(NS, n)) is not None and p["spec"].get("nodeName") for n in names)

        with contextlib.suppress(AssertionError):  # the caller says what is missing
            self.wait(bound, timeout, "all pods bound")
        return {n: ((self.cluster.pod(NS, n) or {}).get("spec") or {}).get("nodeName") or "<none>" for n in names}

    # -- what the extender counts ----------------------------------------------------------------
    def truth(self) -> dict[str, int]:
        """GPUs requested per GPU node, from the API's own state."""
        out = {"gpu-node-1": 0, "gpu-node-2": 0}
        for pod in list(self.cluster.pods.values()):
            node = pod["spec"].get("nodeName")
            if node in out:
                out[node] += int(pod["spec"]["containers"][0]["resources"]["requests"].get("nvidia.com/gpu", 0))
        return out

    def counted(self, bound_only: bool = True) -> dict[str, int]:
        """GPUs the extender counts per GPU node right now: its model view plus its ledger."""
        view = self.feed.refresh()
        alloc = view.alloc
        col = alloc.column("nvidia.com/gpu")
        used = {n: int(alloc.requested[r, col]) for r, n in enumerate(alloc.nodes) if n.startswith("gpu-")}
        self.extender.assumed.prune(view.version)
        load = self.extender.assumed.load(alloc, index_for(alloc).row, view.version, bound_only=bound_only)
        if load is not None:
            for r, amounts in zip(load.rows.tolist(), load.amounts, strict=True):
                used[alloc.nodes[r]] += int(amounts[col])
        return used

    def caught_up(self) -> bool:
        """kubeview's watch shows every pod the API has, where the API has it."""
        live = self.cluster.pods
        for (ns, name), pod in list(live.items()):
            seen = self.feed.pod(ns, name)
            if seen is None or seen.uid != pod["metadata"]["uid"] or seen.node != pod["spec"].get("nodeName"):
                return False
        return all((p.namespace, p.name) in live for p in list(self.feed.model.pods.values()) if p.namespace == NS)
