"""The embedded autoscaler's decision for one loop, as Cluster Autoscaler's scale-up orchestrator makes it (pure).

Input: the node groups (size asked of the "cloud", nodes still provisioning, max size, one template
node's allocation) and the pods the scheduler marked unschedulable. As in CA
(core/scaleup/orchestrator): pods that fit on nodes already coming are left alone; a group at its
max size (or backing off) is skipped with CA's reason; for every other group the pods that fit its
template are bin-packed first-fit onto new template nodes, no more than the group can still add
(CA's estimation limiter caps at max - target); the option that helps the most pods wins (fewer
nodes, then the name, on a tie: CA's default expander is random). A scale-up makes the pods it helps
`TriggeredScaleUp`; a loop without one gives every remaining pod `NotTriggerScaleUp` with each
group's reason, counted over groups (`ReasonsMessage`): a skipped group's (at its max, backing off)
when the pod would fit its template, else that group's rejection (its scheduler reasons on the
template). That is CA with `--scaleup-simulation-for-skipped-node-groups-enabled=true`; by default
CA gives a skipped group's reason to every pod, even one the group could never take (train-c, 2 GPUs,
would hear that the CPU pool is at its max), which says less.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubeview.cluster.local import ca_status
from kubeview.cluster.local import objects as obj
from kubeview.cluster.local.config import NodeGroupSpec, SystemWorkload
from kubeview.model.allocation import Allocation
from kubeview.model.autoscaling.members import EMBEDDED_GROUP_LABEL
from kubeview.model.cluster import ClusterModel
from kubeview.model.events import Listed
from kubeview.model.views import PodView
from kubeview.scheduling.evaluate import evaluate

Key = tuple[str, str]
GROUP_LABEL = EMBEDDED_GROUP_LABEL  # on every node of an embedded node group: its group's name


def template_node(spec: NodeGroupSpec, name: str, index: int) -> dict:
    """A Node of the group: the template's object, its own name, the group label."""
    node = obj.node_object(spec.template, index)
    labels = node["metadata"]["labels"]
    labels.update({"kubernetes.io/hostname": name, GROUP_LABEL: spec.name})
    node["metadata"]["name"] = name
    for address in node["status"]["addresses"]:
        if address["type"] == "Hostname":
            address["address"] = name
    return node


def daemon_matches(w: SystemWorkload, node: dict) -> bool:
    labels = node["metadata"].get("labels") or {}
    return w.kind == "DaemonSet" and all(labels.get(k) == v for k, v in w.node_selector.items())


def template_allocation(spec: NodeGroupSpec, system: Sequence[SystemWorkload]) -> Allocation:
    """One new node of the group with the DaemonSet pods it would get: what CA simulates (its NodeInfo)."""
    node = template_node(spec, f"template-{spec.name}", 0)
    owner = {"kind": "DaemonSet", "name": "template", "uid": "template"}
    rng = random.Random(0)
    pods = [obj.daemon_pod(w, node["metadata"]["name"], owner, rng) for w in system if daemon_matches(w, node)]
    model = ClusterModel("template")
    model.apply(Listed("Node", [node]))
    model.apply(Listed("Pod", pods))
    return model.allocation()


@dataclass(frozen=True, slots=True)
class Group:
    """A node group as one loop sees it."""

    name: str
    max_size: int
    target: int  # the size asked of the cloud
    upcoming: int  # asked for, not registered yet
    alloc: Allocation  # one template node (row 0)
    backoff: bool = False

    @property
    def skipped(self) -> str | None:
        """CA's reason to skip the group this loop (IsNodeGroupReadyToScaleUp, then the max size)."""
        if self.backoff:
            return ca_status.IN_BACKOFF
        if self.target >= self.max_size:
            return ca_status.MAX_SIZE_REACHED
        return None


@dataclass(slots=True)
class Plan:
    scale_up: tuple[str, int, int] | None = None  # (group, from target, to target)
    triggered: list[Key] = field(default_factory=list)  # TriggeredScaleUp
    not_triggered: dict[Key, str] = field(default_factory=dict)  # NotTriggerScaleUp message
    upcoming: list[Key] = field(default_factory=list)  # will fit on nodes already coming: no event
    wanted: dict[str, int] = field(default_factory=dict)  # group -> nodes the pods that fit it would need


@dataclass(frozen=True, slots=True)
class _Fit:
    fits: bool
    request: np.ndarray
    reasons: tuple[str, ...]


def _fit(alloc: Allocation, pod: PodView) -> _Fit:
    placement = evaluate(alloc, pod)
    return _Fit(bool(placement.feasible[0]), alloc.vector(pod.requests), tuple(placement.reasons_of(0)))


def _pack(free: np.ndarray, requests: list[np.ndarray], bins: list[np.ndarray], new_bins: int) -> tuple[list[bool], int]:
    """First-fit of `requests` onto `bins` (mutated), opening up to `new_bins` more from `free`: which
    were placed, and how many bins were opened."""
    room = np.empty((len(bins) + min(new_bins, len(requests)), len(free)), dtype=np.int64)
    used = len(bins)
    if used:
        room[:used] = np.array(bins)
    placed, opened = [], 0
    for req in requests:
        rows = np.flatnonzero((room[:used] >= req).all(axis=1))
        row: int | None = int(rows[0]) if len(rows) else None
        if row is None and opened < new_bins and (free >= req).all():
            room[used] = free
            row, used, opened = used, used + 1, opened + 1
        if row is not None:
            room[row] -= req
        placed.append(row is not None)
    bins[:] = list(room[:used])
    return placed, opened


def plan(groups: Sequence[Group], pods: Sequence[tuple[Key, PodView]],
         equivalence: Callable[[Key, PodView], object] | None = None) -> Plan:
    """One loop's decision; `equivalence(key, pod)` names pods that fit alike (a controller's pods), so a
    template is evaluated once per kind of pod."""
    out = Plan()
    fits: dict[tuple[str, object], _Fit] = {}

    def fit(group: Group, key: Key, pod: PodView) -> _Fit:
        cls = equivalence(key, pod) if equivalence is not None else key
        got = fits.get((group.name, cls))
        if got is None:
            got = fits[(group.name, cls)] = _fit(group.alloc, pod)
        return got

    remaining = list(pods)
    for group in groups:  # pods that fit on nodes already coming (CA: upcoming nodes in the snapshot)
        if not group.upcoming or not remaining:
            continue
        candidates = [(k, p) for k, p in remaining if fit(group, k, p).fits]
        bins = [group.alloc.free[0].copy() for _ in range(group.upcoming)]
        placed, _ = _pack(group.alloc.free[0], [fit(group, k, p).request for k, p in candidates], bins, 0)
        coming = {k for (k, _), ok in zip(candidates, placed, strict=True) if ok}
        out.upcoming += [k for k, _ in remaining if k in coming]
        remaining = [(k, p) for k, p in remaining if k not in coming]
    if not remaining:
        return out
    options: list[tuple[int, int, str, list[Key], int]] = []  # (-pods, nodes, group, pods helped, target)
    for group in groups:
        candidates = [(k, p) for k, p in remaining if fit(group, k, p).fits]
        if not candidates:
            continue
        requests = [fit(group, k, p).request for k, p in candidates]
        _, needed = _pack(group.alloc.free[0], requests, [], len(requests))
        out.wanted[group.name] = group.target + needed
        if group.skipped is not None:
            continue
        placed, opened = _pack(group.alloc.free[0], requests, [], group.max_size - group.target)
        helped = [k for (k, _), ok in zip(candidates, placed, strict=True) if ok]
        if opened:
            options.append((-len(helped), opened, group.name, helped, group.target))
    if options:
        _, opened, name, helped, target = min(options, key=lambda o: o[:3])
        out.scale_up = (name, target, target + opened)
        out.triggered = helped
        return out
    for key, pod in remaining:
        reasons: list[str] = []
        for group in groups:
            verdict = fit(group, key, pod)
            reasons += [group.skipped] if verdict.fits and group.skipped is not None else list(verdict.reasons)
        if reasons:
            out.not_triggered[key] = ca_status.not_triggered(reasons)
    return out
