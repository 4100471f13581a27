"""`kubeview bench scheduler --kubeconfig`: its mechanics against the test API server and a test binder.

The real kube-scheduler cannot run here; the test binder (tests/kubeapi/binder.py) places the pods of
the scheduler names it serves, `default-scheduler` spreading and `kubeview-scheduler` packing, so the
two runs differ the way they do on a real plane. What is checked is kubeview's side: what it creates,
how it counts bindings, that it refuses other people's clusters, and that it leaves nothing behind,
Ctrl-C included.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kubeapi import KubeAPI
from kubeapi.binder import TestBinder
from kubeapi.live import LiveCluster

from kubeview.bench.scheduler.kube import KubeBench, KubeOptions, creation_bound
from kubeview.bench.scheduler.kube_cli import ratio_line, round_ratios
from kubeview.bench.scheduler.kube_plan import (
    RUN_LABEL,
    ThroughputCollector,
    bench_node,
    bench_pod,
    foreign_nodes,
)
from kubeview.bench.scheduler.scenarios import load
from kubeview.cluster.kube.config import connect

GPU112 = """
- name: GPU112
  workloadTemplate:
  - opcode: createNodes
    count: 2
    nodeTemplate:
      metadata: {namePrefix: gpu-node-}
      status: {capacity: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "2"}}
  - opcode: createPods
    count: COUNT
    collectMetrics: true
    podTemplates:
    - spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}}]}
    - spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}}]}
    - spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "2"}, limits: {nvidia.com/gpu: "2"}}}]}
  workloads:
  - name: 2Nodes
    params: {}
"""

MANY = """
- name: Many
  workloadTemplate:
  - opcode: createNodes
    count: 20
    nodeTemplate:
      metadata: {namePrefix: node-}
      status: {capacity: {cpu: "4", memory: 32Gi, pods: "110"}}
  - opcode: createPods
    count: 10
    podTemplate: {spec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}]}}
  - opcode: createPods
    count: PODS
    collectMetrics: true
    podTemplate: {spec: {containers: [{name: c, resources: {requests: {cpu: 100m}}}]}}
  workloads:
  - name: 20Nodes
    params: {}
"""

POLICIES = {"default-scheduler": "spread", "kubeview-scheduler": "pack"}


@pytest.fixture
def live_api(tmp_path: Path):
    live = LiveCluster([])
    api = KubeAPI(live=live).start()
    api.kubeconfig = api.write_kubeconfig(tmp_path / "kubeconfig")
    binders: list[TestBinder] = []

    def start_binder(pause: float = 0.0) -> TestBinder:
        binders.append(TestBinder(live, POLICIES, pause).start())
        return binders[-1]

    try:
        yield api, live, start_binder
    finally:
        for binder in binders:
            binder.stop()
        api.stop()


def _scenario(tmp_path: Path, text: str, **subs: int) -> Path:
    for key, value in subs.items():
        text = text.replace(key, str(value))
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return path


def _bench(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kubeview", "bench", "scheduler", *args],
                          capture_output=True, text=True, timeout=timeout)


def _nothing_left(live: LiveCluster) -> bool:
    return not live.nodes and not live.pods and not live.namespaces


# -- pure parts ----------------------------------------------------------------------------------
def test_collector_skips_the_first_sample_and_spreads_a_quiet_stretch() -> None:
    c = ThroughputCollector(1.0)
    c.tick(1.0, 0)  # nothing scheduled yet: nothing recorded
    c.tick(2.0, 5)  # the first sample is skipped (creation and sampling started apart)
    c.tick(3.0, 15)  # 10 pods in 1 s
    c.tick(4.0, 15)  # none: held
    c.tick(5.0, 15)  # none: held
    c.tick(6.0, 24)  # 9 pods over 3 s: 3/s, recorded for each of the 3 intervals
    assert c.samples == [10.0, 3.0, 3.0, 3.0]


def test_bench_objects_are_labelled_and_select_only_the_runs_nodes() -> None:
    node, status = bench_node({"metadata": {"name": "gpu-node-00001", "labels": {"pool": "gpu"}},
                               "status": {"capacity": {"cpu": "8"}, "allocatable": {"cpu": "8"}}}, "abc123")
    assert node["metadata"]["name"] == "kvb-abc123-gpu-node-00001"
    assert node["metadata"]["labels"] == {"pool": "gpu", RUN_LABEL: "abc123",
                                          "kubernetes.io/hostname": "kvb-abc123-gpu-node-00001"}
    assert "status" not in node and status["status"]["allocatable"] == {"cpu": "8"}
    assert status["status"]["conditions"][0]["type"] == "Ready"
    pod = bench_pod({"metadata": {"name": "p-1", "uid": "uid-p-1", "resourceVersion": "1"},
                     "spec": {"nodeSelector": {"pool": "gpu"}, "containers": []}, "status": {"phase": "Pending"}},
                    "abc123", "kubeview-scheduler")
    assert pod["metadata"]["namespace"] == "kubeview-bench-abc123"
    assert "uid" not in pod["metadata"] and "status" not in pod
    assert pod["spec"]["schedulerName"] == "kubeview-scheduler"
    assert pod["spec"]["nodeSelector"] == {"pool": "gpu", RUN_LABEL: "abc123"}
    assert {t["key"] for t in pod["spec"]["tolerations"]} == {"node.kubernetes.io/not-ready",
                                                              "node.kubernetes.io/unreachable"}
    assert foreign_nodes([node, {"metadata": {"name": "worker-1"}}]) == ["worker-1"]
    assert foreign_nodes([node], run="other") == ["kvb-abc123-gpu-node-00001"]


# -- against the test API server ----------------------------------------------------------------
def test_runs_each_scheduler_on_the_same_nodes_and_cleans_up(live_api, tmp_path: Path) -> None:
    api, live, start_binder = live_api
    start_binder()
    scenario = _scenario(tmp_path, GPU112, COUNT=3)
    out = _bench([str(scenario), "--kubeconfig", str(api.kubeconfig), "--json"])
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    names = [i["labels"]["Name"] for i in doc["dataItems"]]
    assert names == ["GPU112/2Nodes/default-scheduler", "GPU112/2Nodes/kubeview-scheduler"]
    assert len(api.requests_to("/api/v1/nodes", method="POST")) == 2  # made once, for both schedulers
    patched = [r for r in api.requests if r.method == "PATCH" and r.path.endswith("/status")]
    assert len(patched) == 2 and all(r.json()["status"]["allocatable"]["nvidia.com/gpu"] == "2" for r in patched)
    created = [r.json() for r in api.requests if r.method == "POST" and r.path.endswith("/pods")]
    assert len(created) == 6
    assert [p["spec"]["schedulerName"] for p in created].count("kubeview-scheduler") == 3
    assert _nothing_left(live)
    assert "cleaned up" in out.stderr


def test_prints_both_schedulers_their_packing_and_the_ratio(live_api, tmp_path: Path) -> None:
    api, live, start_binder = live_api
    start_binder()
    out = _bench([str(_scenario(tmp_path, GPU112, COUNT=3)), "--kubeconfig", str(api.kubeconfig), "--parallel", "1"])
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    spread = next(i for i, line in enumerate(lines) if line.startswith("GPU112/2Nodes/default-scheduler"))
    pack = next(i for i, line in enumerate(lines) if line.startswith("GPU112/2Nodes/kubeview-scheduler"))
    assert "(1 unschedulable)" in lines[spread] and "unschedulable" not in lines[pack]
    assert "gpu_nodes_in_use=2" in lines[spread + 1] and "stranded_gpus=2" in lines[spread + 1]
    assert "gpus_requested=4" in lines[pack + 1] and "stranded_gpus=0" in lines[pack + 1]
    assert any(line.strip().startswith("Average ratio kubeview-scheduler / default-scheduler") for line in lines)
    assert _nothing_left(live)


def test_throughput_is_measured_from_bindings(live_api) -> None:
    api, live, start_binder = live_api
    start_binder(pause=0.004)  # ~250 pods/s at most
    workloads = load(_scenario(Path(api.kubeconfig).parent, MANY, PODS=300))
    bench = KubeBench(connect(str(api.kubeconfig)), KubeOptions(schedulers=["default-scheduler"], interval=0.1),
                      lambda line: None)
    [result] = bench.run(workloads)
    assert result.measured_pods == 300 and result.scheduled == 300 and result.unschedulable == 0
    assert len(result.samples) >= 5
    average = sum(result.samples) / len(result.samples)
    assert 20 < average < 300, result.samples  # bounded by the binder's pause, and not nothing
    assert _nothing_left(live)


def test_rounds_reverse_the_order_and_give_each_rounds_ratio(live_api) -> None:
    """--rounds 3: A B, B A, A B on nodes made once; every run counted, each round's ratio printed."""
    api, live, start_binder = live_api
    start_binder(pause=0.002)
    workloads = load(_scenario(Path(api.kubeconfig).parent, MANY, PODS=100))
    said: list[str] = []
    schedulers = ["default-scheduler", "kubeview-scheduler"]
    bench = KubeBench(connect(str(api.kubeconfig)), KubeOptions(schedulers=schedulers, interval=0.1, rounds=3),
                      said.append)
    group = bench.run(workloads)
    assert [r.name.rsplit("/", 1)[1] for r in group] == schedulers  # the baseline stays first
    assert [line.strip() for line in said if "round" in line] == [
        "round 1 of 3: default-scheduler, kubeview-scheduler", "round 2 of 3: kubeview-scheduler, default-scheduler",
        "round 3 of 3: default-scheduler, kubeview-scheduler"]
    assert len(api.requests_to("/api/v1/nodes", method="POST")) == 20  # made once for all six runs
    runs: list[list] = []  # the created pods' scheduler, run after run (110 pods a run)
    for r in api.requests:
        if r.method == "POST" and r.path.endswith("/pods"):
            name = r.json()["spec"]["schedulerName"]
            if runs and runs[-1][0] == name:
                runs[-1][1] += 1
            else:
                runs.append([name, 1])
    assert runs == [["default-scheduler", 110], ["kubeview-scheduler", 220], ["default-scheduler", 220],
                    ["kubeview-scheduler", 110]]
    for r in group:
        assert r.measured_pods == 300 and r.scheduled == 300 and len(r.round_rates) == 3
        assert all(rate > 0 for rate in r.round_rates), r.round_rates
    ratios = round_ratios(group)["kubeview-scheduler"]
    assert ratios == [k / d for k, d in zip(group[1].round_rates, group[0].round_rates, strict=True)]
    line = ratio_line(group).splitlines()[1]
    assert line.strip().startswith("kubeview-scheduler / default-scheduler per round: ")
    assert line.endswith(f"; median {sorted(ratios)[1]:.2f}")
    assert _nothing_left(live)


def test_refuses_a_cluster_with_nodes_it_did_not_make(live_api, tmp_path: Path) -> None:
    api, live, start_binder = live_api
    live.create_node({"metadata": {"name": "worker-1"}})
    scenario = str(_scenario(tmp_path, GPU112, COUNT=3))
    out = _bench([scenario, "--kubeconfig", str(api.kubeconfig)])
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        f"kubeview bench scheduler: kubeview-test @ {api.url} has 1 node(s) kubeview bench did not create "
        "(worker-1); the bench adds fake nodes that other pods could be scheduled onto. Use a cluster of its "
        "own, or pass --yes to run anyway."]
    assert not api.requests_to("/api/v1/nodes", method="POST") and not live.namespaces
    start_binder()
    out = _bench([scenario, "--kubeconfig", str(api.kubeconfig), "--yes", "--schedulers", "kubeview-scheduler"])
    assert out.returncode == 0, out.stderr
    assert list(live.nodes) == ["worker-1"]  # its own nodes removed, the other left alone
    assert not any(p["spec"].get("nodeName") == "worker-1" for p in live.pods.values())


def test_a_scheduler_that_is_not_there_is_one_line(live_api, tmp_path: Path) -> None:
    api, live, start_binder = live_api
    start_binder()
    bench = KubeBench(connect(str(api.kubeconfig)), KubeOptions(schedulers=["nobody"], stall=1.0), lambda line: None)
    with pytest.raises(Exception, match=r"no scheduler named 'nobody' looked at the bench's pods in \d+ s"):
        bench.run(load(_scenario(tmp_path, GPU112, COUNT=3)))
    assert _nothing_left(live)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_run_removes_everything(live_api, tmp_path: Path, sig: int) -> None:
    api, live, start_binder = live_api
    start_binder(pause=0.05)  # 400 pods take 20 s: the signal lands mid-run
    scenario = _scenario(tmp_path, MANY, PODS=400)
    proc = subprocess.Popen([sys.executable, "-m", "kubeview", "bench", "scheduler", str(scenario),
                             "--kubeconfig", str(api.kubeconfig)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # not inherited SIG_IGN
    try:
        deadline = time.monotonic() + 60
        while sum(1 for p in live.pods.values() if p["spec"].get("nodeName")) < 20:
            assert time.monotonic() < deadline and proc.poll() is None, "the run did not get going"
            time.sleep(0.05)
        assert live.nodes
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "cleaned up" in out + err
    assert _nothing_left(live)


def test_creation_bound_only_when_placing_waited_for_creating() -> None:
    """The per-op line says creation was the limit when the last pod was placed within two samples
    of the last create, over a stretch long enough to tell (a 1 s burst says nothing)."""
    assert creation_bound(made=30.0, placed=31.0, interval=1.0)
    assert not creation_bound(made=8.3, placed=57.1, interval=1.0)  # RealGPU1 plain, 2026-11-29
    assert not creation_bound(made=1.1, placed=2.0, interval=1.0)
