"""`kubeview bench scheduler --kubeconfig` gang workloads on the gated real plane, at a size that runs in
seconds.

The full-size figures (scripts/realk8s-plane.py --gated, scenarios/scheduler-gang-realk8s.yaml) are
benchmark output, not assertions; this test proves the mechanics they rest on: the bench creates
scheduler_perf's PodGroups and members, the real kube-scheduler's gang plugin binds every group
whole (groups of 4 and 8), the gang pods/s print beside the plain workload's, and nothing the bench
created is left behind. On the default plane (no GenericWorkload) the gang workloads are skipped
with a line saying why, and the plain one still runs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kubernetes import client

from kubeview.bench.scheduler.kube_cli import run_on_cluster
from kubeview.bench.scheduler.kube_plan import RUN_LABEL
from kubeview.bench.scheduler.scenarios import load
from kubeview.cluster.kube.config import connect

from .plane import REPO, Plane

SCENARIOS = REPO / "kubeview" / "bench" / "scenarios" / "scheduler-gang-realk8s.yaml"
FULL = ("initNodes: 500, groups: 0, podsPerGroup: 0, measurePods: 1000",
        "initNodes: 500, groups: 250, podsPerGroup: 4, measurePods: 1000",
        "initNodes: 500, groups: 125, podsPerGroup: 8, measurePods: 1000")
# enough pods for a few one-second throughput samples (the scheduler's default client QPS of 50 binds 200
# in 4 s or more; CI time: 400 took 60 s for the three workloads), and room for all of them (20 nodes x 40
# pods of 100m)
SMALL = ("initNodes: 20, groups: 0, podsPerGroup: 0, measurePods: 200",
         "initNodes: 20, groups: 50, podsPerGroup: 4, measurePods: 200",
         "initNodes: 20, groups: 25, podsPerGroup: 8, measurePods: 200")


def small_scenarios(tmp_path: Path) -> Path:
    text = SCENARIOS.read_text()
    for full, small in zip(FULL, SMALL, strict=True):
        assert full in text, f"{SCENARIOS.name} no longer has the workload sizes this test shrinks: {full}"
        text = text.replace(full, small)
    path = tmp_path / "small.yaml"
    path.write_text(text)
    return path


def bench(plane: Plane, tmp_path: Path) -> list[str]:
    lines: list[str] = []
    args = argparse.Namespace(kubeconfig=str(plane.kubeconfig), timeout=60.0, schedulers=["default-scheduler"],
                              yes=True)  # other tests' kwok nodes may be there; the bench's pods select its own
    assert run_on_cluster(args, load(small_scenarios(tmp_path)), None, lines.append) == 0, "\n".join(lines)
    return lines


def test_gang_bench_binds_every_group_whole_and_prints_beside_plain(gated_plane: Plane, tmp_path: Path,
                                                                    realk8s_counts: dict[str, str]) -> None:
    lines = bench(gated_plane, tmp_path)
    out = "\n".join(lines)
    measured = [line for line in lines if line.startswith("GangScheduling/")]
    assert [line.split()[0] for line in measured] == [
        "GangScheduling/500Nodes_Plain/default-scheduler", "GangScheduling/500Nodes_Gangs4/default-scheduler",
        "GangScheduling/500Nodes_Gangs8/default-scheduler"], out
    for line in measured:  # every pod bound: each group whole, by the real gang plugin
        assert "20 nodes" in line and "200 pods" in line and "unschedulable" not in line, out
        assert float(line.split("Average")[1].split()[0]) > 0, line  # sampled: the run lasted seconds
    beside = [line.strip() for line in lines if line.strip().startswith("gangs of ")]
    assert [line.split(" (")[0] for line in beside] == ["gangs of 4", "gangs of 8"], out
    assert all("x plain (GangScheduling/500Nodes_Plain/default-scheduler: " in line for line in beside), out
    assert "cleaned up:" in out and "skipping" not in out, out

    conn = connect(str(gated_plane.kubeconfig), None)
    core = client.CoreV1Api(conn.api_client)
    nodes = json.loads(core.list_node(label_selector=RUN_LABEL, _preload_content=False).data)["items"]
    assert nodes == [], [n["metadata"]["name"] for n in nodes]
    spaces = json.loads(core.list_namespace(label_selector=RUN_LABEL, _preload_content=False).data)["items"]
    assert all(ns["metadata"].get("deletionTimestamp") for ns in spaces), "a bench namespace not being deleted"
    groups = json.loads(client.CustomObjectsApi(conn.api_client).list_cluster_custom_object(
        "scheduling.k8s.io", "v1beta1", "podgroups", label_selector=RUN_LABEL, _preload_content=False).data)["items"]
    assert all(g["metadata"].get("deletionTimestamp") for g in groups), "a bench PodGroup not being deleted"
    realk8s_counts["gang bench on gated plane"] = "; ".join(beside)


def test_gang_workloads_are_skipped_where_podgroups_are_not_served(plane: Plane, tmp_path: Path) -> None:
    lines = bench(plane, tmp_path)
    out = "\n".join(lines)
    assert any(line.startswith("skipping 2 gang workload(s) (GangScheduling/500Nodes_Gangs4, "
                               "GangScheduling/500Nodes_Gangs8)") and "GenericWorkload" in line for line in lines), out
    assert [line.split()[0] for line in lines if line.startswith("GangScheduling/")] == [
        "GangScheduling/500Nodes_Plain/default-scheduler"], out
