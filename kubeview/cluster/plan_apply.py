"""Applying a plan: nominate the target to its landing node, evict the plan's pods through the Eviction
API, then follow until the target is bound, or say plainly that it is not (and why) at the timeout.

The nomination (`status.nominatedNodeName`, as kube-scheduler writes it for a preemptor) is what keeps
a disrupted pod's replacement, created while its predecessor is still terminating, from taking the
room just made: the scheduler counts nominated pods of at least the replacement's priority on their
node. It is best effort (a cluster may refuse the patch); the eviction is not: a refusal (429 from a
PodDisruptionBudget) stops the apply with the API server's reason. Works on any `cluster` with
`evict`, `nominate` and `get` (kube/evict.py's KubeEvictor, the embedded LocalSource).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from kubeview.cluster.evictions import EvictionRefused
from kubeview.cluster.plan_log import PlanLog
from kubeview.cluster.source import ActionError, ClusterSource, Evicts, TalksToKube
from kubeview.scheduling.plan_types import Plan


def evictor_for(source: ClusterSource) -> Evicts | None:
    """What evicts on `source`'s cluster: a KubeEvictor on its client, the embedded cluster itself, or
    None for a source without an Eviction API (the synthetic one)."""
    if isinstance(source, TalksToKube):
        from kubeview.cluster.kube.evict import KubeEvictor

        return KubeEvictor(source.api_client, source.server)
    return source if isinstance(source, Evicts) else None


@dataclass(slots=True)
class Outcome:
    outcome: str  # bound | refused | timeout | failed | done (a hypothetical request: the pods moved)
    detail: str
    lines: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.outcome in ("bound", "done")


def apply_plan(cluster: Evicts, plan: Plan, timeout: float = 120.0, *, log: PlanLog | None = None,
               title: str = "", say: Callable[[str], None] = lambda _line: None, poll: float = 0.2) -> Outcome:
    """Apply `plan` (found, within its budgets) and follow it; the audit log gets a row either way."""
    entry = log.started(title, plan.target, plan.to_dict()) if log is not None else None
    out = _apply(cluster, plan, timeout, say, poll)
    if log is not None and entry is not None:
        log.ended(entry, out.outcome, out.detail)
    return out


def _apply(cluster: Evicts, plan: Plan, timeout: float, say: Callable[[str], None], poll: float) -> Outcome:
    out = Outcome("failed", "")

    def line(text: str) -> None:
        out.lines.append(text)
        say(text)

    members = [(p.split("/", 1)[0], p.split("/", 1)[1], node) for p, node in plan.landing if "/" in p]
    for ns, name, node in members:
        try:
            line(cluster.nominate(ns, name, node))
        except ActionError as exc:
            line(f"nomination skipped ({exc}); a replacement may take the room first")
    for move in plan.moves:
        ns, name = move.pod.split("/", 1)
        try:
            line(cluster.evict(ns, name))
        except EvictionRefused as exc:
            out.outcome, out.detail = "refused", f"eviction of {move.pod} refused ({exc.code}): {exc}"
            line(out.detail)
            return out
        except ActionError as exc:
            out.outcome, out.detail = "failed", f"eviction of {move.pod} failed: {exc}"
            line(out.detail)
            return out
    deadline = time.monotonic() + timeout
    if not members:  # a hypothetical request: done once the evicted pods are gone
        while time.monotonic() < deadline:
            left = [m.pod for m in plan.moves if _same(cluster.get("Pod", *m.pod.split("/", 1)), m.node)]
            if not left:
                out.outcome, out.detail = "done", (f"{len(plan.moves)} pod(s) evicted for {plan.target}; nothing "
                                                     "holds the room for a request that is no pod: a replacement or "
                                                     "another pending pod may take it")
                line(out.detail)
                return out
            time.sleep(poll)
        out.outcome, out.detail = "timeout", f"evicted pods still terminating after {timeout:g} s: {', '.join(left)}"
        line(out.detail)
        return out
    while True:
        pods = {(ns, name): cluster.get("Pod", ns, name) for ns, name, _ in members}
        nodes = {k: ((p or {}).get("spec") or {}).get("nodeName") for k, p in pods.items()}
        unbound = [k for k, node in nodes.items() if not node]
        if not unbound:
            where = ", ".join(f"{ns}/{name} on {nodes[(ns, name)]}" for ns, name, _ in members)
            out.outcome, out.detail = "bound", f"bound: {where}"
            line(out.detail)
            return out
        if time.monotonic() >= deadline:
            why = "; ".join(f"{ns}/{name}: {_why(pods[(ns, name)])}" for ns, name in unbound)
            out.outcome, out.detail = "timeout", f"not bound within {timeout:g} s: {why}"
            line(out.detail)
            return out
        time.sleep(poll)


def _same(pod: dict | None, node: str) -> bool:
    """The evicted pod itself is still there (terminating) on its node."""
    return pod is not None and (pod.get("spec") or {}).get("nodeName") == node


def _why(pod: dict | None) -> str:
    if pod is None:
        return "the pod is gone"
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return c.get("message") or c.get("reason") or "unschedulable"
    return "not scheduled yet (no scheduler verdict)"
