"""The embedded cluster's kubelet as the API sees it: pod IPs, container states, restarts with
back-off, and the intents (start, stop a process) that the process supervisor carries out.

A mixin of `LocalCluster` (state.py), which owns the objects and the lock-free state transitions:
this part is what a kubelet writes back about the pods bound to its node. Pure, like the rest.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kubeview.cluster.local import objects as obj

Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class StartPod:
    pod: dict  # bound pod whose container has a command: the supervisor runs it


@dataclass(frozen=True, slots=True)
class StopPod:
    key: Key
    grace: float


Intent = StartPod | StopPod


def runs_process(pod: dict) -> bool:
    """Containers with a `command` run as processes; the others (images whose entrypoint cannot run
    here, e.g. the system pods) are simulated: Running with nothing behind them."""
    return any(c.get("command") for c in (pod.get("spec") or {}).get("containers") or [])


def _key(o: dict) -> Key:
    meta = o.get("metadata") or {}
    return (meta.get("namespace", ""), meta["name"])


class KubeletStatus:
    """Container lifecycle of `LocalCluster`'s pods; see the module docstring."""

    intents: list[Intent]
    _processes: set[Key]
    _pod_ips: dict[str, int]
    _node_index: dict[str, int]

    if TYPE_CHECKING:  # provided by LocalCluster
        def get(self, kind: str, namespace: str, name: str) -> dict | None: ...
        def update(self, kind: str, o: dict) -> dict: ...
        def event(self, kind: str, o: dict, type_: str, reason: str, message: str, component: str, *,
                  host: str = "", field_path: str | None = None) -> None: ...
        def reconcile(self, rounds: int = 20) -> None: ...
        def _write(self, kind: str, type_: obj.Change, o: dict) -> dict: ...

    # --- kubelet ----------------------------------------------------------------------------------
    def _ips(self, pod: dict) -> tuple[str, str]:
        node = pod["spec"]["nodeName"]
        i = self._node_index.get(node, 0)
        n = self._pod_ips.get(node, 1) + 1
        self._pod_ips[node] = n
        node_obj = self.get("Node", "", node)
        host = obj.node_ip(node_obj) if node_obj else ""
        if (pod.get("spec") or {}).get("hostNetwork"):
            return host, host
        return host, f"10.244.{i}.{n % 254 + 1}"

    def _kubelet_run(self, pod: dict) -> None:
        """A pod was bound: start its process, or (simulated containers) report it Running."""
        key = _key(pod)
        if runs_process(pod):
            self._processes.add(key)
            self.intents.append(StartPod(copy.deepcopy(pod)))
            waiting = {"waiting": {"reason": "ContainerCreating"}}
            self.update("Pod", obj.container_state(pod, waiting, False, 0, host_ip=self._ips(pod)[0]))
        else:
            host, ip = self._ips(pod)
            self.update("Pod", obj.container_state(pod, {"running": {"startedAt": obj.timestamp()}}, True, 0,
                                                   host_ip=host, pod_ip=ip))

    def container_started(self, key: Key, pid: int, restarts: int) -> None:
        pod = self.get("Pod", *key)
        if pod is None or key not in self._processes:
            return
        status = pod.get("status") or {}
        host = status.get("hostIP", "")
        ip = status.get("podIP") or self._ips(pod)[1]
        running = self.update("Pod", obj.container_state(pod, {"running": {"startedAt": obj.timestamp()}}, True,
                                                         restarts, host_ip=host, pod_ip=ip))
        name = _container_name(pod)
        self.event("Pod", running, "Normal", "Started", f"Started container {name}", "kubelet",
                   host=pod["spec"].get("nodeName", ""), field_path=f"spec.containers{{{name}}}")
        self.reconcile()

    def container_exited(self, key: Key, exit_code: int, restarts: int, restart_in: float | None) -> None:
        pod = self.get("Pod", *key)
        if pod is None or key not in self._processes:
            return
        started = obj.started_at(pod)
        last = obj.terminated_state(exit_code, started)
        if restart_in is not None:
            name = _container_name(pod)
            waiting = {"waiting": {"reason": "CrashLoopBackOff",
                                   "message": f"back-off {_duration(restart_in)} restarting failed container={name} "
                                              f"pod={key[1]}_{key[0]}({pod['metadata']['uid']})"}}
            backing_off = self.update("Pod", obj.container_state(pod, waiting, False, restarts, last_state=last))
            self.event("Pod", backing_off, "Warning", "BackOff",  # the kubelet's message
                       f"Back-off restarting failed container {name} in pod {key[1]}_{key[0]}({pod['metadata']['uid']})",
                       "kubelet", host=pod["spec"].get("nodeName", ""), field_path=f"spec.containers{{{name}}}")
        else:
            self._processes.discard(key)
            phase = "Succeeded" if exit_code == 0 else "Failed"
            self.update("Pod", obj.container_state(pod, last, False, restarts, phase=phase))
        self.reconcile()

    def container_stopped(self, key: Key) -> None:
        """The supervisor has stopped a deleted pod's process: the pod is gone."""
        self._processes.discard(key)
        pod = self.get("Pod", *key)
        if pod is not None and (pod.get("metadata") or {}).get("deletionTimestamp"):
            self._write("Pod", "DELETED", copy.deepcopy(pod))
            self.reconcile()

    def running_pods(self) -> list[Key]:
        return sorted(self._processes)


def _container_name(pod: dict) -> str:
    """The container a local pod runs (the first with a command, as the supervisor picks it)."""
    containers = (pod.get("spec") or {}).get("containers") or [{}]
    return next((c for c in containers if c.get("command")), containers[0]).get("name", "")


def _duration(seconds: float) -> str:
    return f"{int(seconds * 1000)}ms" if seconds < 1 else f"{seconds:g}s"
