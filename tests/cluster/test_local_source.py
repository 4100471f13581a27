"""LocalSource end to end on real processes (`sleep` stands in for a consumer where none is needed)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable

import psutil
import pytest

from kubeview.cluster.local.kubelet import KubeletSettings
from kubeview.cluster.local.source import LocalSource
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import ConnectionState, Listed, WatchEvent
from kubeview.model.usage import UsageUpdate

FAST = KubeletSettings(poll_interval=0.02, usage_interval=0.2, backoff_initial=0.1)


def wait_until(check: Callable[[], object], timeout: float = 15.0, what: str = "condition") -> object:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def sleeper_rs(replicas: int, name: str = "consumer") -> dict:
    return {"kind": "ReplicaSet", "metadata": {"name": name, "namespace": "render"},
            "spec": {"replicas": replicas, "template": {"metadata": {"labels": {"app": name}}, "spec": {
                "terminationGracePeriodSeconds": 5,
                "containers": [{"name": name, "image": "kubeview/renderer", "command": ["sleep", "600"],
                                "resources": {"requests": {"cpu": "1000m"}}}]}}}}


@pytest.fixture
def source():
    s = LocalSource(kubelet=FAST, seed=3)
    yield s
    s.close()


def running(source: LocalSource, name: str = "consumer") -> list[dict]:
    return [p for p in source.workload_pods("ReplicaSet", "render", name) if p["status"]["phase"] == "Running"
            and "running" in p["status"]["containerStatuses"][0]["state"]]


@pytest.mark.slow
def test_24_replicas_run_21_processes_and_scaling_to_2_really_stops_19(source: LocalSource) -> None:
    source.apply_workload(sleeper_rs(24))
    wait_until(lambda: len(running(source)) == 21, what="21 running consumers")
    pods = source.workload_pods("ReplicaSet", "render", "consumer")
    pending = [p for p in pods if not p["spec"].get("nodeName")]
    assert len(pods) == 24 and len(pending) == 3
    message = next(c["message"] for c in pending[0]["status"]["conditions"] if c["type"] == "PodScheduled")
    assert message == "0/5 nodes are available: 2 node(s) had untolerated taint(s), 3 Insufficient cpu."
    pids = source.pids()
    assert len(pids) == 21 and all(alive(p) and psutil.Process(p).name() == "sleep" for p in pids.values())
    assert not any(key in pids for key in ((p["metadata"]["namespace"], p["metadata"]["name"]) for p in pending))

    source.scale("ReplicaSet", "render", "consumer", 2)
    kept = {(p["metadata"]["namespace"], p["metadata"]["name"]) for p in
            source.workload_pods("ReplicaSet", "render", "consumer")}
    assert len(kept) == 2
    stopped = [pid for key, pid in pids.items() if key not in kept]
    assert len(stopped) == 19
    wait_until(lambda: not any(alive(p) for p in stopped), what="the 19 extra processes to exit")
    assert all(alive(pids[k]) for k in kept)
    wait_until(lambda: len(source.pods("render")) == 2, what="terminated pods to be deleted")


@pytest.mark.slow
def test_a_killed_process_is_restarted_and_counted(source: LocalSource) -> None:
    source.apply_workload(sleeper_rs(1))
    (pod,) = wait_until(lambda: running(source), what="a running pod")
    key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
    first = source.pids()[key]
    os.kill(first, signal.SIGKILL)

    def restarted() -> dict | None:
        p = source.get("Pod", *key)
        cs = p["status"]["containerStatuses"][0]
        return p if cs["restartCount"] == 1 and "running" in cs["state"] else None

    p = wait_until(restarted, what="the restart")
    cs = p["status"]["containerStatuses"][0]
    assert cs["lastState"]["terminated"]["exitCode"] == 137  # 128 + SIGKILL, as a kubelet reports it
    assert source.pids()[key] != first and alive(source.pids()[key])
    assert p["metadata"]["name"] == pod["metadata"]["name"]  # the same pod, not a replacement


@pytest.mark.slow
def test_run_emits_list_then_watch_and_usage(source: LocalSource) -> None:
    events: list = []
    stop = threading.Event()
    thread = threading.Thread(target=source.run, args=(events.append, stop), daemon=True)
    thread.start()
    wait_until(lambda: any(isinstance(e, ConnectionState) and e.state == "live" for e in events), what="live")
    assert [e.kind for e in events if isinstance(e, Listed)] == ["Node", "Pod", "ReplicaSet", "Deployment",
                                                                 "Event", "Job", "ResourceQuota", "Workload",
                                                                 "PodGroup", "StatefulSet"]
    source.apply_workload(sleeper_rs(2))
    wait_until(lambda: len(running(source)) == 2, what="2 running")
    wait_until(lambda: any(isinstance(e, UsageUpdate) and len(e.pods) == 2 for e in events), what="usage")
    stop.set()
    thread.join(5)
    assert not thread.is_alive()
    assert any(isinstance(e, WatchEvent) and e.kind == "Pod" and e.type == "ADDED" for e in events)
    started = [e.obj for e in events if isinstance(e, WatchEvent) and e.kind == "Event"
               and e.obj["reason"] == "Started"]  # from the supervisor's report of the real processes
    assert len(started) >= 2 and all(e["message"] == "Started container consumer" for e in started)
    client = ClusterModel()
    for e in events:
        client.apply(e)
    assert set(client.pods) == set(source.model().pods)
    assert (client.allocation().requested == source.model().allocation().requested).all()
    usage = next(e for e in reversed(events) if isinstance(e, UsageUpdate) and len(e.pods) == 2)
    assert usage.source == "local"
    for pod_usage in usage.pods.values():
        assert pod_usage.cpu is not None and pod_usage.cpu >= 0 and pod_usage.memory > 0
    by_node: dict[str, int] = {}
    for key, pod_usage in usage.pods.items():
        node = source.get("Pod", *key)["spec"]["nodeName"]
        by_node[node] = by_node.get(node, 0) + pod_usage.memory
    for node, memory in by_node.items():
        assert usage.nodes[node].memory == memory  # a node's usage is the sum of its pods'


@pytest.mark.slow
def test_close_stops_every_process() -> None:
    source = LocalSource(kubelet=FAST)
    source.apply_workload(sleeper_rs(4))
    wait_until(lambda: len(source.pids()) == 4, what="4 processes")
    pids = list(source.pids().values())
    source.close()
    assert not [p for p in pids if alive(p)]
    source.close()  # idempotent


def test_gpu_pods_without_processes_and_policy_change(source: LocalSource) -> None:
    def gpu(name: str, n: int) -> dict:
        return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "cuda", "resources": {
            "limits": {"nvidia.com/gpu": str(n)}}}]}}

    assert source.packing.policy == "pack"
    for name, n in (("gpu-a", 1), ("gpu-b", 1), ("gpu-c", 2)):
        source.create_pod(gpu(name, n))
    assert all(source.get("Pod", "default", n)["status"]["phase"] == "Running" for n in ("gpu-a", "gpu-b", "gpu-c"))
    assert not source.pids()  # no command: simulated containers, nothing runs
    source.delete_pod("default", "gpu-c")
    source.delete_pod("default", "gpu-b")
    assert "spread" in source.set_packing(source.packing.merged({"policy": "spread"}))
    source.create_pod(gpu("gpu-b", 1))
    source.create_pod(gpu("gpu-c", 2))
    assert source.get("Pod", "default", "gpu-c")["status"]["phase"] == "Pending"


def test_downward_api_env_and_var_expansion() -> None:
    import sys

    from kubeview.cluster.local.source import container_argv, container_env

    pod = {"metadata": {"name": "consumer-x2b7k", "namespace": "render"}, "spec": {"nodeName": "cpu-node-2"},
           "status": {"podIP": "10.244.1.5"}}
    container = {"command": ["python", "-m", "renderer"], "args": ["--name", "$(POD)", "$(NODE)", "$$(POD)", "$(NOPE)"],
                 "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                         {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                         {"name": "WHERE", "value": "$(POD)@$(NODE)"}]}
    env = container_env(pod, container)
    assert env == {"POD": "consumer-x2b7k", "NODE": "cpu-node-2", "WHERE": "consumer-x2b7k@cpu-node-2"}
    assert container_argv(container, env) == [sys.executable, "-m", "renderer", "--name", "consumer-x2b7k",
                                              "cpu-node-2", "$(POD)", "$(NOPE)"]


def test_a_client_waiting_for_every_kind_syncs(source: LocalSource) -> None:
    from kubeview.commands.snapshot import sync

    model = sync(source, timeout=10)
    assert len(model.nodes) == 5 and len(model.pods) == 18 and model.connection.state == "live"
