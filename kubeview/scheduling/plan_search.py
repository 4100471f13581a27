"""The planner's search: which candidate pods to disrupt (see planner.py for the objective and rules).

One member (a pending pod, "2 GPUs"): the target lands on one node, so only pods of one node need
to go. Per node the fewest pods covering its deficit is found exactly: one pod for every node at once
with array operations, more by enumerating that node's pods, nodes taken by their lower bound (for
each short resource, the fewest of the node's pods whose largest amounts cover it) and dropped once
their bound exceeds the best plan found. Exact unless the enumeration budget runs out.

Several members (a gang, "4 × 8 GPUs"): victims may be on several nodes. Exact: every set of the
relevant candidates, smallest first, each checked with `fit_gang`, skipping sets whose freed amount
cannot cover what is missing in total; used while the number of sets fits `exact_limit`. Beyond it,
a bounded heuristic: make room for the first member that does not fit (the one-member search, with
the members placed so far and the victims chosen so far counted), repeat until the gang fits. Its
quality figure is the gap to a lower bound (the fewest candidates whose amounts cover the total
shortfall, ignoring which node they are on).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np

from kubeview.model.allocation import GPU
from kubeview.model.views import PodView
from kubeview.scheduling.evaluate import evaluate
from kubeview.scheduling.plan_types import Candidate, Inputs, Plan, finish, fit_without, over_budget, removal

_TIES = 8  # equal-cost sets compared on how many of their pods would wait


def search(inp: Inputs, exact_limit: int) -> Plan:
    plan = Plan(target=inp.target.label, fits_now=False, found=False, notes=list(inp.notes))
    if not inp.target.members:
        plan.reason = "nothing to place"
        return plan
    fit0 = fit_without(inp, [])
    plan.notes.extend(n for n in fit0.notes if n not in plan.notes)
    if fit0.fits:
        plan.fits_now, plan.quality = True, "fits now: nothing to disrupt"
        return finish(inp, [], fit0, plan)
    missing = sorted({r for m in inp.target.members for r in inp.alloc.missing(m.requests)})
    if missing:
        plan.reason = f"no node offers {', '.join(missing)}: no disruption makes room"
        return plan
    single = inp.target.min_count == 1 or len(inp.target.members) == 1
    for compliant in (True, False):
        found = _one(inp, compliant, exact_limit) if single else _many(inp, compliant, exact_limit)
        sets, searched, exact, bound = found
        plan.searched += searched
        plan.lower_bound = bound  # this pass's own: a bound over the budget-compliant pods only is no bound
        plan.method = "exact" if exact else "heuristic"
        if sets:
            return _best(inp, sets, plan)
        if not inp.budgets or not any(c.budgets for c in inp.candidates):
            break  # without budgets the second pass is the same search
    plan.reason = _no_plan(inp, plan)
    if plan.searched:
        plan.quality = (f"no plan: exhaustive search over {plan.searched} candidate sets" if plan.method == "exact"
                        else f"no plan found by the bounded heuristic ({plan.searched} sets checked)")
    return plan


def _best(inp: Inputs, sets: list[list[Candidate]], plan: Plan) -> Plan:
    """Finish each equal-cost set; keep the one whose pods wait least."""
    best: Plan | None = None
    for removed in sets[:_TIES]:
        fit = fit_without(inp, removed)
        if not fit.fits:
            continue
        trial = Plan(plan.target, False, False, notes=list(plan.notes), method=plan.method,
                     lower_bound=plan.lower_bound, searched=plan.searched)
        finish(inp, removed, fit, trial)
        if best is None or trial.cost < best.cost:
            best = trial
    if best is None:
        plan.reason = "the candidate sets found do not make the target fit under the policy's scoring"
        return plan
    k = len(best.moves)
    best.lower_bound = min(max(best.lower_bound, 1), k)
    if best.method == "exact":
        best.quality = (f"optimal: exhaustive search over {best.searched} candidate sets (pruned); "
                        f"no plan disrupts fewer than {k} pod{'s' if k != 1 else ''}")
    else:
        gap = "optimal" if k == best.lower_bound else f"at most {k - best.lower_bound} more than optimal"
        best.quality = (f"heuristic (bounded, {best.searched} sets checked): {k} disruption{'s' if k != 1 else ''}, "
                        f"no plan disrupts fewer than {best.lower_bound} ({gap})")
    return best


def _no_plan(inp: Inputs, plan: Plan) -> str:
    """Why there is no plan (the notes say which pods were left alone)."""
    if not inp.candidates:
        return "no running pod may be disrupted"
    if not plan.searched:  # the bounds ruled out every set before one was tried
        n = len(inp.candidates)
        return (f"the {n} running pod{'s' if n != 1 else ''} that may be disrupted cannot free enough where "
                "the target could go")
    return "no set of the pods that may be disrupted makes room"


def _compliant(inp: Inputs, removed: Sequence[Candidate]) -> bool:
    return not over_budget(inp, removed)


# -- one member --------------------------------------------------------------------------------------
def _one(inp: Inputs, compliant: bool, limit: int, member: PodView | None = None, taken: Sequence[Candidate] = (),
         added: Sequence[tuple[int, np.ndarray]] = ()) -> tuple[list[list[Candidate]], int, bool, int]:
    """(equal-cost best sets, sets checked, exact, lower bound) for one member; `taken` are gone already
    and `added` placed already (the gang heuristic's state)."""
    alloc = inp.alloc
    member = member if member is not None else inp.target.members[0]
    load = removal(alloc, taken, added)
    where = evaluate(alloc, member, inp.config, assumed=load)
    if where.feasible.any():
        return [list(taken)], 0, True, 0
    request = alloc.vector(member.requests)
    cols = np.flatnonzero(request > 0)
    free = alloc.free.copy()
    if load is not None:
        free[load.rows] -= load.amounts
    deficit = np.maximum(request[cols] - free[:, cols], 0)  # (N, C)
    usable = ~where.unresolvable()
    gone = {id(c) for c in taken}
    pool = [c for c in inp.candidates if id(c) not in gone and usable[c.row]]
    if compliant:
        pool = [c for c in pool if _compliant(inp, [*taken, c])]
    if not pool:
        return [], 0, True, 0
    amounts = np.stack([c.amounts[cols] for c in pool])  # (M, C)
    rows = np.fromiter((c.row for c in pool), dtype=np.intp, count=len(pool))
    one = (amounts >= deficit[rows]).all(axis=1)
    if one.any():  # a single pod anywhere: the cheapest wins
        idx = np.flatnonzero(one)
        cost = [(pool[i].gpus, pool[i].priority, alloc.nodes[pool[i].row], pool[i].key) for i in idx.tolist()]
        order = sorted(range(len(idx)), key=cost.__getitem__)
        top = cost[order[0]][:2]
        ties = [[*taken, pool[idx[o]]] for o in order if cost[o][:2] == top][:_TIES]
        return ties, len(pool), True, 1
    by_row: dict[int, list[int]] = {}
    for i, c in enumerate(pool):
        by_row.setdefault(c.row, []).append(i)
    bounds = []
    for r, members in by_row.items():
        b = _bound(amounts[members], deficit[r])
        if b is not None:
            bounds.append((b, alloc.nodes[r], r))
    bounds.sort()
    best_key: tuple[int, int, int] | None = None
    best: list[list[Candidate]] = []
    searched, exact = 0, True
    for b, _, r in bounds:
        if best_key is not None and b > best_key[0]:
            break
        local = by_row[r]
        top_k = best_key[0] if best_key is not None else len(local)
        for k in range(b, top_k + 1):
            n_sets = _choose(len(local), k)
            if searched + n_sets > limit:
                exact = False
                found = _greedy(pool, local, amounts, deficit[r])
                if found is not None:
                    key = _key([pool[i] for i in found])
                    if best_key is None or key < best_key:
                        best_key, best = key, [[*taken, *(pool[i] for i in found)]]
                break
            hit = False
            for combo in combinations(local, k):
                searched += 1
                if not (amounts[list(combo)].sum(axis=0) >= deficit[r]).all():
                    continue
                chosen = [pool[i] for i in combo]
                if compliant and not _compliant(inp, [*taken, *chosen]):
                    continue
                key = _key(chosen)
                hit = True
                if best_key is None or key < best_key:
                    best_key, best = key, [[*taken, *chosen]]
                elif key == best_key and len(best) < _TIES:
                    best.append([*taken, *chosen])
            if hit:
                break
    return best, searched, exact, bounds[0][0] if bounds else 0


def _key(chosen: Sequence[Candidate]) -> tuple[int, int, int]:
    return (len(chosen), sum(c.gpus for c in chosen), sum(c.priority for c in chosen))


def _choose(n: int, k: int) -> int:
    from math import comb

    return comb(n, k)


def _bound(amounts: np.ndarray, deficit: np.ndarray) -> int | None:
    """The fewest of these pods that could cover `deficit`, each short resource on its own (None: never)."""
    need = 0
    for j in np.flatnonzero(deficit > 0).tolist():
        covered = np.cumsum(np.sort(amounts[:, j])[::-1])
        k = int(np.searchsorted(covered, deficit[j])) + 1
        if k > len(covered):
            return None
        need = max(need, k)
    return max(need, 1)


def _greedy(pool: list[Candidate], local: list[int], amounts: np.ndarray, deficit: np.ndarray) -> list[int] | None:
    """Largest contribution to what is still short first, until nothing is."""
    left, chosen = deficit.astype(np.int64).copy(), []
    rest = list(local)
    while (left > 0).any() and rest:
        gain = [int(np.minimum(amounts[i], np.maximum(left, 0)).sum()) for i in rest]
        pick = rest.pop(int(np.argmax(gain)))
        chosen.append(pick)
        left -= amounts[pick]
    return chosen if not (left > 0).any() else None


# -- several members ---------------------------------------------------------------------------------
def _many(inp: Inputs, compliant: bool, limit: int) -> tuple[list[list[Candidate]], int, bool, int]:
    alloc = inp.alloc
    col = alloc.column(GPU) if any(m.requests.get(GPU) for m in inp.target.members) else alloc.column("cpu")
    usable = np.zeros(len(alloc.nodes), dtype=bool)
    for m in {id(m.requests): m for m in inp.target.members}.values():
        usable |= ~evaluate(alloc, m, inp.config).unresolvable()
    asked = np.zeros(len(alloc.resources), dtype=bool)
    for m in inp.target.members:
        asked |= alloc.vector(m.requests) > 0
    pool = [c for c in inp.candidates if usable[c.row] and (c.amounts[asked] > 0).any()]
    if compliant:
        pool = [c for c in pool if _compliant(inp, [c])]
    pool.sort(key=lambda c: (c.gpus, c.priority, alloc.nodes[c.row], c.key))
    bound = _gang_bound(inp, pool, usable, col)
    if bound is None:
        return [], 0, True, 0
    total = 0
    for k in range(bound, len(pool) + 1):  # stops as soon as the count passes the limit (big pools)
        total += _choose(len(pool), k)
        if total > limit:
            break
    if total <= limit:
        return _exhaustive(inp, pool, bound, compliant, col, usable)
    sets, searched = _heuristic(inp, compliant, limit)
    return sets, searched, False, bound


def _shortfall(inp: Inputs, usable: np.ndarray, col: int | None) -> int:
    if col is None:
        return 0
    members = [m for m in inp.target.members if m.node is None]
    bound = len(inp.target.members) - len(members)
    need = sorted(inp.alloc.vector(m.requests)[col] for m in members)[:max(inp.target.min_count - bound, 0)]
    free = np.maximum(inp.alloc.free[usable, col], 0).sum()
    return int(sum(need) - free)


def _gang_bound(inp: Inputs, pool: list[Candidate], usable: np.ndarray, col: int | None) -> int | None:
    """Fewest candidates whose amounts cover the total shortfall (node boundaries ignored); None: none can."""
    short = _shortfall(inp, usable, col)
    if short <= 0:
        return 1
    covered = np.cumsum(sorted((int(c.amounts[col]) for c in pool), reverse=True))
    k = int(np.searchsorted(covered, short)) + 1
    return None if k > len(covered) else k


def _exhaustive(inp: Inputs, pool: list[Candidate], bound: int, compliant: bool, col: int | None,
                usable: np.ndarray) -> tuple[list[list[Candidate]], int, bool, int]:
    short = _shortfall(inp, usable, col)
    searched = 0
    for k in range(bound, len(pool) + 1):
        best_key, best = None, []
        for combo in combinations(pool, k):
            if col is not None and sum(int(c.amounts[col]) for c in combo) < short:
                continue
            if compliant and not _compliant(inp, combo):
                continue
            searched += 1
            if not fit_without(inp, combo).fits:
                continue
            key = _key(combo)
            if best_key is None or key < best_key:
                best_key, best = key, [list(combo)]
            elif key == best_key and len(best) < _TIES:
                best.append(list(combo))
        if best:
            return best, searched, True, k
    return [], searched, True, bound


def _heuristic(inp: Inputs, compliant: bool, limit: int) -> tuple[list[list[Candidate]], int]:
    alloc = inp.alloc
    taken: list[Candidate] = []
    searched = 0
    for _ in range(2 * len(inp.target.members) + 2):
        fit = fit_without(inp, taken)
        searched += 1
        if fit.fits:
            return [taken], searched
        added = [(alloc.nodes.index(m.node), alloc.vector(m.pod.requests)) for m in fit.members
                 if m.node is not None and not m.bound]
        waiting = next((m.pod for m in fit.members if m.node is None), None)
        if waiting is None:
            return [], searched
        sets, n, _, _ = _one(inp, compliant, max(limit - searched, 1000), waiting, taken, added)
        searched += n
        if not sets or len(sets[0]) == len(taken):
            return [], searched
        taken = sets[0]
    return [], searched
