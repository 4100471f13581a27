"""The planner against a brute-force search over every set of disruptable pods, on seeded small clusters;
its rules (priority, bare pods, DaemonSets, PodDisruptionBudgets) and its "no plan"."""

from __future__ import annotations

import random
from itertools import combinations

import pytest
from builders import cluster, node, pod_obj

from kubeview.model.allocation import GPU
from kubeview.model.disruption import BudgetView
from kubeview.model.views import PodView
from kubeview.scheduling import PackingConfig
from kubeview.scheduling.gang_fit import fit_gang
from kubeview.scheduling.plan_types import Target, candidates_of, hypothetical, removal
from kubeview.scheduling.planner import make_plan

SPREAD = PackingConfig(policy="spread")


def running(name: str, node_name: str, gpu: int = 0, cpu: str = "100m", owner: str | None = "ReplicaSet",
            priority: int = 0, labels: dict | None = None) -> PodView:
    obj = pod_obj(name, cpu=cpu, gpu=gpu, node_name=node_name)
    if owner:
        obj["metadata"]["ownerReferences"] = [{"kind": owner, "name": f"{name}-owner", "controller": True}]
    obj["metadata"]["labels"] = labels or {"app": name}
    obj["spec"]["priority"] = priority
    return PodView.from_api(obj)


def pending(name: str, gpu: int, priority: int = 0) -> PodView:
    obj = pod_obj(name, cpu="100m", gpu=gpu)
    obj["spec"]["priority"] = priority
    return PodView.from_api(obj)


def story():
    """The 1, 1, 2 story: two 2-GPU nodes, a 1-GPU pod on each, a 2-GPU pod pending."""
    nodes = [node("a", gpu=2), node("b", gpu=2)]
    pods = [running("one", "a", gpu=1), running("two", "b", gpu=1)]
    return cluster(nodes, pods), pods


def test_story_one_move_and_where_it_goes():
    alloc, pods = story()
    plan = make_plan(alloc, pods, Target.of_pods([pending("big", 2)]), SPREAD)
    assert plan.found and not plan.fits_now and plan.applicable
    assert len(plan.moves) == 1 and plan.method == "exact" and plan.quality.startswith("optimal")
    move = plan.moves[0]
    assert move.owner.startswith("ReplicaSet/") and move.to is not None and move.to != move.node
    assert plan.landing == [("default/big", move.node)]
    assert plan.free_before == {"a": 1, "b": 1}
    assert plan.free_after == {move.node: 0, move.to: 0}


def test_fits_now_needs_nothing():
    alloc, pods = story()
    plan = make_plan(alloc, pods, hypothetical(1), SPREAD)
    assert plan.fits_now and plan.found and plan.moves == []


def test_a_request_tolerates_the_gpu_taint_as_admission_makes_pods_do():
    taint = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    nodes = [node("a", gpu=2, taints=taint), node("b", gpu=2, taints=taint)]
    pods = [running("one", "a", gpu=1), running("two", "b", gpu=1)]
    assert make_plan(cluster(nodes, pods), pods, hypothetical(1)).fits_now
    assert len(make_plan(cluster(nodes, pods), pods, hypothetical(2)).moves) == 1


def test_no_plan_when_no_node_is_big_enough():
    alloc, pods = story()
    plan = make_plan(alloc, pods, hypothetical(4), SPREAD)
    assert not plan.found and plan.reason and plan.moves == []


def test_never_a_higher_priority_pod():
    nodes = [node("a", gpu=2), node("b", gpu=2)]
    pods = [running("one", "a", gpu=1, priority=100), running("two", "b", gpu=1, priority=100)]
    alloc = cluster(nodes, pods)
    assert not make_plan(alloc, pods, Target.of_pods([pending("big", 2, priority=10)])).found
    plan = make_plan(alloc, pods, Target.of_pods([pending("big", 2, priority=100)]))
    assert plan.found and len(plan.moves) == 1
    assert "higher priority" in " ".join(make_plan(alloc, pods, hypothetical(2)).notes)


def test_lower_priority_preferred_at_equal_count():
    nodes = [node("a", gpu=2), node("b", gpu=2)]
    pods = [running("one", "a", gpu=1, priority=5), running("two", "b", gpu=1, priority=1)]
    plan = make_plan(cluster(nodes, pods), pods, hypothetical(2, priority=10))
    assert [m.pod for m in plan.moves] == ["default/two"]


def test_bare_pods_only_when_asked_and_daemonsets_never():
    nodes = [node("a", gpu=2), node("b", gpu=2)]
    pods = [running("one", "a", gpu=1, owner=None), running("two", "b", gpu=1, owner="DaemonSet")]
    alloc = cluster(nodes, pods)
    assert not make_plan(alloc, pods, hypothetical(2)).found
    plan = make_plan(alloc, pods, hypothetical(2), allow_bare=True)
    assert [m.pod for m in plan.moves] == ["default/one"] and plan.moves[0].owner == "bare"


def test_pdb_within_budget_preferred_and_exceeding_said():
    nodes = [node("a", gpu=2), node("b", gpu=2)]
    pods = [running("one", "a", gpu=1, labels={"app": "guarded"}), running("two", "b", gpu=1, labels={"app": "web"})]
    alloc = cluster(nodes, pods)
    guard = BudgetView("default", "guard", (("app", "guarded"),), (), 1, None, 0)
    plan = make_plan(alloc, pods, hypothetical(2), budgets=[guard])
    assert [m.pod for m in plan.moves] == ["default/two"] and plan.applicable
    both = BudgetView("default", "all", (), (), None, 0, 0)  # empty selector: every pod of the namespace
    plan = make_plan(alloc, pods, hypothetical(2), budgets=[both])
    assert plan.found and not plan.applicable and len(plan.moves) == 1
    assert plan.over_budget == ["PodDisruptionBudget default/all allows 0 disruptions, the plan needs 1"]


def test_a_moved_pod_with_nowhere_to_go_waits():
    nodes = [node("a", gpu=2)]
    pods = [running("one", "a", gpu=2)]
    plan = make_plan(cluster(nodes, pods), pods, hypothetical(2))
    assert len(plan.moves) == 1 and plan.moves[0].to is None and "Insufficient nvidia.com/gpu" in plan.moves[0].why_waits


def test_gang_four_by_eight():
    nodes = [node(n, gpu=8) for n in "abcd"]
    pods = [running("x", "d", gpu=4), running("y", "c", gpu=1), running("z", "c", gpu=1)]
    plan = make_plan(cluster(nodes, pods), pods, hypothetical(8, pods=4))
    assert plan.found and plan.method == "exact" and len(plan.moves) == 3
    assert sorted(n for _, n in plan.landing) == list("abcd")


# -- brute force -------------------------------------------------------------------------------------
def random_case(rng: random.Random):
    nodes, pods = [], []
    for i in range(rng.randint(2, 4)):
        gpus = rng.choice([1, 2, 4, 8])
        nodes.append(node(f"n{i}", cpu=str(rng.randint(2, 8)), gpu=gpus, pods=rng.randint(3, 8)))
        left = gpus
        for j in range(rng.randint(0, 4)):
            g = rng.randint(1, left) if left and rng.random() < 0.8 else 0
            left -= g
            owner = rng.choice(["ReplicaSet", "ReplicaSet", "Job", None, "DaemonSet"])
            pods.append(running(f"p{i}-{j}", f"n{i}", gpu=g, cpu=f"{rng.randint(1, 10) * 100}m", owner=owner,
                                priority=rng.choice([0, 0, 10, 100]), labels={"app": rng.choice(["a", "b"])}))
    budgets = []
    if rng.random() < 0.4:
        budgets.append(BudgetView("default", "pdb", (("app", "a"),), (), None, None, rng.randint(0, 1)))
    return cluster(nodes, pods), pods, budgets


def brute(alloc, pods, target, budgets, config) -> tuple[int, int, int] | None:
    """The least (count, GPUs, priority) of every set of disruptable pods after which the target fits,
    within the budgets when any set is, else over them; None when no set works."""
    cands, _ = candidates_of(alloc, pods, target, budgets)
    best: dict[bool, tuple[int, int, int]] = {}
    for k in range(0, len(cands) + 1):
        for combo in combinations(cands, k):
            if not fit_gang(alloc, target.members, target.min_count, config, assumed=removal(alloc, combo)).fits:
                continue
            used: dict[int, int] = {}
            for c in combo:
                for b in c.budgets:
                    used[b] = used.get(b, 0) + 1
            ok = all(n <= (budgets[b].disruptions_allowed or 0) for b, n in used.items())
            key = (k, sum(c.gpus for c in combo), sum(c.priority for c in combo))
            if ok not in best or key < best[ok]:
                best[ok] = key
        if True in best:
            break
    return best.get(True) or best.get(False)


@pytest.mark.parametrize("seed", range(200))
def test_plan_equals_brute_force_optimum(seed):
    rng = random.Random(seed)
    alloc, pods, budgets = random_case(rng)
    config = PackingConfig(policy=rng.choice(["pack", "spread", "balanced"]))
    members = rng.choice([1, 1, 2, 3])
    gpus = rng.choice([g for g in (1, 2, 4, 8) if g <= max(n.allocatable.get(GPU, 0) for n in alloc.views)])
    target = hypothetical(gpus, pods=members, priority=rng.choice([0, 10, 100]))
    plan = make_plan(alloc, pods, target, config, budgets=budgets)
    want = brute(alloc, pods, target, budgets, config)
    assert plan.found == (want is not None), plan.reason
    if want is None:
        return
    assert plan.method == "exact"
    assert plan.cost[:3] == want, (plan.moves, want)
    assert bool(plan.over_budget) == (want is not None and _only_over(alloc, pods, target, budgets, config))
    # the plan's landing is where fit_gang puts the target with the moves done
    moved = {m.pod for m in plan.moves}
    cands, _ = candidates_of(alloc, pods, target, budgets)
    gone = [c for c in cands if f"{c.pod.namespace}/{c.pod.name}" in moved]
    assert fit_gang(alloc, target.members, target.min_count, config, assumed=removal(alloc, gone)).fits


def _only_over(alloc, pods, target, budgets, config) -> bool:
    """No set within the budgets works (so the best plan exceeds one)."""
    allowed = [b.disruptions_allowed or 0 for b in budgets]
    cands, _ = candidates_of(alloc, pods, target, budgets)
    for k in range(0, len(cands) + 1):
        for combo in combinations(cands, k):
            used: dict[int, int] = {}
            for c in combo:
                for b in c.budgets:
                    used[b] = used.get(b, 0) + 1
            if any(n > allowed[b] for b, n in used.items()):
                continue
            if fit_gang(alloc, target.members, target.min_count, config, assumed=removal(alloc, combo)).fits:
                return False
    return True


@pytest.mark.parametrize("seed", range(40))
def test_heuristic_plans_are_valid_and_bounded(seed):
    """With no exhaustive budget the heuristic's plan still fits, never beats the optimum, and its lower
    bound never exceeds it."""
    rng = random.Random(1000 + seed)
    alloc, pods, _ = random_case(rng)
    target = hypothetical(rng.choice([1, 2, 4]), pods=rng.choice([2, 3]))
    plan = make_plan(alloc, pods, target, SPREAD, exact_limit=0)
    want = brute(alloc, pods, target, [], SPREAD)
    if want is None:
        assert not plan.found
        return
    assert plan.lower_bound <= want[0]
    if plan.found and not plan.fits_now:
        assert plan.method == "heuristic" and len(plan.moves) >= want[0]
        assert "no plan disrupts fewer than" in plan.quality


def test_gang_with_a_bound_member_needs_room_for_the_rest_only():
    """A gang of 3 × 2 GPUs (minCount 3), one member already bound: the plan makes room for two more."""
    nodes = [node(n, gpu=2) for n in "abc"]
    bound = running("g-0", "a", gpu=2, owner="Job")
    pods = [bound, running("x", "b", gpu=1), running("y", "c", gpu=1)]
    members = [bound, pending("g-1", 2), pending("g-2", 2)]
    plan = make_plan(cluster(nodes, pods), pods, Target.of_pods(members, 3))
    assert plan.found and sorted(m.pod for m in plan.moves) == ["default/x", "default/y"]
    assert sorted(n for _, n in plan.landing) == ["b", "c"] and all(m.to is None for m in plan.moves)
    assert "g-0" not in {m.pod for m in plan.moves}  # a member is never a victim of its own gang


def sibling(name: str, node_name: str | None, cpu: str = "1") -> PodView:
    """A pod of the ReplicaSet `consumer`: the same template as every other."""
    obj = pod_obj(name, cpu=cpu, node_name=node_name)
    obj["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "consumer", "controller": True}]
    return PodView.from_api(obj)


def test_a_sibling_is_never_evicted_to_wait_in_the_targets_place():
    """Issue #42: for a pending consumer the plan evicted a running consumer of the same ReplicaSet,
    whose replacement then waited ("free GPUs: cpu-node-1 0 → 0"): it gains nothing, so no plan."""
    nodes = [node("a", cpu="2")]
    pods = [sibling("c-1", "a"), sibling("c-2", "a")]
    alloc = cluster(nodes, pods)
    plan = make_plan(alloc, pods, Target.of_pods([sibling("c-3", None)]), SPREAD)
    assert not plan.found and plan.moves == [] and plan.reason == "no running pod may be disrupted"
    assert plan.notes == ["2 pods of the target's own ReplicaSet/consumer left alone: evicted, one would only wait "
                          "in the target's place"]
    other = [*pods[:1], running("web", "a", cpu="1")]  # a pod of another owner still may go
    plan = make_plan(cluster(nodes, other), other, Target.of_pods([sibling("c-3", None)]), SPREAD)
    assert [m.pod for m in plan.moves] == ["default/web"]


def test_no_node_big_enough_says_the_largest_and_searches_nothing():
    alloc, pods = story()
    plan = make_plan(alloc, pods, hypothetical(8), SPREAD)
    assert plan.reason == "no node has 8 GPUs allocatable: the largest has 2, so no disruption makes room"
    assert (plan.found, plan.searched, plan.quality) == (False, 0, "")
    big_cpu = make_plan(alloc, pods, Target.of_pods([PodView.from_api(pod_obj("p", cpu="64"))]), SPREAD)
    assert big_cpu.reason == "no node has 64 cpu allocatable: the largest has 8 cpu, so no disruption makes room"


def test_the_bare_pods_note_names_the_option():
    nodes = [node("a", gpu=2), node("b", gpu=2)]
    pods = [running("one", "a", gpu=1, owner=None), running("two", "b", gpu=1, owner=None)]
    plan = make_plan(cluster(nodes, pods), pods, hypothetical(2))
    assert plan.notes == ["2 bare pods (no controller recreates them) left alone; --bare (b on the Plan screen) "
                          "considers them"]


def test_a_pod_of_the_same_owner_asking_otherwise_may_still_go():
    """An adopted orphan of the target's ReplicaSet asking for something else is no stand-in for it."""
    nodes = [node("a", cpu="2")]
    pods = [sibling("c-1", "a", cpu="1500m")]
    plan = make_plan(cluster(nodes, pods), pods, Target.of_pods([sibling("c-3", None)]), SPREAD)
    assert [m.pod for m in plan.moves] == ["default/c-1"] and plan.notes == []
