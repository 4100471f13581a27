"""Make it fit: the plan of fewest disruptions after which a pending pod, gang or hypothetical request
fits (`make_plan`). The objective, rules and search are described in plan_types.py and plan_search.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from kubeview.model.allocation import Allocation
from kubeview.model.cluster import ClusterModel
from kubeview.model.disruption import BudgetView
from kubeview.model.gangs.store import Gang
from kubeview.model.quota.admit import QuotaBlock, admit_pods
from kubeview.model.quota.counting import pod_amount
from kubeview.model.quota.objects import amount_text
from kubeview.model.views import TERMINAL_PHASES, PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.plan_search import search
from kubeview.scheduling.plan_types import Inputs, Plan, Target, candidates_of, reach, unreachable

_DEFAULT = PackingConfig()


def make_plan(alloc: Allocation, pods: Sequence[PodView], target: Target, config: PackingConfig = _DEFAULT,
              budgets: Sequence[BudgetView] = (), allowed: Sequence[int] | None = None, allow_bare: bool = False,
              pod_gpus: Mapping[tuple[str, str], int] | None = None, exact_limit: int = 20_000) -> Plan:
    """The plan for `target` on `alloc` with `pods` running; see the module doc.

    `allowed` is each budget's disruptionsAllowed now (default: its status, 0 when unset). `pod_gpus`:
    DRA GPUs each pod's own claims hold (freed when it leaves). `exact_limit` bounds the exhaustive
    search, in candidate sets checked; beyond it the heuristic runs."""
    budgets = list(budgets)
    allowed_now = list(allowed) if allowed is not None else [b.disruptions_allowed or 0 for b in budgets]
    where = reach(alloc, target, config)
    nowhere = unreachable(alloc, target, where[0]) if target.members else None
    if nowhere is not None:
        return Plan(target=target.label, fits_now=False, found=False, reason=f"{nowhere}, so no disruption makes room")
    candidates, notes = candidates_of(alloc, pods, target, budgets, allow_bare, pod_gpus, where)
    inp = Inputs(alloc, target, config, candidates, budgets, allowed_now, notes)
    inp.narrow(where[0])
    return search(inp, exact_limit)


def _quota_holders(model: ClusterModel, namespace: str, priority: int, block: QuotaBlock | None) -> list[str]:
    """Who in the namespace holds the refused quota at a lower priority than the request, by owner: evicting
    them frees quota only where their controllers do not make them again (scale them down instead)."""
    if block is None:
        return []
    held: dict[str, int] = {}
    for (ns, _), p in model.pods.items():
        if ns == namespace and p.priority < priority and p.phase not in TERMINAL_PHASES:
            amount = pod_amount(block.key, p) or 0
            if amount:
                who = "/".join(p.owner) if p.owner else f"Pod/{p.name}"
                held[who] = held.get(who, 0) + amount
    if not held:
        return []
    top = sorted(held.items(), key=lambda kv: (-kv[1], kv[0]))
    named = ", ".join(f"{who} {amount_text(block.key, n)}" for who, n in top[:5]) + (", …" if len(top) > 5 else "")
    return [f"lower-priority pods of {namespace} hold {amount_text(block.key, sum(held.values()))} of {block.key}: "
            f"{named}; scaling them down frees quota (evicted, their controllers would make them again)"]


def own_dra_gpus(model: ClusterModel) -> dict[tuple[str, str], int]:
    """Per pod, the DRA GPUs held by claims reserved for it alone (freed when it leaves, as the GPU
    ledger counts them); a claim several pods share frees nothing until all of them leave."""
    out: dict[tuple[str, str], int] = {}
    for ng in model.gpus.nodes().values():
        for s in ng.devices:
            if s.gpu and s.claim is not None and len(s.pods) == 1:
                key = (s.claim[0], s.pods[0])
                out[key] = out.get(key, 0) + 1
    return out


def target_of_gang(model: ClusterModel, gang: Gang) -> Target:
    pods = [p for m in gang.members if (p := model.pods.get(m.key)) is not None]
    return Target.of_pods(pods, gang.min_count, label=f"gang {gang.namespace}/{gang.name} ({len(pods)} members, "
                                                      f"minCount {gang.min_count})", topology_key=gang.topology_key)


def plan_for(model: ClusterModel, target: Target, config: PackingConfig = _DEFAULT,
             budgets: Sequence[BudgetView] = (), allowed: Sequence[int] | None = None, allow_bare: bool = False,
             exact_limit: int = 20_000, namespace: str | None = None) -> Plan:
    """`make_plan` on the model's allocation, pods and DRA claims. `namespace`: where a target whose pods
    do not exist yet (a hypothetical request) would be created; its quotas are checked first, and no
    node room is freed while they refuse it (pods that exist were admitted already)."""
    if namespace is not None:
        members = [replace(m, namespace=namespace) for m in target.members]
        quota = admit_pods(model.quotas.quotas(), members)
        if quota.admitted < target.min_count:
            return Plan(target=target.label, fits_now=False, found=False,
                        reason=f"{quota.words()}: freeing node room would not admit it, so no plan",
                        notes=_quota_holders(model, namespace, target.priority, quota.block))
    return make_plan(model.allocation(), list(model.pods.values()), target, config, budgets, allowed, allow_bare,
                     own_dra_gpus(model), exact_limit)
