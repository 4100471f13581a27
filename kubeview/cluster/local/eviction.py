"""The Eviction API on the embedded cluster, as the apiserver's eviction subresource does it
(pkg/registry/core/pod/storage/eviction.go, 1.37), with PodDisruptionBudgets.

A pod that is terminal, Pending or already being deleted is deleted without a budget check. Otherwise
the budgets selecting it are looked up: more than one is refused (500, upstream's message); one that
allows no disruption now is refused with 429 TooManyRequests and its cause, upstream's words. Else
the pod gets `DisruptionTarget=True` (reason `EvictionByEvictionAPI`) and is deleted gracefully; its
controller replaces it. The embedded cluster has no disruption controller, so a budget's
disruptionsAllowed is computed at the moment of the eviction from the pods it selects (healthy =
Running and not being deleted), as the controller would have written it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from kubeview.cluster.evictions import EvictionRefused
from kubeview.cluster.local import objects as obj
from kubeview.cluster.source import ActionError
from kubeview.model.disruption import BudgetView
from kubeview.model.views import PodView
from kubeview.scheduling.evaluate import ExtraLoad

TOO_MANY = "Cannot evict pod as it would violate the pod's disruption budget."
MORE_THAN_ONE = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
EVICTING = "Eviction API: evicting"


@dataclass(frozen=True, slots=True)
class BudgetStatus:
    budget: BudgetView
    expected: int
    healthy: int
    desired: int
    allowed: int


def add_budget(state, manifest: dict) -> dict:  # noqa: ANN001 - a LocalCluster
    """Create or replace a PodDisruptionBudget (policy/v1) in the embedded cluster."""
    meta = manifest.get("metadata") or {}
    if not meta.get("name"):
        raise ActionError("PodDisruptionBudget: metadata.name is required")
    stored = copy.deepcopy(manifest)
    stored.setdefault("metadata", {}).setdefault("namespace", "default")
    state.budgets[(stored["metadata"]["namespace"], meta["name"])] = stored
    return copy.deepcopy(stored)


def budget_status(state, key: tuple[str, str]) -> BudgetStatus:  # noqa: ANN001
    """What the disruption controller would write in the budget's status now."""
    view = BudgetView.from_api(state.budgets[key])
    pods = [p for p in state.list("Pod") if _live(p) and view.selects(p["metadata"]["namespace"],
                                                                      p["metadata"].get("labels") or {})]
    healthy = sum(1 for p in pods if _healthy(p))
    allowed = view.allowed_now(healthy, len(pods))
    return BudgetStatus(view, len(pods), healthy, healthy - allowed, allowed)


def budgets_with_status(state) -> list[dict]:  # noqa: ANN001
    """Every budget with `status.disruptionsAllowed` filled in, as a real cluster lists them."""
    out = []
    for key, stored in sorted(state.budgets.items()):
        s = budget_status(state, key)
        o = copy.deepcopy(stored)
        o["status"] = {"disruptionsAllowed": s.allowed, "currentHealthy": s.healthy, "desiredHealthy": s.desired,
                       "expectedPods": s.expected}
        out.append(o)
    return out


def evict(state, namespace: str, name: str) -> str:  # noqa: ANN001
    """Evict a pod; a one-line result, or EvictionRefused with the apiserver's code and reason."""
    pod = state.get("Pod", namespace, name)
    if pod is None:
        raise EvictionRefused(404, f'pods "{name}" not found')
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed", "Pending") or pod["metadata"].get("deletionTimestamp"):
        state.delete_pod(namespace, name)
        state.reconcile()
        return f"pod {namespace}/{name} deleted (no budget applies to a {status.get('phase', 'Pending')} pod)"
    labels = pod["metadata"].get("labels") or {}
    keys = [k for k, b in sorted(state.budgets.items()) if BudgetView.from_api(b).selects(namespace, labels)]
    if len(keys) > 1:
        raise EvictionRefused(500, MORE_THAN_ONE)
    if keys:
        s = budget_status(state, keys[0])
        if s.allowed <= 0:
            raise EvictionRefused(429, TOO_MANY, f"The disruption budget {s.budget.name} needs {s.desired} healthy "
                                                 f"pods and has {s.healthy} currently")
    state.update("Pod", _disruption_target(pod))
    state.delete_pod(namespace, name)
    state.reconcile()
    return f"pod {namespace}/{name} evicted"


def nominate(state, namespace: str, name: str, node: str) -> str:  # noqa: ANN001
    """Set a pending pod's `status.nominatedNodeName`, as a preemptor's is set: the scheduler then
    counts it on that node for pods of no higher priority, so a replaced pod does not take its room."""
    pod = state.get("Pod", namespace, name)
    if pod is None:
        raise ActionError(f"pod {namespace}/{name} not found")
    if (pod.get("spec") or {}).get("nodeName"):
        return f"pod {namespace}/{name} is bound already"
    out = copy.deepcopy(pod)
    out.setdefault("status", {})["nominatedNodeName"] = node
    state.update("Pod", out)
    state.nominated[(namespace, name)] = node
    return f"pod {namespace}/{name} nominated to {node}"


def nominated_load(state, pod: dict) -> ExtraLoad | None:  # noqa: ANN001
    """The requests of pending pods nominated to nodes, of at least `pod`'s priority, `pod` itself excluded."""
    if not state.nominated:
        return None
    priority = int((pod.get("spec") or {}).get("priority") or 0)
    me = (pod["metadata"].get("namespace"), pod["metadata"]["name"])
    alloc = state.model.allocation()
    per: dict[int, np.ndarray] = {}
    for key, node in list(state.nominated.items()):
        other = state.get("Pod", *key)
        if other is None or (other.get("spec") or {}).get("nodeName") or other["metadata"].get("deletionTimestamp"):
            del state.nominated[key]  # bound or gone: the nomination is over
            continue
        if key == me or int((other.get("spec") or {}).get("priority") or 0) < priority or node not in alloc.nodes:
            continue
        row = alloc.nodes.index(node)
        amounts = alloc.vector(PodView.from_api(other).requests)
        per[row] = per.get(row, np.zeros(len(alloc.resources), dtype=np.int64)) + amounts
    if not per:
        return None
    return ExtraLoad(np.fromiter(per, dtype=np.intp, count=len(per)), np.stack(list(per.values())))


def _disruption_target(pod: dict) -> dict:
    """The pod with `DisruptionTarget=True`, as the eviction subresource writes it before deleting."""
    out = copy.deepcopy(pod)
    status = out.setdefault("status", {})
    conds = [c for c in status.get("conditions") or [] if c.get("type") != "DisruptionTarget"]
    conds.append({"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                  "lastTransitionTime": obj.timestamp(), "reason": "EvictionByEvictionAPI", "message": EVICTING})
    status["conditions"] = conds
    return out


def _live(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def _healthy(pod: dict) -> bool:
    return ((pod.get("status") or {}).get("phase") == "Running" and not pod["metadata"].get("deletionTimestamp")
            and bool((pod.get("spec") or {}).get("nodeName")))
