"""The embedded local cluster as a `ClusterSource`: no kubeconfig needed, pods are real processes.

`LocalCluster` (local/state.py) is the pure part: objects, controllers, scheduler. The `Supervisor`
(local/kubelet.py) runs the processes. This class glues them with one lock: every action changes the
state, then `_flush` hands the resulting watch events to each running `run()` (in order, through a
queue per subscriber) and the resulting start/stop intents to the supervisor; what the processes do
comes back through `_on_report`. The first thing `run()` emits is a `Listed` per kind, then watch
events, exactly as the kube source does, so the model and the TUI cannot tell the two apart.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import os
import queue
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import kubeview
import renderer
from kubeview.cluster.local.autoscaler import Plan
from kubeview.cluster.local.config import ClusterConfig, load_cluster
from kubeview.cluster.local.kubelet import (
    ContainerSpec,
    Exited,
    KubeletSettings,
    Report,
    Started,
    Stopped,
    Supervisor,
)
from kubeview.cluster.local.kubelet import Usage as ProcessUsage
from kubeview.cluster.local.kubelet_status import Key, StartPod, StopPod
from kubeview.cluster.local.node_groups import SCAN_INTERVAL
from kubeview.cluster.local.state import LocalCluster
from kubeview.model.events import ConnectionState, SourceEvent
from kubeview.model.usage import NodeUsage, PodUsage, UsageUpdate
from kubeview.scheduling.config import PackingConfig

# Where this process's own `kubeview` and `renderer` come from. A local pod's `python -m renderer`
# imports exactly that code: PYTHONPATH names these roots and PYTHONSAFEPATH keeps the working
# directory off sys.path (from a checkout's root, `./renderer` was imported instead of the
# installed package kubeview runs, and its numba cache was another one). Python 3.11+.
_CODE_ROOTS = os.pathsep.join(dict.fromkeys(str(Path(m.__path__[0]).resolve().parent)
                                            for m in (kubeview, renderer)))


_FIELD_REFS = {"metadata.name": ("metadata", "name"), "metadata.namespace": ("metadata", "namespace"),
               "metadata.uid": ("metadata", "uid"), "spec.nodeName": ("spec", "nodeName"),
               "spec.serviceAccountName": ("spec", "serviceAccountName"), "status.hostIP": ("status", "hostIP"),
               "status.podIP": ("status", "podIP")}
_MAP_REF = re.compile(r"^metadata\.(labels|annotations)\['([^']+)'\]$")
_VAR = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def container_env(pod: dict, container: dict) -> dict[str, str]:
    """The container's `env`, with downward-API `fieldRef`s resolved as a kubelet resolves them."""
    env: dict[str, str] = {}
    for e in container.get("env") or []:
        if "name" not in e:
            continue
        ref = ((e.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
        mapped = _MAP_REF.match(ref or "")
        if ref in _FIELD_REFS:
            part, key = _FIELD_REFS[ref]
            env[e["name"]] = str((pod.get(part) or {}).get(key, ""))
        elif mapped:  # metadata.labels['k'] / metadata.annotations['k'] (a Job's JOB_COMPLETION_INDEX)
            env[e["name"]] = str(((pod.get("metadata") or {}).get(mapped.group(1)) or {}).get(mapped.group(2), ""))
        else:
            env[e["name"]] = expand(str(e.get("value", "")), env)
    return env


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' `$(VAR)` expansion: defined variables are replaced, `$$` is a literal `$`."""
    def sub(m: re.Match) -> str:
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))
    return _VAR.sub(sub, text)


def container_argv(container: dict, env: dict[str, str] | None = None) -> list[str]:
    """command + args after `$(VAR)` expansion, `python`/`python3` meaning kubeview's interpreter."""
    argv = [expand(str(a), env or {}) for a in (container.get("command") or []) + (container.get("args") or [])]
    if argv and argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    return argv


class LocalSource:
    """A `ClusterSource` for the embedded cluster; also takes the actions the local cluster offers."""

    title = "local cluster"
    is_local = True
    demo = False  # the demo (local_demo.open_demo sets it): what commands suggested on screen say

    def __init__(self, cluster_file: str | None = None, policy: PackingConfig | None = None, *,
                 kubelet: KubeletSettings | None = None, seed: int | None = None,
                 metrics_listen: tuple[str, int] | None = None, config: ClusterConfig | None = None,
                 clock: Callable[[], float] = time.time, autoscale_every: float | None = SCAN_INTERVAL) -> None:
        """`clock` is the autoscaler's (node groups); `autoscale_every` None leaves its loop to the caller
        (`autoscale_now`), as tests do."""
        self.config = config if config is not None else load_cluster(cluster_file)
        self._lock = threading.RLock()
        self._subscribers: list[queue.Queue[SourceEvent]] = []
        self._state = LocalCluster(self.config, policy, seed=seed, clock=clock)
        self._state.events.clear()  # the bootstrap is what the first Listed shows
        self.log_dir = Path(tempfile.mkdtemp(prefix="kubeview-local-"))
        self._usage: dict[Key, tuple[float, int]] = {}
        self._closed = False
        self._supervisor = Supervisor(self._on_report, kubelet)
        self.metrics = None  # a LocalMetricsServer when asked for: what a Prometheus scrapes
        if metrics_listen is not None:
            from kubeview.cluster.local.metrics import start_local_metrics

            self.metrics = start_local_metrics(self, *metrics_listen)
        self._autoscaling = threading.Event()  # set: the autoscaler's loop stops
        self._autoscaler: threading.Thread | None = None
        if self.config.node_groups and autoscale_every is not None:
            self._autoscaler = threading.Thread(target=self._autoscale_loop, args=(autoscale_every,),
                                                name="kubeview-local-autoscaler", daemon=True)
            self._autoscaler.start()
        atexit.register(self.close)

    # --- ClusterSource ------------------------------------------------------------------------------
    def run(self, emit: Callable[[SourceEvent], None], stop: threading.Event) -> None:
        """Emit a Listed per kind, then every change, until `stop` is set."""
        q: queue.Queue[SourceEvent] = queue.Queue()
        emit(ConnectionState("connecting", time.time(), "embedded local cluster"))
        with self._lock:
            self._flush()
            snapshot = self._state.snapshot()
            self._subscribers.append(q)
        try:
            for listed in snapshot:
                emit(listed)
            emit(ConnectionState("live", time.time(), "embedded local cluster"))
            while not stop.is_set():
                try:
                    event = q.get(timeout=0.1)
                except queue.Empty:
                    continue
                emit(event)
        finally:
            with self._lock, contextlib.suppress(ValueError):
                self._subscribers.remove(q)

    def scale(self, kind: str, namespace: str, name: str, replicas: int) -> str:
        return self._act(lambda s: s.scale(kind, namespace, name, replicas))

    def close(self) -> None:
        """Stop every process this cluster started (SIGTERM, then SIGKILL after their grace period)."""
        self._autoscaling.set()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            grace = max([float((p.get("spec") or {}).get("terminationGracePeriodSeconds", 30))
                         for p in self._state.list("Pod") if (p["metadata"]["namespace"], p["metadata"]["name"])
                         in set(self._state.running_pods())] or [0.0])
        self._supervisor.close(grace=min(grace, 10.0))
        if self.metrics is not None:
            self.metrics.close()
        atexit.unregister(self.close)
        shutil.rmtree(self.log_dir, ignore_errors=True)

    # --- actions beyond the protocol ----------------------------------------------------------------
    @property
    def packing(self) -> PackingConfig:
        return self._state.packing

    def set_packing(self, config: PackingConfig) -> str:
        return self._act(lambda s: s.set_packing(config))

    def set_parallelism(self, namespace: str, name: str, parallelism: int) -> str:
        return self._act(lambda s: s.set_parallelism(namespace, name, parallelism))

    def suspend_job(self, namespace: str, name: str, suspend: bool) -> str:
        return self._act(lambda s: s.suspend_job(namespace, name, suspend))

    def preempt_node(self, name: str) -> str:
        """Reclaim a node as a spot provider would: its pods killed with DisruptionTarget, the node gone."""
        return self._act(lambda s: s.preempt_node(name))

    def create_pod(self, manifest: dict) -> dict:
        return self._act(lambda s: s.create_pod(manifest))

    def delete_pod(self, namespace: str, name: str, grace: float | None = None) -> None:
        self._act(lambda s: s.remove_pod(namespace, name, grace))

    def apply_workload(self, manifest: dict) -> dict:
        return self._act(lambda s: s.apply_workload(manifest))

    def create_claim_object(self, manifest: dict) -> dict:
        return self._act(lambda s: s.create_claim_object(manifest))

    def delete_workload(self, kind: str, namespace: str, name: str) -> None:
        self._act(lambda s: s.delete_workload(kind, namespace, name))

    def evict(self, namespace: str, name: str) -> str:
        """The Eviction API (local/eviction.py): EvictionRefused (an ActionError) with 429 and its cause."""
        from kubeview.cluster.local.eviction import evict

        return self._act(lambda s: evict(s, namespace, name))

    def nominate(self, namespace: str, name: str, node: str) -> str:
        from kubeview.cluster.local.eviction import nominate

        return self._act(lambda s: nominate(s, namespace, name, node))

    def create_budget(self, manifest: dict) -> dict:
        from kubeview.cluster.local.eviction import add_budget

        return self._act(lambda s: add_budget(s, manifest))

    def budgets(self) -> list[dict]:
        """PodDisruptionBudgets with the status a disruption controller would write now."""
        from kubeview.cluster.local.eviction import budgets_with_status

        with self._lock:
            return budgets_with_status(self._state)

    def autoscale_now(self) -> Plan | None:
        """One loop of the node groups' autoscaler at the clock's time (None: the cluster has no groups)."""
        return self._act(lambda s: s.autoscale(s.clock()))

    def _autoscale_loop(self, every: float) -> None:
        """Every `every` seconds, or when the next node asked for is due, whichever is first."""
        while True:
            with self._lock:
                due = self._state.next_due()
                wait = every if due is None else min(every, max(0.05, due - self._state.clock()))
            if self._autoscaling.wait(wait):
                return
            with self._lock:
                if self._closed:
                    return
                self.autoscale_now()

    # --- reading ---------------------------------------------------------------------------------
    def get(self, kind: str, namespace: str, name: str) -> dict | None:
        with self._lock:
            o = self._state.get(kind, namespace, name)
            return None if o is None else _copy(o)

    def pods(self, namespace: str | None = None) -> list[dict]:
        with self._lock:
            return [_copy(p) for p in self._state.list("Pod")
                    if namespace is None or p["metadata"]["namespace"] == namespace]

    def workload_pods(self, kind: str, namespace: str, name: str) -> list[dict]:
        """Active pods of a ReplicaSet or Deployment."""
        with self._lock:
            return [_copy(p) for p in self._state.active_pods(kind, namespace, name)]

    def pids(self) -> dict[Key, int]:
        """Live process of each pod that has one."""
        return self._supervisor.pids()

    def usage(self) -> dict[Key, tuple[float, int]]:
        """Last psutil reading per pod: (cpu millicores, rss bytes)."""
        with self._lock:
            return dict(self._usage)

    def log_path(self, namespace: str, name: str) -> Path:
        return self.log_dir / f"{namespace}_{name}.log"

    def log_tail(self, namespace: str, name: str, lines: int = 5) -> list[str]:
        try:
            text = self.log_path(namespace, name).read_text(errors="replace")
        except OSError:
            return []
        return [line for line in text.splitlines() if line.strip()][-lines:]

    def model(self):  # noqa: ANN201 - the internal ClusterModel, for tests and the render job's checks
        return self._state.model

    # --- plumbing ----------------------------------------------------------------------------------
    def _act(self, action: Callable[[LocalCluster], object]):  # noqa: ANN202
        with self._lock:
            try:
                return action(self._state)
            finally:
                self._flush()

    def _flush(self) -> None:
        """Hand new events to subscribers and new intents to the supervisor (caller holds the lock)."""
        events, self._state.events = self._state.events, []
        intents, self._state.intents = self._state.intents, []
        for q in self._subscribers:
            for event in events:
                q.put(event)
        if self._closed:
            return
        for intent in intents:
            if isinstance(intent, StartPod):
                self._supervisor.start(self._container_spec(intent.pod))
            elif isinstance(intent, StopPod):
                self._supervisor.stop(intent.key, intent.grace)

    def _container_spec(self, pod: dict) -> ContainerSpec:
        meta, spec = pod["metadata"], pod["spec"]
        container = next(c for c in spec.get("containers") or [] if c.get("command"))
        env = {"PYTHONPATH": _CODE_ROOTS, "PYTHONSAFEPATH": "1", "KUBEVIEW_POD": meta["name"], "KUBEVIEW_NAMESPACE": meta["namespace"],
               "KUBEVIEW_NODE": spec.get("nodeName", "")}
        own = container_env(pod, container)
        env.update(own)
        return ContainerSpec(key=(meta["namespace"], meta["name"]), argv=container_argv(container, own),
                             restart_policy=spec.get("restartPolicy", "Always"), env=env,
                             cwd=container.get("workingDir") or None,
                             log_path=str(self.log_path(meta["namespace"], meta["name"])))

    def _on_report(self, report: Report) -> None:
        with self._lock:
            if isinstance(report, Started):
                self._state.container_started(report.key, report.pid, report.restarts)
            elif isinstance(report, Exited):
                self._state.container_exited(report.key, report.exit_code, report.restarts, report.restart_in)
            elif isinstance(report, Stopped):
                self._usage.pop(report.key, None)
                self._state.container_stopped(report.key)
            elif isinstance(report, ProcessUsage):
                self._emit_usage(report.samples)
            self._flush()

    def _emit_usage(self, samples: dict[Key, tuple[float, int]]) -> None:
        if not samples and not self._usage:
            return  # nothing runs and nothing ran: no news
        self._usage = {k: (cores * 1000.0, rss) for k, (cores, rss) in samples.items()}
        pods: dict[Key, PodUsage] = {}
        names = [n["metadata"]["name"] for n in self._state.list("Node")]
        cpu, memory = dict.fromkeys(names, 0.0), dict.fromkeys(names, 0)
        for key, (milli, rss) in self._usage.items():
            pod = self._state.get("Pod", *key)
            if pod is None:
                continue
            pods[key] = PodUsage(cpu=milli, memory=rss)
            node = (pod.get("spec") or {}).get("nodeName") or ""
            if node in cpu:
                cpu[node] += milli
                memory[node] += rss
        update = UsageUpdate(nodes={n: NodeUsage(cpu=cpu[n], memory=memory[n]) for n in names}, pods=pods,
                             source="local", at=time.time(), replace=True)
        self._state.model.apply(update)
        for q in self._subscribers:
            q.put(update)


def _copy(o: dict) -> dict:
    return copy.deepcopy(o)
