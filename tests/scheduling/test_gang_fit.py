"""fit_gang(): all-or-nothing placement as kube-scheduler's pod-group cycle does it, hand-checked cases:
fragmentation, minCount below the size, bound members, taints and selectors, DRA GPUs, group claims,
and the members' messages in kube-scheduler 1.37's words."""

from __future__ import annotations

import copy

import numpy as np
from builders import cluster, node, pod, pod_obj
from kubeapi import fixtures
from kubeapi.dra_model import recorded_dra_model

from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.model.gangs.messages import WAITING_APPEAR, member_held, min_count_unsatisfiable
from kubeview.model.views import PodView
from kubeview.scheduling import PackingConfig
from kubeview.scheduling.evaluate import ExtraLoad
from kubeview.scheduling.gang_fit import CLAIM_ELSEWHERE, fit_gang, fit_of, uniform_members
from kubeview.scheduling.waiting_fits import waiting_fits

GPU = "nvidia.com/gpu"
TAINT = {"key": "dedicated", "value": "infer", "effect": "NoSchedule"}


def eight_gpu_nodes(used_on_d: int = 4):
    nodes = [node(n, gpu=8) for n in "abcd"]
    return cluster(nodes, [pod("x", cpu=None, gpu=used_on_d, node_name="d")])


def members(n: int, gpu: int, **kw) -> list[PodView]:
    return [pod(f"w{i}", gpu=gpu, **kw) for i in range(n)]


def test_fragmentation_blocks_a_gang_whose_gpus_are_free_in_total() -> None:
    fit = fit_gang(eight_gpu_nodes(), members(4, 8), 4)
    # 28 GPUs free, 32 asked; but even 3 × 8 + 4 is the point: d's 4 cannot hold an 8
    assert not fit.fits and fit.room == 3 and fit.placement == []
    assert fit.summary == "4 × 8 GPUs: room for 3 (largest free block per node: a 8, b 8, c 8, d 4)"
    assert fit.message == min_count_unsatisfiable(4, 3, 0) == "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"
    assert fit.saturated == {n: {"Insufficient nvidia.com/gpu": 1} for n in "abc"}
    assert fit.excluded == {"d": ["Insufficient nvidia.com/gpu"]}
    # the three that would fit carry the group's message, the fourth its own FitError
    assert [m.message for m in fit.members[:3]] == [f"pod group is unschedulable, {fit.message}"] * 3
    assert fit.members[3].message == "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."


def test_a_gang_that_fits_gets_one_placement_of_all_members() -> None:
    fit = fit_gang(eight_gpu_nodes(used_on_d=0), members(4, 8), 4)
    assert fit.fits and fit.room == 4 and fit.message is None
    assert sorted(n for _, n in fit.placement) == ["a", "b", "c", "d"]
    assert all(m.message is None for m in fit.members)
    assert fit.summary.startswith("4 × 8 GPUs: fits (")


def test_min_count_below_the_size_binds_what_fits() -> None:
    fit = fit_gang(eight_gpu_nodes(), members(4, 8), 3)
    assert fit.fits and fit.room == 3 and len(fit.placement) == 3
    left = [m for m in fit.members if m.node is None]
    assert len(left) == 1 and left[0].message.startswith("0/4 nodes are available")


def test_bound_members_count_and_stay_put() -> None:
    nodes = [node("a", gpu=2), node("b", gpu=2)]
    running = pod("w0", cpu=None, gpu=2, node_name="a")
    fit = fit_gang(cluster(nodes, [running]), [running] + members(2, 2)[1:], 2)
    assert fit.fits and fit.room == 2
    assert {(p.name, n) for p, n in fit.placement} == {("w0", "a"), ("w1", "b")}
    assert fit.members[0].bound and not fit.members[1].bound


def test_finished_members_do_not_count() -> None:
    done = PodView.from_api({**pod_obj("w9", gpu=1), "status": {"phase": "Succeeded"}})
    fit = fit_gang(cluster([node("a", gpu=1)]), [done, pod("w1", gpu=1)], 2)
    assert fit.size == 1 and not fit.fits
    assert fit.message == WAITING_APPEAR  # kube-scheduler's PreEnqueue: fewer members than minCount exist
    assert fit.summary == "1 × 1 GPU: 1 of minCount 2 members exist"


def test_the_cycle_stops_where_min_count_is_out_of_reach() -> None:
    # 5 members, minCount 4, 2 nodes of 1 GPU: after the third fails, 2 + 2 remaining >= 4 still; after
    # the fourth, 2 + 1 < 4: kube-scheduler stops and the fifth is never tried (it carries the group's words)
    fit = fit_gang(cluster([node("a", gpu=1), node("b", gpu=1)]), members(5, 1), 4)
    assert fit.message == "minCount (4) cannot be satisfied: 2 scheduled, 1 remaining"
    assert [m.message for m in fit.members] == [member_held(fit.message)] * 2 + [
        "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."] * 2 + [fit.message]


def test_taints_and_selectors_are_respected() -> None:
    nodes = [node("a", gpu=8, labels={"pool": "train"}), node("b", gpu=8, labels={"pool": "train"}),
             node("c", gpu=8, taints=[TAINT]), node("d", gpu=8, labels={"pool": "infer"})]
    alloc = cluster(nodes)
    fit = fit_gang(alloc, members(3, 8, node_selector={"pool": "train"}), 3)
    assert not fit.fits and fit.room == 2
    assert fit.excluded == {"c": ["node(s) had untolerated taint(s)"],
                            "d": ["node(s) didn't match Pod's node affinity/selector"]}
    assert fit.summary.endswith("(largest free block per node: a 8, b 8)")  # c and d are no block for it
    tolerant = members(4, 8, tolerations=[{"key": "dedicated", "operator": "Exists"}])
    assert fit_gang(alloc, tolerant, 4).room == 4


def test_heterogeneous_members_and_the_policy() -> None:
    # two 2-GPU nodes, members 1, 1, 2: spread sends the 1s apart and the 2 fits nowhere; pack fits all
    alloc = cluster([node("a", gpu=2), node("b", gpu=2)])
    gang = [pod("p1", gpu=1), pod("p2", gpu=1), pod("p3", gpu=2)]
    spread = fit_gang(alloc, gang, 3, PackingConfig(policy="spread"))
    assert not spread.fits and spread.room == 2
    assert spread.summary.startswith("2 × 1 GPU + 1 × 2 GPUs: room for 2")
    packed = fit_gang(alloc, gang, 3, PackingConfig(policy="pack"))
    assert packed.fits and sorted(n for _, n in packed.placement) == ["a", "a", "b"]


def test_assumed_load_counts() -> None:
    alloc = cluster([node("a", gpu=2), node("b", gpu=2)])
    load = ExtraLoad(rows=np.array([0]), amounts=alloc.vector({GPU: 2})[None, :])
    assert fit_gang(alloc, members(2, 2), 2).fits
    assert not fit_gang(alloc, members(2, 2), 2, assumed=load).fits


def test_group_claims_pin_members_to_their_devices() -> None:
    alloc = cluster([node("a", gpu=4), node("b", gpu=4)])
    pinned = fit_gang(alloc, members(3, 2), 3, claim_nodes={"b"})
    assert not pinned.fits and pinned.room == 2
    assert pinned.excluded == {"a": [CLAIM_ELSEWHERE]}
    first = fit_gang(alloc, members(3, 1), 3, claim_nodes=())  # not allocated yet: one node for all
    assert first.fits and len({n for _, n in first.placement}) == 1
    assert any("not allocated yet" in n for n in first.notes)


def test_dra_gpus_count_as_the_ledger_counts_them() -> None:
    model = recorded_dra_model()
    alloc = model.allocation()
    obj = next(p for p in fixtures.load("dra/pods.json")["items"] if p["metadata"]["name"] == "ext-2gpu-pod")

    def member(i: int) -> PodView:
        o = copy.deepcopy(obj)
        o["metadata"]["name"] = f"m{i}"
        o["spec"].pop("nodeName", None)
        o["status"] = {"phase": "Pending"}
        o["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m", GPU: "1"}, "limits": {GPU: "1"}}
        return PodView.from_api(o)
    # the recorded pods ask for pool=dra: dra-node-1's two devices are taken, dra-node-2 has one free
    fit = fit_gang(alloc, [member(i) for i in range(2)], 2)
    assert not fit.fits and fit.room == 1
    assert fit.summary == "2 × 1 GPU: room for 1 (largest free block per node: dra-node-2 1)"
    assert fit.saturated == {"dra-node-2": {"cannot allocate all claims": 1}}
    assert fit.excluded["dra-node-1"] == ["cannot allocate all claims"]
    assert fit.members[1].message == ("0/8 nodes are available: 2 cannot allocate all claims, "
                                      "6 node(s) didn't match Pod's node affinity/selector.")
    assert fit_gang(alloc, [member(0)], 1).placement[0][1] == "dra-node-2"




def test_the_recorded_first_attempt_of_gang_a() -> None:
    """tests/fixtures/k8s/gang: 3 × 2 GPUs on two free 2-GPU nodes; kube-scheduler 1.36 bound none, the
    member that did not fit got the FitError below and the other two the gang's wait."""
    m = ClusterModel()
    m.apply(Listed("Node", fixtures.load("gang/nodes.json")["items"]))
    m.apply(Listed("PodGroup", fixtures.load("gang/podgroups.json")["items"]))
    m.apply(Listed("Pod", fixtures.load("gang/pods-gang-a-pending.json")["items"]))
    gang = m.gangs.get("PodGroup", "gang", "gang-a-workers")
    fit = fit_of(m, gang)
    assert not fit.fits and fit.room == 2
    recorded = {p["metadata"]["name"]: p["status"]["conditions"][0]["message"]
                for p in fixtures.load("gang/pods-gang-a-pending.json")["items"]}
    fit_errors = [x.message for x in fit.members if x.node is None]
    assert len(fit_errors) == 1 and recorded["gang-a-1"].startswith(fit_errors[0])
    assert fit.summary == "3 × 2 GPUs: room for 2 (largest free block per node: gpu-node-1 2, gpu-node-2 2)"


def _model137(pods: str) -> ClusterModel:
    m = ClusterModel()
    m.apply(Listed("Node", fixtures.load("gang137/nodes.json")["items"]))
    m.apply(Listed("PodGroup", fixtures.load("gang137/podgroups.json")["items"]))
    m.apply(Listed("Pod", fixtures.load(f"gang137/{pods}")["items"]))
    return m


def test_member_messages_are_the_ones_kube_scheduler_1_37_wrote() -> None:
    """gang137: 3 × 2 GPUs on two free 2-GPU nodes. The recorded messages end with the group
    preemption's words, which the fit leaves out; everything before them is the same."""
    m = _model137("pods-gang-a-pending.json")
    fit = fit_of(m, m.gangs.get("PodGroup", "gang", "gang-a-workers"))
    recorded = {p["metadata"]["name"]: p["status"]["conditions"][0]["message"]
                for p in fixtures.load("gang137/pods-gang-a-pending.json")["items"]}
    assert not fit.fits and fit.room == 2
    for member in fit.members:
        assert recorded[member.pod.name].startswith(member.message), member.pod.name
    group = fixtures.load("gang137/podgroup-gang-a-unschedulable.json")["status"]["conditions"][0]["message"]
    assert group.startswith(fit.message + ", pod group preemption: ")


def test_after_gang_b_took_three_gpus_the_cycle_places_none() -> None:
    m = _model137("pods.json")  # gang-b bound (3 of the 4 GPUs)
    fit = fit_of(m, m.gangs.get("PodGroup", "gang", "gang-a-workers"))
    last = fixtures.watch_events("gang137/watch-podgroups-gangs.jsonl")[-1]["object"]
    assert last["status"]["conditions"][0]["message"].startswith(fit.message)
    assert fit.message == "minCount (3) cannot be satisfied: 0 scheduled, 2 remaining"
    assert fit.summary == "3 × 2 GPUs: room for 0 (largest free block per node: gpu-node-2 1)"
    # and each member's words as kube-scheduler wrote them in that cycle: the first tried and failed,
    # the two never tried carry the group's status as it stood (no "pod group is unschedulable" prefix)
    written = {}
    for e in fixtures.watch_events("gang137/watch-pods-gangs.jsonl"):
        o = e["object"]
        for c in (o.get("status") or {}).get("conditions") or []:
            if c["type"] == "PodScheduled" and o["metadata"]["name"].startswith("gang-a"):
                written[o["metadata"]["name"]] = c["message"]
    assert {x.pod.name: x.message for x in fit.members} == written
    incomplete = fit_of(m, m.gangs.get("PodGroup", "gang", "gang-c-workers"))
    assert not incomplete.fits and incomplete.summary == "2 × 1 GPU: 2 of minCount 3 members exist"


def test_a_what_if_gang_of_uniform_members() -> None:
    members = uniform_members(4, {GPU: "8"})
    assert [m.requests[GPU] for m in members] == [8] * 4 and len({m.name for m in members}) == 4
    assert fit_gang(eight_gpu_nodes(), members, 4).summary.startswith("4 × 8 GPUs: room for 3")


def test_a_kueue_workload_not_admitted_is_placed_from_its_pod_sets() -> None:
    """batch-schedulers: Kueue's job-train-a (4 × 2 GPUs) waits for admission and has no pods; its fit is
    of the pods admission would make, and says so. KAI's over-quota pg-serve-c has room on the nodes:
    its wait is the queue's, which the condition says, not the nodes'."""
    d = "batch-schedulers"
    m = ClusterModel()
    m.apply(Listed("Node", fixtures.load(f"{d}/nodes.json")["items"]))
    m.apply(Listed("kueue.Workload", fixtures.load(f"{d}/kueue-workloads.json")["items"]))
    m.apply(Listed("kai.PodGroup", fixtures.load(f"{d}/kai-podgroups.json")["items"]))
    m.apply(Listed("Pod", [p for f in ("kai-pods.json", "kueue-pods.json") for p in fixtures.load(f"{d}/{f}")["items"]]))
    fits = waiting_fits(m)
    kueue, _ = fits[("kueue.Workload", "kueue", "job-train-a-03abf")]
    assert m.gangs.get("kueue.Workload", "kueue", "job-train-a-03abf").members == ()
    assert (kueue.size, kueue.fits) == (4, False) and kueue.summary.startswith("4 × 2 GPUs: room for ")
    assert kueue.notes[-1].startswith("not admitted by Kueue yet")
    serve, _ = fits[("kai.PodGroup", "kai", "pg-serve-c")]
    assert serve.fits and m.gangs.get("kai.PodGroup", "kai", "pg-serve-c").condition_reason == "NonPreemptibleOverQuota"


def test_what_the_fit_does_not_evaluate_is_said() -> None:
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "w"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    fit = fit_gang(eight_gpu_nodes(used_on_d=0), members(2, 1, affinity=anti), 2)
    assert fit.fits and any("anti-affinity are not evaluated" in n for n in fit.notes)
    assert fit_gang(eight_gpu_nodes(used_on_d=0), members(2, 1), 2).notes == ()


def test_the_free_blocks_are_of_the_resource_that_stops_the_members_with_its_unit() -> None:
    """Issue #42: a GPU pod blocked by cpu listed free GPUs, and cpu blocks read "gpu-node-1 5.9"."""
    alloc = cluster([node("a", gpu=8, cpu="4"), node("b", gpu=8, cpu="2")])
    gpu_pods = [PodView.from_api(pod_obj(f"m{i}", cpu="3", gpu=1)) for i in range(2)]
    fit = fit_gang(alloc, gpu_pods, 2)
    assert fit.summary == "2 × 1 GPU: room for 1 (largest free cpu per node: a 4 cpu, b 2 cpu)"
    cpu_pods = [PodView.from_api(pod_obj(f"c{i}", cpu="3")) for i in range(2)]
    assert fit_gang(alloc, cpu_pods, 2).summary.endswith("(largest free cpu per node: a 4 cpu, b 2 cpu)")
    assert fit_gang(alloc, members(3, 8), 3).summary.endswith("(largest free block per node: a 8, b 8)")


def test_a_kueue_workload_admitted_or_finished_without_pods_gets_no_fit() -> None:
    """Only Workloads Kueue holds back are placed from their pod sets: a finished one (its pods gone) or
    an admitted one whose pods are not made yet waits for nothing (the snapshot fitted all of them)."""
    d = "batch-schedulers"
    items = fixtures.load(f"{d}/kueue-workloads.json")["items"]
    done = copy.deepcopy(next(w for w in items if w["metadata"]["name"] == "job-train-a-03abf"))
    done["metadata"]["name"] = "job-train-done"
    done["status"]["conditions"] = [{"type": "Finished", "status": "True", "reason": "Succeeded", "message": "done",
                                     "lastTransitionTime": "2026-11-20T10:00:00Z"}]
    admitted = copy.deepcopy(next(w for w in items if w["metadata"]["name"] == "job-infer-b-35c35"))
    admitted["metadata"]["name"] = "job-infer-new"  # admitted, no pod created yet
    m = ClusterModel()
    m.apply(Listed("Node", fixtures.load(f"{d}/nodes.json")["items"]))
    m.apply(Listed("kueue.Workload", [*items, done, admitted]))
    keys = {k[2] for k in waiting_fits(m) if k[0] == "kueue.Workload"}
    assert keys == {"job-train-a-03abf"}
