"""Would a pod fit a node a node group could add: its template (what one more node of the group offers,
model/autoscaling/store.py) placed through `evaluate`, as kube-scheduler would filter it, the one
implementation `kubeview fit` and the views use.

The answer, in the issue's words: "would fit a new node of gpu-pool (it can add 32)" when the group
can still grow, "would fit a node of gpu-pool, but gpu-pool is at its maximum 6" (or "but NodePool gpu
is at its limit nvidia.com/gpu 48/48") when it cannot, "..., but its scale-up failed: <the cloud's
words>" when it tries and fails. DaemonSet pods a new node would run are not subtracted (kubeview
does not know which would land there): the template is the node's allocatable.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kubeview.model.allocation import BASE_RESOURCES, Allocation
from kubeview.model.autoscaling.groups import KARPENTER, NodeGroup
from kubeview.model.autoscaling.words import limit_words, nearest_limit, nodes_it_can_add
from kubeview.model.views import NodeView, PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.evaluate import evaluate
from kubeview.scheduling.node_index import NodeIndex

_DEFAULT = PackingConfig()


@dataclass(frozen=True, slots=True)
class GroupAnswer:
    """What a pod would do on the nodes the groups could add."""

    words: str  # one line (see the module docstring)
    group: NodeGroup | None  # the group it names (None: no group's node would fit it)
    can_add: int | None  # nodes that group can still add (None: unbounded, or no group)
    per_node: int = 0  # pods like it one new node takes

    @property
    def will_come(self) -> bool:
        return self.group is not None and (self.can_add is None or self.can_add > 0) and not failing(self.group)


def failing(group: NodeGroup) -> bool:
    """Its scale-ups fail now (a CA backoff with the cloud's words, a NodeClaim that cannot launch)."""
    return bool(group.error) and (bool(group.backoff) or group.autoscaler == KARPENTER)


def template_allocation(groups: list[NodeGroup]) -> tuple[Allocation, list[NodeGroup]]:
    """One row per group with a known template: a new, empty node of it (named "<autoscaler>/<name>")."""
    usable = [g for g in groups if g.template]
    extra = sorted({r for g in usable for r in g.template or {}} - set(BASE_RESOURCES))
    resources = [*BASE_RESOURCES, *extra]
    views = [NodeView(name=f"{g.autoscaler}/{g.name}", labels=dict(g.node_labels), taints=list(g.taints),
                      unschedulable=False, conditions={"Ready": "True"}, capacity=dict(g.template or {}),
                      allocatable=dict(g.template or {})) for g in usable]
    table = np.array([[(g.template or {}).get(r, 0) for r in resources] for g in usable],
                     dtype=np.int64).reshape(len(usable), len(resources))
    zeros = np.zeros_like(table)
    alloc = Allocation(nodes=[v.name for v in views], resources=resources, capacity=table, allocatable=table.copy(),
                       requested=zeros, limits=zeros.copy(), views=views)
    return alloc, usable


def group_answer(pod: PodView, groups: list[NodeGroup], config: PackingConfig = _DEFAULT) -> GroupAnswer | None:
    """Where `pod` would go on a new node of one of `groups` (None: no group has a known template)."""
    alloc, usable = template_allocation(groups)
    if not usable:
        return None
    placement = evaluate(alloc, pod, config, index=NodeIndex.build(alloc.nodes, alloc.views))
    fitting = [usable[i] for i in np.flatnonzero(placement.feasible).tolist()]
    if not fitting:
        reasons = placement.message.partition(": ")[2].rstrip(".")
        return GroupAnswer(f"would not fit a new node of any node group either ({reasons})", None, None)
    # a group that will add one first, then one that cannot; by (autoscaler, name) within each
    fitting.sort(key=lambda g: (not _grows(g), g.key))
    group = fitting[0]
    n = nodes_it_can_add(group)
    per = _per_node(pod, group)
    if failing(group):
        return GroupAnswer(f"would fit a node of {group.name}, but its scale-up failed: {group.error}", group, n, per)
    if n is None or n > 0:
        return GroupAnswer(f"would fit a new node of {group.name}" + (f" (it can add {n})" if n is not None else ""),
                           group, n, per)
    return GroupAnswer(f"would fit a node of {group.name}, but {_stopped(group)}", group, n, per)


def _grows(group: NodeGroup) -> bool:
    n = nodes_it_can_add(group)
    return (n is None or n > 0) and not failing(group)


def _stopped(group: NodeGroup) -> str:
    if group.autoscaler != KARPENTER and group.max_size is not None:
        return f"{group.name} is at its maximum {group.max_size}"
    limit = nearest_limit(group)
    return f"NodePool {group.name} is at its limit" + (f" {limit_words(limit)}" if limit is not None else "")


def _per_node(pod: PodView, group: NodeGroup) -> int:
    """Pods like `pod` one new node of the group takes (by its requests against the template)."""
    template = group.template or {}
    counts = [template.get(r, 0) // v for r, v in pod.requests.items() if v > 0]
    return max(0, min(counts)) if counts else 0
