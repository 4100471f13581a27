"""`kubeview bench scheduler --kubeconfig` on the real plane, at a size that runs in seconds.

The full-size figures (scripts/realk8s-plane.py, docs/scheduler.md) are benchmark output, not
assertions; this test proves the mechanics they rest on: the three schedulers (plain, the native
packing profile and the shipped second-scheduler profile with the extender) each place every pod of a
run, pods leave (deletePods), the figures print without the embedded scheduler's 2,000 pods/s
verdict, the prediction is made from the plain scheduler measured in the same run, and nothing the
bench created is left behind. PackingArrivals at 8 nodes shows what packing is for, by construction
(its comment in the scenario file): the plain scheduler's first 8 pods take all 8 nodes, so it leaves
8-GPU pods Pending, and both packing schedulers place every pod.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from kubeview.bench.scheduler.kube_cli import run_on_cluster
from kubeview.bench.scheduler.kube_plan import RUN_LABEL
from kubeview.bench.scheduler.scenarios import load
from kubeview.cluster.kube.config import connect

from .bench_plane import SCHEDULERS, BenchPlane
from .plane import REPO, Plane

SCENARIOS = REPO / "kubeview" / "bench" / "scenarios" / "scheduler-realk8s.yaml"
SMALL = {"cpuNodes: 4500, gpuNodes: 500, measurePods: 1000": "cpuNodes: 13, gpuNodes: 7, measurePods: 50",
         "gpuNodes: 64, pods: 128": "gpuNodes: 8, pods: 16",
         "gpuNodes: 40, smallPods: 60, leaving: 30, bigPods: 24": "gpuNodes: 5, smallPods: 8, leaving: 4, bigPods: 3"}


@pytest.fixture(scope="module")
def bench_plane(plane: Plane) -> Iterator[BenchPlane]:
    bench = BenchPlane(plane).start(node_cache_capable=True)
    try:
        yield bench
    finally:
        bench.stop()


def small_scenarios(tmp_path: Path) -> Path:
    text = SCENARIOS.read_text()
    for full, small in SMALL.items():
        assert full in text, f"{SCENARIOS.name} no longer has the workload sizes this test shrinks: {full}"
        text = text.replace(full, small)
    path = tmp_path / "small.yaml"
    path.write_text(text)
    return path


def test_bench_runs_three_schedulers_and_leaves_nothing(bench_plane: BenchPlane, tmp_path: Path,
                                                        realk8s_counts: dict[str, str]) -> None:
    workloads = load(small_scenarios(tmp_path))
    lines: list[str] = []
    args = argparse.Namespace(kubeconfig=str(bench_plane.plane.kubeconfig), timeout=40.0, schedulers=list(SCHEDULERS))
    assert run_on_cluster(args, workloads, None, lines.append) == 0, "\n".join(lines)
    out = "\n".join(lines)

    basic = [line for line in lines if line.startswith("RealGPU1/5000Nodes/")]
    assert [line.split()[0].rsplit("/", 1)[1] for line in basic] == list(SCHEDULERS), out
    for line in basic:  # every pod bound, by each scheduler; no embedded-scheduler verdict on a real one
        assert "20 nodes" in line and "50 pods" in line and "unschedulable" not in line, out
    assert "target >= 2000" not in out, out
    assert "Average ratio kubeview-native / default-scheduler: " in out, out
    assert ", kubeview-scheduler / default-scheduler: " in out, out
    assert sum("prediction" in line for line in lines) >= 1, out

    arrivals = [line for line in lines if line.startswith("PackingArrivals/64Nodes/")]
    assert len(arrivals) == 3 and all("8 nodes" in line and "16 pods" in line for line in arrivals), out
    side = [line for line in lines if "left Pending side by side:" in line]
    assert len(side) == 3, out  # one per workload
    plain, native, extender = (int(part.split()[1]) for part in side[1].split(": ", 1)[1].split(", "))
    assert plain >= 1 and native == 0 and extender == 0, side[1]  # 8 arrivals take 8 nodes under plain
    assert any(line.strip().startswith("kubeview plan: ") for line in lines), out  # for plain's Pending

    frag = [line for line in lines if line.startswith("GPUFragmentation/40Nodes/")]
    assert len(frag) == 3 and all("5 nodes" in line and "3 pods" in line for line in frag), out
    pending = [line for line in lines if "left Pending:" in line]
    assert len(pending) == 9, out  # one per scheduler per workload
    assert "cleaned up:" in out, out

    conn = connect(str(bench_plane.plane.kubeconfig), None)
    core = client.CoreV1Api(conn.api_client)
    nodes = json.loads(core.list_node(label_selector=RUN_LABEL, _preload_content=False).data)["items"]
    assert nodes == [], [n["metadata"]["name"] for n in nodes]
    spaces = json.loads(core.list_namespace(label_selector=RUN_LABEL, _preload_content=False).data)["items"]
    assert all(ns["metadata"].get("deletionTimestamp") for ns in spaces), "a bench namespace not being deleted"
    realk8s_counts["bench on plane"] = "; ".join(p.strip() for p in side)
