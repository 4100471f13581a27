"""What a Pending pod waits for, from the autoscalers' Events on it and the node groups' state. Pure.

The Events, in the words the controllers write them:
- Cluster Autoscaler (kubernetes/autoscaler cluster-autoscaler/processors/status/
  eventing_scale_up_processor.go; ScaleUpInfo.String in processors/nodegroupset/nodegroup_set_processor.go;
  the skipped reasons in core/scaleup/orchestrator/skippedreasons.go):
  `TriggeredScaleUp` "pod triggered scale-up: [{gpu-pool 6->38 (max: 38)}]" and
  `NotTriggerScaleUp` "pod didn't trigger scale-up: 1 max node group size reached, 2 node(s) didn't
  match Pod's node affinity/selector" (counts of node groups per reason; "in backoff after failed
  scale-up", "not ready for scale-up", "max cluster cpu, memory limit reached", or "max total nodes in
  cluster reached" alone);
- Karpenter v1.15.0 (pkg/controllers/provisioning/scheduling/events.go, scheduler.go;
  pkg/controllers/nodeclaim/lifecycle/events.go): `Nominated` "Pod should schedule on:
  nodeclaim/gpu-x7k2p, node/gpu-x7k2p", `FailedScheduling` "Failed to schedule pod, all available
  instance types exceed limits for nodepool (NodePool=gpu)" (or "node limits have been exhausted for
  nodepool (NodePool=gpu)"; several NodePools' errors are joined with "; ", and the NodePool key is
  operatorpkg serrors' "(key=value)"), and `InsufficientCapacityError` "NodeClaim gpu-x7k2p nominated for
  this pod failed to launch: <the cloud's error>".
kube-scheduler's own FailedScheduling ("0/6 nodes are available: ...") is not an autoscaler's word.
The newest autoscaler Event decides; what it names is read in the groups' state now (a scale-up a pod
triggered that has since failed says the failure).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kubeview.model.autoscaling.groups import (
    KARPENTER,
    NODES,
    WAIT_NEVER,
    WAIT_NODES,
    WAIT_ROOM,
    NodeGroup,
    PodWait,
)
from kubeview.model.autoscaling.karpenter import NodeClaimView
from kubeview.model.autoscaling.words import (
    AT_LIMIT,
    AT_MAX,
    FAILED,
    SCALING,
    age_words,
    group_state,
    limit_words,
)
from kubeview.model.kube_events import EventView
from kubeview.model.views import PodView

TRIGGERED, NOT_TRIGGERED = "TriggeredScaleUp", "NotTriggerScaleUp"
TRIGGERED_HEAD, NOT_TRIGGERED_HEAD = "pod triggered scale-up: ", "pod didn't trigger scale-up: "
NOMINATED, FAILED_SCHEDULING, INSUFFICIENT = "Nominated", "FailedScheduling", "InsufficientCapacityError"
NOMINATED_HEAD, KARPENTER_FAILED_HEAD = "Pod should schedule on: ", "Failed to schedule pod, "
MAX_SIZE_REACHED = "max node group size reached"
IN_BACKOFF = "in backoff after failed scale-up"
LIMIT_ERRORS = ("all available instance types exceed limits for nodepool", "node limits have been exhausted for nodepool")
_SCALE_UP = re.compile(r"\{(\S+) (\d+)->(\d+) \(max: (\d+)\)\}")
_REASON = re.compile(r", (?=\d+ )")  # CA joins "<count> <reason>" with ", ", and a reason may hold ", "
_QUOTA = re.compile(r'^exceeded quota: "([^"]*)", resources: (.+)$')
_POOL = re.compile(r"NodePool=([^,)\s]+)")
_CLAIM_FAILED = re.compile(r"^NodeClaim (\S+) nominated for this pod failed to launch: (.*)$", re.S)
NO_WAIT = PodWait(WAIT_ROOM, "")


def scale_ups(message: str) -> list[tuple[str, int, int, int]]:
    """(group, from, to, max) of each ScaleUpInfo in a TriggeredScaleUp message."""
    return [(g, int(a), int(b), int(m)) for g, a, b, m in _SCALE_UP.findall(message)]


def not_triggered_reasons(message: str) -> dict[str, int]:
    """A NotTriggerScaleUp message's reasons -> how many node groups gave each."""
    rest = message.removeprefix(NOT_TRIGGERED_HEAD).strip()
    out: dict[str, int] = {}
    for part in _REASON.split(rest) if rest else ():
        count, _, reason = part.partition(" ")
        if count.isdigit() and reason:
            out[reason] = out.get(reason, 0) + int(count)
        else:
            out[part] = out.get(part, 0)
    return out


def nominated(message: str) -> tuple[str | None, str | None]:
    """(nodeclaim, node) a Nominated event names."""
    claim = node = None
    for item in message.removeprefix(NOMINATED_HEAD).split(", "):
        kind, _, name = item.strip().partition("/")
        if kind == "nodeclaim" and name:
            claim = name
        elif kind == "node" and name:
            node = name
    return claim, node


def is_autoscaler_event(event: EventView) -> bool:
    if event.reason in (TRIGGERED, NOT_TRIGGERED, NOMINATED, INSUFFICIENT):
        return True
    return event.reason == FAILED_SCHEDULING and event.message.startswith(KARPENTER_FAILED_HEAD)


def pod_wait(pod: PodView, events: list[EventView], groups: list[NodeGroup], now: float,
             claims: Mapping[str, NodeClaimView] | None = None) -> PodWait:
    """What `pod` waits for (NO_WAIT: room, or nothing an autoscaler said). `events`: the pod's, newest
    last; `claims`: the NodeClaims by name when kubeview reads them (None: it does not)."""
    if not pod.pending:
        return NO_WAIT
    ours = [e for e in events if is_autoscaler_event(e)]
    ours.sort(key=lambda e: e.last or e.first or 0.0)
    for event in reversed(ours):
        wait = _read(event, groups, now, claims, pod)
        if wait is not None:
            return wait
    return NO_WAIT


def _read(event: EventView, groups: list[NodeGroup], now: float, claims: Mapping[str, NodeClaimView] | None,
          pod: PodView) -> PodWait | None:
    since = event.last or event.first
    if event.reason == TRIGGERED:
        return _triggered(event, groups, now, since)
    if event.reason == NOT_TRIGGERED:
        return _not_triggered(event, groups, now, pod)
    if event.reason == NOMINATED:
        return _nominated(event, groups, now, claims)
    if event.reason == INSUFFICIENT:
        m = _CLAIM_FAILED.match(event.message)
        words = m.group(2) if m else event.message
        pool = claims[m.group(1)].pool if m and claims and m.group(1) in claims else None
        return PodWait(WAIT_NEVER, f"scale-up failed: {words}", (KARPENTER, pool) if pool else None,
                       event.message, since)
    return _karpenter_failed(event, groups, since, pod)


def _named(groups: list[NodeGroup], name: str, karpenter: bool) -> NodeGroup | None:
    return next((g for g in groups if g.name == name and (g.autoscaler == KARPENTER) == karpenter), None)


def _triggered(event: EventView, groups: list[NodeGroup], now: float, since: float | None) -> PodWait | None:
    ups = scale_ups(event.message)
    if not ups:
        return None
    name, a, b, _ = ups[0]
    group = _named(groups, name, karpenter=False)
    if group is None:  # no status to read: the event alone
        age = age_words(None if since is None else now - since)
        return PodWait(WAIT_NODES, f"waiting for a node: node group {name} scaling {a} → {b} (asked {age} ago)",
                       None, event.message, since)
    state, words = group_state(group, now)
    if state == SCALING:
        return PodWait(WAIT_NODES, f"waiting for a node: {words}", group.key, event.message, since)
    if state == FAILED:
        return PodWait(WAIT_NEVER, words, group.key, event.message, group.error_at or since)
    if state in (AT_MAX, AT_LIMIT):
        return PodWait(WAIT_NEVER, f"will not get a node: {words}", group.key, event.message, since)
    return PodWait(WAIT_ROOM, "", group.key, event.message, since)  # it grew: room is the scheduler's to find


def _fits_labels(pod: PodView, group: NodeGroup) -> bool:
    if not group.node_labels:
        return True  # nothing known of its nodes: it may be the one
    return all(group.node_labels.get(k) == str(v) for k, v in pod.node_selector.items())


def _candidates(pod: PodView, groups: list[NodeGroup]) -> list[NodeGroup]:
    """The CA groups this pod may be waiting on. A NotTriggerScaleUp counts the reasons of every group
    (2 in backoff, 1 max node group size reached, 3 didn't match its selector), so a pod that selects
    its nodes waits on the groups whose nodes match; only when none does, on the groups kubeview knows
    no nodes of (seen in CA 1.36.1's own words: tests/fixtures/autoscaling/ca-recorded)."""
    ca = [g for g in groups if g.autoscaler != KARPENTER]
    if not pod.node_selector:
        return ca
    known = [g for g in ca if g.node_labels and _fits_labels(pod, g)]
    return known or [g for g in ca if not g.node_labels]


def _quota_words(reasons: dict[str, int]) -> str | None:
    """CA's own resource limits (--cores-total, --memory-total, --gpu-total) in the words of 1.36
    ('exceeded quota: "cluster-wide", resources: cpu', core/scaleup/orchestrator/skippedreasons.go
    NewMaxResourceLimitReached) or older ("max cluster cpu, memory limit reached")."""
    for reason in reasons:
        m = _QUOTA.match(reason)
        if m is not None:
            return f'CA\'s limit "{m.group(1)}" on {m.group(2)} is reached'
        if reason.startswith("max cluster ") and reason.endswith(" limit reached"):
            return f"CA's cluster-wide {reason.removeprefix('max cluster ').removesuffix(' limit reached')} limit is reached"
    return None


def _not_triggered(event: EventView, groups: list[NodeGroup], now: float, pod: PodView) -> PodWait:
    reasons = not_triggered_reasons(event.message)
    ca = _candidates(pod, groups)
    since = event.last or event.first
    backing_off = next((g for g in ca if g.backoff), None)
    if IN_BACKOFF in reasons and backing_off is not None:
        if backing_off.error:
            return PodWait(WAIT_NEVER, f"scale-up failed: {backing_off.error}", backing_off.key, event.message,
                           backing_off.error_at)
        return PodWait(WAIT_NEVER, f"will not get a node: {backing_off.name} is backing off after a failed scale-up",
                       backing_off.key, event.message, since)
    if MAX_SIZE_REACHED in reasons:
        group = next((g for g in ca if g.max_size is not None and g.at_limit is not None
                      and g.at_limit.resource == NODES), None)
        if group is not None:
            return PodWait(WAIT_NEVER, f"will not get a node: {group.name} is at its maximum {group.max_size}",
                           group.key, event.message, since)
    quota = _quota_words(reasons)
    if quota is not None:
        return PodWait(WAIT_NEVER, f"will not get a node: {quota}", ca[0].key if len(ca) == 1 else None,
                       event.message, since)
    if IN_BACKOFF in reasons:
        return PodWait(WAIT_NEVER, "will not get a node: its node group is backing off after a failed scale-up",
                       None, event.message, since)
    said = ", ".join(f"{n} {r}" if n else r for r, n in reasons.items()) or event.message
    head = "will not get a node: " if any(r.startswith("max ") or r == IN_BACKOFF for r in reasons) else \
        "will not get a node: no node group fits ("
    return PodWait(WAIT_NEVER, head + said + (")" if head.endswith("(") else ""), None, event.message, since)


def _nominated(event: EventView, groups: list[NodeGroup], now: float,
               claims: Mapping[str, NodeClaimView] | None) -> PodWait | None:
    claim_name, node = nominated(event.message)
    since = event.last or event.first
    if claim_name is None:
        return PodWait(WAIT_ROOM, "", None, event.message, since)  # an existing node: kube-scheduler's turn
    claim = claims.get(claim_name) if claims is not None else None
    if claim is None:
        if claims is not None:
            return None  # gone (deleted after a failed launch): an older word may still hold
        age = age_words(None if since is None else now - since)
        return PodWait(WAIT_NODES, f"waiting for a node: NodeClaim {claim_name} (nominated {age} ago)",
                       None, event.message, since)
    key = (KARPENTER, claim.pool) if claim.pool else None
    failure = claim.failure
    if failure is not None:
        return PodWait(WAIT_NEVER, f"scale-up failed: {failure.message or failure.reason}", key,
                       event.message, failure.since)
    stage = claim.stage
    if stage in ("launching", "registering"):
        age = age_words(None if claim.created is None else now - claim.created)
        pool = f" of NodePool {claim.pool}" if claim.pool else ""
        return PodWait(WAIT_NODES, f"waiting for a node: NodeClaim {claim_name}{pool} {stage}"
                       f"{f' ({age})' if age else ''}", key, event.message, since)
    return PodWait(WAIT_ROOM, "", key, event.message, since)


def _pool_fits(part: str, groups: list[NodeGroup], pod: PodView) -> bool:
    m = _POOL.search(part)
    group = _named(groups, m.group(1), karpenter=True) if m else None
    return group is not None and bool(group.node_labels) and _fits_labels(pod, group)


def _karpenter_failed(event: EventView, groups: list[NodeGroup], since: float | None, pod: PodView) -> PodWait:
    rest = event.message.removeprefix(KARPENTER_FAILED_HEAD)
    # Karpenter checks each NodePool's limits before whether the pod could go there at all (scheduler.go,
    # addToNewNodeClaim), so its message names every NodePool at its limit: the pod's own is the one whose
    # nodes it selects (measured on the real Karpenter, tests/realk8s/test_karpenter_real.py); first otherwise.
    parts = [part for part in rest.split("; ") if part.startswith(LIMIT_ERRORS)]
    parts.sort(key=lambda part: not _pool_fits(part, groups, pod))
    for part in parts:
        m = _POOL.search(part)
        name = m.group(1) if m else ""
        group = _named(groups, name, karpenter=True)
        if group is None:
            return PodWait(WAIT_NEVER, f"NodePool {name or '?'} at its limits ({part.split(' (')[0]})",
                           (KARPENTER, name) if name else None, event.message, since)
        reached = group.at_limit
        if reached is None and group.limits:
            near = max(group.limits, key=lambda lim: lim.used / lim.limit if lim.limit else 1.0)
            words = f"NodePool {name} near its limit {limit_words(near)}: no instance type fits what is left"
        elif reached is not None:
            words = f"NodePool {name} at its limit {limit_words(reached)}"
        else:
            words = f"NodePool {name} at its limits"
        return PodWait(WAIT_NEVER, words, group.key, event.message, since)
    return PodWait(WAIT_NEVER, f"will not get a node: {rest}", None, event.message, since)
