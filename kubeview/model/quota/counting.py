"""What kubeview counts against a quota from the model's pods, beside what the quota controller reports.

The quota controller (pkg/quota/v1/evaluator/core/pods.go) counts every pod of the namespace that is
not Succeeded or Failed: `pods` one each, `cpu`/`requests.cpu` and the other `requests.*` keys from the
pod's effective requests (the scheduler's arithmetic, `PodView.requests`), `limits.*` from its limits.
kubeview does the same from the pods it holds; a key it cannot count (object counts `count/...`,
storage, DRA `<class>.deviceclass.resource.k8s.io/devices`) and a quota with a scope kubeview does not
evaluate (`Terminating`, `PriorityClass`, ...: the pod view does not carry what they read) are None:
only the controller's figure is shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kubeview.model.quota.objects import QuotaView, amount_text
from kubeview.model.views import TERMINAL_PHASES, PodView

COUNTED_SCOPES = frozenset({"BestEffort", "NotBestEffort"})
_REQUESTS = {"cpu": "cpu", "memory": "memory", "ephemeral-storage": "ephemeral-storage"}


def pod_amount(key: str, pod: PodView) -> int | None:
    """The pod's share of quota key `key` (None: kubeview cannot count this key)."""
    if key == "pods":
        return 1
    if key in _REQUESTS:
        return pod.requests.get(key, 0)
    if key.startswith("requests."):
        name = key[len("requests."):]
        return None if name == "storage" else pod.requests.get(name, 0)
    if key.startswith("limits."):
        return pod.limits.get(key[len("limits."):], 0)
    if key.startswith("hugepages-"):
        return pod.requests.get(key, 0)
    return None


def best_effort(pod: PodView) -> bool:
    """No cpu or memory request or limit in any container (QoS class BestEffort)."""
    return not any(r in amounts for amounts in (pod.requests, pod.limits) for r in ("cpu", "memory"))


def unevaluated_scopes(quota: QuotaView) -> list[str]:
    """The scopes of `quota` kubeview cannot evaluate on its pod views."""
    scopes = [*quota.scopes, *(r.scope for r in quota.scope_selector)]
    return [s for s in scopes if s not in COUNTED_SCOPES]


def matches(quota: QuotaView, pod: PodView) -> bool:
    """Does `pod` fall under `quota`'s BestEffort / NotBestEffort scopes (the only ones evaluated)?"""
    for scope in quota.scopes:
        if scope == "BestEffort" and not best_effort(pod):
            return False
        if scope == "NotBestEffort" and best_effort(pod):
            return False
    return True


def count_usage(quota: QuotaView, pods: Iterable[PodView]) -> dict[str, int | None]:
    """Per hard key of `quota`: what its pods (those of its namespace, not finished) add up to."""
    if unevaluated_scopes(quota):
        return dict.fromkeys(quota.hard)
    keys = list(quota.hard)
    sums: dict[str, int | None] = {k: 0 if pod_amount(k, _PROBE) is not None else None for k in keys}
    counted = [k for k in keys if sums[k] is not None]
    for pod in pods:
        if pod.phase in TERMINAL_PHASES or pod.namespace != quota.namespace or not matches(quota, pod):
            continue
        for k in counted:
            sums[k] = (sums[k] or 0) + (pod_amount(k, pod) or 0)
    return sums


def pods_by_namespace(pods: Mapping[tuple[str, str], PodView], namespaces: set[str]) -> dict[str, list[PodView]]:
    """The unfinished pods of each of `namespaces` (one pass over the pods)."""
    out: dict[str, list[PodView]] = {ns: [] for ns in namespaces}
    for (ns, _), pod in pods.items():
        mine = out.get(ns)
        if mine is not None and pod.phase not in TERMINAL_PHASES:
            mine.append(pod)
    return out


@dataclass(frozen=True, slots=True)
class QuotaUse:
    """One key of one quota: its hard limit, the controller's used, kubeview's count (None: not counted)."""

    key: str
    hard: int
    used: int | None  # status.used (None: the controller has not reported this key)
    counted: int | None
    hard_text: str
    used_text: str  # "" when not reported

    @property
    def differs(self) -> bool:
        """kubeview's count and the controller's disagree (both known)."""
        return self.counted is not None and self.used is not None and self.counted != self.used

    @property
    def full(self) -> bool:
        return self.used is not None and self.used >= self.hard

    def counted_text(self) -> str:
        return "" if self.counted is None else amount_text(self.key, self.counted)


def quota_uses(quota: QuotaView, counted: Mapping[str, int | None]) -> tuple[QuotaUse, ...]:
    """The quota's keys, in the API's (sorted) order, with both counts."""
    return tuple(
        QuotaUse(key, hard, quota.used.get(key) if key in quota.used else None, counted.get(key),
                 quota.hard_text.get(key, str(hard)), quota.used_text.get(key, ""))
        for key, hard in sorted(quota.hard.items()))


_PROBE = PodView("", "", None, "Pending", {}, {}, [], 0, None, False, None)
