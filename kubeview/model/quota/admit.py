"""Would the namespace's quotas admit these pods now? The quota admission's arithmetic, on the model.

The API server admits a pod when, for every quota of its namespace that matches it and every key the
quota limits that the pod uses, status.used + the pod's amount <= hard (k8s.io/apiserver
plugin/resourcequota/controller.go; it reads the quota controller's status.used, as this does). Pods are
admitted in order, each adding to `used`; `admit_pods` says how many get in and, for the first refused,
which quota and key, in the one wording `kubeview fit` and the planner use: "namespace team-a's quota
gpus requests.nvidia.com/gpu is 8/8". Pure: `fit` and `plan` call it with `model.quotas`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kubeview.model.quota.counting import matches, pod_amount, unevaluated_scopes
from kubeview.model.quota.objects import QuotaView, amount_text
from kubeview.model.views import PodView


@dataclass(frozen=True, slots=True)
class QuotaBlock:
    """The first refusal: `quota`'s `key` has `used` of `hard` (model units) and a pod asks `asked`."""

    namespace: str
    quota: str
    key: str
    used: int
    hard: int
    asked: int

    def words(self) -> str:
        used, hard = amount_text(self.key, self.used), amount_text(self.key, self.hard)
        return f"namespace {self.namespace}'s quota {self.quota} {self.key} is {used}/{hard}"


@dataclass(frozen=True, slots=True)
class QuotaAnswer:
    admitted: int  # of `total` pods, how many the quotas let in (in order)
    total: int
    block: QuotaBlock | None = None  # why the next one is refused (None: all admitted)
    notes: tuple[str, ...] = field(default=())  # quotas not checked (scopes kubeview does not evaluate)

    @property
    def admits_all(self) -> bool:
        return self.admitted >= self.total

    def words(self) -> str:
        """"namespace team-a's quota gpus requests.nvidia.com/gpu is 8/8" (+ ": room for 2 of 3 pods")."""
        if self.block is None:
            return "the namespace's quotas admit every pod"
        room = f": room for {self.admitted:,} of {self.total:,} pods" if self.total > 1 else ""
        return self.block.words() + room


def admit_pods(quotas: Sequence[QuotaView], pods: Sequence[PodView], template: PodView | None = None,
               copies: int = 0) -> QuotaAnswer:
    """How many of `pods`, then `copies` of `template`, the quotas of their namespace admit now (the
    copies by arithmetic: 10^9 replicas cost what one does)."""
    total = len(pods) + (copies if template is not None else 0)
    first = pods[0] if pods else template
    if first is None:
        return QuotaAnswer(0, 0)
    mine = [q for q in quotas if q.namespace == first.namespace]
    notes = tuple(f"quota {q.name} not checked: kubeview does not evaluate scope {', '.join(s)}"
                  for q in mine if (s := unevaluated_scopes(q)))
    checked = [q for q in mine if not unevaluated_scopes(q)]
    used = {(q.name, k): q.used.get(k, 0) for q in checked for k in q.hard}
    admitted = 0
    for pod in pods:
        block = _refused(checked, pod, used)
        if block is not None:
            return QuotaAnswer(admitted, total, block, notes)
        _add(checked, pod, used)
        admitted += 1
    if template is not None and copies:
        room = copies
        block = None
        for q in checked:
            if not matches(q, template):
                continue
            for key, hard in q.hard.items():
                amount = pod_amount(key, template)
                if not amount:
                    continue
                fit = max(0, (hard - used[(q.name, key)]) // amount)
                if fit < room:
                    room, block = fit, QuotaBlock(q.namespace, q.name, key, q.used.get(key, 0), hard, amount)
        admitted += room
        return QuotaAnswer(admitted, total, block if room < copies else None, notes)
    return QuotaAnswer(admitted, total, None, notes)


def _refused(quotas: Sequence[QuotaView], pod: PodView, used: dict[tuple[str, str], int]) -> QuotaBlock | None:
    for q in quotas:
        if not matches(q, pod):
            continue
        for key, hard in sorted(q.hard.items()):
            amount = pod_amount(key, pod)
            if amount and used[(q.name, key)] + amount > hard:
                return QuotaBlock(q.namespace, q.name, key, q.used.get(key, 0), hard, amount)
    return None


def _add(quotas: Sequence[QuotaView], pod: PodView, used: dict[tuple[str, str], int]) -> None:
    for q in quotas:
        if matches(q, pod):
            for key in q.hard:
                used[(q.name, key)] += pod_amount(key, pod) or 0
