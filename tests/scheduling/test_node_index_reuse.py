"""index_for reuses an index across new NodeViews whose filter facts are unchanged (a heartbeat), and
never across a change of labels, taints or cordon: the filters answer as a fresh build would."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
from builders import cluster, node

from kubeview.model.views import NodeView
from kubeview.scheduling.node_index import NodeIndex, index_for
from kubeview.scheduling.predicates import affinity_matches, schedulable, taints_tolerated

ZONES = ("a", "b", "c")
TAINTS = ({"key": "gpu", "value": "true", "effect": "NoSchedule"},
          {"key": "spot", "value": "", "effect": "NoExecute"},
          {"key": "soft", "value": "x", "effect": "PreferNoSchedule"})


def random_node(rng: random.Random, i: int) -> NodeView:
    labels = {"zone": rng.choice(ZONES), "gen": str(rng.randint(1, 5))}
    if rng.random() < 0.5:
        labels["pool"] = rng.choice(("gpu", "cpu"))
    taints = [t for t in TAINTS if rng.random() < 0.3]
    return node(f"node-{i:03}", gpu=8, labels=labels, taints=taints, unschedulable=rng.random() < 0.1)


def heartbeat(view: NodeView, beat: int) -> NodeView:
    """What a kubelet's (or kwok's) status update makes: a new view, the same filter facts."""
    return dataclasses.replace(view, conditions={**view.conditions, "Ready": "True"},
                               resource_version=f"{beat}", labels=dict(view.labels), taints=list(view.taints))


def changed(rng: random.Random, view: NodeView) -> NodeView:
    """A change a filter reads: a label, a taint or the cordon."""
    what = rng.randrange(3)
    if what == 0:
        return dataclasses.replace(view, labels={**view.labels, "zone": rng.choice(ZONES) + "x"})
    if what == 1:
        return dataclasses.replace(view, taints=[*view.taints, TAINTS[rng.randrange(2)]] if not view.taints else [])
    return dataclasses.replace(view, unschedulable=not view.unschedulable)


def random_pods(rng: random.Random) -> list[tuple[list[dict], dict[str, str], dict]]:
    pods = []
    for _ in range(12):
        tolerations = [{"key": "gpu", "operator": "Exists"}] if rng.random() < 0.5 else []
        selector = {"zone": rng.choice(ZONES)} if rng.random() < 0.4 else {}
        expr = rng.choice([{"key": "gen", "operator": "Gt", "values": [str(rng.randint(1, 4))]},
                           {"key": "pool", "operator": "In", "values": ["gpu"]},
                           {"key": "pool", "operator": "DoesNotExist"},
                           {"key": "zone", "operator": "NotIn", "values": [rng.choice(ZONES)]}])
        affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [expr]}]}}} if rng.random() < 0.7 else {}
        pods.append((tolerations, selector, affinity))
    return pods


def answers(index: NodeIndex, pods) -> list[np.ndarray]:  # noqa: ANN001
    out = []
    for tolerations, selector, affinity in pods:
        out += [schedulable(index, tolerations), taints_tolerated(index, tolerations),
                affinity_matches(index, selector, affinity)]
    return out


def test_heartbeats_reuse_the_index_and_filter_changes_rebuild_it() -> None:
    rng = random.Random(41)
    views = [random_node(rng, i) for i in range(60)]
    reused = rebuilt = 0
    for beat in range(200):
        previous = index_for(cluster(views))
        views = list(views)
        filter_change = rng.random() < 0.3
        for i in rng.sample(range(len(views)), rng.randint(1, 6)):
            views[i] = changed(rng, views[i]) if filter_change else heartbeat(views[i], beat)
        alloc = cluster(views)
        index = index_for(alloc)
        assert index.views == alloc.views and index.names == alloc.nodes
        pods = random_pods(rng)
        fresh = NodeIndex.build(alloc.nodes, alloc.views)
        for got, want in zip(answers(index, pods), answers(fresh, pods), strict=True):
            assert np.array_equal(got, want), f"round {beat}: the filters differ from a fresh index"
        if filter_change:
            rebuilt += 1  # the answers above are what matters: equal to a fresh build
        else:
            reused += 1
            assert index.tainted is previous.tainted and index.name_rank is previous.name_rank, \
                f"round {beat}: a heartbeat rebuilt the index"
    assert reused > 100 and rebuilt > 30


def test_a_node_added_or_renamed_builds_a_new_index() -> None:
    rng = random.Random(7)
    views = [random_node(rng, i) for i in range(10)]
    before = index_for(cluster(views))
    grown = index_for(cluster([*views, random_node(rng, 10)]))
    assert grown.name_rank is not before.name_rank and len(grown.names) == 11
    renamed = [dataclasses.replace(views[0], name="node-zzz"), *views[1:]]
    index = index_for(cluster(renamed))
    assert "node-zzz" in index.row and index.name_rank is not before.name_rank
