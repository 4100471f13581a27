"""A pending pod's wait, from the autoscalers' Events on it (in the words their source writes) and its
node group's state now (tests/fixtures/autoscaling: each file says where its shape comes from)."""

from __future__ import annotations

import dataclasses

from autoscaling_builders import NOW, events_of, fixture, node, of_kind, pod

from kubeview.model.autoscaling.groups import (
    CLUSTER_AUTOSCALER,
    KARPENTER,
    WAIT_NEVER,
    WAIT_NODES,
    PodWait,
)
from kubeview.model.autoscaling.store import (
    CA_STATUS,
    KARPENTER_NODECLAIM,
    KARPENTER_NODEPOOL,
    AutoscalingStore,
)
from kubeview.model.autoscaling.waits import NO_WAIT, not_triggered_reasons, pod_wait, scale_ups
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.model.kube_events import parse_time
from kubeview.model.views import PodView

QUOTA = "Instance 'a-pool-40ce0341-t28s' creation failed: Quota 'CPUS' exceeded.  Limit: 57.0 in region us-central1."


def store() -> AutoscalingStore:
    s = AutoscalingStore()
    s.replace(CA_STATUS, fixture("ca-status-yaml.yaml"))
    s.replace(KARPENTER_NODEPOOL, of_kind("karpenter.yaml", "NodePool"))
    s.replace(KARPENTER_NODECLAIM, of_kind("karpenter.yaml", "NodeClaim"))
    s.relist_nodes([node(f"g{i}", {"kwok-nodegroup": "gpu-pool", "pool": "gpu"}) for i in range(6)]
                   + [node(f"s{i}", {"kwok-nodegroup": "small-pool", "pool": "small"}, gpus=0) for i in range(6)]
                   + [node(f"a{i}", {"kwok-nodegroup": "a-pool", "pool": "a"}, gpus=0) for i in range(3)]
                   + [node(f"k{i}", {"karpenter.sh/nodepool": "gpu"}) for i in range(6)])
    return s


def wait_of(name: str, selector: dict[str, str] | None = None, s: AutoscalingStore | None = None) -> PodWait:
    s = s or store()
    return pod_wait(PodView.from_api(pod(name, gpus=8, selector=selector)), events_of(name), s.groups(), NOW,
                    s.claims())


def test_the_messages_parse() -> None:
    assert scale_ups("pod triggered scale-up: [{gpu-pool 6->38 (max: 38)} {b 1->3 (max: 5)}]") == [
        ("gpu-pool", 6, 38, 38), ("b", 1, 3, 5)]
    assert not_triggered_reasons("pod didn't trigger scale-up: 1 in backoff after failed scale-up, "
                                 "1 max cluster cpu, memory limit reached") == {
        "in backoff after failed scale-up": 1, "max cluster cpu, memory limit reached": 1}
    assert not_triggered_reasons("pod didn't trigger scale-up: max total nodes in cluster reached") == {
        "max total nodes in cluster reached": 0}


def test_triggered_scale_up_in_progress_waits_for_nodes() -> None:
    w = wait_of("batch-0", {"pool": "gpu"})
    assert w == PodWait(WAIT_NODES, "waiting for a node: node group gpu-pool scaling 6 → 38 (in progress, 2 min)",
                        (CLUSTER_AUTOSCALER, "gpu-pool"), "pod triggered scale-up: [{gpu-pool 6->38 (max: 38)}]",
                        parse_time("2026-11-22T10:03:00Z"))


def test_triggered_scale_up_without_a_status_says_what_was_asked() -> None:
    w = wait_of("batch-0", s=AutoscalingStore())
    assert (w.state, w.words, w.group) == (
        WAIT_NODES, "waiting for a node: node group gpu-pool scaling 6 → 38 (asked 2 min ago)", None)


def test_triggered_scale_up_that_failed_says_the_clouds_words() -> None:
    s = store()
    ev = events_of("batch-0")[0]
    ev = dataclasses.replace(ev, message="pod triggered scale-up: [{a-pool 3->12 (max: 12)}]")
    w = pod_wait(PodView.from_api(pod("batch-0", gpus=8)), [ev], s.groups(), NOW, s.claims())
    assert (w.state, w.words, w.group) == (WAIT_NEVER, f"scale-up failed: {QUOTA}", (CLUSTER_AUTOSCALER, "a-pool"))
    assert w.since == parse_time("2026-11-22T10:01:00Z")


def test_not_triggered_at_max_names_the_group_the_pod_selects() -> None:
    w = wait_of("batch-1", {"pool": "small"})
    assert (w.state, w.words, w.group) == (
        WAIT_NEVER, "will not get a node: small-pool is at its maximum 6", (CLUSTER_AUTOSCALER, "small-pool"))
    assert w.detail is not None and w.detail.startswith("pod didn't trigger scale-up: 1 max node group size")
    unknown = wait_of("batch-1", {"pool": "nowhere"})
    assert (unknown.state, unknown.words) == (
        WAIT_NEVER, "will not get a node: 1 max node group size reached, "
                    "2 node(s) didn't match Pod's node affinity/selector")


def test_not_triggered_in_backoff_says_the_clouds_words() -> None:
    w = wait_of("batch-2", {"pool": "a"})
    assert (w.state, w.words, w.group) == (WAIT_NEVER, f"scale-up failed: {QUOTA}", (CLUSTER_AUTOSCALER, "a-pool"))


def test_karpenter_nodepool_at_its_limit() -> None:
    w = wait_of("train-0")
    assert (w.state, w.words, w.group) == (
        WAIT_NEVER, "NodePool gpu at its limit nvidia.com/gpu 48/48", (KARPENTER, "gpu"))
    assert w.detail == "Failed to schedule pod, all available instance types exceed limits for nodepool (NodePool=gpu)"


def test_karpenter_limit_not_reached_yet_says_near() -> None:
    s = AutoscalingStore()
    (pool, *_) = of_kind("karpenter.yaml", "NodePool")
    pool["status"]["resources"]["nvidia.com/gpu"] = "44"
    s.put(KARPENTER_NODEPOOL, pool)
    w = pod_wait(PodView.from_api(pod("train-0", gpus=8)), events_of("train-0"), s.groups(), NOW, s.claims())
    assert w.words == "NodePool gpu near its limit nvidia.com/gpu 44/48: no instance type fits what is left"


def test_karpenter_nominated_to_a_launching_claim() -> None:
    w = wait_of("train-1")
    assert (w.state, w.words, w.group) == (
        WAIT_NODES, "waiting for a node: NodeClaim gpu-x7k2p of NodePool gpu launching (3 min)", (KARPENTER, "gpu"))
    s = AutoscalingStore()  # NodeClaims not read: the event alone
    w = pod_wait(PodView.from_api(pod("train-1")), events_of("train-1"), s.groups(), NOW, None)
    assert w.words == "waiting for a node: NodeClaim gpu-x7k2p (nominated 3 min ago)"
    s.replace(KARPENTER_NODECLAIM, [])  # read, and gone: deleted after its launch failed
    assert pod_wait(PodView.from_api(pod("train-1")), events_of("train-1"), s.groups(), NOW, s.claims()) == NO_WAIT


def test_karpenter_insufficient_capacity_beats_the_schedulers_newer_words() -> None:
    w = wait_of("train-2")
    assert (w.state, w.words, w.group) == (
        WAIT_NEVER, "scale-up failed: all requested instance types were unavailable during launch", (KARPENTER, "gpu"))


def test_nothing_said_or_not_pending_is_no_wait() -> None:
    s = store()
    assert pod_wait(PodView.from_api(pod("quiet")), [], s.groups(), NOW, s.claims()) == NO_WAIT
    bound = PodView.from_api(pod("batch-0", node_name="g0"))
    assert pod_wait(bound, events_of("batch-0"), s.groups(), NOW, s.claims()) == NO_WAIT
    only_scheduler = [e for e in events_of("train-2") if e.source == "default-scheduler"]
    assert pod_wait(PodView.from_api(pod("train-2")), only_scheduler, s.groups(), NOW, s.claims()) == NO_WAIT


def test_the_model_reads_waits_from_its_own_events() -> None:
    model = ClusterModel()
    model.apply(Listed("Node", [node("g0", {"kwok-nodegroup": "gpu-pool"})]))
    model.apply(Listed("Pod", [pod("batch-0", gpus=8), pod("train-0", gpus=8), pod("quiet"),
                               pod("done", node_name="g0")]))
    model.apply(Listed("Event", fixture("events.yaml")))
    model.apply(Listed(CA_STATUS, fixture("ca-status-yaml.yaml")))
    model.apply(Listed(KARPENTER_NODEPOOL, of_kind("karpenter.yaml", "NodePool")))
    waits = model.pod_waits(NOW)
    assert {k[1]: w.state for k, w in waits.items()} == {"batch-0": WAIT_NODES, "train-0": WAIT_NEVER}
    assert model.pod_wait(("default", "quiet"), NOW) == NO_WAIT  # nothing said: it waits for room
    assert model.pod_wait(("default", "done"), NOW) is None
    assert model.pod_waits(NOW) is waits  # cached per version


def test_not_triggered_for_predicates_only_names_no_group() -> None:
    w = wait_of("batch-3", {"pool": "nowhere"})
    assert (w.state, w.words, w.group) == (
        WAIT_NEVER, "will not get a node: no node group fits (3 node(s) didn't match Pod's node affinity/selector)",
        None)
