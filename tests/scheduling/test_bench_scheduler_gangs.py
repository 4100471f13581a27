"""`kubeview bench scheduler`'s gang workloads (scheduler_perf's podgroup/gangscheduling shape): groups
made and named as upstream's templates make them, placed all or nothing in the embedded loop, and their
pods/s printed beside the plain workload's."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubeview.bench.scheduler.report import gang_lines
from kubeview.bench.scheduler.run import run_workload
from kubeview.bench.scheduler.scenarios import ScenarioError, load, pod_group_objects, pod_objects, scaled

GANGS = """
- name: Gangs
  packing: {policy: pack}
  defaultNodeTemplate:
    metadata: {namePrefix: gpu-node-}
    status: {capacity: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "2"}}
  defaultPodTemplate:
    spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "GPUS"}, limits: {nvidia.com/gpu: "GPUS"}}}]}
  workloadTemplate:
  - {opcode: createNodes, countParam: $nodes}
  - {opcode: createPodGroups, countParam: $groups, minCountParam: $size}
  - {opcode: createPods, countParam: $pods, podGroupSizeParam: $size, collectMetrics: true}
  workloads:
  - {name: Plain, params: {nodes: 2, groups: 0, size: 0, pods: 3}}
  - {name: Gangs3, params: {nodes: 2, groups: 1, size: 3, pods: 3}}
"""


def workloads(tmp_path: Path, gpus: int) -> list:
    path = tmp_path / "gangs.yaml"
    path.write_text(GANGS.replace("GPUS", str(gpus)))
    return load(path)


def test_a_gang_fragmentation_blocks_binds_nothing_where_plain_pods_bind_two(tmp_path: Path) -> None:
    """3 x 2 GPUs on two 2-GPU nodes: plain, two of three bind; as a gang of minCount 3, none does."""
    plain, gang = (run_workload(w) for w in workloads(tmp_path, 2))
    assert (plain.scheduled, plain.unschedulable, plain.gang_size) == (2, 1, 0)
    assert (gang.scheduled, gang.unschedulable, gang.gang_size) == (0, 3, 3)
    assert gang.gpu["gpus_requested"] == 0  # nothing held for a gang that cannot run


def test_a_gang_that_fits_binds_whole_and_prints_beside_plain(tmp_path: Path) -> None:
    plain, gang = (run_workload(w) for w in workloads(tmp_path, 1))
    assert (gang.scheduled, gang.unschedulable) == (3, 0) and gang.gpu["gpus_requested"] == 3
    (line,) = gang_lines([plain, gang])
    assert line.startswith("    gangs of 3 (Gangs/Gangs3): ") and "x plain (Gangs/Plain: " in line
    assert line.count("pods/s") == 2


def test_groups_and_members_are_named_as_scheduler_perfs_templates(tmp_path: Path) -> None:
    """podgroup.yaml: gang-<Index>; gang-pod.yaml: podGroupName gang-<Index / podsPerGroup>."""
    _, gang = workloads(tmp_path, 1)
    groups_op, pods_op = gang.ops[1], gang.ops[2]
    assert pod_group_objects(groups_op) == [{
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": "gang-0"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}}]
    pods = pod_objects(pods_op, 0, group_prefix="g-")
    assert [p["spec"]["schedulingGroup"]["podGroupName"] for p in pods] == ["g-0"] * 3
    assert "schedulingGroup" not in pods_op.templates[0]["spec"]  # the template stays as written


def test_bundled_gang_workloads_are_upstreams_sizes_and_quick_keeps_group_sizes() -> None:
    gangs = [w for w in load() if w.test == "GangScheduling"]
    assert [(w.name, w.gang_size, w.has_groups) for w in gangs] == [
        ("5000Nodes_Plain", 0, False), ("5000Nodes_Gangs4", 4, True), ("5000Nodes_Gangs8", 8, True)]
    quick = scaled(gangs, 0.1)
    assert [(op.count, op.min_count, op.group_size) for op in quick[2].ops] == [(500, 0, 0), (12, 8, 0), (96, 0, 8)]


def test_a_group_without_min_count_says_where(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("- name: x\n  workloadTemplate: [{opcode: createPodGroups, count: 2}]\n  workloads: [{name: w}]")
    with pytest.raises(ScenarioError, match=r"x\): workload w: op 0: createPodGroups needs minCount >= 1"):
        load(path)
