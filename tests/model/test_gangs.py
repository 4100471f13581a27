"""Gangs in the model: the recorded 1.36 groups (tests/fixtures/k8s/gang), 1.37's v1beta1 shape, and
KAI, Kueue and Volcano objects, with members and counts computed from the pods."""

from __future__ import annotations

from gang_builders import (
    kai_pod_group,
    kueue_workload,
    pod,
    v1beta1_pod_group,
    v1beta1_workload,
    volcano_pod_group,
)
from kubeapi import fixtures

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, WatchEvent

WAITING = ("pod group is unschedulable, waiting for minCount pods from a gang to be scheduled, one or more "
           "plugins asked to wait and no plugin rejected pod")


def recorded(pods: str = "gang/pods.json") -> ClusterModel:
    m = ClusterModel()
    m.apply(Listed("Workload", fixtures.load("gang/workloads.json")["items"]))
    m.apply(Listed("PodGroup", fixtures.load("gang/podgroups.json")["items"]))
    m.apply(Listed("Pod", fixtures.load(pods)["items"]))
    return m


def test_recorded_groups_with_counts_from_their_pods() -> None:
    a, b = recorded().gangs.gangs()
    assert (a.name, a.scheduler, a.api_version, a.min_count, a.size) == (
        "gang-a-workers", "kubernetes", "scheduling.k8s.io/v1alpha2", 3, None)
    assert (a.condition_type, a.condition_status, a.condition_reason, a.condition_message) == (
        "PodGroupScheduled", "False", "Unschedulable", "pod group is unschedulable")
    assert (a.pending, a.placed, a.running, a.finished, a.state) == (3, 0, 0, 0, "waiting")
    assert a.workload == "gang-a" and a.disruption_mode == "Pod" and a.queue is None
    # gang-b's pods are bound (no kubelets in the recording: phase Pending on a node)
    assert (b.placed, b.pending, b.state, b.condition_status, b.condition_reason) == (3, 0, "scheduled", "True", "Scheduled")
    assert sorted(m.node for m in b.members) == ["gpu-node-1", "gpu-node-1", "gpu-node-2"]


def test_each_pending_member_keeps_its_own_reason() -> None:
    a = recorded("gang/pods-gang-a-pending.json").gangs.get("PodGroup", "gang", "gang-a-workers")
    by_name = {m.name: m for m in a.members}
    assert by_name["gang-a-0"].message == by_name["gang-a-2"].message == WAITING
    assert by_name["gang-a-1"].message.startswith("0/5 nodes are available: 2 Insufficient nvidia.com/gpu")
    assert {m.reason for m in a.members} == {"Unschedulable"}
    assert list(a.waiting_reasons().values()) == [2, 1]


def test_the_recorded_watches_end_where_the_lists_are() -> None:
    m = ClusterModel()
    m.apply(Listed("PodGroup", []))
    m.apply(Listed("Pod", []))
    for kind, name in (("PodGroup", "gang/watch-podgroups.jsonl"), ("Pod", "gang/watch-pods.jsonl")):
        for e in fixtures.watch_events(name):
            m.apply(WatchEvent(kind, e["type"], e["object"]))
    listed = recorded()
    assert [(g.name, g.condition_status, g.placed, g.pending) for g in m.gangs.gangs()] == \
        [(g.name, g.condition_status, g.placed, g.pending) for g in listed.gangs.gangs()]


def test_v1beta1_group_its_workload_owner_and_shared_claims() -> None:
    m = ClusterModel()
    m.apply(WatchEvent("Workload", "ADDED", v1beta1_workload()))
    m.apply(WatchEvent("PodGroup", "ADDED", v1beta1_pod_group()))
    for i in range(3):
        m.apply(WatchEvent("Pod", "ADDED", pod(f"w{i}", node=f"n{i}", group="train-workers")))
    m.apply(WatchEvent("Pod", "ADDED", pod("w3", group="train-workers",
                                           scheduled=("Unschedulable", "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."))))
    g = m.gangs.get("PodGroup", "train", "train-workers")
    assert (g.api_version, g.condition_type, g.workload, g.owner, g.disruption_mode) == (
        "scheduling.k8s.io/v1beta1", "PodGroupInitiallyScheduled", "train", "Job/train", "All")
    assert g.claims == ("train-fabric", "train-workers-scratch-x7") and g.claim_refs == ("fabric", "scratch")
    assert (g.running, g.pending, g.state) == (3, 1, "waiting")
    assert g.members[3].message == "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
    m.apply(WatchEvent("Pod", "MODIFIED", pod("w3", node="n0", group="train-workers")))
    assert m.gangs.get("PodGroup", "train", "train-workers").state == "running"


def test_kai_pod_group_newest_scheduling_condition_and_reported_counts() -> None:
    m = ClusterModel()
    m.apply(Listed("kai.PodGroup", [kai_pod_group()]))
    m.apply(Listed("Pod", [pod(f"llm-{i}", ns="research", annotations={"pod-group-name": "pg-llm"},
                               scheduled=("Unschedulable", "pod is waiting for its group")) for i in range(3)]))
    (g,) = m.gangs.gangs()
    assert (g.scheduler, g.min_count, g.queue, g.workload, g.phase) == ("kai", 3, "team-a", "PyTorchJob/llm", "Pending")
    assert (g.condition_type, g.condition_reason) == ("UnschedulableOnNodePool", "OverLimit")
    assert g.condition_message == "queue team-a would exceed its GPU limit: 8 of 8 in use (node pool default)"
    assert g.subgroups == (("master", 1), ("worker", 2))
    assert g.reported == {"pending": 3, "running": 0} and g.pending == 3


def test_kueue_workload_pod_sets_and_quota_reason() -> None:
    m = ClusterModel()
    m.apply(WatchEvent("kueue.Workload", "ADDED", kueue_workload()))
    g = m.gangs.get("kueue.Workload", "ml", "job-bert-3f2a1")
    assert (g.scheduler, g.size, g.min_count, g.queue, g.workload) == ("kueue", 5, 3, "gpu-queue", "Job/bert")
    assert (g.condition_type, g.condition_status, g.condition_reason) == ("QuotaReserved", "False", "TopologyPlacementFailed")
    assert g.state == "empty"  # not admitted: its Job is suspended and has no pods
    admitted = kueue_workload(admitted=True)
    admitted["metadata"]["resourceVersion"] = "8"
    m.apply(WatchEvent("kueue.Workload", "MODIFIED", admitted))
    for i in range(5):
        m.apply(WatchEvent("Pod", "ADDED", pod(f"bert-{i}", ns="ml", node="n1",
                                               annotations={"kueue.x-k8s.io/workload": "job-bert-3f2a1"})))
    g = m.gangs.get("kueue.Workload", "ml", "job-bert-3f2a1")
    assert (g.condition_type, g.running, g.state) == ("Admitted", 5, "running")


def test_volcano_pod_group_by_either_annotation() -> None:
    m = ClusterModel()
    m.apply(Listed("volcano.PodGroup", [volcano_pod_group()]))
    m.apply(WatchEvent("Pod", "ADDED", pod("mpi-0", ns="hpc", node="n1",
                                           annotations={"scheduling.k8s.io/group-name": "mpi-7c1"})))
    m.apply(WatchEvent("Pod", "ADDED", pod("mpi-1", ns="hpc", annotations={"scheduling.volcano.sh/group-name": "mpi-7c1"},
                                           scheduled=("Unschedulable", "0/1 nodes are unavailable"))))
    g = m.gangs.get("volcano.PodGroup", "hpc", "mpi-7c1")
    assert (g.scheduler, g.min_count, g.phase, g.condition_reason, g.workload) == (
        "volcano", 2, "Pending", "NotEnoughResources", "Job/mpi")
    assert (g.running, g.pending, g.reported) == (1, 1, {"running": 1})


def test_members_come_and_go_and_other_pods_cost_nothing() -> None:
    m = ClusterModel()
    m.apply(WatchEvent("Pod", "ADDED", pod("w0", group="train-workers")))  # before its group: kept
    assert m.gangs.orphans() == {("PodGroup", "train", "train-workers"): 1}
    m.apply(WatchEvent("PodGroup", "ADDED", v1beta1_pod_group()))
    assert [x.name for x in m.gangs.get("PodGroup", "train", "train-workers").members] == ["w0"]
    version = m.gangs.version
    m.apply(WatchEvent("Pod", "ADDED", pod("plain")))
    m.apply(WatchEvent("Pod", "MODIFIED", pod("w0", group="train-workers")))  # nothing the gang shows changed
    assert m.gangs.version == version
    finished = pod("w0", node="n1", phase="Succeeded", group="train-workers")
    m.apply(WatchEvent("Pod", "MODIFIED", finished))
    assert m.gangs.get("PodGroup", "train", "train-workers").finished == 1
    m.apply(WatchEvent("Pod", "DELETED", finished))
    assert m.gangs.get("PodGroup", "train", "train-workers").members == ()
    m.apply(WatchEvent("PodGroup", "DELETED", v1beta1_pod_group()))
    assert m.gangs.gangs() == [] and m.gangs.of_pod("train", "w0") == []


def test_a_kind_listed_empty_is_known_served_or_not() -> None:
    m = ClusterModel()
    m.apply(Listed("kai.PodGroup", []))
    assert m.gangs.listed == {"kai.PodGroup"} and m.gangs.gangs() == []


def test_kai_members_by_subgroup_from_the_recording() -> None:
    m = ClusterModel()
    m.apply(Listed("kai.PodGroup", fixtures.load("batch-schedulers/kai-podgroups.json")["items"]))
    m.apply(Listed("Pod", fixtures.load("batch-schedulers/kai-pods.json")["items"]))
    g = m.gangs.get("kai.PodGroup", "kai", "pg-infer-b")
    assert g.subgroup_counts() == [("prefill", 1, 2, 1), ("decode", 1, 2, 1)]
    assert {x.name: x.subgroup for x in g.members}["infer-b-3"] == "decode"
