"""The panel under the Capacity table: the selected node group's story, and the rough time it means.

For the group under the cursor: its size against its limits, what its autoscaler last said, how many
pods wait on it and whose they are, how many nodes it can still add and how many the waiting pods would
need, and a rough time: the waiting pods run `pods a node × nodes` at a time (the nodes it has plus
those it can still add), each for the batch's observed pod time (the mean run of its finished pods;
before any has finished, the oldest running one's age, a lower bound, said so). The batch is the
workload with the most pods waiting on the group; for a Job, the same arithmetic over what is left
of it, and what it would take on the nodes its pods asked for. Then the recent scale-ups and failures
from the autoscaler's Events (CA's on its status ConfigMap, Karpenter's on the NodePool and its
NodeClaims). Pure but for `gather`, which reads the model.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rich.markup import escape

from kubeview.model.autoscaling.groups import KARPENTER, NodeGroup
from kubeview.model.autoscaling.words import group_state, limit_words, what
from kubeview.model.cluster import ClusterModel
from kubeview.model.kube_events import EventView, human_duration
from kubeview.tui.format import duration
from kubeview.tui.rows.capacity import WHO_LONG

CA_STATUS_OBJECT = ("ConfigMap", "kube-system", "cluster-autoscaler-status")
RECENT = 5  # scale-ups and failures listed
DURATIONS = 200  # the most recent finished pods whose run times make the mean


@dataclass(frozen=True, slots=True)
class Batch:
    """The workload with the most pods waiting on a group (a Job's figures when it is one)."""

    owner: tuple[str, str, str]  # (kind, namespace, name)
    waiting: int
    request: dict[str, int]  # one of its pods' requests
    durations: tuple[float, ...] = ()  # run times of its finished pods (seconds)
    oldest_running: float | None = None  # seconds its longest-running pod has run
    left: int | None = None  # a Job: completions not done yet
    parallelism: int | None = None


@dataclass(frozen=True, slots=True)
class Estimate:
    per_node: int | None  # pods of the batch one node of the group takes (None: unknown)
    nodes: int  # the nodes it will have: now plus what it can still add (or now, unknown)
    can_add: int | None
    wanted: int | None  # nodes the waiting pods would need in all
    pod_seconds: float | None
    lower_bound: bool  # pod_seconds is a running pod's age, not a finished pod's run
    basis: str  # where pod_seconds comes from, in a few words
    waiting_seconds: float | None  # until the last waiting pod has run
    job_seconds: float | None  # what is left of the Job, on `nodes`
    job_seconds_wanted: float | None  # ... on `wanted` nodes


def per_node(template: dict[str, int] | None, overhead: dict[str, int], request: dict[str, int]) -> int | None:
    """How many pods asking `request` fit on one empty node offering `template` (DaemonSet pods'
    `overhead` taken first); None when the template is unknown."""
    if template is None:
        return None
    fits = []
    for resource, amount in request.items():
        if amount <= 0:
            continue
        free = template.get(resource, 0) - overhead.get(resource, 0)
        fits.append(max(0, free // amount))
    return min(fits) if fits else None


def estimate(group: NodeGroup, batch: Batch, per: int | None) -> Estimate:
    can_add = group.can_add
    nodes = max(group.size, group.target or 0) + (can_add or 0)
    wanted = None if not per else max(group.size, group.target or 0) + math.ceil(batch.waiting / per)
    if batch.durations:
        seconds: float | None = sum(batch.durations) / len(batch.durations)
        basis, lower = f"mean run of {len(batch.durations)} finished pod{'s' * (len(batch.durations) != 1)}", False
    elif batch.oldest_running is not None:
        seconds, lower = batch.oldest_running, True
        basis = "none finished yet: the oldest running pod's age so far"
    else:
        seconds, basis, lower = None, "none has run yet", False
    slots = (per or 0) * nodes

    def run(pods: int, slots: int) -> float | None:
        if seconds is None or slots <= 0:
            return None
        return math.ceil(pods / slots) * seconds

    job = job_wanted = None
    if batch.left is not None:
        at_once = min(slots, batch.parallelism or slots)
        job = run(batch.left, at_once)
        if wanted is not None and per:
            job_wanted = run(batch.left, min(wanted * per, batch.parallelism or wanted * per))
    return Estimate(per, nodes, can_add, wanted, seconds, lower, basis, run(batch.waiting, slots), job, job_wanted)


def gather(model: ClusterModel, group: NodeGroup, waiting: Sequence[tuple[str, str]], now: float) -> Batch | None:
    """The batch of pods waiting on `group`: its owner's figures from the model (under the state's lock)."""
    owners: Counter[tuple[str, str, str]] = Counter()
    sample: dict[tuple[str, str, str], dict[str, int]] = {}
    for key in waiting:
        pod = model.pods.get(key)
        if pod is None:
            continue
        owner = (pod.owner[0], pod.namespace, pod.owner[1]) if pod.owner else ("Pod", pod.namespace, pod.name)
        owners[owner] += 1
        sample.setdefault(owner, {k: v for k, v in pod.requests.items() if k != "pods"})
    if not owners:
        return None
    owner, count = owners.most_common(1)[0]
    if owner[0] != "Job":
        return Batch(owner, count, sample[owner])
    pods = model.jobs.history_of(owner[1], owner[2])
    ran = [p for p in pods if p.phase == "Succeeded" and p.ran is not None]
    ran.sort(key=lambda p: p.finished_at or 0.0)
    running = [now - p.started_at for p in pods if p.phase == "Running" and p.started_at is not None]
    job = model.jobs.jobs.get((owner[1], owner[2]))
    left = None if job is None or job.completions is None else max(0, job.completions - job.succeeded)
    return Batch(owner, count, sample[owner], tuple(p.ran for p in ran[-DURATIONS:] if p.ran is not None),
                 max(running) if running else None, left, None if job is None else job.parallelism)


def overhead_of(model: ClusterModel, nodes: Sequence[str]) -> dict[str, int]:
    """Requests of the DaemonSet pods on one of the group's nodes: what every new node gives them first."""
    out: dict[str, int] = {}
    for node in nodes[:1]:
        for pod in model.pods_on(node):
            if pod.owner is not None and pod.owner[0] == "DaemonSet":
                for resource, amount in pod.requests.items():
                    out[resource] = out.get(resource, 0) + amount
    return out


def recent(model: ClusterModel, group: NodeGroup) -> list[EventView]:
    """The group's scale-ups and failures in its autoscaler's Events, newest first."""
    found: list[EventView] = []
    if group.autoscaler == KARPENTER:
        found += model.events.for_object("NodePool", "", group.name)
        for claim in model.autoscaling.nodeclaims(group.name):
            found += model.events.for_object("NodeClaim", "", claim.name)
    else:
        mine = (f"group {group.name} ", f"group {group.name}:")
        found += [e for e in model.events.for_object(*CA_STATUS_OBJECT) if any(m in e.message for m in mine)]
    found.sort(key=lambda e: e.last or e.first or 0.0, reverse=True)
    return found[:RECENT]


def size_line(group: NodeGroup) -> str:
    """`6 nodes, min 0, max 6`; a NodePool's `3 nodes, limits cpu 24/48, nvidia.com/gpu 48/48`; `, 8 GPUs`."""
    parts = [f"{group.size} node{'s' * (group.size != 1)}"]
    if group.autoscaler != KARPENTER:
        if group.min_size is not None:
            parts.append(f"min {group.min_size}")
        if group.max_size is not None:
            parts.append(f"max {group.max_size}")
        if group.target is not None and group.target != group.size:
            parts.append(f"target {group.target}")
    elif group.limits:
        parts.append("limits " + ", ".join(limit_words(lim) for lim in group.limits))
    else:
        parts.append("no limits")
    if group.gpus:
        parts.append(f"{group.gpus} GPU{'s' * (group.gpus != 1)}")
    return ", ".join(parts)


def _seconds(value: float | None, lower: bool) -> str:
    if value is None:
        return "unknown"
    return ("at least " if lower else "≈ ") + duration(value)


def story(group: NodeGroup, waiting: int, never: int, batch: Batch | None, est: Estimate | None,
          events: Sequence[EventView], now: float) -> list[str]:
    """The panel's lines (rich markup)."""
    state, words = group_state(group, now)
    style = "bold red" if state == "failed" else "bold yellow" if state in ("at-max", "at-limit") else "cyan"
    lines = [f"[bold]{escape(what(group))}[/] ({escape(WHO_LONG.get(group.autoscaler, group.autoscaler))}): "
             f"{escape(size_line(group))}", f"[{style}]{escape(words)}[/]"]
    if group.error and state != "failed":
        lines.append(f"[red]last error: {escape(group.error)}[/]")
    if not waiting:
        lines.append("[dim]no pod waits on it[/]")
    else:
        told = f" ({never} told no node will come)" if never else ""
        lines.append(f"[bold]{waiting}[/] pod{'s' * (waiting != 1)} wait on it{told}")
    if batch is not None and est is not None:
        kind, ns, name = batch.owner
        add = "unknown" if est.can_add is None else str(est.can_add)
        need = "" if est.wanted is None else f"; its pods would need {est.wanted} in all, {est.per_node} a node"
        lines.append(f"{escape(kind)} {escape(ns)}/{escape(name)}: [bold]{batch.waiting}[/] waiting; the group can "
                     f"still add [bold]{add}[/] node{'s' * (add != '1')}{need}")
        if est.per_node:
            slots = est.nodes * est.per_node
            lines.append(f"rough time: {batch.waiting} waiting ÷ ({est.nodes} nodes × {est.per_node}) = "
                         f"{math.ceil(batch.waiting / slots) if slots else '∞'} rounds × "
                         f"{_seconds(est.pod_seconds, est.lower_bound)} a pod ({escape(est.basis)}) = "
                         f"[bold]{_seconds(est.waiting_seconds, est.lower_bound)}[/]")
            if batch.left is not None and est.job_seconds is not None:
                then = "" if est.job_seconds_wanted is None or est.wanted is None else (
                    f"; on the {est.wanted} nodes its pods asked for, {_seconds(est.job_seconds_wanted, est.lower_bound)}")
                lines.append(f"the Job's {batch.left:,} left: [bold]{_seconds(est.job_seconds, est.lower_bound)}[/]"
                             f" on {est.nodes} nodes{then}")
    if events:
        lines.append("[bold]recent scale-ups and failures[/]")
        for e in events:
            age = human_duration(now - (e.last or e.first or now))
            mark = "red" if e.warning else "dim"
            lines.append(f"  [{mark}]{age:>4} ago {escape(e.reason)}[/] {escape(e.message)}")
    return lines
