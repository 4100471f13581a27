"""Gangs of the batch schedulers in the model, on what a real API server answered with their CRDs
installed (tests/fixtures/k8s/batch-schedulers: KAI-Scheduler, Kueue v0.17, Volcano; the statuses
written through the schema as each project's code words them, see its README). The counts come from
the pods, the scheduler's own counts are kept apart as `reported`."""

from __future__ import annotations

from kubeapi import fixtures

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.model.gangs.store import Gang

D = "batch-schedulers"
GROUPS = (("kai.PodGroup", "kai-podgroups.json"), ("kueue.Workload", "kueue-workloads.json"),
          ("volcano.PodGroup", "volcano-podgroups.json"))


def gangs() -> dict[str, Gang]:
    m = ClusterModel()
    m.apply(Listed("Node", fixtures.load(f"{D}/nodes.json")["items"]))
    for kind, name in GROUPS:
        m.apply(Listed(kind, fixtures.load(f"{D}/{name}")["items"]))
    pods = [p for f in ("kai-pods.json", "kueue-pods.json", "volcano-pods.json") for p in fixtures.load(f"{D}/{f}")["items"]]
    m.apply(Listed("Pod", pods))
    return {f"{g.scheduler}/{g.name}": g for g in m.gangs.gangs()}


def test_kai_groups_waiting_partly_placed_and_over_quota() -> None:
    g = gangs()
    train, infer, serve = g["kai/pg-train-a"], g["kai/pg-infer-b"], g["kai/pg-serve-c"]
    assert {x.api_version for x in (train, infer, serve)} == {"scheduling.run.ai/v2alpha2"}
    assert (train.min_count, train.pending, train.bound, train.state, train.queue) == (3, 3, 0, "waiting", "team-a")
    assert (train.condition_type, train.condition_reason) == ("UnschedulableOnNodePool", "Unschedulable")
    assert train.condition_message.startswith("Resources were found for 2 pods while 3 are required")
    # two of four placed: minMember 2 is met, two members still wait; KAI's own counts agree
    assert (infer.running, infer.pending, infer.state, infer.phase) == (2, 2, "running", "Running")
    assert infer.reported == {"running": 2, "pending": 2}
    assert infer.subgroups == (("prefill", 1), ("decode", 1))
    assert serve.condition_reason == "NonPreemptibleOverQuota" and serve.state == "waiting"


def test_kueue_workloads_pending_on_topology_and_admitted() -> None:
    g = gangs()
    train = next(x for k, x in g.items() if k.startswith("kueue/job-train-a-"))
    infer = next(x for k, x in g.items() if k.startswith("kueue/job-infer-b-"))
    assert (train.api_version, train.workload, train.min_count, train.size) == ("kueue.x-k8s.io/v1beta2", "Job/train-a", 4, 4)
    assert (train.condition_type, train.condition_status, train.condition_reason) == ("QuotaReserved", "False", "Pending")
    assert "allows to fit only 2 out of 4 pod(s)" in train.condition_message
    assert not train.members  # a suspended Job has no pods yet
    # admitted: the Job controller's pods, bound by the real kube-scheduler, found by Kueue's annotation
    assert (infer.workload, infer.running, infer.pending, infer.condition_type) == ("Job/infer-b", 2, 0, "Admitted")
    assert {m.node for m in infer.members} == {"batch-node-2"}


def test_volcano_phases() -> None:
    g = gangs()
    train, infer, evalc = g["volcano/vc-train-a"], g["volcano/vc-infer-b"], g["volcano/vc-eval-c"]
    assert (train.phase, train.pending, train.condition_reason) == ("Pending", 3, "NotEnoughResources")
    assert train.condition_message.startswith("3/3 tasks in gang unschedulable")
    assert (infer.phase, infer.pending, infer.condition_type, infer.state) == ("Inqueue", 2, None, "waiting")
    assert (evalc.phase, evalc.running, evalc.state, evalc.queue) == ("Running", 2, "running", "research")
