"""Gangs in the model on what Kubernetes 1.37.2 really writes (tests/fixtures/k8s/gang137, recorded from
the gated real plane): v1beta1 PodGroups, an incomplete gang that gets no status at all, a gang that
binds nothing, one that binds all, and a Job with spec.scheduling whose group the Job controller made."""

from __future__ import annotations

from kubeapi import fixtures

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed, WatchEvent

D = "gang137"


def model(workloads: str = "workloads.json", podgroups: str = "podgroups.json", pods: str = "pods.json") -> ClusterModel:
    m = ClusterModel()
    m.apply(Listed("Node", fixtures.load(f"{D}/nodes.json")["items"]))
    m.apply(Listed("Workload", fixtures.load(f"{D}/{workloads}")["items"]))
    m.apply(Listed("PodGroup", fixtures.load(f"{D}/{podgroups}")["items"]))
    m.apply(Listed("Pod", fixtures.load(f"{D}/{pods}")["items"]))
    return m


def test_three_gangs_as_1_37_leaves_them() -> None:
    a, b, c = model().gangs.gangs()
    assert [g.name for g in (a, b, c)] == ["gang-a-workers", "gang-b-workers", "gang-c-workers"]
    assert {g.api_version for g in (a, b, c)} == {"scheduling.k8s.io/v1beta1"}
    assert {g.disruption_mode for g in (a, b, c)} == {"Single"}
    assert (a.condition_type, a.condition_status, a.condition_reason) == (
        "PodGroupInitiallyScheduled", "False", "Unschedulable")
    assert a.condition_message.startswith("minCount (3) cannot be satisfied: ")
    assert (a.pending, a.bound, a.state) == (3, 0, "waiting")
    assert (b.condition_status, b.condition_reason, b.bound, b.state) == ("True", "Scheduled", 3, "running")
    # gang-c: 2 pods of minCount 3, no condition anywhere: only the count says why
    assert (c.condition_type, len(c.members), c.state) == (None, 2, "incomplete")
    assert {(m.reason, m.message) for m in c.members} == {(None, None)}


def test_member_messages_of_the_gang_that_binds_nothing() -> None:
    a = model(pods="pods-gang-a-pending.json").gangs.get("PodGroup", "gang", "gang-a-workers")
    messages = {m.name: m.message for m in a.members}
    held = ("pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, "
            "pod group preemption: No preemption victims found for incoming preemptor")
    assert messages == {"gang-a-0": held, "gang-a-1": held, "gang-a-2": "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."}


def test_a_job_with_spec_scheduling_shows_its_group_and_owner() -> None:
    m = model("workloads-with-job.json", "podgroups-with-job.json", "pods-job-train.json")
    (g,) = [g for g in m.gangs.gangs() if g.owner]
    assert (g.owner, g.workload, g.min_count) == ("Job/train", "train-86948cbfff", 2)
    assert g.name == "train-86948cbfff-train-pgt-0-9fcb76c9"
    assert sorted(x.node for x in g.members) == ["gpu-node-1", "gpu-node-2"]
    assert g.condition_status == "True" and g.state == "finished"  # kwok ran them to completion


def test_the_recorded_watches_end_where_the_lists_are() -> None:
    listed = model()
    m = ClusterModel()
    m.apply(Listed("PodGroup", []))
    m.apply(Listed("Pod", []))
    for kind, name in (("PodGroup", "watch-podgroups-gangs.jsonl"), ("Pod", "watch-pods-gangs.jsonl")):
        for e in fixtures.watch_events(f"{D}/{name}"):
            m.apply(WatchEvent(kind, e["type"], e["object"]))
    seen = [(g.name, g.condition_status, g.bound, g.pending, g.state) for g in m.gangs.gangs()]
    assert seen == [(g.name, g.condition_status, g.bound, g.pending, g.state) for g in listed.gangs.gangs()]
    # the watch goes on past the list: once gang-b holds 3 of the 4 GPUs, gang-a's next cycle placed none
    assert m.gangs.get("PodGroup", "gang", "gang-a-workers").condition_message.startswith(
        "minCount (3) cannot be satisfied: 0 scheduled, 2 remaining")
