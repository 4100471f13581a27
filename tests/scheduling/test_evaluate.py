"""evaluate(): kube-scheduler's filters, reasons and message, and the packing scores, hand-checked."""

from __future__ import annotations

import numpy as np
import pytest
from builders import cluster, fixture, node, pod

from kubeview.model.views import NodeView, PodView
from kubeview.scheduling import PackingConfig, evaluate
from kubeview.scheduling.allocations import from_pods
from kubeview.scheduling.evaluate import ExtraLoad

GPU = "nvidia.com/gpu"


def test_message_counts_every_resource_reason_sorted_like_kube_scheduler() -> None:
    nodes = [node(f"cpu-{i}", cpu="1") for i in range(3)] + [node(f"gpu-{i}", gpu=1) for i in range(2)]
    used = [pod(f"u{i}", cpu="900m", node_name=f"cpu-{i}") for i in range(3)]
    used += [pod(f"g{i}", cpu=None, gpu=1, node_name=f"gpu-{i}") for i in range(2)]
    placement = evaluate(cluster(nodes, used), pod(cpu="500m", gpu=1))
    assert placement.best is None
    assert not placement.feasible.any()
    # cpu nodes lack both cpu and GPUs: each reason counts; Go's sort.Strings orders "2 ..." before "5 ...".
    assert placement.message == "0/5 nodes are available: 3 Insufficient cpu, 5 Insufficient nvidia.com/gpu."
    assert placement.reasons["cpu-0"] == ["Insufficient cpu", "Insufficient nvidia.com/gpu"]
    assert placement.reasons["gpu-1"] == ["Insufficient nvidia.com/gpu"]


def test_recorded_unschedulable_message_of_the_2_gpu_pod() -> None:
    nodes = [NodeView.from_api(n) for n in fixture("nodes.json")["items"]]
    pods = [PodView.from_api(p) for p in fixture("pods-list.json")["items"]]
    gpu_c = fixture("pod-gpu-c-pending.json")
    recorded = next(c["message"] for c in gpu_c["status"]["conditions"] if c["type"] == "PodScheduled")
    placement = evaluate(from_pods(nodes, pods), PodView.from_api(gpu_c))
    assert recorded.startswith(placement.message)
    assert placement.message == "0/5 nodes are available: 5 Insufficient nvidia.com/gpu."


def test_too_many_pods_and_a_resource_no_node_has() -> None:
    nodes = [node("a", pods=1), node("b")]
    placement = evaluate(cluster(nodes, [pod("x", node_name="a")]), pod(cpu="100m"))
    assert placement.reasons == {"a": ["Too many pods"]}
    asks_fpga = PodView.from_api({"metadata": {"name": "f"}, "spec": {"containers": [
        {"name": "c", "resources": {"requests": {"example.com/fpga": "1"}, "limits": {"example.com/fpga": "1"}}}]}})
    placement = evaluate(cluster(nodes), asks_fpga)
    assert placement.message == "0/2 nodes are available: 2 Insufficient example.com/fpga."


TAINT = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


@pytest.mark.parametrize(("tolerations", "fits"), [
    ([], False),
    ([{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}], True),
    ([{"key": "dedicated", "value": "gpu"}], True),  # operator defaults to Equal, empty effect matches all
    ([{"key": "dedicated", "operator": "Equal", "value": "cpu"}], False),
    ([{"key": "dedicated", "operator": "Exists"}], True),
    ([{"operator": "Exists"}], True),  # empty key with Exists tolerates everything
    ([{"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}], False),  # effect must match
])
def test_taints_against_tolerations(tolerations: list, fits: bool) -> None:
    nodes = [node("tainted", taints=[TAINT]), node("soft", taints=[{**TAINT, "effect": "PreferNoSchedule"}])]
    placement = evaluate(cluster(nodes), pod(tolerations=tolerations))
    assert bool(placement.feasible[0]) is fits
    assert placement.feasible[1]  # PreferNoSchedule never filters
    if not fits:
        assert placement.reasons == {"tainted": ["node(s) had untolerated taint(s)"]}


def test_noexecute_taint_and_cordoned_node() -> None:
    nodes = [node("evicting", taints=[{"key": "k", "effect": "NoExecute"}]), node("cordoned", unschedulable=True)]
    placement = evaluate(cluster(nodes), pod())
    assert placement.message == ("0/2 nodes are available: 1 node(s) had untolerated taint(s), "
                                 "1 node(s) were unschedulable.")
    tolerant = pod(tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                 "effect": "NoSchedule"}, {"key": "k", "operator": "Exists"}])
    assert evaluate(cluster(nodes), tolerant).feasible.all()


def test_first_failing_filter_gives_the_reason_as_in_kube_scheduler() -> None:
    # tainted and too small: TaintToleration runs before NodeResourcesFit, so only the taint is reported
    placement = evaluate(cluster([node("n", cpu="1", taints=[TAINT])]), pod(cpu="2"))
    assert placement.reasons == {"n": ["node(s) had untolerated taint(s)"]}
    assert placement.unresolvable().tolist() == [True]
    placement = evaluate(cluster([node("n", cpu="1")]), pod(cpu="2"))
    assert placement.unresolvable().tolist() == [False]  # preemption could help


def _labelled() -> list[NodeView]:
    return [node("a", labels={"pool": "gpu", "gen": "3"}), node("b", labels={"pool": "cpu", "gen": "5"}),
            node("c", labels={"pool": "gpu"}), node("d", labels={"gen": "x"})]


def _affinity(*terms: list[dict]) -> dict:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": list(t)} for t in terms]}}}


@pytest.mark.parametrize(("affinity", "expected"), [
    (_affinity([{"key": "pool", "operator": "In", "values": ["gpu", "tpu"]}]), "ac"),
    (_affinity([{"key": "pool", "operator": "NotIn", "values": ["gpu"]}]), "bd"),  # absent label: NotIn holds
    (_affinity([{"key": "gen", "operator": "Exists"}]), "abd"),
    (_affinity([{"key": "gen", "operator": "DoesNotExist"}]), "c"),
    (_affinity([{"key": "gen", "operator": "Gt", "values": ["3"]}]), "b"),
    (_affinity([{"key": "gen", "operator": "Lt", "values": ["4"]}]), "a"),  # "x" is not an integer
    (_affinity([{"key": "pool", "operator": "In", "values": ["gpu"]}, {"key": "gen", "operator": "Exists"}]), "a"),
    (_affinity([{"key": "pool", "operator": "In", "values": ["cpu"]}],
               [{"key": "gen", "operator": "In", "values": ["x"]}]), "bd"),  # terms are ORed
    ({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["d"]}]}]}}}, "d"),
])
def test_required_node_affinity(affinity: dict, expected: str) -> None:
    placement = evaluate(cluster(_labelled()), pod(affinity=affinity))
    assert "".join(n for n, ok in zip(placement.nodes, placement.feasible, strict=True) if ok) == expected
    assert all(r == ["node(s) didn't match Pod's node affinity/selector"] for r in placement.reasons.values())


def test_node_selector_and_affinity_both_apply() -> None:
    affinity = _affinity([{"key": "gen", "operator": "Exists"}])
    placement = evaluate(cluster(_labelled()), pod(node_selector={"pool": "gpu"}, affinity=affinity))
    assert placement.best == "a"
    assert placement.message == "1/4 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."


def _two_gpu_nodes(used_on_first: int) -> tuple:
    nodes = [node("gpu-node-1", gpu=2), node("gpu-node-2", gpu=2)]
    used = [pod(f"u{i}", cpu=None, gpu=1, node_name="gpu-node-1") for i in range(used_on_first)]
    return cluster(nodes, used)


def test_pack_is_the_recorded_formula_and_packs_1_1_2() -> None:
    alloc = _two_gpu_nodes(0)
    first = evaluate(alloc, pod(gpu=1))
    assert first.scores.tolist() == [5, 5]  # round(10 * (0 + 1) / 2)
    assert first.best == "gpu-node-1"  # tie: first by name
    alloc = _two_gpu_nodes(1)
    second = evaluate(alloc, pod(gpu=1))
    assert second.scores.tolist() == [10, 5]
    assert second.best == "gpu-node-1"
    alloc = _two_gpu_nodes(2)
    third = evaluate(alloc, pod(gpu=2))
    assert third.best == "gpu-node-2"
    assert third.scores.tolist() == [0, 10]


def test_spread_and_balanced_hand_checked() -> None:
    alloc = _two_gpu_nodes(1)
    assert evaluate(alloc, pod(gpu=1), PackingConfig(policy="spread")).scores.tolist() == [0, 5]
    assert evaluate(alloc, pod(gpu=1), PackingConfig(policy="spread")).best == "gpu-node-2"
    # one node, 8 cores / 16Gi, 2 cores + 4Gi used; the pod asks 2 cores:
    # cpu (2+2)/8 = 0.5, memory 4/16 = 0.25 -> pack (cpu+memory fallback) 10*0.375 = 3.75 -> 4,
    # spread 6.25 -> 6, balanced 10*(1 - std(0.5, 0.25)) = 10*(1 - 0.125) = 8.75 -> 9
    alloc = cluster([node("n", cpu="8", memory="16Gi")], [pod("u", cpu="2", memory="4Gi", node_name="n")])
    asks = pod(cpu="2")
    assert evaluate(alloc, asks, PackingConfig(policy="pack")).scores.tolist() == [4]
    assert evaluate(alloc, asks, PackingConfig(policy="spread")).scores.tolist() == [6]
    assert evaluate(alloc, asks, PackingConfig(policy="balanced")).scores.tolist() == [9]


def test_weights_make_a_weighted_mean() -> None:
    alloc = cluster([node("n", cpu="8", memory="16Gi", gpu=4)], [pod("u", cpu="2", gpu=1, node_name="n")])
    # gpu (1+1)/4 = 0.5 with weight 3, cpu (2+6)/8 = 1.0 with weight 1
    config = PackingConfig(weights={GPU: 3, "cpu": 1})
    assert evaluate(alloc, pod(cpu="6", gpu=1), config).scores.tolist() == [6]  # 10*(3*.5+1*1)/4 = 6.25
    # a weighted resource the pod does not request is not part of its mean
    assert evaluate(alloc, pod(cpu="2"), config).scores.tolist() == [5]  # cpu only: (2+2)/8


def test_bias_and_avoid() -> None:
    alloc = _two_gpu_nodes(1)
    biased = PackingConfig(bias={"gpu-node-2": 7, "gpu-node-1": -3})
    placement = evaluate(alloc, pod(gpu=1), biased)
    assert placement.scores.tolist() == [7, 10]  # 10-3, and 5+7 clipped to 10
    assert placement.best == "gpu-node-2"
    avoided = evaluate(alloc, pod(gpu=1), PackingConfig(avoid=["gpu-node-1"]))
    assert avoided.scores.tolist() == [0, 5]
    assert avoided.feasible.all()  # avoided, still feasible
    full = evaluate(_two_gpu_nodes(0), pod(gpu=2), PackingConfig(avoid=["gpu-node-1", "gpu-node-2"]))
    assert full.best == "gpu-node-1"  # the pod still lands when only avoided nodes fit


def test_assumed_requests_count_as_used() -> None:
    alloc = _two_gpu_nodes(1)
    amounts = np.zeros((1, len(alloc.resources)), dtype=np.int64)
    amounts[0, alloc.column(GPU)] = 1  # the last free GPU on gpu-node-1 is already promised
    placement = evaluate(alloc, pod(gpu=1), assumed=ExtraLoad(np.array([0]), amounts))
    assert placement.best == "gpu-node-2"
    assert placement.reasons == {"gpu-node-1": ["Insufficient nvidia.com/gpu"]}


def test_no_nodes() -> None:
    placement = evaluate(cluster([]), pod())
    assert placement.best is None
    assert placement.message == "no nodes available to schedule pods"


def test_5000_nodes_stay_vectorised() -> None:
    """Not a timing test (see `kubeview bench scheduler`): the result on a big cluster is consistent."""
    nodes = [node(f"n{i:05d}", gpu=8 if i % 4 == 0 else 0, labels={"zone": f"z{i % 3}"},
                  taints=[TAINT] if i % 4 == 0 else None) for i in range(5000)]
    alloc = cluster(nodes)
    placement = evaluate(alloc, pod(gpu=1, node_selector={"zone": "z1"}, tolerations=[{"operator": "Exists"}]))
    assert placement.best == "n00004"
    assert int(placement.feasible.sum()) == 417
    assert placement.message == ("417/5000 nodes are available: 1250 Insufficient nvidia.com/gpu, "
                                 "3333 node(s) didn't match Pod's node affinity/selector.")
