"""What `kubeview plan` recovers of the pods a scheduler left Pending, on the bench's own cluster state.

Issue #37 item 4: after arrivals with departures every scheduler leaves some 8-GPU pods Pending; the
figure that says what kubeview adds beyond placement is how many of them a plan would place by
moving running pods, and how many it moves. The plan is kubeview's own (`scheduling.planner.
make_plan`, as `kubeview plan` makes it), over the bench's nodes and the pods the watch saw bound;
the bench's pods are bare (a controller of the bench's own would be garbage-collected), but they
stand for the pods of Jobs, which make a moved pod again: the plan is asked as for pods of a
controller (`JOB_OWNER`), so it says where each moved pod lands. Feasibility only falls as more pods
must fit together, so the largest number that fits is found by halving (a handful of plans).
A move counts as recovery only where the moved pod lands again (`Move.to`): a plan that places one
pod by leaving another Pending recovers nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kubeview.bench.scheduler.kube_plan import allocation_of
from kubeview.model.views import PodView
from kubeview.scheduling.plan_types import Plan, Target
from kubeview.scheduling.planner import make_plan

JOB_OWNER = ("Job", "kubeview-bench")  # what the bench's bare pods stand for


@dataclass(frozen=True, slots=True)
class Recovery:
    pending: int  # pods left Pending
    placed: int  # of them, the most a plan places together
    moves: int  # running pods that plan moves
    moved_gpus: int
    method: str  # "exact" | "heuristic" | "" (no plan)

    def words(self) -> str:
        if not self.pending:
            return "nothing left Pending"
        if not self.placed:
            return f"no plan places any of the {self.pending} Pending pods by moving others"
        pods, gpus = ("pod" if self.moves == 1 else "pods"), ("GPU" if self.moved_gpus == 1 else "GPUs")
        return (f"places {self.placed} of {self.pending} Pending by moving {self.moves} running {pods} "
                f"({self.moved_gpus} {gpus}; {self.method} search)")


def recover(node_objs: list[dict], bound: list[dict], pending: list[dict], exact_limit: int = 2_000) -> Recovery:
    """The most of `pending` one plan places together on `node_objs` with `bound` running."""
    alloc = allocation_of(node_objs, bound)
    running = [replace(PodView.from_api(p), owner=JOB_OWNER) for p in bound]
    waiting = [PodView.from_api(p) for p in pending]
    best: Plan | None = None
    low, high = 0, len(waiting)
    while low < high:
        k = (low + high + 1) // 2
        plan = make_plan(alloc, running, Target.of_pods(waiting[:k]), exact_limit=exact_limit)
        if plan.found and all(m.to is not None for m in plan.moves):
            low, best = k, plan
        else:
            high = k - 1
    if best is None:
        return Recovery(len(waiting), 0, 0, 0, "")
    return Recovery(len(waiting), low, len(best.moves), sum(m.gpus for m in best.moves), best.method)
