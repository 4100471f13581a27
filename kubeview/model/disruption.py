"""PodDisruptionBudgets as the planner and the embedded Eviction API read them (policy/v1).

A budget's `disruptionsAllowed` is what the disruption controller last wrote in its status (the
Eviction API refuses with 429 when it is 0). The embedded cluster has no disruption controller, so
`allowed_now` computes it the way the controller does for the common forms (minAvailable /
maxUnavailable as a count or a percentage of the selected pods, healthy = Running pods).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BudgetView:
    namespace: str
    name: str
    match_labels: tuple[tuple[str, str], ...]
    match_expressions: tuple[dict, ...]
    min_available: int | str | None
    max_unavailable: int | str | None
    disruptions_allowed: int | None  # status.disruptionsAllowed; None when no controller wrote it yet

    @classmethod
    def from_api(cls, obj: dict) -> BudgetView:
        meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
        selector = spec.get("selector") or {}
        allowed = status.get("disruptionsAllowed")
        return cls(meta.get("namespace", ""), meta.get("name", ""),
                   tuple(sorted((selector.get("matchLabels") or {}).items())),
                   tuple(selector.get("matchExpressions") or ()),
                   spec.get("minAvailable"), spec.get("maxUnavailable"),
                   None if allowed is None else int(allowed))

    def selects(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """A pod of `namespace` with `labels` is covered (an empty selector selects every pod, as in policy/v1)."""
        if namespace != self.namespace:
            return False
        if any(labels.get(k) != v for k, v in self.match_labels):
            return False
        return all(_expression(e, labels) for e in self.match_expressions)

    def allowed_now(self, healthy: int, expected: int) -> int:
        """disruptionsAllowed for `healthy` running pods of `expected` selected, as the controller computes it."""
        if self.max_unavailable is not None:
            unavailable = _scaled(self.max_unavailable, expected, up=True)
            return max(0, healthy - (expected - unavailable))
        if self.min_available is not None:
            return max(0, healthy - _scaled(self.min_available, expected, up=True))
        return max(0, healthy - expected)  # neither: treat as minAvailable = all

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)


def _scaled(value: int | str, total: int, up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        share = float(value[:-1]) / 100 * total
        return math.ceil(share) if up else math.floor(share)
    return int(value)


def _expression(expr: dict, labels: Mapping[str, str]) -> bool:
    key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or ()
    if op == "In":
        return labels.get(key) in values
    if op == "NotIn":
        return labels.get(key) not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    return False


def budgets_of(objects: Iterable[dict]) -> list[BudgetView]:
    return [BudgetView.from_api(o) for o in objects]
