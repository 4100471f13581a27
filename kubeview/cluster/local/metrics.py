"""A Prometheus exporter for the embedded local cluster: its real processes as node-exporter and cAdvisor series.

So a real Prometheus can scrape a local run and kubeview can read it back with the very queries it
runs against a real cluster (`prometheus/queries.yaml`). A local node is virtual: its CPU is the CPU
time of the pod processes bound to it, its memory total is its capacity from the cluster YAML and
what is "available" is that minus their resident memory. Series:

- `node_cpu_seconds_total{node, cpu, mode}` (modes user, system, idle; spread evenly over the node's
  cpus: processes are not pinned), `node_memory_MemTotal_bytes{node}`, `node_memory_MemAvailable_bytes{node}`
- `container_cpu_usage_seconds_total{namespace, pod, container, node}`,
  `container_memory_working_set_bytes{...}` (RSS of the process and its descendants, like a cgroup)

Node counters never go backwards: the CPU time of a process that ended stays counted, as a kernel's
would. Use `start_local_metrics(source)` (127.0.0.1, a free port by default) and `.close()` it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import psutil
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from kubeview.cluster.local.config import ClusterConfig
from kubeview.model.quantity import parse


@dataclass(frozen=True, slots=True)
class NodeTarget:
    name: str
    cpus: int  # whole cpus, for the `cpu` label (at least 1)
    memory: int  # bytes: MemTotal


@dataclass(frozen=True, slots=True)
class PodTarget:
    namespace: str
    pod: str
    container: str
    node: str
    pid: int


Targets = tuple[Sequence[NodeTarget], Sequence[PodTarget]]


@runtime_checkable
class LocalSourceLike(Protocol):
    """What is read of `LocalSource` (all public): the cluster file's nodes, pods and their pids."""

    @property
    def config(self) -> ClusterConfig: ...  # the cluster file: .nodes, each with name and capacity

    def pids(self) -> dict[tuple[str, str], int]: ...

    def pods(self, namespace: str | None = None) -> list[dict]: ...


def targets_of(source: LocalSourceLike) -> Targets:
    """Nodes from the cluster file; one target per pod that has a live process."""
    nodes = []
    for node in source.config.nodes:
        cpus = max(1, int(float(parse(str(node.capacity.get("cpu", "1"))))))
        nodes.append(NodeTarget(node.name, cpus, int(parse(str(node.capacity.get("memory", "0"))))))
    pids = source.pids()
    pods = []
    for pod in source.pods():
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        key = (meta.get("namespace", ""), meta.get("name", ""))
        if key in pids and spec.get("nodeName"):
            containers = [c for c in spec.get("containers") or [] if c.get("command")] or spec.get("containers") or [{}]
            pods.append(PodTarget(key[0], key[1], containers[0].get("name", "main"), spec["nodeName"], pids[key]))
    return nodes, pods


@dataclass(frozen=True, slots=True)
class _Reading:
    user: float
    system: float
    rss: int


class LocalMetricsCollector:
    """Reads the processes at scrape time (a prometheus-client custom collector)."""

    def __init__(self, targets: Callable[[], Targets], clock: Callable[[], float] = time.monotonic) -> None:
        self.targets = targets
        self.clock = clock
        self.started = clock()
        self._lock = threading.Lock()
        self._procs: dict[int, psutil.Process] = {}
        self._last: dict[tuple[int, float], tuple[str, _Reading]] = {}  # (pid, create_time) -> (node, reading)
        self._retired: dict[str, list[float]] = {}  # node -> [user, system] of processes that ended
        self._idle: dict[str, float] = {}

    def _read(self, pid: int) -> tuple[tuple[int, float], _Reading] | None:
        proc = self._procs.get(pid)
        try:
            if proc is None or not proc.is_running():
                proc = self._procs[pid] = psutil.Process(pid)
            with proc.oneshot():
                t = proc.cpu_times()
                user, system = t.user + t.children_user, t.system + t.children_system
                rss = proc.memory_info().rss
                ident = (pid, proc.create_time())
            for child in proc.children(recursive=True):
                try:
                    ct = child.cpu_times()
                    user, system, rss = user + ct.user, system + ct.system, rss + child.memory_info().rss
                except psutil.Error:
                    continue
        except psutil.Error:
            self._procs.pop(pid, None)
            return None
        return ident, _Reading(user, system, rss)

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        nodes, pods = self.targets()
        with self._lock:
            yield from self._collect(nodes, pods)

    def _collect(self, nodes: Sequence[NodeTarget], pods: Sequence[PodTarget]) -> Iterator:
        labels = ["namespace", "pod", "container", "node"]
        pod_cpu = CounterMetricFamily("container_cpu_usage_seconds_total",
                                      "Cumulative cpu time consumed by the pod's process, in seconds", labels=labels)
        pod_mem = GaugeMetricFamily("container_memory_working_set_bytes",
                                    "Resident memory of the pod's process and its descendants", labels=labels)
        seen: dict[tuple[int, float], tuple[str, _Reading]] = {}
        for t in pods:
            got = self._read(t.pid)
            if got is None:
                continue
            ident, r = got
            seen[ident] = (t.node, r)
            values = [t.namespace, t.pod, t.container, t.node]
            pod_cpu.add_metric(values, r.user + r.system)
            pod_mem.add_metric(values, r.rss)
        for ident, (node, r) in self._last.items():  # ended since the last scrape: keep their cpu time
            if ident not in seen:
                acc = self._retired.setdefault(node, [0.0, 0.0])
                acc[0] += r.user
                acc[1] += r.system
        self._last = seen
        for pid in set(self._procs) - {ident[0] for ident in seen}:
            self._procs.pop(pid, None)

        elapsed = self.clock() - self.started
        cpu = CounterMetricFamily("node_cpu_seconds_total", "Seconds the node's cpus spent in each mode",
                                  labels=["node", "cpu", "mode"])
        total = GaugeMetricFamily("node_memory_MemTotal_bytes", "Memory capacity of the node", labels=["node"])
        avail = GaugeMetricFamily("node_memory_MemAvailable_bytes", "Capacity minus the pods' resident memory",
                                  labels=["node"])
        for n in nodes:
            user, system = self._retired.get(n.name, [0.0, 0.0])
            rss = 0
            for node, r in seen.values():
                if node == n.name:
                    user, system, rss = user + r.user, system + r.system, rss + r.rss
            idle = max(self._idle.get(n.name, 0.0), elapsed * n.cpus - user - system)
            self._idle[n.name] = idle
            for i in range(n.cpus):
                for mode, v in (("user", user), ("system", system), ("idle", idle)):
                    cpu.add_metric([n.name, str(i), mode], v / n.cpus)
            total.add_metric([n.name], n.memory)
            avail.add_metric([n.name], max(0, n.memory - rss))
        yield from (cpu, total, avail, pod_cpu, pod_mem)


class LocalMetricsServer:
    """The exporter's HTTP server (prometheus-client's), on its own daemon thread."""

    def __init__(self, collector: LocalMetricsCollector, host: str = "127.0.0.1", port: int = 0) -> None:
        self.collector = collector
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(collector)
        self._server, self._thread = start_http_server(port, addr=host, registry=self.registry)
        self.host, self.port = host, int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def start_local_metrics(source: LocalSourceLike | Callable[[], Targets], host: str = "127.0.0.1",
                        port: int = 0) -> LocalMetricsServer:
    """Serve `/metrics` for a `LocalSource` (or a callable returning targets); port 0 picks a free one."""
    if isinstance(source, LocalSourceLike):
        local = source
        return LocalMetricsServer(LocalMetricsCollector(lambda: targets_of(local)), host, port)
    return LocalMetricsServer(LocalMetricsCollector(source), host, port)
