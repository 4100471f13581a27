"""Native scoring: kube-scheduler's NodeResourcesFit arithmetic, checked on upstream's own test cases
(k8s.io/kubernetes v1.37.2, pkg/scheduler/framework/plugins/noderesources/*_test.go)."""

from __future__ import annotations

from builders import cluster, node, pod

from kubeview.scheduling import PackingConfig, evaluate
from kubeview.scheduling.native_profile import native_config
from kubeview.scheduling.native_scoring import PACK_SHAPE, NativeScoring

CPU_MEM = (("cpu", 1), ("memory", 1))


def _scores(nodes, pods, new, scoring: NativeScoring) -> dict[str, int]:
    placement = evaluate(cluster(nodes, pods), new, PackingConfig(native=scoring))
    return dict(zip(placement.nodes, placement.fit_scores.tolist(), strict=True))


def test_most_allocated_differently_sized_nodes() -> None:
    # most_allocated_test.go "nothing scheduled, resources requested, differently sized nodes": 62, 50
    nodes = [node("node1", cpu="4000", memory="10000"), node("node2", cpu="6000", memory="10000")]
    scoring = NativeScoring("MostAllocated", CPU_MEM)
    assert _scores(nodes, [], pod(cpu="3000", memory="5000"), scoring) == {"node1": 62, "node2": 50}
    # the same with memory weighted 2: 58, 50 (the mean is truncated, as Go's integer division does)
    weighted = NativeScoring("MostAllocated", (("memory", 2), ("cpu", 1)))
    assert _scores(nodes, [], pod(cpu="3000", memory="5000"), weighted) == {"node1": 58, "node2": 50}


def test_most_allocated_with_pods_and_at_capacity() -> None:
    # "resources requested, pods scheduled with resources": 42, 55
    nodes = [node("node1", cpu="10000", memory="20000"), node("node2", cpu="10000", memory="20000")]
    used = [pod("a", cpu="3000", memory="1", node_name="node1"), pod("b", cpu="3000", memory="5000", node_name="node2")]
    got = _scores(nodes, used, pod(cpu="3000", memory="5000"), NativeScoring("MostAllocated", CPU_MEM))
    assert got == {"node1": 42, "node2": 55}
    # "resources requested equal node capacity": 95, 75
    nodes = [node("node1", cpu="5000", memory="10000"), node("node2", cpu="10000", memory="9000")]
    assert _scores(nodes, [], pod(cpu="5000", memory="9000"), NativeScoring("MostAllocated", CPU_MEM)) == \
        {"node1": 95, "node2": 75}


def test_extended_resource_scored_only_when_requested() -> None:
    # "bypass extended resource if the pod does not request" (50, 50) and "honor ..." (50, 40)
    nodes = [node("node1", cpu="6000", memory="10000", gpu=4), node("node2", cpu="6000", memory="10000", gpu=10)]
    scoring = NativeScoring("MostAllocated", (*CPU_MEM, ("nvidia.com/gpu", 1)))
    assert _scores(nodes, [], pod(cpu="3000", memory="5000"), scoring) == {"node1": 50, "node2": 50}
    assert _scores(nodes, [], pod(cpu="3000", memory="5000", gpu=2), scoring) == {"node1": 50, "node2": 40}


def test_requested_to_capacity_ratio_rounds_and_spread_shape() -> None:
    # requested_to_capacity_ratio_test.go: shape 10 -> 0, "no resources requested, pods scheduled
    # with resources": 37.5 rounds to 38, and 50
    nodes = [node("node1", cpu="4000", memory="10000"), node("node2", cpu="6000", memory="10000")]
    used = [pod("a", cpu="3000", memory="5000", node_name="node1"), pod("b", cpu="3000", memory="5000", node_name="node2")]
    spread = NativeScoring("RequestedToCapacityRatio", CPU_MEM, ((0, 10), (100, 0)))
    # the pod itself requests kube-scheduler's non-zero defaults; 1m of cpu and 1 byte change nothing here
    assert _scores(nodes, used, pod(cpu="1m", memory="1"), spread) == {"node1": 38, "node2": 50}


def test_least_allocated_is_spread() -> None:
    nodes = [node("node1", cpu="4000", memory="10000"), node("node2", cpu="6000", memory="10000")]
    got = _scores(nodes, [], pod(cpu="3000", memory="5000"), NativeScoring("LeastAllocated", CPU_MEM))
    assert got == {"node1": 37, "node2": 50}  # least_allocated_test.go: (25 + 50) / 2 and (50 + 50) / 2


def test_pack_profile_packs_the_1_1_2_story_and_reports_ties() -> None:
    """Two 2-GPU nodes: the first 1-GPU pod ties (either node, kube-scheduler picks at random), the
    second goes where the first went, so the 2-GPU pod fits."""
    for shaped in (native_config(PackingConfig()), native_config(PackingConfig(), "RequestedToCapacityRatio")):
        nodes = [node("a", gpu=2), node("b", gpu=2)]
        first = evaluate(cluster(nodes, []), pod(gpu=1, memory="64Mi"), shaped)
        assert first.best_set == ["a", "b"]
        second = evaluate(cluster(nodes, [pod("p1", gpu=1, memory="64Mi", node_name="b")]), pod(gpu=1, memory="64Mi"),
                          shaped)
        assert second.best_set == ["b"]
    assert PACK_SHAPE == ((0, 0), (100, 10))


def test_native_ignores_bias_and_avoid() -> None:
    """Bias and avoid are the extender's; a native profile has no such thing, so the preview has none."""
    nodes = [node("a", gpu=2), node("b", gpu=2)]
    config = PackingConfig(bias={"a": 10}, avoid=frozenset({"b"}))
    placement = evaluate(cluster(nodes, [pod("p1", gpu=1, node_name="b")]), pod(gpu=1), native_config(config))
    assert placement.best_set == ["b"]
    assert evaluate(cluster(nodes, [pod("p1", gpu=1, node_name="b")]), pod(gpu=1), config).best == "a"


def test_a_native_config_stays_native_when_its_policy_changes() -> None:
    """`--policy` and the TUI's edits go through `merged`: the scoring follows the new policy."""
    config = native_config(PackingConfig())
    assert config.to_dict() == PackingConfig().to_dict()  # the wire form has no native mode
    spread = config.merged({"policy": "spread"})
    assert spread.native is not None and spread.native.strategy == "LeastAllocated"
    assert PackingConfig().merged({"policy": "spread"}).native is None
