"""The planner's types and shared steps (see planner.py): make it fit: the fewest disruptions after which a pending pod, gang or hypothetical request fits.

A plan is a set of running pods to evict (each re-placed where it would go again, or marked as
waiting), after which the target fits under the current policy: "fits" is `fit_gang`, which is
`evaluate`'s filters and scores, so the planner and the scheduler preview agree by construction.

Objective, lexicographic: fewest pods disrupted, then fewest GPUs they hold, then the lowest sum of
their priorities, then fewest that would have to wait for room. Rules: never a pod of higher priority
than the target; only pods a controller recreates (ReplicaSet, Job, StatefulSet, …) unless bare pods
are allowed; DaemonSet and static pods never (they come back where they were). PodDisruptionBudgets:
a plan that stays within every budget is preferred; when none exists, the best plan that exceeds a
budget is returned and says which budget and by how much (the Eviction API would refuse it).

Search (plan_search.py): exact where it is small enough, a bounded heuristic beyond; `Plan.method`
and `Plan.quality` say which and how close to optimal. Pure: an Allocation and views in, a Plan out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kubeview.model.allocation import GPU, Allocation
from kubeview.model.disruption import BudgetView
from kubeview.model.views import TERMINAL_PHASES, PodView
from kubeview.scheduling.config import PackingConfig
from kubeview.scheduling.evaluate import ExtraLoad, evaluate
from kubeview.scheduling.gang_domain import fit_gang_within
from kubeview.scheduling.gang_fit import GangFit, amount_text, describe, fit_gang

_DEFAULT = PackingConfig()
NEVER_OWNERS = frozenset({"DaemonSet", "Node"})  # they come back on the same node: disrupting them frees nothing


@dataclass(frozen=True, slots=True)
class Candidate:
    """A running pod the plan may disrupt, and what leaving frees on its node."""

    pod: PodView
    row: int  # its node's row in the Allocation
    amounts: np.ndarray  # int64 (R,): requests, plus DRA GPUs held by claims of its own
    gpus: int
    priority: int
    budgets: tuple[int, ...] = ()  # indexes into the plan's budgets that select it

    @property
    def key(self) -> tuple[str, str]:
        return self.pod.key


@dataclass(slots=True)
class Move:
    pod: str  # namespace/name
    owner: str  # "ReplicaSet/web-7d9" or "bare"
    node: str  # where it runs now
    to: str | None  # where it would go again; None: no room, it waits
    gpus: int
    priority: int
    why_waits: str | None = None  # the scheduler's message when it would wait


@dataclass(slots=True)
class Plan:
    target: str  # "default/train-c (2 GPUs)" or "4 × 8 GPUs"
    fits_now: bool  # no disruption needed
    found: bool  # a plan exists (fits_now, or moves that make it fit)
    moves: list[Move] = field(default_factory=list)
    landing: list[tuple[str, str]] = field(default_factory=list)  # (member, node) once the moves are done
    method: str = "exact"  # "exact" | "heuristic"
    quality: str = ""  # "optimal (...)" or "heuristic: ... lower bound ..."
    lower_bound: int = 0  # no plan disrupts fewer pods than this
    searched: int = 0  # candidate sets checked
    over_budget: list[str] = field(default_factory=list)  # PDBs the plan exceeds, one sentence each
    reason: str | None = None  # why there is no plan
    free_before: dict[str, int] = field(default_factory=dict)  # GPUs free on the nodes the plan touches
    free_after: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def cost(self) -> tuple[int, int, int, int]:
        return (len(self.moves), sum(m.gpus for m in self.moves), sum(m.priority for m in self.moves),
                sum(m.to is None for m in self.moves))

    @property
    def applicable(self) -> bool:
        """The Eviction API would accept every eviction (no budget exceeded)."""
        return self.found and not self.over_budget

    def to_dict(self) -> dict:
        return {"target": self.target, "fitsNow": self.fits_now, "found": self.found,
                "moves": [{"pod": m.pod, "owner": m.owner, "from": m.node, "to": m.to, "gpus": m.gpus,
                           "priority": m.priority, "waits": m.why_waits} for m in self.moves],
                "landing": [{"pod": p, "node": n} for p, n in self.landing],
                "method": self.method, "quality": self.quality, "lowerBound": self.lower_bound,
                "searched": self.searched, "overBudget": list(self.over_budget), "reason": self.reason,
                "freeGpusBefore": dict(self.free_before), "freeGpusAfter": dict(self.free_after),
                "notes": list(self.notes)}


@dataclass(frozen=True, slots=True)
class Target:
    """What to make room for: members (one for a pod), how many must fit together, their priority."""

    members: tuple[PodView, ...]
    min_count: int
    priority: int
    label: str
    topology_key: str | None = None  # a gang's TopologyConstraint: every member inside one domain of it

    @classmethod
    def of_pods(cls, pods: Sequence[PodView], min_count: int | None = None, label: str | None = None,
                topology_key: str | None = None) -> Target:
        pods = tuple(pods)
        size = describe(pods[0].requests) if pods else "nothing"
        name = label or (f"{pods[0].namespace}/{pods[0].name} ({size})" if len(pods) == 1
                         else f"{len(pods)} × {size}")
        return cls(pods, len(pods) if min_count is None else min_count, max((p.priority for p in pods), default=0), name,
                   topology_key)


def hypothetical(gpus: int, pods: int = 1, priority: int = 0, requests: Mapping[str, int] | None = None) -> Target:
    """"2 GPUs" or "4 × 8 GPUs": pods that exist nowhere, each asking for `gpus` (and `requests`)."""
    amounts = {GPU: gpus, "pods": 1, **(requests or {})}
    # the toleration the ExtendedResourceToleration admission plugin gives a pod asking for GPUs
    tolerate = [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}]
    members = tuple(PodView("", f"request-{i}", None, "Pending", dict(amounts), {}, [], 0, None, False, None,
                            tolerations=tolerate, priority=priority) for i in range(pods))
    label = f"{gpus} GPU{'s' if gpus != 1 else ''}" if pods == 1 else f"{pods} × {gpus} GPU{'s' if gpus != 1 else ''}"
    return Target(members, pods, priority, label)


@dataclass(slots=True)
class Inputs:
    """Everything the search reads, prepared once."""

    alloc: Allocation
    target: Target
    config: PackingConfig
    candidates: list[Candidate]
    budgets: list[BudgetView]
    allowed: list[int]  # per budget: disruptions it allows now
    notes: list[str]
    # the nodes a member could use once pods left (`reach`) as their own Allocation: the target's fit
    # is the same there (filters and scores are per node) and 10x cheaper on a big cluster
    sub: Allocation | None = None
    sub_row: np.ndarray | None = None  # full row -> sub row (-1 outside)

    def narrow(self, rows: np.ndarray) -> None:
        if not rows.any() or rows.all():
            return
        idx = np.flatnonzero(rows)
        a = self.alloc
        self.sub = Allocation([a.nodes[i] for i in idx.tolist()], a.resources, a.capacity[idx], a.allocatable[idx],
                              a.requested[idx], a.limits[idx], [a.views[i] for i in idx.tolist()],
                              None if a.dra_gpus is None else a.dra_gpus[idx], a.dra_mapped)
        self.sub_row = np.full(len(a.nodes), -1, dtype=np.intp)
        self.sub_row[idx] = np.arange(len(idx))


def reach(alloc: Allocation, target: Target, config: PackingConfig) -> tuple[np.ndarray, frozenset[str]]:
    """Where disruptions can help at all, and with what: the nodes some member could use once pods left
    (filters an eviction cannot change pass, allocatable covers the request), and the resources short
    on one of them for all the unbound members together (a conservative superset for gangs)."""
    rows = np.zeros(len(alloc.nodes), dtype=bool)
    need = np.zeros(len(alloc.resources), dtype=np.int64)
    for m in target.members:
        if m.node is None:
            need += alloc.vector(m.requests)
    for m in {id(m.requests): m for m in target.members if m.node is None}.values():
        request = alloc.vector(m.requests)
        rows |= ~evaluate(alloc, m, config).unresolvable() & (alloc.allocatable >= request).all(axis=1)
    short = ((alloc.free[rows] < need) & (need > 0)).any(axis=0) if rows.any() else np.zeros(len(need), dtype=bool)
    return rows, frozenset(alloc.resources[c] for c in np.flatnonzero(short).tolist())


def unreachable(alloc: Allocation, target: Target, rows: np.ndarray) -> str | None:
    """Why no disruption can help when no node could hold a member even empty (`reach` found none):
    the resource no node has enough of allocatable, else the filters; None when some node could."""
    if rows.any():
        return None
    for m in target.members:
        if m.node is not None:
            continue
        request = alloc.vector(m.requests)
        for c in np.flatnonzero(request > 0).tolist():
            largest = int(alloc.allocatable[:, c].max()) if len(alloc.nodes) else 0
            if largest < request[c]:
                name = alloc.resources[c]
                if name == GPU:
                    return f"no node has {request[c]} GPUs allocatable: the largest has {largest}"
                return (f"no node has {amount_text(name, int(request[c]))} allocatable: the largest has "
                        f"{amount_text(name, largest)}")
    return "no node a member may use (not cordoned, its taints tolerated, selected) could hold it even empty"


def candidates_of(alloc: Allocation, pods: Sequence[PodView], target: Target, budgets: Sequence[BudgetView] = (),
                  allow_bare: bool = False, pod_gpus: Mapping[tuple[str, str], int] | None = None,
                  where: tuple[np.ndarray, frozenset[str]] | None = None) -> tuple[list[Candidate], list[str]]:
    """The pods a plan may disrupt, and notes on those it may not (said once each). `where` (from
    `reach`) leaves out pods on nodes no member can use and pods that free nothing short."""
    row = {n: i for i, n in enumerate(alloc.nodes)}
    gpu_col = alloc.column(GPU)
    skip = {m.key for m in target.members}
    out: list[Candidate] = []
    higher = bare = 0
    # a pod of a target member's own controller asking the same: evicted, the controller makes it again
    # and it only waits in the target's place, so the plan would gain nothing
    own = {(m.namespace, m.owner, frozenset(m.requests.items())) for m in target.members if m.owner is not None}
    siblings = 0
    rows, short = where if where is not None else (None, None)
    for pod in pods:
        if pod.node is None or pod.deleting or pod.phase in TERMINAL_PHASES or pod.key in skip or pod.node not in row:
            continue
        if rows is not None and not rows[row[pod.node]]:
            continue
        if short is not None and not any(pod.requests.get(r, 0) > 0 for r in short) and \
                not (GPU in short and pod_gpus and pod_gpus.get(pod.key)):
            continue
        kind = pod.owner[0] if pod.owner else None
        if kind in NEVER_OWNERS:
            continue
        if (pod.namespace, pod.owner, frozenset(pod.requests.items())) in own:
            siblings += 1
            continue
        if pod.priority > target.priority:
            higher += 1
            continue
        if kind is None and not allow_bare:
            bare += 1
            continue
        amounts = alloc.vector(pod.requests)
        dra = (pod_gpus or {}).get(pod.key, 0)
        if dra and gpu_col is not None:
            amounts[gpu_col] += dra
        gpus = int(amounts[gpu_col]) if gpu_col is not None else 0
        chosen = tuple(i for i, b in enumerate(budgets) if b.selects(pod.namespace, pod.labels))
        out.append(Candidate(pod, row[pod.node], amounts, gpus, pod.priority, chosen))
    notes = []
    if higher:
        notes.append(f"{higher} pod{'s' if higher != 1 else ''} of higher priority than the target left alone")
    if bare:
        notes.append(f"{bare} bare pod{'s' if bare != 1 else ''} (no controller recreates them) left alone; "
                     "--bare (b on the Plan screen) considers them")
    if siblings:
        owner = next(f"{k}/{n}" for (_, (k, n), _) in own)
        notes.append(f"{siblings} pod{'s' if siblings != 1 else ''} of the target's own {owner} left alone: evicted, "
                     "one would only wait in the target's place")
    return out, notes


def removal(alloc: Allocation, removed: Sequence[Candidate], added: Sequence[tuple[int, np.ndarray]] = ()) -> ExtraLoad | None:
    """The victims' requests taken off their nodes (negative load), plus `added` (row, amounts)."""
    per: dict[int, np.ndarray] = {}
    for c in removed:
        per[c.row] = per.get(c.row, np.zeros(len(alloc.resources), dtype=np.int64)) - c.amounts
    for r, amounts in added:
        per[r] = per.get(r, np.zeros(len(alloc.resources), dtype=np.int64)) + amounts
    if not per:
        return None
    rows = np.fromiter(per, dtype=np.intp, count=len(per))
    return ExtraLoad(rows, np.stack(list(per.values())))


def fit_without(inp: Inputs, removed: Sequence[Candidate]) -> GangFit:
    """The target's fit with `removed` gone (one implementation: fit_gang), on the narrowed nodes when
    every removed pod is on one of them."""
    load = removal(inp.alloc, removed)
    members, count = inp.target.members, inp.target.min_count
    if inp.target.topology_key:  # inside one domain (gang_domain), on every node: domains are cluster-wide
        return fit_gang_within(fit_gang, inp.alloc, members, count, inp.config, inp.target.topology_key, load, None)
    if inp.sub is None or inp.sub_row is None:
        return fit_gang(inp.alloc, members, count, inp.config, assumed=load)
    if load is not None:
        rows = inp.sub_row[load.rows]
        if (rows < 0).any():
            return fit_gang(inp.alloc, members, count, inp.config, assumed=load)
        load = ExtraLoad(rows, load.amounts)
    return fit_gang(inp.sub, members, count, inp.config, assumed=load)


def over_budget(inp: Inputs, removed: Sequence[Candidate]) -> list[str]:
    used: dict[int, int] = {}
    for c in removed:
        for b in c.budgets:
            used[b] = used.get(b, 0) + 1
    out = []
    for b, n in sorted(used.items()):
        if n > inp.allowed[b]:
            budget = inp.budgets[b]
            out.append(f"PodDisruptionBudget {budget.namespace}/{budget.name} allows {inp.allowed[b]} "
                       f"disruption{'s' if inp.allowed[b] != 1 else ''}, the plan needs {n}")
    return out


def finish(inp: Inputs, removed: Sequence[Candidate], fit: GangFit, plan: Plan) -> Plan:
    """Fill `plan` with the moves (each victim's re-placement after the target landed), the landing and
    the free-GPU picture."""
    alloc = inp.alloc
    placed = [(alloc.nodes.index(node), alloc.vector(pod.requests)) for pod, node in fit.placement
              if pod.node is None]
    plan.landing = [(f"{p.namespace}/{p.name}" if p.namespace else p.name, n) for p, n in fit.placement if p.node is None]
    added = list(placed)
    gpu_col = alloc.column(GPU)
    moves: list[Move] = []
    for c in sorted(removed, key=lambda c: (alloc.nodes[c.row], c.key)):
        pod = c.pod
        owner = f"{pod.owner[0]}/{pod.owner[1]}" if pod.owner else "bare"
        if pod.owner is None:
            moves.append(Move(f"{pod.namespace}/{pod.name}", owner, alloc.nodes[c.row], None, c.gpus, c.priority,
                              "a bare pod: no controller recreates it"))
            continue
        # its replacement asks for what it held, its own DRA GPUs included (as an extended resource)
        requests = dict(pod.requests)
        if gpu_col is not None and c.gpus > requests.get(GPU, 0):
            requests[GPU] = c.gpus
        ghost = PodView(pod.namespace, pod.name, None, "Pending", requests, pod.limits, pod.containers, 0,
                        pod.owner, False, None, pod.node_selector, pod.tolerations, pod.affinity, pod.labels,
                        priority=pod.priority)
        where = evaluate(alloc, ghost, inp.config, assumed=removal(alloc, removed, added))
        to = where.best
        if to is not None:
            added.append((alloc.nodes.index(to), alloc.vector(requests)))
        moves.append(Move(f"{pod.namespace}/{pod.name}", owner, alloc.nodes[c.row], to, c.gpus, c.priority,
                          None if to else where.message))
    plan.moves = moves
    plan.over_budget = over_budget(inp, removed)
    plan.found = True
    col = alloc.column(GPU)
    if col is not None:
        touched = sorted({alloc.nodes[c.row] for c in removed} | {n for _, n in plan.landing}
                         | {m.to for m in moves if m.to})
        before = alloc.free[:, col]
        load = removal(alloc, removed, added)
        after = before.copy()
        if load is not None:
            after[load.rows] -= load.amounts[:, col]
        for n in touched:
            r = alloc.nodes.index(n)
            plan.free_before[n], plan.free_after[n] = int(before[r]), int(after[r])
    return plan
