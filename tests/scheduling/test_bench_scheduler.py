"""`kubeview bench scheduler`'s parts: scenario files, the in-process scheduler loop, DataItems and the
comparison table. (The figures themselves are the command's business, not a test's.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kubeview.bench.scheduler.report import compare_table
from kubeview.bench.scheduler.run import run_workload, throughput_summary
from kubeview.bench.scheduler.scenarios import ScenarioError, load

ROOT = Path(__file__).resolve().parents[2]

TINY = """
- name: GPU112
  packing: {policy: POLICY}
  workloadTemplate:
  - opcode: createNodes
    count: 2
    nodeTemplate:
      metadata: {namePrefix: gpu-node-}
      status: {capacity: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "2"}}
  - opcode: createPods
    count: 3
    collectMetrics: true
    podTemplates:
    - spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}}]}
    - spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}}]}
    - spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "2"}, limits: {nvidia.com/gpu: "2"}}}]}
  workloads:
  - name: 2Nodes
    params: {}
"""


def test_bundled_scenarios() -> None:
    workloads = load()
    assert [(w.full_name, w.nodes) for w in workloads] == [
        ("SchedulingBasic/500Nodes", 500), ("SchedulingBasic/5000Nodes", 5000), ("GPUPacking/5000Nodes", 5000),
        ("GangScheduling/5000Nodes_Plain", 5000), ("GangScheduling/5000Nodes_Gangs4", 5000),
        ("GangScheduling/5000Nodes_Gangs8", 5000)]
    measured = [op for op in workloads[2].ops if op.collect]
    assert [op.count for op in measured] == [2000] and len(measured[0].templates) == 3


@pytest.mark.parametrize(("policy", "unschedulable"), [("pack", 0), ("spread", 1)])
def test_embedded_loop_packs_1_1_2(tmp_path: Path, policy: str, unschedulable: int) -> None:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY.replace("POLICY", policy))
    (workload,) = load(path)
    result = run_workload(workload)
    assert (result.scheduled, result.unschedulable) == (3 - unschedulable, unschedulable)
    assert result.gpu["gpus_requested"] == (4 if policy == "pack" else 2)
    item = result.data_item()
    assert item["unit"] == "pods/s"
    assert item["labels"] == {"Metric": "SchedulingThroughput", "Name": "GPU112/2Nodes"}
    assert set(item["data"]) == {"Average", "Perc50", "Perc90", "Perc95", "Perc99"}


@pytest.mark.parametrize(("text", "reason"), [
    ("- name: x\n  workloadTemplate: [{opcode: createNodes, countParam: $n}]\n  workloads: [{name: w, params: {}}]",
     "countParam '$n' names no param"),
    ("- name: x\n  workloadTemplate: [{opcode: deleteAll}]\n  workloads: [{name: w}]", "opcode must be one of"),
    ("- name: x\n  packing: {policy: tetris}\n  workloadTemplate: [{opcode: barrier}]\n  workloads: [{name: w}]",
     "packing: policy must be one of"),
    ("{", "is not valid YAML"),
])
def test_bad_scenarios_say_where_and_why(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError, match=reason.replace("$", r"\$")):
        load(path)


def test_throughput_summary_is_scheduler_perfs_nearest_rank() -> None:
    samples = [float(x) for x in range(1, 101)]
    assert throughput_summary(samples) == {"Average": 50.5, "Perc50": 50.0, "Perc90": 90.0, "Perc95": 95.0,
                                           "Perc99": 99.0}
    assert throughput_summary([7.0])["Perc99"] == 7.0


def test_compare_table() -> None:
    def doc(avg: float, p99: float) -> dict:
        return {"dataItems": [
            {"data": {"Average": avg}, "unit": "pods/s", "labels": {"Metric": "SchedulingThroughput", "Name": "A/1"}},
            {"data": {"Perc99": p99}, "unit": "ms", "labels": {"Metric": "ExtenderFilterPrioritizeLatency",
                                                               "Name": "Extender/5000NodeNames"}}]}
    table = compare_table(doc(2000, 2.0), doc(2500, 1.5))
    assert "A/1" in table and "+25.0" in table and "-25.0" in table


@pytest.mark.slow
def test_bench_command_prints_data_items(tmp_path: Path) -> None:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY.replace("POLICY", "pack"))
    out = subprocess.run([sys.executable, "-m", "kubeview", "bench", "scheduler", str(path), "--quick", "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["version"] == "v1"
    metrics = [(i["labels"]["Metric"], i["labels"]["Name"]) for i in doc["dataItems"]]
    assert metrics[0] == ("SchedulingThroughput", "GPU112/2Nodes")
    assert {m for m, _ in metrics[1:]} == {"ExtenderLatency"}
    # the shipped verbs, and the extender's CPU per pod (what predicts its cost to kube-scheduler)
    assert all(i["labels"]["Verbs"] == "prioritize" and i["data"]["CPUPerPod"] > 0 for i in doc["dataItems"][1:])


def test_bench_against_another_tree_alternates_and_prints_ratios(tmp_path: Path) -> None:
    """`--against TREE`: both trees measured in one run, each in its own interpreter (here the same tree
    twice, so the ratios are about 1), and one clear line for a directory that is not a kubeview tree."""
    cmd = [sys.executable, "-m", "kubeview", "bench", "scheduler", "--quick", "--rounds", "1"]
    out = subprocess.run([*cmd, "--against", str(ROOT)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    rounds = [line for line in out.stdout.splitlines() if line.strip().startswith("round 1")]
    assert len(rounds) == 4  # two workloads from each side
    ratios = [line for line in out.stdout.splitlines() if "this/other" in line]
    assert [line.split()[0] for line in ratios] == ["Extender/500NodeNames", "Extender/50Nodes"]
    assert all("Perc99" in line and "CPUPerPod" in line for line in ratios)
    bad = subprocess.run([*cmd, "--against", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2  # a path on the command line that is not what it should be: usage
    assert bad.stderr.strip().splitlines() == [f"kubeview bench scheduler: --against {tmp_path} is not a kubeview source tree"]
